"""`ValidationNode`: check an AI message's tool calls against schemas, without running them
(issue 29; LangGraph's `langgraph.prebuilt.ValidationNode`).

For extraction: the model "calls" a schema, each call comes back as a `ToolMessage` with the
validated arguments as JSON, or with the validation error (marked `is_error` in its
`additional_kwargs`) so a router can send the model back to fix it. Validation is pure CPU
work, so the calls are checked in order on the calling thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, create_schema_from_function
from pydantic import BaseModel, ValidationError
from pydantic.v1 import BaseModel as BaseModelV1
from pydantic.v1 import ValidationError as ValidationErrorV1

__all__ = ["ValidationNode"]

FormatError = Callable[[BaseException, dict[str, Any], Any], str]


def _format_error(error: BaseException, call: dict[str, Any], schema: Any) -> str:
    """The model reads this: the error, then what to do (LangGraph's wording)."""
    return f"{error!r}\n\nRespond after fixing all validation errors."


def _schema_of(item: Any) -> tuple[str, Any]:
    """(the name calls use, the pydantic model their arguments must fit)."""
    if isinstance(item, BaseTool):
        schema = item.args_schema
        if schema is None:
            raise ValueError(f"Tool {item.name} does not have an args_schema defined.")
        if not (isinstance(schema, type) and issubclass(schema, (BaseModel, BaseModelV1))):
            raise ValueError(
                "Validation node only works with tools that have a pydantic BaseModel "
                f"args_schema. Got {item.name} with args_schema: {schema}."
            )
        return item.name, schema
    if isinstance(item, type) and issubclass(item, (BaseModel, BaseModelV1)):
        return item.__name__, item
    if callable(item):
        return item.__name__, create_schema_from_function("Validation", item)
    raise ValueError(
        "Unsupported input to ValidationNode. Expected BaseModel, tool or function. "
        f"Got: {type(item)}."
    )


class ValidationNode:
    """A node answering each tool call of the last AI message with its validated arguments
    (or the validation error), in call order. Input: a list of messages, or a state with a
    `messages` key; the output has the same form."""

    def __init__(
        self,
        schemas: Sequence[BaseTool | type[BaseModel] | Callable[..., Any]],
        *,
        format_error: FormatError | None = None,
        name: str = "validation",
        tags: list[str] | None = None,
    ) -> None:
        self.name = name
        self.tags = tags
        self._format_error = format_error or _format_error
        self.schemas_by_name: dict[str, Any] = dict(_schema_of(s) for s in schemas)

    def __repr__(self) -> str:
        return f"ValidationNode(schemas={list(self.schemas_by_name)})"

    def __call__(self, input: Any) -> Any:
        as_list, message = _last_ai_message(input)
        answers = [self._check(call) for call in message.tool_calls]
        return answers if as_list else {"messages": answers}

    def invoke(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        return self(input)

    async def ainvoke(
        self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any
    ) -> Any:
        return self(input)

    def _check(self, call: dict[str, Any]) -> ToolMessage:
        schema = self.schemas_by_name[call["name"]]
        try:
            if issubclass(schema, BaseModel):
                content = schema.model_validate(call["args"]).model_dump_json()
            else:
                content = schema.validate(call["args"]).json()
        except (ValidationError, ValidationErrorV1) as error:
            return ToolMessage(
                content=self._format_error(error, call, schema), name=call["name"],
                tool_call_id=call["id"], additional_kwargs={"is_error": True},
            )
        return ToolMessage(content=content, name=call["name"], tool_call_id=call["id"])


def _last_ai_message(input: Any) -> tuple[bool, AIMessage]:
    if isinstance(input, list):
        as_list, messages = True, input
    elif isinstance(input, dict) and input.get("messages"):
        as_list, messages = False, input["messages"]
    else:
        raise ValueError("No message found in input")
    message = messages[-1]
    if not isinstance(message, AIMessage):
        raise ValueError("Last message is not an AIMessage")
    return as_list, message

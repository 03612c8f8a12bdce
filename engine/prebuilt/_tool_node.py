"""`ToolNode` and `tools_condition`: run an AI message's tool calls as a graph node (issue 17).

Behaviour follows LangGraph 1.2.22's `langgraph.prebuilt` (langgraph-prebuilt 1.1): calls run
in parallel and their `ToolMessage`s come back in call order; by default only invalid
arguments become an error message (any other tool error propagates); a tool may return a
`Command`; `Send("tools", ToolCallWithContext(...))` runs one call per task.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import copy
import dataclasses
import functools
import inspect
import json
import types
import typing
import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypedDict, get_args, get_origin, get_type_hints

import anyio
from langchain_core.messages import AIMessage, RemoveMessage, ToolMessage, convert_to_messages
from langchain_core.messages.tool import ToolOutputMixin
from langchain_core.tools import BaseTool, ToolException
from langchain_core.tools import tool as as_tool
from langchain_core.tools.base import TOOL_MESSAGE_BLOCK_TYPES
from pydantic import ValidationError

from .._context import Runtime, current_scope
from .._managed import managed_values
from .._messages import REMOVE_ALL_MESSAGES
from ..errors import GraphBubbleUp, is_invalid_resume
from ..types import Command, Send
from ._injection import Injections, InjectedState, InjectedStore, ToolRuntime, inject, injections_of
from ._standalone import NOT_GIVEN, given_state, standalone_call

__all__ = [
    "InjectedState",
    "InjectedStore",
    "TOOL_CALL_ERROR_TEMPLATE",
    "ToolCallRequest",
    "ToolCallWithContext",
    "ToolInvocationError",
    "ToolNode",
    "ToolRuntime",
    "tools_condition",
]

InputType = Literal["list", "dict", "tool_calls"]

# LangGraph's message texts: the model reads them, so they are behaviour, kept word for word.
INVALID_TOOL_NAME = "Error: {requested_tool} is not a valid tool, try one of [{available_tools}]."
TOOL_CALL_ERROR_TEMPLATE = "Error: {error}\n Please fix your mistakes."
TOOL_INVOCATION_ERROR = (
    "Error invoking tool '{tool_name}' with kwargs {tool_kwargs} with error:\n"
    " {error}\n"
    " Please fix the error and try again."
)


class ToolCallWithContext(TypedDict):
    """The payload of `Send("tools", ...)`: one tool call and the state it was made in."""

    __type: Literal["tool_call_with_context"]
    tool_call: dict[str, Any]
    state: Any


@dataclasses.dataclass
class ToolCallRequest:
    """One tool call as a `wrap_tool_call` wrapper sees it (LangGraph's `ToolCallRequest`)."""

    tool_call: dict[str, Any]
    tool: BaseTool | None
    state: Any
    runtime: ToolRuntime

    def __setattr__(self, name: str, value: Any) -> None:
        """Changing a field in place is deprecated, as in LangGraph (issue 29): a wrapper
        that retries must not see its own edits; `override()` makes a new request."""
        if name in self.__dict__:
            warnings.warn(
                f"Setting attribute '{name}' on ToolCallRequest is deprecated. Use the "
                "override() method instead to create a new instance with modified values.",
                DeprecationWarning, stacklevel=2,
            )
        object.__setattr__(self, name, value)

    def override(self, **overrides: Any) -> ToolCallRequest:
        """A new request with `tool_call`, `tool` or `state` replaced (a new state also
        becomes the runtime's state)."""
        request = dataclasses.replace(self, **overrides)
        if "state" in overrides and isinstance(request.runtime, ToolRuntime):
            runtime = dataclasses.replace(request.runtime, state=request.state)
            request = dataclasses.replace(request, runtime=runtime)
        return request


ToolCallWrapper = Callable[[ToolCallRequest, Callable[[ToolCallRequest], Any]], Any]
AsyncToolCallWrapper = Callable[
    [ToolCallRequest, Callable[[ToolCallRequest], Awaitable[Any]]], Awaitable[Any]
]


class ToolInvocationError(ToolException):
    """The model called a tool with arguments its schema rejects; the message lists only the
    arguments the model controls (injected ones are left out)."""

    def __init__(
        self,
        tool_name: str,
        source: ValidationError,
        tool_kwargs: dict[str, Any],
        filtered_errors: list[Any] | None = None,
    ) -> None:
        if filtered_errors is not None:
            shown = "\n".join(
                f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', 'Unknown error')}"
                for e in filtered_errors
            )
        else:
            shown = str(source)
        self.message = TOOL_INVOCATION_ERROR.format(
            tool_name=tool_name, tool_kwargs=tool_kwargs, error=shown
        )
        self.tool_name = tool_name
        self.tool_kwargs = tool_kwargs
        self.source = source
        self.filtered_errors = filtered_errors
        super().__init__(self.message)


def msg_content_output(output: Any) -> str | list[dict[str, Any]]:
    """A tool result as `ToolMessage` content: text and content blocks as is, else JSON."""
    if isinstance(output, str) or (
        isinstance(output, list)
        and all(isinstance(x, dict) and x.get("type") in TOOL_MESSAGE_BLOCK_TYPES for x in output)
    ):
        return output
    try:
        return json.dumps(output, ensure_ascii=False)
    except Exception:
        return str(output)


def _default_handle_tool_errors(e: Exception) -> str:
    """The default: invalid arguments go back to the model, any other error is raised."""
    if isinstance(e, ToolInvocationError):
        return e.message
    raise e


def _error_content(error: Exception, flag: Any) -> str:
    if isinstance(flag, (bool, tuple)) or (isinstance(flag, type) and issubclass(flag, Exception)):
        return TOOL_CALL_ERROR_TEMPLATE.format(error=repr(error))
    if isinstance(flag, str):
        return flag
    if callable(flag):
        return flag(error)
    raise ValueError(
        "Got unexpected type of `handle_tool_error`. Expected bool, str or callable. "
        f"Received: {flag}"
    )


def _handler_types(handler: Callable[..., str]) -> tuple[type[Exception], ...]:
    """The exceptions a handler function says it takes (its first parameter's annotation)."""
    params = list(inspect.signature(handler).parameters.values())
    if not params:
        return (Exception,)
    first = params[1] if params[0].name in ("self", "cls") and len(params) == 2 else params[0]
    hints = get_type_hints(handler)
    if first.name not in hints:
        return (Exception,)
    if get_origin(first.annotation) in (typing.Union, types.UnionType):
        args = get_args(first.annotation)
        if all(issubclass(a, Exception) for a in args):
            return tuple(args)
        raise ValueError(
            "All types in the error handler error annotation must be Exception types. For "
            "example, `def custom_handler(e: Union[ValueError, TypeError])`. "
            f"Got '{first.annotation}' instead."
        )
    hinted = hints[first.name]
    if Exception in hinted.__mro__:
        return (hinted,)
    raise ValueError(
        "Arbitrary types are not supported in the error handler signature. Please annotate "
        "the error with either a specific Exception type or a union of Exception types. For "
        "example, `def custom_handler(e: ValueError)` or "
        "`def custom_handler(e: Union[ValueError, TypeError])`. "
        f"Got '{hinted}' instead."
    )


def _handled(flag: Any) -> tuple[type[Exception], ...]:
    if isinstance(flag, type) and issubclass(flag, Exception):
        return (flag,)
    if isinstance(flag, tuple):
        return flag
    if callable(flag) and not isinstance(flag, type):
        return _handler_types(flag)
    return (Exception,)


# -- Commands through LangChain -------------------------------------------------------------------


class _ToolCommand(Command, ToolOutputMixin):
    """A `Command` LangChain passes through untouched (it wraps anything else it does not
    know as `ToolMessage` text). Tools return plain `Command`s; the wrapper converts."""

    __slots__ = ()


def _lc_output(value: Any) -> Any:
    if type(value) is Command:
        return _ToolCommand(value.graph, value.update, value.resume, value.goto)
    if isinstance(value, list) and any(type(v) is Command for v in value) and all(
        type(v) is Command or isinstance(v, ToolOutputMixin) for v in value
    ):  # Commands, maybe with ToolMessages: LangChain passes such a list through
        return [_lc_output(v) for v in value]
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, _ToolCommand):
        return Command(value.graph, value.update, value.resume, value.goto)
    return value


def _command_aware(tool: BaseTool) -> BaseTool:
    """A copy of a function tool whose `Command` results reach the `ToolNode` intact."""
    func = getattr(tool, "func", None)
    coroutine = getattr(tool, "coroutine", None)
    update: dict[str, Any] = {}
    if func is not None:

        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            return _lc_output(func(*args, **kwargs))

        update["func"] = run
    if coroutine is not None:

        @functools.wraps(coroutine)
        async def arun(*args: Any, **kwargs: Any) -> Any:
            return _lc_output(await coroutine(*args, **kwargs))

        update["coroutine"] = arun
    if update:
        return tool.model_copy(update=update)
    return _methods_command_aware(tool)


def _methods_command_aware(tool: BaseTool) -> BaseTool:
    """A copy of a `BaseTool` subclass whose `_run`/`_arun` results are converted the same
    way (issue 29): the copy's own attributes shadow the class's methods."""
    copy = tool.model_copy()
    sync_run, async_run = tool._run, tool._arun

    @functools.wraps(sync_run)
    def run(*args: Any, **kwargs: Any) -> Any:
        return _lc_output(sync_run(*args, **kwargs))

    @functools.wraps(async_run)
    async def arun(*args: Any, **kwargs: Any) -> Any:
        return _lc_output(await async_run(*args, **kwargs))

    object.__setattr__(copy, "_run", run)
    object.__setattr__(copy, "_arun", arun)
    return copy


# -- the node -------------------------------------------------------------------------------------

_POOL: concurrent.futures.ThreadPoolExecutor | None = None


def _pool() -> concurrent.futures.ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = concurrent.futures.ThreadPoolExecutor(thread_name_prefix="graphrun-tool")
    return _POOL


class ToolNode:
    """A graph node that runs the tool calls of the last `AIMessage` and returns their
    `ToolMessage`s (or the `Command`s tools returned).

    Input: a state with a `messages` key, a list of messages, a list of tool calls, or a
    `ToolCallWithContext` (one call per `Send`). `handle_tool_errors`: the default answers
    invalid arguments with an error message and raises anything else; True, an exception
    type or tuple, a string or a function handle more (as LangGraph). `wrap_tool_call(request,
    execute)` (and `awrap_tool_call` for async runs) wraps each call: retry, change the
    request with `request.override(...)`, or answer without calling `execute`.
    """

    def __init__(
        self,
        tools: Sequence[BaseTool | Callable[..., Any]],
        *,
        name: str = "tools",
        tags: list[str] | None = None,
        handle_tool_errors: Any = _default_handle_tool_errors,
        messages_key: str = "messages",
        wrap_tool_call: ToolCallWrapper | None = None,
        awrap_tool_call: AsyncToolCallWrapper | None = None,
    ) -> None:
        self.name = name
        self.tags = tags
        self._handle_tool_errors = handle_tool_errors
        self._messages_key = messages_key
        self._wrap_tool_call = wrap_tool_call
        self._awrap_tool_call = awrap_tool_call
        self._tools_by_name: dict[str, BaseTool] = {}
        self._runnable: dict[str, BaseTool] = {}
        self._injections: dict[str, Injections] = {}
        for item in tools:
            tool = item if isinstance(item, BaseTool) else as_tool(item)
            self._tools_by_name[tool.name] = tool
            self._runnable[tool.name] = _command_aware(tool)
            self._injections[tool.name] = injections_of(tool)

    @property
    def tools_by_name(self) -> dict[str, BaseTool]:
        """The tools by name."""
        return self._tools_by_name

    def __repr__(self) -> str:
        return f"ToolNode(tools={list(self._tools_by_name)})"

    def invoke(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        """Run the calls outside a graph, as LangGraph's runnable `ToolNode` (issue 29)."""
        config, runtime = standalone_call(config)
        return self(input, config, runtime)

    async def ainvoke(
        self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any
    ) -> Any:
        """The async form of `invoke` (async tools run on the caller's loop)."""
        config, runtime = standalone_call(config)
        return await self._graphrun_acall(input, config, runtime)

    # the engine calls this with the node's config and runtime (see `Callee`)
    def __call__(self, input: Any, config: dict[str, Any], runtime: Runtime[Any]) -> Any:
        calls, input_type = self._parse_input(input)
        runtimes = self._runtimes(input, calls, config, runtime)
        if len(calls) == 1:
            outputs = [self._run_one(calls[0], input_type, runtimes[0])]
        else:
            outputs = self._run_parallel(calls, input_type, runtimes)
        return self._combine(outputs, input_type)

    async def _graphrun_acall(
        self, input: Any, config: dict[str, Any], runtime: Runtime[Any]
    ) -> Any:
        """The async form the engine uses in async runs (async tools run on the loop)."""
        calls, input_type = self._parse_input(input)
        runtimes = self._runtimes(input, calls, config, runtime)
        if len(calls) == 1:
            outputs = [await self._arun_one(calls[0], input_type, runtimes[0])]
        else:
            outputs = await self._arun_parallel(calls, input_type, runtimes)
        return self._combine(outputs, input_type)

    async def _arun_parallel(
        self, calls: list[dict[str, Any]], input_type: InputType, runtimes: list[ToolRuntime]
    ) -> list[Any]:
        """All calls at once; the first failure in call order is raised as itself (an
        interrupt stays an interrupt, never wrapped in an exception group), after every call
        ended, as LangGraph's gather."""
        outputs: list[Any] = [None] * len(calls)
        errors: list[BaseException | None] = [None] * len(calls)

        async def one(index: int) -> None:
            try:
                outputs[index] = await self._arun_one(calls[index], input_type, runtimes[index])
            except (Exception, GraphBubbleUp) as error:
                errors[index] = error

        async with anyio.create_task_group() as group:
            for index in range(len(calls)):
                group.start_soon(one, index)
        for error in errors:
            if error is not None:
                raise error
        return outputs

    def _run_parallel(
        self, calls: list[dict[str, Any]], input_type: InputType, runtimes: list[ToolRuntime]
    ) -> list[Any]:
        """The first call here, the others in the pool (each in a copy of this context, so
        `interrupt()` and the stream writer find their task); results in call order."""
        futures = [
            _pool().submit(contextvars.copy_context().run, self._run_one, call, input_type, rt)
            for call, rt in zip(calls[1:], runtimes[1:])
        ]
        try:
            first = self._run_one(calls[0], input_type, runtimes[0])
        finally:
            concurrent.futures.wait(futures)  # no tool outlives the node, even on failure
        return [first, *(f.result() for f in futures)]

    def _runtimes(
        self, input: Any, calls: list[dict[str, Any]], config: dict[str, Any], runtime: Any
    ) -> list[ToolRuntime]:
        state = self._extract_state(input, config)
        tools = list(self._tools_by_name.values())
        return [
            ToolRuntime(
                state=state,
                context=runtime.context,
                config=config,
                stream_writer=runtime.stream_writer,
                tool_call_id=call["id"],
                store=runtime.store,
                tools=tools,
            )
            for call in calls
        ]

    # -- input ---------------------------------------------------------------------------------

    def _parse_input(self, input: Any) -> tuple[list[dict[str, Any]], InputType]:
        key = self._messages_key
        if isinstance(input, list):
            if isinstance(input[-1], dict) and input[-1].get("type") == "tool_call":
                return list(input), "tool_calls"
            messages, input_type = input, "list"
        elif isinstance(input, dict) and input.get("__type") == "tool_call_with_context":
            return [input["tool_call"]], "tool_calls"
        elif isinstance(input, dict) and input.get(key):
            messages, input_type = input[key], "dict"
        elif getattr(input, key, None):
            messages, input_type = getattr(input, key), "dict"
        else:
            raise ValueError("No message found in input")
        last = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if last is None:
            raise ValueError("No AIMessage found in input")
        return list(last.tool_calls), input_type  # type: ignore[return-value]

    def _extract_state(self, input: Any, config: dict[str, Any]) -> Any:
        """The state tools may inject: the Send's state, the node's own state for a list of
        tool calls (or the state a direct call's config hands over), else the input itself."""
        if isinstance(input, dict) and input.get("__type") == "tool_call_with_context":
            return input["state"]
        if input and isinstance(input, list) and isinstance(input[-1], dict) and (
            input[-1].get("type") == "tool_call"
        ):
            given = given_state(config)
            return _current_state() if given is NOT_GIVEN else given
        return input

    # -- one call ------------------------------------------------------------------------------

    def _run_one(self, call: dict[str, Any], input_type: InputType, rt: ToolRuntime) -> Any:
        request = ToolCallRequest(call, self._tools_by_name.get(call["name"]), rt.state, rt)
        if self._wrap_tool_call is None:
            return self._execute(request, input_type)
        try:
            return self._wrap_tool_call(request, lambda req: self._execute(req, input_type))
        except Exception as error:
            return self._wrapper_error(request, error)

    async def _arun_one(
        self, call: dict[str, Any], input_type: InputType, rt: ToolRuntime
    ) -> Any:
        request = ToolCallRequest(call, self._tools_by_name.get(call["name"]), rt.state, rt)
        try:
            if self._awrap_tool_call is not None:

                async def execute(req: ToolCallRequest) -> Any:
                    return await self._aexecute(req, input_type)

                return await self._awrap_tool_call(request, execute)
            if self._wrap_tool_call is not None:  # a sync wrapper, as LangGraph allows
                return self._wrap_tool_call(request, lambda req: self._execute(req, input_type))
        except Exception as error:
            return self._wrapper_error(request, error)
        return await self._aexecute(request, input_type)

    def _execute(self, request: ToolCallRequest, input_type: InputType) -> Any:
        call = request.tool_call
        if request.tool is None:
            return self._invalid_name(call)
        tool, tool_input = self._prepared(request)
        try:
            try:
                response = tool.invoke(tool_input, request.runtime.config)
            except ValidationError as error:
                if is_invalid_resume(error):
                    raise
                raise self._invocation_error(call, error) from error
            return self._normalize(_plain(response), call, input_type)
        except Exception as error:
            return self._error_message(call, error)

    async def _aexecute(self, request: ToolCallRequest, input_type: InputType) -> Any:
        call = request.tool_call
        if request.tool is None:
            return self._invalid_name(call)
        tool, tool_input = self._prepared(request)
        try:
            try:
                response = await tool.ainvoke(tool_input, request.runtime.config)
            except ValidationError as error:
                if is_invalid_resume(error):
                    raise
                raise self._invocation_error(call, error) from error
            return self._normalize(_plain(response), call, input_type)
        except Exception as error:
            return self._error_message(call, error)

    def _prepared(self, request: ToolCallRequest) -> tuple[BaseTool, dict[str, Any]]:
        """The tool to call (a registered tool's Command-aware copy) and its input with the
        injected arguments; injection errors are not tool errors (they are raised)."""
        call, tool = request.tool_call, request.tool
        assert tool is not None
        if self._tools_by_name.get(tool.name) is tool:
            runnable, injections = self._runnable[tool.name], self._injections[tool.name]
        else:  # a tool a wrapper put in the request
            runnable, injections = _command_aware(tool), injections_of(tool)
        if injections:
            call = inject(call, injections, request.runtime, self._messages_key)
        return runnable, {**call, "type": "tool_call"}

    def _wrapper_error(self, request: ToolCallRequest, error: Exception) -> ToolMessage:
        """A wrapper's own failure: an error message when errors are handled at all."""
        if not self._handle_tool_errors or is_invalid_resume(error):
            raise error
        call = request.tool_call
        return ToolMessage(
            content=_error_content(error, self._handle_tool_errors), name=call["name"],
            tool_call_id=call["id"], status="error",
        )

    def _invalid_name(self, call: dict[str, Any]) -> ToolMessage:
        content = INVALID_TOOL_NAME.format(
            requested_tool=call["name"], available_tools=", ".join(self._tools_by_name)
        )
        return ToolMessage(content, name=call["name"], tool_call_id=call["id"], status="error")

    def _invocation_error(self, call: dict[str, Any], error: ValidationError) -> Exception:
        injected = self._injections.get(call["name"])
        names = set(injected.keys) | set(injected.state) if injected else set()
        if injected and injected.store:
            names.add(injected.store)
        if injected and injected.runtime:
            names.add(injected.runtime)
        kept = []
        for detail in error.errors():
            if detail["loc"] and detail["loc"][0] not in names:
                detail = dict(detail)
                if isinstance(detail.get("input"), dict):
                    detail["input"] = {k: v for k, v in detail["input"].items() if k not in names}
                kept.append(detail)
        return ToolInvocationError(call["name"], error, call["args"], kept)

    def _error_message(self, call: dict[str, Any], error: Exception) -> ToolMessage:
        """An error `ToolMessage` when `handle_tool_errors` covers `error`, else re-raise."""
        flag = self._handle_tool_errors
        # a bad answer to an interrupt is the human's error, not the model's (issue 29): the
        # run fails and the interrupt can be answered again, whatever the setting
        if not flag or not isinstance(error, _handled(flag)) or is_invalid_resume(error):
            raise error
        content = _error_content(error, flag)
        return ToolMessage(
            content=content, name=call["name"], tool_call_id=call["id"], status="error"
        )

    # -- output --------------------------------------------------------------------------------

    def _normalize(self, response: Any, call: dict[str, Any], input_type: InputType) -> Any:
        if isinstance(response, Command):
            return self._check_command(response, call, input_type)
        if isinstance(response, ToolMessage):
            response.content = msg_content_output(response.content)
            return response
        if isinstance(response, list):
            items = [_plain(r) for r in response]
            if all(isinstance(r, (Command, ToolMessage)) for r in items):
                return self._check_list(items, call, input_type)
            raise TypeError(
                f"Tool {call['name']} returned a list with invalid element types: expected all "
                "Command or ToolMessage"
            )
        raise TypeError(f"Tool {call['name']} returned unexpected type: {type(response)}")

    def _check_list(self, items: list[Any], call: dict[str, Any], input_type: InputType) -> Any:
        """Exactly one message of the list may answer this call (as LangGraph)."""
        expected = call["id"]
        count = 0
        for item in items:
            if isinstance(item, ToolMessage):
                count += item.tool_call_id == expected
            elif isinstance(item.update, dict):
                count += sum(
                    isinstance(m, ToolMessage) and m.tool_call_id == expected
                    for m in item.update.get(self._messages_key, [])
                )
        if count != 1:
            raise ValueError(
                f"Tool {call['name']} returned a list with {count} messages bound to "
                f"tool_call_id {expected!r}; expected exactly one terminating ToolMessage."
            )
        out = []
        for item in items:
            if isinstance(item, Command):
                out.append(self._check_command(item, call, input_type, terminator=False))
            else:
                item.content = msg_content_output(item.content)
                out.append(item)
        return out

    def _check_command(
        self, command: Command, call: dict[str, Any], input_type: InputType,
        terminator: bool = True,
    ) -> Command:
        """A tool's Command must answer its call with a ToolMessage (unless it goes to the
        parent graph); that message gets the tool's name."""
        key = self._messages_key
        if isinstance(command.update, dict):
            if input_type not in ("dict", "tool_calls"):
                raise ValueError(
                    "Tools can provide a dict in Command.update only when using dict with "
                    f"'{key}' key as ToolNode input, got: {command.update} for tool "
                    f"'{call['name']}'"
                )
            command = copy.deepcopy(command)
            messages = command.update.get(key, [])
        elif isinstance(command.update, list):
            if input_type != "list":
                raise ValueError(
                    "Tools can provide a list of messages in Command.update only when using "
                    f"list of messages as ToolNode input, got: {command.update} for tool "
                    f"'{call['name']}'"
                )
            command = copy.deepcopy(command)
            messages = command.update
        else:
            return command
        messages = convert_to_messages(messages)
        if messages == [RemoveMessage(id=REMOVE_ALL_MESSAGES)]:
            return command
        answered = False
        for message in messages:
            if isinstance(message, ToolMessage) and message.tool_call_id == call["id"]:
                message.name = call["name"]
                answered = True
        if terminator and command.graph is None and not answered:
            example = (
                '`Command(update={"messages": [ToolMessage("Success", '
                'tool_call_id=tool_call_id), ...]}, ...)`'
                if input_type == "dict"
                else "`Command(update="
                '[ToolMessage("Success", tool_call_id=tool_call_id), ...], ...)`'
            )
            raise ValueError(
                "Expected to have a matching ToolMessage in Command.update for tool "
                f"'{call['name']}', got: {messages}. Every tool call (LLM requesting to call a "
                "tool) in the message history MUST have a corresponding ToolMessage. You can "
                f"fix it by modifying the tool to return {example}."
            )
        return command

    def _combine(self, outputs: list[Any], input_type: InputType) -> Any:
        """All messages as one update; with Commands, a list of updates in call order (each
        message a plain update, each Command as is), parent-graph Sends merged into one
        Command last (as LangGraph)."""
        flat: list[Any] = []
        for output in outputs:
            flat.extend(output) if isinstance(output, list) else flat.append(output)
        key = self._messages_key
        if not any(isinstance(o, Command) for o in flat):
            return flat if input_type == "list" else {key: flat}
        combined: list[Any] = []
        parent: Command | None = None
        for output in flat:
            if not isinstance(output, Command):  # a plain update beside the Commands
                combined.append([output] if input_type == "list" else {key: [output]})
            elif output.graph == Command.PARENT and isinstance(output.goto, list) and all(
                isinstance(s, Send) for s in output.goto
            ):
                goto = [*(parent.goto if parent else ()), *output.goto]
                parent = Command(graph=Command.PARENT, goto=goto)
            else:
                combined.append(output)
        if parent is not None:
            combined.append(parent)
        return combined


def _current_state() -> Any:
    """The state of the running task's graph as its node reads it (a list of tool calls
    sent to the node carries no state of its own)."""
    scope = current_scope.get()
    if scope is None:
        return {}
    run, node = scope.run, scope.task.node
    values = run.values(node.reads)
    if node.managed:
        values.update(managed_values(node.managed, run.step, run.stop))
    return node.reader(values) if node.reader is not None else values


def tools_condition(state: Any, messages_key: str = "messages") -> Literal["tools", "__end__"]:
    """Route to "tools" when the last message has tool calls, else to END."""
    if isinstance(state, list):
        last = state[-1]
    elif isinstance(state, dict) and state.get(messages_key, []):
        last = state[messages_key][-1]
    elif getattr(state, messages_key, []):
        last = getattr(state, messages_key)[-1]
    else:
        raise ValueError(f"No messages found in input state to tool_edge: {state}")
    if hasattr(last, "tool_calls") and len(last.tool_calls) > 0:
        return "tools"
    return "__end__"

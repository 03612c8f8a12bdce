"""`create_react_agent`: a model that calls tools in a loop, as LangGraph 1.2.22 builds it.

The same graph shape (nodes `agent` and `tools`, plus `generate_structured_response`,
`pre_model_hook`, `post_model_hook` when asked for), the same routing (one `Send` per tool
call, version "v2") and the same stop: when `RemainingSteps` says the next tool round cannot
finish, the agent answers "Sorry, need more steps to process this request." (issue 17).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Annotated, Any, NotRequired, get_type_hints

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage,
)
from langchain_core.runnables import Runnable, RunnableBinding, RunnableLambda, RunnableSequence
from pydantic import BaseModel
from typing_extensions import TypedDict, deprecated  # pydantic needs it on Python < 3.12 (issue 29)

from .._managed import RemainingSteps
from .._messages import add_messages
from ..types import Send
from ..warnings import LangGraphDeprecatedSinceV10, renamed
from ._standalone import standalone_call
from ._tool_node import ToolCallWithContext, ToolNode

__all__ = [
    "AgentState", "AgentStatePydantic", "AgentStateWithStructuredResponse",
    "AgentStateWithStructuredResponsePydantic", "create_react_agent", "input_schema_for",
    "make_node",
]

PROMPT_RUNNABLE_NAME = "Prompt"
NEED_MORE_STEPS = "Sorry, need more steps to process this request."


@deprecated(  # as LangGraph: its JSON Schema says `"deprecated": true` (issue 29)
    "AgentState has been moved to `langchain.agents`. Please update your import to "
    "`from langchain.agents import AgentState`.",
    category=LangGraphDeprecatedSinceV10,
)
class AgentState(TypedDict):
    """The state of the agent."""

    messages: Annotated[Sequence[BaseMessage], add_messages]
    remaining_steps: NotRequired[RemainingSteps]


class AgentStateWithStructuredResponse(AgentState):
    """`AgentState` plus the final answer in the `response_format` schema."""

    structured_response: dict[str, Any] | BaseModel


class AgentStatePydantic(BaseModel):
    """`AgentState` as a pydantic model, for agents whose nodes want attribute access
    (issue 29); the default step budget only applies before the run fills it in."""

    messages: Annotated[Sequence[BaseMessage], add_messages]
    remaining_steps: RemainingSteps = 25


class AgentStateWithStructuredResponsePydantic(AgentStatePydantic):
    """`AgentStatePydantic` plus the final answer in the `response_format` schema."""

    structured_response: dict[str, Any] | BaseModel


def _value(state: Any, key: str, default: Any = None) -> Any:
    return state.get(key, default) if isinstance(state, dict) else getattr(state, key, default)


def _prompt_runnable(prompt: Any) -> Runnable[Any, Any]:
    """The step before the model: state -> the messages it is called with."""
    if prompt is None:
        return _lambda(lambda state: _value(state, "messages"))
    if isinstance(prompt, str):
        prompt = SystemMessage(content=prompt)
    if isinstance(prompt, SystemMessage):
        system = prompt
        return _lambda(lambda state: [system, *_value(state, "messages")])
    if isinstance(prompt, Runnable):
        return prompt
    if inspect.iscoroutinefunction(prompt):
        return RunnableLambda(_no_sync_prompt, afunc=prompt, name=PROMPT_RUNNABLE_NAME)
    if callable(prompt):
        return _lambda(prompt)
    raise ValueError(f"Got unexpected type for `prompt`: {type(prompt)}")


def _lambda(func: Callable[[Any], Any]) -> Runnable[Any, Any]:
    """A sync prompt function that also runs inline in async runs (without an async form,
    LangChain would hop to a thread on every model call)."""

    async def afunc(state: Any) -> Any:
        return func(state)

    return RunnableLambda(func, afunc=afunc, name=PROMPT_RUNNABLE_NAME)


PromptFn = Callable[[Any, Any, dict[str, Any]], Any]  # (state, runtime, config) -> messages
_PROMPT_KWARGS = ("config", "store", "runtime", "writer")


def _prompt_function(prompt: Any) -> PromptFn | None:
    """A plain prompt (none, text, a system message, a sync function) as a function from the
    state to the model's messages; None for a Runnable or async prompt."""
    if prompt is None:
        return lambda state, runtime, config: _value(state, "messages")
    if isinstance(prompt, str):
        prompt = SystemMessage(content=prompt)
    if isinstance(prompt, SystemMessage):
        system = prompt
        return lambda state, runtime, config: [system, *_value(state, "messages")]
    if isinstance(prompt, Runnable) or inspect.iscoroutinefunction(prompt):
        return None
    return _injecting(prompt) if callable(prompt) else None


def _injecting(fn: Callable[..., Any]) -> PromptFn:
    """A prompt function called with what its signature asks for besides the state
    (`config`, `store`, `runtime`, `writer`), as LangGraph injects them (issue 29)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        params = {}  # type: ignore[assignment]
    wanted = tuple(name for name in _PROMPT_KWARGS if name in params)
    if not wanted:
        return lambda state, runtime, config: fn(state)

    def call(state: Any, runtime: Any, config: dict[str, Any]) -> Any:
        values = {
            "config": config, "runtime": runtime, "store": getattr(runtime, "store", None),
            "writer": getattr(runtime, "stream_writer", None),
        }
        return fn(state, **{name: values[name] for name in wanted})

    return call


def _no_sync_prompt(_: Any) -> Any:
    raise RuntimeError("An async prompt cannot run in a sync invocation")


def _unwrap(model: Any) -> Any:
    if isinstance(model, RunnableSequence):
        return next(
            (s for s in model.steps if isinstance(s, (RunnableBinding, BaseChatModel))), model
        )
    return model


def _should_bind_tools(model: Any, tools: list[Any], builtin: int = 0) -> bool:
    """Bind the tools unless the model already has them bound (then they must match)."""
    model = _unwrap(model)
    if not isinstance(model, RunnableBinding) or "tools" not in model.kwargs:
        return True
    bound = model.kwargs["tools"]
    if len(tools) != len(bound) - builtin:
        raise ValueError(
            "Number of tools in the model.bind_tools() and tools passed to create_react_agent "
            f"must match Got {len(tools)} tools, expected {len(bound) - builtin}"
        )
    names = set()
    for spec in bound:
        if spec.get("type") == "function":
            names.add(spec["function"]["name"])
        elif spec.get("name"):
            names.add(spec["name"])
    if missing := {t.name for t in tools} - names:
        raise ValueError(f"Missing tools '{missing}' in the model.bind_tools()")
    return False


def _chat_model(model: Any) -> BaseChatModel:
    model = _unwrap(model)
    if isinstance(model, RunnableBinding):
        model = model.bound
    if not isinstance(model, BaseChatModel):
        raise TypeError(
            "Expected `model` to be a ChatModel or RunnableBinding (e.g. model.bind_tools(...)), "
            f"got {type(model)}"
        )
    return model


_AI, _TOOL = 1, 2
_KINDS: dict[type, int] = {}  # message class -> _AI, _TOOL or 0, found once per class


def _kind(cls: type) -> int:
    kind = _KINDS[cls] = _TOOL if issubclass(cls, ToolMessage) else (
        _AI if issubclass(cls, AIMessage) else 0
    )
    return kind


def _check_history(messages: Sequence[BaseMessage]) -> None:
    """Every tool call must have its ToolMessage before the model is called again.

    One pass, the exact classes compared first and any other class looked up once: it runs on
    the whole history every model call, and `isinstance` against LangChain's message classes
    (pydantic, ABC metaclass) made two passes cost ~16 µs at 100 messages (now ~7.6 µs; issue
    17's benchmark)."""
    calls: list[Any] = []
    answered = set()
    for message in messages:
        cls = type(message)
        if cls is ToolMessage:
            answered.add(message.tool_call_id)
        elif cls is AIMessage:
            if message.tool_calls:
                calls += message.tool_calls
        elif cls is not HumanMessage:
            kind = _KINDS[cls] if cls in _KINDS else _kind(cls)
            if kind == _TOOL:
                answered.add(message.tool_call_id)  # type: ignore[attr-defined]
            elif kind == _AI and message.tool_calls:  # type: ignore[attr-defined]
                calls += message.tool_calls  # type: ignore[attr-defined]
    missing = [c for c in calls if c["id"] not in answered]
    if missing:
        raise ValueError(
            "Found AIMessages with tool_calls that do not have a corresponding ToolMessage. "
            f"Here are the first few of those tool calls: {missing[:3]}.\n\n"
            "Every tool call (LLM requesting to call a tool) in the message history MUST have "
            "a corresponding ToolMessage (result of a tool invocation to return to the LLM) - "
            "this is required by most LLM providers."
        )


class _Node:
    """A node with a sync and an async form (the engine awaits `_graphrun_acall` in async
    runs), called as `func(state, runtime, config)` like LangGraph's agent nodes."""

    def __init__(self, func: Callable[..., Any], afunc: Callable[..., Any], name: str) -> None:
        self.func = func
        self.afunc = afunc
        self.__name__ = name

    def __call__(self, state: Any, config: dict[str, Any], runtime: Any) -> Any:
        return self.func(state, runtime, config)

    async def _graphrun_acall(self, state: Any, config: dict[str, Any], runtime: Any) -> Any:
        return await self.afunc(state, runtime, config)

    def invoke(self, state: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        """Run the node alone (`graph.nodes["agent"].invoke(...)`, as LangGraph's)."""
        config, runtime = standalone_call(config)
        return self.func(state, runtime, config)

    async def ainvoke(
        self, state: Any, config: dict[str, Any] | None = None, **kwargs: Any
    ) -> Any:
        config, runtime = standalone_call(config)
        return await self.afunc(state, runtime, config)


def _check_args(
    state_schema: Any, response_format: Any, version: str, extra: dict[str, Any]
) -> Any:
    if "config_schema" in extra:  # issue 29: LangGraph's deprecation warning
        renamed("config_schema", "context_schema", stacklevel=4)
    context_schema = extra.pop("config_schema", None)
    if extra:
        raise TypeError(f"create_react_agent() got unexpected keyword arguments: {extra}")
    if version not in ("v1", "v2"):
        raise ValueError(f"Invalid version {version}. Supported versions are 'v1' and 'v2'.")
    if state_schema is not None:
        required = {"messages", "remaining_steps"}
        if response_format is not None:
            required.add("structured_response")
        if missing := required - set(get_type_hints(state_schema)):
            raise ValueError(f"Missing required key(s) {missing} in state_schema")
    return context_schema


def create_react_agent(
    model: Any,
    tools: Sequence[Any] | ToolNode,
    *,
    prompt: Any = None,
    response_format: Any = None,
    pre_model_hook: Any = None,
    post_model_hook: Any = None,
    state_schema: Any = None,
    context_schema: Any = None,
    checkpointer: Any = None,
    store: Any = None,
    interrupt_before: list[str] | None = None,
    interrupt_after: list[str] | None = None,
    debug: bool = False,
    version: str = "v2",
    name: str | None = None,
    **deprecated_kwargs: Any,
) -> Any:
    """A compiled graph that calls `model`, runs the tools it asks for, and repeats until it
    answers without tool calls (LangGraph's `create_react_agent`, same arguments)."""
    context_schema = _check_args(state_schema, response_format, version, deprecated_kwargs) or (
        context_schema
    )
    if state_schema is None:
        state_schema = AgentStateWithStructuredResponse if response_format else AgentState
    if isinstance(tools, ToolNode):
        builtin: list[dict[str, Any]] = []
        tool_node = tools
    else:
        builtin = [t for t in tools if isinstance(t, dict)]
        tool_node = ToolNode([t for t in tools if not isinstance(t, dict)])
    agent = _Agent(model, list(tool_node.tools_by_name.values()), builtin, prompt, name)
    agent.response_format = response_format
    agent.pre_model_hook = pre_model_hook is not None
    agent.pydantic_state = isinstance(state_schema, type) and issubclass(state_schema, BaseModel)
    from ._react_graph import build_graph

    return build_graph(
        agent, tool_node, state_schema, context_schema, pre_model_hook, post_model_hook,
        version,
    ).compile(
        checkpointer=checkpointer,
        store=store,
        interrupt_before=interrupt_before,
        interrupt_after=interrupt_after,
        debug=debug,
        name=name,
    )


class _Agent:
    """The model side of the agent: prompt, tool binding, the call and the structured answer."""

    def __init__(
        self, model: Any, tools: list[Any], builtin: list[dict[str, Any]], prompt: Any,
        name: str | None,
    ) -> None:
        self.model = model
        self.prompt = prompt
        self.name = name
        self.response_format: Any = None
        self.pre_model_hook = False
        self.pydantic_state = False
        self.dynamic = not isinstance(model, (str, Runnable)) and callable(model)
        self.async_dynamic = self.dynamic and inspect.iscoroutinefunction(model)
        self.return_direct = {t.name for t in tools if t.return_direct}
        self.tool_calling = bool(tools)
        self.static: Any = None
        self.bound: Any = None  # the static model, tools bound
        # A plain prompt runs as a function before the model is invoked, not as a
        # `prompt | model` sequence: the model's messages and stream are the same, without
        # two extra LangChain runs per call (~200 µs; LangGraph drops their `seq:step` tags
        # from `messages` metadata anyway).
        self.prompt_fn = _prompt_function(prompt)
        # an async prompt function, called with what it asks for (async runs only)
        self.aprompt_fn = _injecting(prompt) if inspect.iscoroutinefunction(prompt) else None
        if not self.dynamic:
            if isinstance(model, str):
                model = _init_chat_model(model)
            if _should_bind_tools(model, tools, len(builtin)) and (tools or builtin):
                model = model.bind_tools(tools + builtin)
            self.bound = model
            self.static = _prompt_runnable(prompt) | model

    def resolve(self, state: Any, runtime: Any) -> Any:
        if self.dynamic:
            return _prompt_runnable(self.prompt) | self.model(state, runtime)
        return self.static

    async def aresolve(self, state: Any, runtime: Any) -> Any:
        if self.async_dynamic:
            return _prompt_runnable(self.prompt) | await self.model(state, runtime)
        return self.resolve(state, runtime)

    def more_steps_needed(self, state: Any, response: BaseMessage) -> bool:
        """Whether the model asked for tools the recursion limit leaves no room to run."""
        calls = response.tool_calls if isinstance(response, AIMessage) else []
        all_direct = isinstance(response, AIMessage) and all(
            c["name"] in self.return_direct for c in calls
        )
        remaining = _value(state, "remaining_steps", None)
        if remaining is None:
            return False
        return (remaining < 1 and all_direct) or (remaining < 2 and bool(calls))

    def model_input(self, state: Any) -> Any:
        messages = None
        if self.pre_model_hook:
            messages = _value(state, "llm_input_messages")
            expected = "'llm_input_messages' or 'messages' key"
        else:
            expected = "'messages' key"
        messages = messages or _value(state, "messages")
        if messages is None:
            raise ValueError(f"Expected input to call_model to have {expected}, but got {state}")
        _check_history(messages)
        if self.pydantic_state:
            state.messages = messages
        else:
            state["messages"] = messages
        return state

    def answer(self, state: Any, response: Any) -> dict[str, Any]:
        response.name = self.name
        if self.more_steps_needed(state, response):
            response = AIMessage(id=response.id, content=NEED_MORE_STEPS)
        return {"messages": [response]}

    def call(self, state: Any, runtime: Any, config: dict[str, Any]) -> dict[str, Any]:
        if self.async_dynamic:
            raise RuntimeError(
                "Async model callable provided but agent invoked synchronously. Use "
                "agent.ainvoke() or agent.astream(), or provide a sync model callable."
            )
        model_input = self.model_input(state)
        if self.prompt_fn is not None:
            model = self.bound if self.bound is not None else self.model(state, runtime)
            messages = self.prompt_fn(model_input, runtime, config)
            if isinstance(messages, Runnable):  # e.g. `SystemMessage(...) + messages`
                messages = messages.invoke(model_input, config)
            return self.answer(state, model.invoke(messages, config))
        return self.answer(state, self.resolve(state, runtime).invoke(model_input, config))

    async def acall(self, state: Any, runtime: Any, config: dict[str, Any]) -> dict[str, Any]:
        model_input = self.model_input(state)
        prompt = self.prompt_fn or self.aprompt_fn
        if prompt is not None:
            if self.bound is not None:
                model = self.bound
            elif self.async_dynamic:
                model = await self.model(state, runtime)
            else:
                model = self.model(state, runtime)
            messages = prompt(model_input, runtime, config)
            if self.aprompt_fn is not None:
                messages = await messages
            if isinstance(messages, Runnable):  # run as LangGraph runs a returned runnable
                messages = await messages.ainvoke(model_input, config)
            return self.answer(state, await model.ainvoke(messages, config))
        model = await self.aresolve(state, runtime)
        return self.answer(state, await model.ainvoke(model_input, config))

    def _structured(self, state: Any, model: Any) -> tuple[Any, Any]:
        messages = _value(state, "messages")
        schema = self.response_format
        if isinstance(schema, tuple):
            system, schema = schema
            messages = [SystemMessage(content=system), *messages]
        return _chat_model(model).with_structured_output(schema), messages

    def structured(self, state: Any, runtime: Any, config: dict[str, Any]) -> dict[str, Any]:
        if self.async_dynamic:
            raise RuntimeError(
                "Async model callable provided but agent invoked synchronously. Use "
                "agent.ainvoke() or agent.astream(), or provide a sync model callable."
            )
        model, messages = self._structured(state, self.resolve(state, runtime))
        return {"structured_response": model.invoke(messages, config)}

    async def astructured(
        self, state: Any, runtime: Any, config: dict[str, Any]
    ) -> dict[str, Any]:
        model, messages = self._structured(state, await self.aresolve(state, runtime))
        return {"structured_response": await model.ainvoke(messages, config)}

    def tool_sends(self, state: Any, message: AIMessage) -> list[Send]:
        """One `Send` per tool call, each carrying the state it was made in ("v2")."""
        return [
            Send(
                "tools",
                ToolCallWithContext(  # type: ignore[typeddict-unknown-key]
                    __type="tool_call_with_context", tool_call=call, state=state
                ),
            )
            for call in message.tool_calls
        ]


def _init_chat_model(model: str) -> Any:
    try:
        from langchain.chat_models import init_chat_model  # type: ignore[import-not-found]
    except ImportError:
        raise ImportError(
            "Please install langchain (`pip install langchain`) to use '<provider>:<model>' "
            "string syntax for `model` parameter."
        ) from None
    return init_chat_model(model)


def input_schema_for(state_schema: Any, pre_model_hook: Any) -> Any:
    """With a pre-model hook the agent also reads `llm_input_messages`."""
    if pre_model_hook is None:
        return state_schema
    if isinstance(state_schema, type) and issubclass(state_schema, BaseModel):
        from pydantic import create_model

        return create_model(
            "CallModelInputSchema", llm_input_messages=(list[AnyMessage], ...),
            __base__=state_schema,
        )

    class CallModelInputSchema(state_schema):  # type: ignore[valid-type,misc]
        llm_input_messages: list[AnyMessage]

    return CallModelInputSchema


def make_node(func: Callable[..., Any], afunc: Callable[..., Any], name: str) -> _Node:
    return _Node(func, afunc, name)


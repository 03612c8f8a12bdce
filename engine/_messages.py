"""Messages: the `add_messages` reducer and `MessagesState` (plain dicts or LangChain objects).

Messages are dicts (`{"type"|"role", "content", "id"}`) or, when langchain-core is installed and
the user passes them, LangChain message objects; both are appended, replaced by id and removed
with a `RemoveMessage` / `{"type": "remove", "id": ...}`.
"""

from __future__ import annotations

import operator
import uuid
from typing import Annotated, Any, TypedDict

from ._channels import mark_pure

__all__ = ["REMOVE_ALL_MESSAGES", "MessagesState", "add_messages", "emit_message"]

REMOVE_ALL_MESSAGES = "__remove_all__"


def _get(message: Any, field: str) -> Any:
    if isinstance(message, dict):
        return message.get(field)
    return getattr(message, field, None)


def _is_remove(message: Any) -> bool:
    return _get(message, "type") == "remove"


def _with_id(message: Any) -> Any:
    if _get(message, "id"):
        return message
    new_id = str(uuid.uuid4())
    if isinstance(message, dict):
        return {**message, "id": new_id}
    try:
        message.id = new_id
    except Exception:  # frozen objects keep no id; they can only be appended
        pass
    return message


def _coerce(messages: Any) -> list[Any]:
    if not isinstance(messages, list):
        messages = [messages]
    out = []
    for message in messages:
        if isinstance(message, str):
            message = {"type": "human", "content": message}
        elif isinstance(message, tuple) and len(message) == 2:
            message = {"type": message[0], "content": message[1]}
        out.append(_langchain(message))
    return out


def _langchain(message: Any) -> Any:
    """Dict messages become LangChain objects when langchain-core is importable (as LangGraph)."""
    if not isinstance(message, dict):
        return message
    lc = _LC or _load_langchain()
    if lc is None:
        return message
    classes, convert = lc
    try:
        direct = _direct(message, classes)
        return direct if direct is not None else convert([message])[0]
    except Exception:  # not a message shape LangChain knows: keep the dict
        return message


_LC: tuple[dict[str, Any], Any] | None = None
_LC_MISSING = False
# The dict keys `_direct` handles; any other key (additional kwargs, response metadata,
# artifacts, ...) takes LangChain's own conversion.
_DIRECT_KEYS = frozenset({"role", "type", "content", "id", "name", "tool_call_id", "tool_calls"})


def _load_langchain() -> tuple[dict[str, Any], Any] | None:
    """Message classes by role and `convert_to_messages`, imported once (None without it)."""
    global _LC, _LC_MISSING
    if _LC_MISSING:
        return None
    try:
        from langchain_core import messages as lc
    except ImportError:
        _LC_MISSING = True
        return None
    classes = {
        "human": lc.HumanMessage,
        "user": lc.HumanMessage,
        "ai": lc.AIMessage,
        "assistant": lc.AIMessage,
        "system": lc.SystemMessage,
        "tool": lc.ToolMessage,
    }
    _LC = (classes, lc.convert_to_messages)
    return _LC


def _direct(message: dict[str, Any], classes: dict[str, Any]) -> Any:
    """LangChain's dict conversion for the plain shapes, without its generic dispatch.

    The same constructor call `convert_to_messages` ends in (tests compare the two); None for
    anything else, which then goes through LangChain itself.
    """
    if not _DIRECT_KEYS.issuperset(message) or "content" not in message:
        return None
    if "role" in message:
        if "type" in message:  # LangChain keeps `type` as an additional kwarg then
            return None
        role = message["role"]
    else:
        role = message.get("type")
    cls = classes.get(role) if isinstance(role, str) else None
    if cls is None:
        return None
    kwargs: dict[str, Any] = {}
    for key in ("name", "tool_call_id", "id"):
        value = message.get(key)
        if value is not None:
            kwargs[key] = value
    tool_calls = message.get("tool_calls")
    if tool_calls is not None:
        if any("function" in call for call in tool_calls):  # OpenAI shape: LangChain parses it
            return None
        kwargs["tool_calls"] = list(tool_calls)
    content = message["content"] or ""
    if role == "tool":
        return cls(content=content, artifact=None, **kwargs)
    return cls(content=content, **kwargs)


def _ids(messages: list[Any]) -> Any:
    """The ids of a message list, gathered at C speed (attribute or key lookups via map)."""
    if not messages:
        return ()
    if all(isinstance(m, dict) for m in messages[:1]) and all(isinstance(m, dict) for m in messages):
        return map(operator.methodcaller("get", "id"), messages)
    try:
        return map(operator.attrgetter("id"), messages)
    except AttributeError:  # a mixed list: the slow, general way
        return [_get(m, "id") for m in messages]


def add_messages(left: Any, right: Any) -> list[Any]:
    """Append `right` to `left`, replacing messages with the same id and honouring removals.

    `left` is this reducer's own earlier output (already messages with ids), so only `right`
    is converted; the id index of `left` is built only when `right` could replace or remove
    something, which keeps a growing conversation O(new messages) per step.
    """
    if isinstance(left, list) and all(_get(m, "id") for m in left[-1:]):
        left_list = left
    else:
        left_list = [_with_id(m) for m in _coerce(left)]
    fresh = _coerce(right)
    if not any(_get(m, "id") or _is_remove(m) for m in fresh):
        # Every new message gets a fresh uuid4 here, so none can replace or remove one of
        # `left`: append without building `left`'s id set (O(history) per step otherwise).
        return [*left_list, *(_with_id(m) for m in fresh)]
    right_list = [m if _get(m, "id") else _with_id(m) for m in fresh]
    if not any(_is_remove(m) for m in right_list):
        new_ids = {_get(m, "id") for m in right_list}
        if len(new_ids) == len(right_list) and new_ids.isdisjoint(_ids(left_list)):
            return [*left_list, *right_list]  # nothing to replace: append (the common case)
    for index, message in enumerate(right_list):
        if _is_remove(message) and _get(message, "id") == REMOVE_ALL_MESSAGES:
            return [m for m in right_list[index + 1 :]]
    merged = list(left_list)
    position = {_get(m, "id"): i for i, m in enumerate(merged)}
    removed: set[Any] = set()
    for message in right_list:
        mid = _get(message, "id")
        if _is_remove(message):
            if mid not in position:
                raise ValueError(
                    f"Attempting to delete a message with an ID that doesn't exist ('{mid}')"
                )
            removed.add(mid)
            continue
        if mid in position:
            merged[position[mid]] = message
        else:
            position[mid] = len(merged)
            merged.append(message)
    return [m for m in merged if _get(m, "id") not in removed] if removed else merged


# The fold is deterministic but for the uuids it gives id-less messages: reusing a router's
# preview on apply keeps the ids the router saw, where running it again would mint new ones.
mark_pure(add_messages)


class MessagesState(TypedDict):
    """A state with one `messages` key reduced by `add_messages`."""

    messages: Annotated[list[Any], add_messages]


# -- the `messages` stream mode ---------------------------------------------------------------

TAG_NOSTREAM = "nostream"


def is_message(value: Any) -> bool:
    """A chat message: a LangChain message object, or a dict with content and a type/role."""
    if isinstance(value, dict):
        return "content" in value and ("type" in value or "role" in value)
    return hasattr(value, "content") and hasattr(value, "type") and hasattr(value, "id")


def messages_in(value: Any) -> list[Any]:
    """The messages held by a state update or input (top-level values and lists of them), or
    by what a called `@task` returned: a message, or a list of them (as LangGraph)."""
    if isinstance(value, dict):
        items: Any = value.values()
    elif isinstance(value, (list, tuple)):
        return [m for m in value if is_message(m)]
    elif is_message(value):
        return [value]
    elif hasattr(value, "__dataclass_fields__") or hasattr(value, "model_fields"):
        from ._schema import object_to_dict

        items = (object_to_dict(value) or {}).values()
    else:
        return []
    found: list[Any] = []
    for item in items:
        if isinstance(item, list):
            found.extend(m for m in item if is_message(m))
        elif is_message(item):
            found.append(item)
    return found


def message_id(message: Any) -> Any:
    return _get(message, "id")


def emit_message(
    message: Any, *, tags: list[str] | None = None, metadata: dict[str, Any] | None = None
) -> None:
    """Stream a message or a token from node code in `messages` mode, with no framework.

    `message` is a message dict (``{"type": "AIMessageChunk", "content": "tok", "id": "m1"}``),
    a LangChain message object, or a plain string (a token of this task's one AI message).
    Messages streamed here are not emitted again when the node returns them (same id).
    """
    from ._context import _scope

    scope = _scope("emit_message")
    if isinstance(message, str):
        message = {"type": "AIMessageChunk", "content": message, "id": f"run-{scope.task.id}"}
    extra = dict(metadata or {})
    if tags:
        extra["tags"] = list(tags)
    scope.run.push_message(scope.task, message, extra)


_HANDLER_CLASS: Any = None
_MANAGER_CLASS: Any = None
# LangGraph runs a node as a sequence whose first step is the node's function, so LangChain
# gives the runs it starts this (non-inherited) tag; the events mode shows it, `messages` drops
# it with every `seq:step:*` tag, as LangGraph does.
_NODE_TAGS = ["seq:step:1"]


def langchain_callbacks(run: Any, task: Any) -> Any:
    """The `callbacks` of a task's config: a manager holding one token-streaming handler.

    None when langchain-core is not already imported (a user's LangChain model imports it):
    graphrun never imports it on its own. A callback *manager*, not a list, because LangChain
    merges configs as it binds them (`with_config`, `bind`, `bind_tools`: the task config
    inherited through the context plus the same config passed explicitly): two lists are
    concatenated, which registered this handler twice and streamed every token twice (issue
    17); managers are merged as a union of handlers, so each LLM run reaches it exactly once,
    as under LangGraph, whose node configs carry a manager too.
    """
    import sys

    if "langchain_core" not in sys.modules:
        return None
    global _HANDLER_CLASS, _MANAGER_CLASS
    if _HANDLER_CLASS is None:
        from langchain_core.callbacks import CallbackManager

        _HANDLER_CLASS = _make_handler_class()
        _MANAGER_CLASS = CallbackManager
    handler = _HANDLER_CLASS(run, task)
    tags = list(_NODE_TAGS)  # its own list: LangChain may add tags to a manager in place
    return _MANAGER_CLASS(handlers=[handler], inheritable_handlers=[handler], tags=tags)


def _user_tags(tags: list[str]) -> list[str]:
    """The tags `messages` metadata shows: LangChain's `seq:step:N` bookkeeping left out."""
    return [tag for tag in tags if not tag.startswith("seq:step")]


def _make_handler_class() -> Any:
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.tracers._streaming import _StreamingCallbackHandler

    class MessagesHandler(BaseCallbackHandler, _StreamingCallbackHandler):
        """Streams the tokens of the chat models a task calls, in `messages` and `events`.

        Attached whenever one of those modes is on, also where nothing of it is shown (a
        subgraph without subgraphs=True), because its presence makes LangChain stream the
        model's answer, which shapes the message (ids, chunks) as under LangGraph.
        """

        run_inline = True

        def __init__(self, run: Any, task: Any) -> None:
            self.run = run
            self.task = task
            self.active: dict[Any, dict[str, Any]] = {}  # run id -> `messages` metadata
            # run id -> (name, own tags, input messages, metadata) for `events`
            self.described: dict[Any, tuple[str, list[str], Any, dict[str, Any]]] = {}
            self.streamed: set[Any] = set()
            # `events` of the LangChain runs around a model (chains, prompts, parsers, retry
            # wrappers, tools; issue 17): run id -> [kind, name, tags, metadata, inputs]
            self.runs: dict[Any, list[Any]] = {}
            self.parent_of: dict[Any, Any] = {}  # run id -> the LangChain run it runs in
            self.tapped: set[Any] = set()

        def tap_output_iter(self, run_id: Any, output: Any) -> Any:
            if self.run.events is None or run_id not in self.runs or run_id in self.tapped:
                return output
            self.tapped.add(run_id)
            return self._tap(run_id, output)

        def tap_output_aiter(self, run_id: Any, output: Any) -> Any:
            if self.run.events is None or run_id not in self.runs or run_id in self.tapped:
                return output
            self.tapped.add(run_id)
            return self._atap(run_id, output)

        def _tap(self, run_id: Any, output: Any) -> Any:
            for chunk in output:
                self._run_event(run_id, "stream", {"chunk": chunk})
                yield chunk

        async def _atap(self, run_id: Any, output: Any) -> Any:
            async for chunk in output:
                self._run_event(run_id, "stream", {"chunk": chunk})
                yield chunk

        def _meta(self, metadata: Any) -> dict[str, Any]:
            meta = dict(metadata or {})
            ns = self.task.ns  # a called `@task` shows its whole namespace (issue 17)
            meta["checkpoint_ns"] = ns if self.task.node.writer is not None else ns.split("|")[0]
            return meta

        def _started(self, run_id: Any, parent_run_id: Any, info: list[Any], data: Any) -> None:
            # the node's own LangChain metadata, which a chat model overrides with its own
            info[3].setdefault("ls_integration", "langgraph")
            if parent_run_id is not None:
                self.parent_of[run_id] = parent_run_id
            self.runs[run_id] = info
            self._run_event(run_id, "start", data)

        def on_chain_start(
            self, serialized: Any, inputs: Any, *, run_id: Any, parent_run_id: Any = None,
            tags: Any = None, metadata: Any = None, run_type: Any = None, name: Any = None,
            **kwargs: Any,
        ) -> None:
            if self.run.events is None:
                return
            # a streamed runnable starts with a placeholder input: its input shows at the end
            known = inputs != {"input": ""}
            info = [run_type or "chain", _run_name(name, serialized), list(tags or ()),
                    self._meta(metadata), inputs if known else None]
            self._started(run_id, parent_run_id, info, {"input": inputs} if known else {})

        def on_chain_end(self, outputs: Any, *, run_id: Any, inputs: Any = None,
                         **kwargs: Any) -> None:
            info = self.runs.get(run_id)
            if info is not None:
                start = info[4]
                self._run_event(run_id, "end", {"output": outputs, "input": inputs or start or {}})
                self._forget_run(run_id)

        def on_chain_error(self, error: BaseException, *, run_id: Any, **kwargs: Any) -> None:
            self._forget_run(run_id)  # no event (as astream_events)

        def on_tool_start(
            self, serialized: Any, input_str: str, *, run_id: Any, parent_run_id: Any = None,
            tags: Any = None, metadata: Any = None, name: Any = None, inputs: Any = None,
            **kwargs: Any,
        ) -> None:
            if self.run.events is None:
                return
            info = [
                "tool", _run_name(name, serialized), list(tags or ()), self._meta(metadata),
                inputs, kwargs.get("tool_call_id"),
            ]
            self._started(run_id, parent_run_id, info, {"input": inputs or {}})

        def on_tool_end(self, output: Any, *, run_id: Any, **kwargs: Any) -> None:
            info = self.runs.get(run_id)
            if info is not None:
                self._run_event(run_id, "end", {"output": output, "input": info[4]})
                self._forget_run(run_id)

        def on_tool_error(self, error: BaseException, *, run_id: Any, **kwargs: Any) -> None:
            info = self.runs.get(run_id)
            if info is not None:
                call_id = kwargs.get("tool_call_id") or info[5]
                data = {"error": error, "input": info[4], "tool_call_id": call_id}
                self._run_event(run_id, "error", data)
                self._forget_run(run_id)

        def _run_event(self, run_id: Any, stage: str, data: dict[str, Any]) -> None:
            events = self.run.events
            info = self.runs.get(run_id)
            if events is not None and info is not None:
                kind, name, tags, metadata = info[:4]
                events.chat_model(self.task, f"on_{kind}_{stage}", name, str(run_id), data,
                                  metadata, tags, self._ancestors(run_id))

        def _ancestors(self, run_id: Any) -> list[str]:
            chain: list[str] = []
            parent = self.parent_of.get(run_id)
            while parent is not None and len(chain) < 100:
                chain.append(str(parent))
                parent = self.parent_of.get(parent)
            return chain[::-1]

        def _forget_run(self, run_id: Any) -> None:
            self.runs.pop(run_id, None)
            self.tapped.discard(run_id)

        def on_chat_model_start(
            self, serialized: Any, messages: Any, *, run_id: Any, tags: Any = None,
            metadata: Any = None, parent_run_id: Any = None, **kwargs: Any,
        ) -> None:
            meta = self._meta(metadata)
            if self.run.events is not None:  # LangGraph's metadata, the run's own tags
                if parent_run_id is not None:
                    self.parent_of[run_id] = parent_run_id
                name = kwargs.get("name") or (serialized or {}).get("name") or "ChatModel"
                self.described[run_id] = (name, list(tags or ()), messages, dict(meta))
                self._event("on_chat_model_start", run_id, {"input": {"messages": messages}})
            if tags and TAG_NOSTREAM in tags:  # kept out of `messages` only (as LangGraph)
                return
            shown = _user_tags(tags) if tags else None
            if shown:
                meta["tags"] = shown
            meta["graph_node"] = self.task.name  # the seed's name for langgraph_node (SPEC §1)
            self.active[run_id] = meta

        def on_llm_new_token(
            self, token: str, *, chunk: Any = None, run_id: Any, **kwargs: Any
        ) -> None:
            message = getattr(chunk, "message", None)
            if message is None:
                return
            meta = self.active.get(run_id)
            if meta is not None:
                self.streamed.add(run_id)
                self.run.push_message(self.task, message, meta, replace=True)
            if self.run.events is not None:
                self._event("on_chat_model_stream", run_id, {"chunk": message})

        def on_llm_end(self, response: Any, *, run_id: Any, **kwargs: Any) -> None:
            meta = self.active.get(run_id)
            output = None
            for generations in response.generations:
                for generation in generations:
                    output = getattr(generation, "message", None)
                    if meta is not None and output is not None and run_id not in self.streamed:
                        if not self._seen(output):  # e.g. a model echoing its input
                            self.run.push_message(self.task, output, meta, replace=True)
            described = self.described.get(run_id)
            if described is not None:
                data = {"output": output, "input": {"messages": described[2]}}
                self._event("on_chat_model_end", run_id, data)
            self._forget(run_id)

        def on_llm_error(self, error: BaseException, *, run_id: Any, **kwargs: Any) -> None:
            self._forget(run_id)

        def _seen(self, message: Any) -> bool:
            """A whole (unstreamed) answer already streamed, or one of the task's inputs, is
            not streamed again (as LangGraph)."""
            mid = message_id(message)
            if mid is None:
                return False
            if mid in self.run.root.seen_messages:
                return True
            return any(message_id(m) == mid for m in messages_in(self.task.input))

        def _forget(self, run_id: Any) -> None:
            self.active.pop(run_id, None)
            self.described.pop(run_id, None)
            self.streamed.discard(run_id)

        def _event(self, kind: str, run_id: Any, data: dict[str, Any]) -> None:
            events = self.run.events
            described = self.described.get(run_id)
            if events is not None and described is not None:
                name, tags, _, metadata = described
                events.chat_model(self.task, kind, name, str(run_id), data, metadata, tags,
                                  self._ancestors(run_id))

    return MessagesHandler


def _run_name(name: Any, serialized: Any) -> str:
    """A LangChain run's name: given, else its serialized name or class (as LangChain)."""
    if name is not None:
        return str(name)
    if serialized:
        if "name" in serialized:
            return str(serialized["name"])
        if "id" in serialized:
            return str(serialized["id"][-1])
    return "Unnamed"

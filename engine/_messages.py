"""Messages: the `add_messages` reducer and `MessagesState` (plain dicts or LangChain objects).

Messages are dicts (`{"type"|"role", "content", "id"}`) or, when langchain-core is installed and
the user passes them, LangChain message objects; both are appended, replaced by id and removed
with a `RemoveMessage` / `{"type": "remove", "id": ...}`.
"""

from __future__ import annotations

import operator
import threading
import uuid
from collections import OrderedDict
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


# Issue 32: the ids of a thread's messages, kept between turns. A message with an id (every
# model's reply) made each turn read the id of every earlier message (~1 us each on LangChain
# objects: 2 ms a turn at 2,000 messages). The saver hands a thread's next turn the same message
# objects, so the index is found again by its first message and checked by identity against a
# snapshot of the list it was built for; the least recently used threads are dropped.
_INDEXED = 64
_indexes: OrderedDict[int, tuple[list[Any], set[Any]]] = OrderedDict()
_indexes_lock = threading.Lock()


def _known_ids(messages: list[Any]) -> set[Any]:
    """The ids of `messages`, from the index of an earlier turn when it is a prefix of them."""
    if not messages:
        return set()
    with _indexes_lock:
        found = _indexes.get(id(messages[0]))
    if found is not None:
        items, ids = found
        # List equality checks identity first, item by item in C (a value-equal message has
        # the same id, so it also holds)
        if len(items) <= len(messages) and messages[: len(items)] == items:
            if len(items) < len(messages):
                ids = ids | set(_ids(messages[len(items):]))
            return ids
    return set(_ids(messages))


def _remember_ids(merged: list[Any], known: set[Any], added: set[Any]) -> None:
    """Keep the ids of `merged` (those of its prefix `known` and the `added` ones)."""
    known = known | added
    with _indexes_lock:
        _indexes[id(merged[0])] = (list(merged), known)
        _indexes.move_to_end(id(merged[0]))
        if len(_indexes) > _INDEXED:
            _indexes.popitem(last=False)


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
        known = _known_ids(left_list)
        if len(new_ids) == len(right_list) and new_ids.isdisjoint(known):
            merged = [*left_list, *right_list]  # nothing to replace: append (the common case)
            _remember_ids(merged, known, new_ids)
            return merged
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


def emit_returned(run: Any, task: Any) -> None:
    """Messages a node returned without streaming them are emitted whole, once per id, as
    LangGraph's handler does (issue 27): message objects only (a dict is not a message there),
    and not those a subgraph sent up with `Command(graph=Command.PARENT)`."""
    seen = run.root.seen_messages
    inputs = {message_id(m) for m in messages_in(task.input)}
    # a message some streamed node had as input is not news to its caller either (LangGraph
    # records every such node's input ids: a subgraph's output does not repeat them; issue 29)
    seen.update(mid for mid in inputs if mid is not None)
    if task.update is None or (run.sent_up and task.id in run.sent_up):
        return
    updates = task.update if isinstance(task.update, list) else (task.update,)
    for message in (m for update in updates for m in messages_in(update)):
        if isinstance(message, dict):
            continue
        mid = message_id(message)
        if mid is None:
            run.push_message(task, _with_id(message), {})
        elif mid not in seen and mid not in inputs:
            run.push_message(task, message, {})


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
#: in the root run's `configurable`: a v3 run, its chat models stream content-block events
#: (LangGraph's key for it; `__pregel_` keys stay out of checkpoint events, issue 29)
PROTOCOL_KEY = "__pregel_stream_messages_v2"
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
    handler = _protocol_handler(run, task) or _HANDLER_CLASS(run, task)
    tags = list(_NODE_TAGS)  # its own list: LangChain may add tags to a manager in place
    return _MANAGER_CLASS(handlers=[handler], inheritable_handlers=[handler], tags=tags)


def user_tags(tags: list[str]) -> list[str]:
    """The tags `messages` metadata shows: LangChain's `seq:step:N` bookkeeping left out."""
    return [tag for tag in tags if not tag.startswith("seq:step")]


def _protocol_handler(run: Any, task: Any) -> Any:
    """The handler of a v3 run (content-block events) or of a run streaming `tools` (issue
    29), else None."""
    conf = run.root.config.get("configurable")
    # a graph's own `.stream()` inside a node of a v3 run streams as its caller asked (v1)
    protocol = bool(conf and conf.get(PROTOCOL_KEY)) and (
        run.sink is run.root.sink)
    tools = "tools" in run.sink.modes
    if not protocol and not tools:
        return None
    from ._lc_tools import handler_class

    return handler_class(protocol, tools)(run, task)


def _make_handler_class() -> Any:
    from ._lc_handler import MessagesHandler

    return MessagesHandler


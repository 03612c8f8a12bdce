"""Messages: the `add_messages` reducer and `MessagesState` (plain dicts or LangChain objects).

Messages are dicts (`{"type"|"role", "content", "id"}`) or, when langchain-core is installed and
the user passes them, LangChain message objects; both are appended, replaced by id and removed
with a `RemoveMessage` / `{"type": "remove", "id": ...}`.
"""

from __future__ import annotations

import functools
import operator
import sys
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
    """Dict messages become LangChain objects when langchain-core is importable, and chunks
    whole messages (as LangGraph, whose state never keeps a chunk; issue 29)."""
    if not isinstance(message, dict):
        if _CHUNK is not None and isinstance(message, _CHUNK[0]):
            return _CHUNK[1](message)
        if _CHUNK is None and "langchain_core" in sys.modules and _load_langchain():
            return _langchain(message)
        return message
    lc = _LC or _load_langchain()
    if lc is None:
        return message
    classes, convert = lc
    try:
        direct = _direct(message, classes)
        message = direct if direct is not None else convert([message])[0]
    except Exception:  # not a message shape LangChain knows: keep the dict
        return message
    return _CHUNK[1](message) if _CHUNK and isinstance(message, _CHUNK[0]) else message


_LC: tuple[dict[str, Any], Any] | None = None
#: LangChain's chunk base class and its chunk -> message conversion, once loaded
_CHUNK: tuple[type, Any] | None = None
_LC_MISSING = False
# The dict keys `_direct` handles; any other key (additional kwargs, response metadata,
# artifacts, ...) takes LangChain's own conversion.
_DIRECT_KEYS = frozenset({"role", "type", "content", "id", "name", "tool_call_id", "tool_calls"})


def _load_langchain() -> tuple[dict[str, Any], Any] | None:
    """Message classes by role and `convert_to_messages`, imported once (None without it)."""
    global _LC, _LC_MISSING, _CHUNK
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
    _CHUNK = (lc.BaseMessageChunk, lc.message_chunk_to_message)
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


def add_messages(
    left: Any = None, right: Any = None, *, format: str | None = None  # noqa: A002
) -> Any:
    """Append `right` to `left`, replacing messages with the same id and honouring removals.

    `add_messages(format="langchain-openai")` (no lists) is the reducer whose result is in
    OpenAI's content format, as LangGraph's (issue 29).
    """
    if left is None or right is None:
        if left is not None or right is not None:
            given = "left" if left is not None else "right"
            raise ValueError(
                "Must specify non-null arguments for both 'left' and 'right'. "
                f"Only received: '{given}'."
            )
        return mark_pure(functools.partial(add_messages, format=format))
    merged = _merge(left, right)
    if format is None:
        return merged
    if format == "langchain-openai":
        return _openai_format(merged)
    raise ValueError(f"Unrecognized {format=}. Expected one of 'langchain-openai', None.")


def _openai_format(messages: list[Any]) -> list[Any]:
    """Messages with OpenAI-shaped content (text and image_url blocks, tool results as
    `ToolMessage`s): LangChain's own round trip, as LangGraph."""
    from langchain_core.messages import convert_to_messages, convert_to_openai_messages

    return convert_to_messages(convert_to_openai_messages(messages))


# Issue 29: the lists this reducer returned, by identity. Its `left` is nearly always its own
# last output, already whole messages with ids; any other `left` (a user's call, a restored
# checkpoint) is checked once for chunks and message-likes, which LangGraph converts too.
_OUTPUTS = 64
_outputs: OrderedDict[int, list[Any]] = OrderedDict()
_plain_types: dict[type, bool] = {}


def _settled(left: list[Any]) -> bool:
    """`left` needs no conversion: our own output, or id'd messages none a chunk or a dict
    LangChain would convert."""
    if not left or _outputs.get(id(left)) is left:
        return True
    if not _get(left[-1], "id"):
        return False
    return all(_plain(t) for t in set(map(type, left)))


def _plain(cls: type) -> bool:
    if (known := _plain_types.get(cls)) is not None:
        return known
    lc = _LC or (_load_langchain() if "langchain_core" in sys.modules else None)
    if cls is dict or cls is tuple or cls is str:
        plain = cls is dict and lc is None  # no LangChain: dicts are the messages
    else:
        plain = _CHUNK is None or not issubclass(cls, _CHUNK[0])
    if lc is not None or _LC_MISSING:  # else LangChain may load later and change the answer
        _plain_types[cls] = plain
    return plain


def _remember_output(merged: list[Any]) -> list[Any]:
    with _indexes_lock:
        _outputs[id(merged)] = merged
        if len(_outputs) > _OUTPUTS:
            _outputs.popitem(last=False)
    return merged


def _merge(left: Any, right: Any) -> list[Any]:
    """`add_messages` proper. Only `right` is normally converted (see `_settled`); `left`'s
    id index is built only when `right` could replace or remove something, which keeps a
    growing conversation O(new messages) per step."""
    if isinstance(left, list) and _settled(left):
        left_list = left
    else:
        left_list = [_with_id(m) for m in _coerce(left)]
    fresh = _coerce(right)
    if not any(_get(m, "id") or _is_remove(m) for m in fresh):
        # Every new message gets a fresh uuid4 here, so none can replace or remove one of
        # `left`: append without building `left`'s id set (O(history) per step otherwise).
        return _remember_output([*left_list, *(_with_id(m) for m in fresh)])
    right_list = [m if _get(m, "id") else _with_id(m) for m in fresh]
    if not any(_is_remove(m) for m in right_list):
        new_ids = {_get(m, "id") for m in right_list}
        known = _known_ids(left_list)
        if len(new_ids) == len(right_list) and new_ids.isdisjoint(known):
            merged = [*left_list, *right_list]  # nothing to replace: append (the common case)
            _remember_ids(merged, known, new_ids)
            return _remember_output(merged)
    return _remember_output(_replace_and_remove(left_list, right_list))


def _replace_and_remove(left_list: list[Any], right_list: list[Any]) -> list[Any]:
    for index in range(len(right_list) - 1, -1, -1):  # the last "remove all" wins
        message = right_list[index]
        if _is_remove(message) and _get(message, "id") == REMOVE_ALL_MESSAGES:
            return right_list[index + 1 :]
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
            removed.discard(mid)  # removed, then added again: the later message stays
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


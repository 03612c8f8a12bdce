"""A2A v0.3 wire shapes (the JSON the official `a2a-sdk` client reads), built from run facts.

IO-free: `a2a.py` gathers a run's state and values; this module turns them into Messages,
Tasks, status/artifact update events and agent cards, and turns an incoming Message's parts
into graph input. Field names are A2A's camelCase; every object carries its `kind`.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

import msgspec

from ..encode import dumps
from ._jsonrpc import INVALID_PARAMS, RpcError

__all__ = [
    "A2AMessage",
    "CancelParams",
    "GetParams",
    "SendConfiguration",
    "SendParams",
    "TaskFacts",
    "agent_card",
    "artifact_update",
    "input_of",
    "reply_of",
    "state_of",
    "status_update",
    "task",
]

PROTOCOL_VERSION = "0.3.0"
INPUT_MODES = ["text/plain", "application/json"]
OUTPUT_MODES = ["text/plain"]
TERMINAL = frozenset({"completed", "canceled", "failed", "rejected"})
CONTENT_TYPE_NOT_SUPPORTED = -32005  # A2A's ContentTypeNotSupportedError


# -- requests ------------------------------------------------------------------------------------


class A2AMessage(msgspec.Struct, rename="camel", kw_only=True):
    message_id: str
    role: Literal["user", "agent"]
    parts: list[dict[str, Any]]
    context_id: str | None = None
    task_id: str | None = None
    metadata: dict[str, Any] | None = None


class SendConfiguration(msgspec.Struct, rename="camel", kw_only=True):
    blocking: bool | None = None
    history_length: int | None = None
    accepted_output_modes: list[str] | None = None
    push_notification_config: dict[str, Any] | None = None


class SendParams(msgspec.Struct, rename="camel", kw_only=True):
    message: A2AMessage
    configuration: SendConfiguration | None = None
    metadata: dict[str, Any] | None = None


class GetParams(msgspec.Struct, rename="camel", kw_only=True):
    id: str
    history_length: int | None = None
    metadata: dict[str, Any] | None = None


class CancelParams(msgspec.Struct, rename="camel", kw_only=True):
    id: str
    metadata: dict[str, Any] | None = None


def input_of(message: A2AMessage) -> tuple[str, dict[str, Any]]:
    """(text, data): text parts joined by newlines, data parts merged (other state keys).

    A file part is ContentTypeNotSupported; an unknown part, or no text and no data, is
    invalid params.
    """
    texts: list[str] = []
    data: dict[str, Any] = {}
    for part in message.parts:
        kind = part.get("kind") or part.get("type")  # `type`: pre-0.3 clients
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "data" and isinstance(part.get("data"), dict):
            data.update(part["data"])
        elif kind == "file":
            raise RpcError(CONTENT_TYPE_NOT_SUPPORTED,
                           "File parts are not supported: send text or data parts")
        else:
            raise RpcError(INVALID_PARAMS, f"Unsupported message part: {dumps(part).decode()}")
    if not texts and not data:
        raise RpcError(INVALID_PARAMS, "The message has no text or data parts")
    return "\n".join(texts), data


# -- tasks ---------------------------------------------------------------------------------------


class TaskFacts(msgspec.Struct, kw_only=True):
    """What a Task is built from: ids, A2A state, the run's final values and errors."""

    task_id: str
    context_id: str
    run_id: str
    state: str
    timestamp: str
    values: Any = None
    interrupts: list[Any] = []
    error: dict[str, Any] | None = None
    input_message_id: str | None = None
    metadata: dict[str, Any] = {}


def state_of(run_status: str, interrupted: bool) -> str:
    """A run's status as an A2A TaskState."""
    if run_status == "success":
        return "input-required" if interrupted else "completed"
    return {
        "pending": "submitted",
        "running": "working",
        "error": "failed",
        "timeout": "failed",
        "interrupted": "canceled",
    }.get(run_status, "unknown")


def _message(role: str, text: str, context_id: str, task_id: str | None,
             message_id: str | None = None) -> dict[str, Any]:
    out = {
        "kind": "message",
        "messageId": message_id or str(uuid.uuid4()),
        "role": role,
        "parts": [{"kind": "text", "text": text}],
        "contextId": context_id,
    }
    if task_id is not None:
        out["taskId"] = task_id
    return out


def _field(message: Any, name: str) -> Any:
    return message.get(name) if isinstance(message, dict) else getattr(message, name, None)


def _text(content: Any) -> str:
    """A message's content as text: a string, or the text blocks of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            block if isinstance(block, str) else str(block.get("text", ""))
            for block in content
            if isinstance(block, str) or (isinstance(block, dict) and block.get("type") == "text")
        )
    return "" if content is None else dumps(content).decode()


def _role(message: Any) -> str | None:
    kind = _field(message, "type") or _field(message, "role")
    if kind in ("human", "user"):
        return "user"
    if kind in ("ai", "assistant", "AIMessageChunk"):
        return "agent"
    return None


def _messages(values: Any) -> list[Any]:
    found = values.get("messages") if isinstance(values, dict) else None
    return list(found) if isinstance(found, list) else []


def reply_of(values: Any) -> str | None:
    """The text of the last AI message in the run's values (None when there is none)."""
    for message in reversed(_messages(values)):
        if _role(message) == "agent":
            return _text(_field(message, "content"))
    return None


def _history(facts: TaskFacts, length: int | None) -> list[dict[str, Any]]:
    """This task's turn of the conversation: from its input message (or the last human
    message) to the end, as A2A messages; the newest `length` when given (0: all, as the
    a2a-sdk reads v0.3)."""
    messages = _messages(facts.values)
    start = 0
    for index in range(len(messages) - 1, -1, -1):
        if _field(messages[index], "id") == facts.input_message_id or (
            facts.input_message_id is None and _role(messages[index]) == "user"
        ):
            start = index
            break
    turn = [
        _message(role, _text(_field(m, "content")), facts.context_id, facts.task_id,
                 _field(m, "id"))
        for m in messages[start:]
        if (role := _role(m)) is not None
    ]
    return turn[-length:] if length and length > 0 else turn


def _status(facts: TaskFacts) -> dict[str, Any]:
    status: dict[str, Any] = {"state": facts.state, "timestamp": facts.timestamp}
    text = None
    if facts.state == "failed" and facts.error:
        text = f"{facts.error.get('error', 'Error')}: {facts.error.get('message', '')}"
    elif facts.state == "input-required" and facts.interrupts:
        values = [i.get("value") if isinstance(i, dict) else getattr(i, "value", i)
                  for i in facts.interrupts]
        shown = values[0] if len(values) == 1 else values
        text = shown if isinstance(shown, str) else dumps(shown).decode()
    if text is not None:
        status["message"] = _message("agent", text, facts.context_id, facts.task_id)
    return status


def _artifacts(facts: TaskFacts) -> list[dict[str, Any]]:
    reply = reply_of(facts.values) if facts.state == "completed" else None
    if reply is None:
        return []
    return [{
        "artifactId": f"{facts.run_id}-response",
        "name": "Assistant Response",
        "parts": [{"kind": "text", "text": reply}],
    }]


def task(facts: TaskFacts, history_length: int | None = None) -> dict[str, Any]:
    """A Task object (`kind: task`) for `tasks/get`, `message/send` and stream starts."""
    out: dict[str, Any] = {
        "kind": "task",
        "id": facts.task_id,
        "contextId": facts.context_id,
        "status": _status(facts),
        "history": _history(facts, history_length),
        "metadata": facts.metadata,
    }
    artifacts = _artifacts(facts)
    if artifacts:
        out["artifacts"] = artifacts
    return out


def status_update(facts: TaskFacts, *, final: bool) -> dict[str, Any]:
    return {
        "kind": "status-update",
        "taskId": facts.task_id,
        "contextId": facts.context_id,
        "status": _status(facts),
        "final": final,
    }


def artifact_update(facts: TaskFacts) -> dict[str, Any] | None:
    """The task's response artifact as one `artifact-update` (None when it has no reply)."""
    artifacts = _artifacts(facts)
    if not artifacts:
        return None
    return {
        "kind": "artifact-update",
        "taskId": facts.task_id,
        "contextId": facts.context_id,
        "artifact": artifacts[0],
        "append": False,
        "lastChunk": True,
    }


# -- agent card ----------------------------------------------------------------------------------


def agent_card(*, name: str, description: str, url: str, version: str, graph_id: str,
               api_key: bool) -> dict[str, Any]:
    """An A2A v0.3 AgentCard (valid for a2a-sdk's v0.3 model and its v1.0 card parser)."""
    card: dict[str, Any] = {
        "protocolVersion": PROTOCOL_VERSION,
        "name": name,
        "description": description,
        "url": url,
        "preferredTransport": "JSONRPC",
        "version": version,
        "capabilities": {
            "streaming": True,
            "pushNotifications": False,
            "stateTransitionHistory": False,
        },
        "defaultInputModes": INPUT_MODES,
        "defaultOutputModes": OUTPUT_MODES,
        "skills": [{
            "id": f"{graph_id}-main",
            "name": name,
            "description": description,
            "tags": ["assistant", "langgraph", graph_id],
            "examples": [],
            "inputModes": INPUT_MODES,
            "outputModes": OUTPUT_MODES,
        }],
    }
    if api_key:  # SPEC §3 "Auth": every route but the public ones needs X-Api-Key
        card["securitySchemes"] = {
            "apiKey": {"type": "apiKey", "in": "header", "name": "X-Api-Key"},
        }
        card["security"] = [{"apiKey": []}]
    return card

"""Wire records and request bodies of the agent server (SPEC §3), as msgspec Structs.

Requests are validated here, at the edge; unknown fields are accepted because the official
SDK sends some we do not use. Records are what the API returns and what `records.py` keeps.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

__all__ = [
    "Assistant",
    "AssistantCreate",
    "AssistantPatch",
    "AssistantSearch",
    "AssistantVersionsSearch",
    "Run",
    "RunCreate",
    "RunStatus",
    "Thread",
    "ThreadCreate",
    "ThreadPatch",
    "ThreadSearch",
    "ThreadStateUpdate",
    "ThreadStatus",
]

ThreadStatus = Literal["idle", "busy", "interrupted", "error"]
RunStatus = Literal["pending", "running", "success", "error", "timeout", "interrupted"]
MultitaskStrategy = Literal["reject", "rollback", "interrupt", "enqueue"]
SortOrder = Literal["asc", "desc"]


class Assistant(msgspec.Struct, kw_only=True):
    assistant_id: str
    graph_id: str
    config: dict[str, Any] = {}
    context: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    name: str = ""
    description: str | None = None
    version: int = 1
    created_at: str = ""
    updated_at: str = ""


class Thread(msgspec.Struct, kw_only=True):
    thread_id: str
    created_at: str
    updated_at: str
    state_updated_at: str
    metadata: dict[str, Any] = {}
    status: ThreadStatus = "idle"
    config: dict[str, Any] = {}
    values: Any = None
    interrupts: dict[str, Any] = {}
    error: Any = None
    # issue 31 item 13: a copy shows no `values` key (not even null) until some are written
    copied: bool = False
    # issue 32: the checkpoint whose state the thread shows as its `values` (then not stored
    # here: `thread_values.py`); None: `values` are the record's own
    values_checkpoint: str | None = None


class Run(msgspec.Struct, kw_only=True):
    run_id: str
    thread_id: str
    assistant_id: str
    created_at: str
    updated_at: str
    metadata: dict[str, Any] = {}
    status: RunStatus = "pending"
    kwargs: dict[str, Any] = {}
    multitask_strategy: MultitaskStrategy = "enqueue"
    langsmith_session_name: str | None = None  # always null here; the SDK's record has it


# -- requests ------------------------------------------------------------------------------------


class AssistantCreate(msgspec.Struct, kw_only=True):
    graph_id: str
    assistant_id: str | None = None
    config: dict[str, Any] = {}
    context: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    if_exists: Literal["raise", "do_nothing"] = "raise"
    name: str | None = None
    description: str | None = None


class AssistantPatch(msgspec.Struct, kw_only=True):
    graph_id: str | None = None
    config: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    name: str | None = None
    description: str | None = None


class AssistantSearch(msgspec.Struct, kw_only=True):
    metadata: dict[str, Any] | None = None
    graph_id: str | None = None
    name: str | None = None
    limit: int = 10
    offset: int = 0
    sort_by: str | None = None
    sort_order: SortOrder | None = None
    select: list[str] | None = None


class AssistantVersionsSearch(msgspec.Struct, kw_only=True):
    metadata: dict[str, Any] | None = None
    limit: int = 10
    offset: int = 0


class ThreadCreate(msgspec.Struct, kw_only=True):
    thread_id: str | None = None
    metadata: dict[str, Any] = {}
    if_exists: Literal["raise", "do_nothing"] = "raise"
    supersteps: list[dict[str, Any]] | None = None
    ttl: Any = None


class ThreadPatch(msgspec.Struct, kw_only=True):
    metadata: dict[str, Any] | None = None
    ttl: Any = None


class ThreadSearch(msgspec.Struct, kw_only=True):
    metadata: dict[str, Any] | None = None
    values: dict[str, Any] | None = None
    ids: list[str] | None = None
    status: ThreadStatus | None = None
    limit: int = 10
    offset: int = 0
    sort_by: str | None = None
    sort_order: SortOrder | None = None
    select: list[str] | None = None


class ThreadStateUpdate(msgspec.Struct, kw_only=True):
    values: Any = None
    as_node: str | None = None
    checkpoint: dict[str, Any] | None = None
    checkpoint_id: str | None = None


class Command(msgspec.Struct, kw_only=True):
    update: Any = None
    resume: Any = None
    goto: Any = None


class RunCreate(msgspec.Struct, kw_only=True):
    assistant_id: str
    input: Any = None
    command: Command | None = None
    checkpoint: dict[str, Any] | None = None
    checkpoint_id: str | None = None
    metadata: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    stream_mode: str | list[str] = "values"
    stream_subgraphs: bool = False
    stream_resumable: bool = False
    interrupt_before: Literal["*"] | list[str] | None = None
    interrupt_after: Literal["*"] | list[str] | None = None
    multitask_strategy: MultitaskStrategy = "enqueue"
    if_not_exists: Literal["create", "reject"] = "reject"
    after_seconds: float | None = None
    durability: Literal["sync", "async", "exit"] | None = None
    webhook: str | None = None
    on_disconnect: Literal["cancel", "continue"] = "continue"
    on_completion: Literal["delete", "keep"] = "delete"
    feedback_keys: list[str] | None = None
    checkpoint_during: bool | None = None

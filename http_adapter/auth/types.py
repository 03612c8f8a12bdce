"""The shapes auth handlers see, under langgraph-sdk's names (`Auth.types.*`), so an auth file's
annotations (`Auth.types.AuthContext`, `Auth.types.on.threads.create.value`,
`Auth.types.MinimalUserDict`, ...) resolve without langgraph-sdk installed.

`AuthContext` is what every `@auth.on...` handler gets as `ctx`; the `value` TypedDicts below
are the request data it gets as `value` for each resource and action (a dict: handlers may
mutate it, e.g. `value["metadata"]` on a create or `value["namespace"]` for the store).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from uuid import UUID

__all__ = [
    "AssistantsCreate",
    "AssistantsDelete",
    "AssistantsRead",
    "AssistantsSearch",
    "AssistantsUpdate",
    "AuthContext",
    "Authenticator",
    "BaseAuthContext",
    "BaseUser",
    "CronsCreate",
    "CronsDelete",
    "CronsRead",
    "CronsSearch",
    "CronsUpdate",
    "FilterType",
    "Handler",
    "HandlerResult",
    "MetadataInput",
    "MinimalUser",
    "MinimalUserDict",
    "RunsCreate",
    "StoreDelete",
    "StoreGet",
    "StoreListNamespaces",
    "StorePut",
    "StoreSearch",
    "StudioUser",
    "ThreadsCreate",
    "ThreadsDelete",
    "ThreadsRead",
    "ThreadsSearch",
    "ThreadsUpdate",
    "on",
]

RunStatus = typing.Literal["pending", "error", "success", "timeout", "interrupted"]
MultitaskStrategy = typing.Literal["reject", "rollback", "interrupt", "enqueue"]
OnConflictBehavior = typing.Literal["raise", "do_nothing"]
IfNotExists = typing.Literal["create", "reject"]
ThreadStatus = typing.Literal["idle", "busy", "interrupted", "error"]
MetadataInput = dict[str, typing.Any]

FilterType = (
    dict[str, str | dict[typing.Literal["$eq", "$contains"], str]
         | dict[typing.Literal["$contains"], list[str]]]
    | dict[str, str]
)
"""A metadata filter a handler returns: `{"owner": "alice"}` (equality),
`{"owner": {"$eq": "alice"}}`, `{"participants": {"$contains": "alice"}}` (list membership)."""

HandlerResult = None | bool | FilterType
"""None or True: allow; False: deny (403); a dict: allow, only records matching the filter."""

Handler = Callable[..., Awaitable[HandlerResult]]


# -- users ---------------------------------------------------------------------------------------


@typing.runtime_checkable
class MinimalUser(typing.Protocol):
    @property
    def identity(self) -> str: ...


class MinimalUserDict(typing.TypedDict, total=False):
    """What an `authenticate` handler may return (extra keys are kept on the user)."""

    identity: typing.Required[str]
    display_name: str
    is_authenticated: bool
    permissions: Sequence[str]


@typing.runtime_checkable
class BaseUser(typing.Protocol):
    """`ctx.user`: attribute access to the standard fields, item access to every field."""

    @property
    def is_authenticated(self) -> bool: ...

    @property
    def display_name(self) -> str: ...

    @property
    def identity(self) -> str: ...

    @property
    def permissions(self) -> Sequence[str]: ...

    def __getitem__(self, key: str) -> typing.Any: ...

    def __contains__(self, key: str) -> bool: ...

    def __iter__(self) -> typing.Iterator[str]: ...


class StudioUser:
    """LangGraph Studio's user. graphrun has no Studio login, so no request is made by one;
    the class exists so `is_studio_user` checks in auth files keep working."""

    __slots__ = ("_is_authenticated", "_permissions", "username")

    def __init__(self, username: str, is_authenticated: bool = False) -> None:
        self.username = username
        self._is_authenticated = is_authenticated
        self._permissions = ["authenticated"] if is_authenticated else []

    @property
    def is_authenticated(self) -> bool:
        return self._is_authenticated

    @property
    def display_name(self) -> str:
        return self.username

    @property
    def identity(self) -> str:
        return self.username

    @property
    def permissions(self) -> Sequence[str]:
        return self._permissions


Authenticator = Callable[
    ..., Awaitable[MinimalUser | str | BaseUser | MinimalUserDict | typing.Mapping[str, typing.Any]]
]


@dataclasses.dataclass(slots=True)
class BaseAuthContext:
    permissions: Sequence[str]
    user: BaseUser


@typing.final
@dataclasses.dataclass(slots=True)
class AuthContext(BaseAuthContext):
    """`ctx` of an authorization handler: the user, their permissions, what is being done."""

    resource: typing.Literal["runs", "threads", "crons", "assistants", "store"]
    action: typing.Literal[
        "create", "read", "update", "delete", "search", "create_run", "put", "get",
        "list_namespaces",
    ]


# -- values: threads and runs ----------------------------------------------------------------------


class ThreadTTL(typing.TypedDict, total=False):
    strategy: typing.Literal["delete"]
    ttl: int


class ThreadsCreate(typing.TypedDict, total=False):
    thread_id: UUID
    metadata: MetadataInput
    if_exists: OnConflictBehavior
    ttl: ThreadTTL


class ThreadsRead(typing.TypedDict, total=False):
    thread_id: UUID
    run_id: UUID | None


class ThreadsUpdate(typing.TypedDict, total=False):
    thread_id: UUID
    metadata: MetadataInput
    action: typing.Literal["interrupt", "rollback"] | None


class ThreadsDelete(typing.TypedDict, total=False):
    thread_id: UUID
    run_id: UUID | None


class ThreadsSearch(typing.TypedDict, total=False):
    metadata: MetadataInput
    values: MetadataInput
    status: ThreadStatus | None
    limit: int
    offset: int
    ids: Sequence[UUID] | None
    thread_id: UUID | None


class RunsCreate(typing.TypedDict, total=False):
    assistant_id: UUID | None
    thread_id: UUID | None
    run_id: UUID | None
    status: RunStatus | None
    metadata: MetadataInput
    prevent_insert_if_inflight: bool
    multitask_strategy: MultitaskStrategy
    if_not_exists: IfNotExists
    after_seconds: int
    kwargs: dict[str, typing.Any]
    action: typing.Literal["interrupt", "rollback"] | None


# -- values: assistants and crons ------------------------------------------------------------------


class AssistantsCreate(typing.TypedDict, total=False):
    assistant_id: UUID
    graph_id: str
    config: dict[str, typing.Any]
    context: dict[str, typing.Any]
    metadata: MetadataInput
    if_exists: OnConflictBehavior
    name: str


class AssistantsRead(typing.TypedDict, total=False):
    assistant_id: UUID
    metadata: MetadataInput


class AssistantsUpdate(typing.TypedDict, total=False):
    assistant_id: UUID
    graph_id: str | None
    config: dict[str, typing.Any]
    context: dict[str, typing.Any]
    metadata: MetadataInput
    name: str | None
    version: int | None


class AssistantsDelete(typing.TypedDict):
    assistant_id: UUID


class AssistantsSearch(typing.TypedDict):
    graph_id: str | None
    metadata: MetadataInput
    limit: int
    offset: int


class CronsCreate(typing.TypedDict, total=False):
    payload: dict[str, typing.Any]
    schedule: str
    cron_id: UUID | None
    thread_id: UUID | None
    user_id: str | None
    end_time: datetime | None


class CronsDelete(typing.TypedDict):
    cron_id: UUID


class CronsRead(typing.TypedDict):
    cron_id: UUID


class CronsUpdate(typing.TypedDict, total=False):
    cron_id: UUID
    payload: dict[str, typing.Any] | None
    schedule: str | None


class CronsSearch(typing.TypedDict, total=False):
    assistant_id: UUID | None
    thread_id: UUID | None
    limit: int
    offset: int


# -- values: store ---------------------------------------------------------------------------------


class StoreGet(typing.TypedDict):
    namespace: tuple[str, ...]
    key: str


class StoreSearch(typing.TypedDict):
    namespace: tuple[str, ...]
    filter: dict[str, typing.Any] | None
    limit: int
    offset: int
    query: str | None


class StoreListNamespaces(typing.TypedDict):
    namespace: tuple[str, ...] | None
    suffix: tuple[str, ...] | None
    max_depth: int | None
    limit: int
    offset: int


class StorePut(typing.TypedDict):
    namespace: tuple[str, ...]
    key: str
    value: dict[str, typing.Any] | None
    index: typing.Literal[False] | list[str] | None


class StoreDelete(typing.TypedDict):
    namespace: tuple[str, ...]
    key: str


# -- `Auth.types.on.<resource>.<action>.value`, for annotations ---------------------------------------


class on:
    """The `value` type of each handler: `Auth.types.on.threads.create.value`, ..."""

    value = dict[str, typing.Any]

    class threads:
        value = ThreadsCreate | ThreadsRead | ThreadsUpdate | ThreadsDelete | ThreadsSearch

        class create:
            value = ThreadsCreate

        class create_run:
            value = RunsCreate

        class read:
            value = ThreadsRead

        class update:
            value = ThreadsUpdate

        class delete:
            value = ThreadsDelete

        class search:
            value = ThreadsSearch

    class assistants:
        value = (AssistantsCreate | AssistantsRead | AssistantsUpdate | AssistantsDelete
                 | AssistantsSearch)

        class create:
            value = AssistantsCreate

        class read:
            value = AssistantsRead

        class update:
            value = AssistantsUpdate

        class delete:
            value = AssistantsDelete

        class search:
            value = AssistantsSearch

    class crons:
        value = CronsCreate | CronsRead | CronsUpdate | CronsDelete | CronsSearch

        class create:
            value = CronsCreate

        class read:
            value = CronsRead

        class update:
            value = CronsUpdate

        class delete:
            value = CronsDelete

        class search:
            value = CronsSearch

    class store:
        value = StoreGet | StoreSearch | StoreListNamespaces | StorePut | StoreDelete

        class put:
            value = StorePut

        class get:
            value = StoreGet

        class search:
            value = StoreSearch

        class delete:
            value = StoreDelete

        class list_namespaces:
            value = StoreListNamespaces

"""What a graph factory of langgraph.json may ask for: `ServerRuntime` (issue 31).

The reference calls a factory with a `runtime: ServerRuntime` argument (`langgraph_sdk.runtime`)
telling why the graph is wanted (`access_context`), who asks (`user`) and the server's `store`;
when a run executes it (`threads.create_run`), `execution_runtime.context` is the run's context.
These classes offer the same attributes, so a factory written for the reference runs unchanged.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Generic, TypeVar, Union

__all__ = ["ExecutionRuntime", "ReadRuntime", "ServerRuntime"]

ContextT = TypeVar("ContextT")


@dataclasses.dataclass(kw_only=True, frozen=True)
class _RuntimeBase(Generic[ContextT]):
    access_context: str  # threads.create_run | threads.update | threads.read | assistants.read
    user: Any = None
    store: Any = None

    @property
    def execution_runtime(self) -> ExecutionRuntime[ContextT] | None:
        """This runtime when a run executes the graph (it has `context`), else None."""
        return self if isinstance(self, ExecutionRuntime) else None

    def ensure_user(self) -> Any:
        """The authenticated user; PermissionError when no custom auth is configured."""
        if self.user is None:
            raise PermissionError(
                f"No authenticated user available in access_context='{self.access_context}'. "
                "Ensure custom auth is configured for the server."
            )
        return self.user


@dataclasses.dataclass(kw_only=True, frozen=True)
class ExecutionRuntime(_RuntimeBase[ContextT]):
    """A factory called to execute a run: the run's context is here."""

    context: Any = None


@dataclasses.dataclass(kw_only=True, frozen=True)
class ReadRuntime(_RuntimeBase[ContextT]):
    """A factory called to read a graph's shape, schemas or state: no context."""


ServerRuntime = Union[ExecutionRuntime[Any], ReadRuntime[Any]]

"""A run whose state is one value, not keys: `StateGraph(Annotated[list, operator.add])`.

LangGraph keeps such a state in one `__root__` channel: nodes read the value itself and return
the update itself (or Commands whose `update` is it), `invoke` returns the value, and `values`
chunks and snapshots show it unwrapped. The channel is the plan's one state key (`_schema.ROOT`);
this run only unwraps it where the state leaves the run (issue 29).
"""

from __future__ import annotations

from typing import Any

from ._calls import CallingRun
from ._channels import MISSING
from ._run import Run, pending_values
from ._schema import ROOT
from ._step import Task

__all__ = ["RootRun"]


class RootRun(Run):
    """A `Run` of a graph whose state is the one value under `ROOT`."""

    def values(self, keys: tuple[str, ...] | None = None) -> Any:
        if keys is not None:  # the keyed view the run core builds on
            return super().values(keys)
        value = self.channels[ROOT].value
        return None if value is MISSING else value

    def shaped(self, values: dict[str, Any]) -> Any:
        return values.get(ROOT)

    def output(self) -> Any:
        if not (self.valued or self.interrupts or self.parent):
            return None
        if not self.interrupts:
            return self.values()
        done = [t for t in self.tasks if t.done and t.writes]
        value = pending_values(self, done) if done else self.values()
        return _with_interrupts(value, list(self.interrupts))

    def interrupted_values(self, interrupts: Any) -> Any:
        return _with_interrupts(self.values(), interrupts)

    def _update_of(self, task: Task) -> Any:
        found = [v for ch, v in task.writes if ch == ROOT]
        if not found:  # a called `@task`'s result, say
            return super()._update_of(task)
        return found[0] if len(found) == 1 else found  # one per write, as LangGraph

    def snapshot_result(self, writes: list[tuple[str, Any]]) -> Any:
        return next((v for ch, v in writes if ch == ROOT), None)


class RootCallingRun(RootRun, CallingRun):
    """A one-value run whose node called a `@task` (`_calls._calling` switches to it)."""


RootRun.calling_class = RootCallingRun  # type: ignore[attr-defined]


def _with_interrupts(value: Any, interrupts: Any) -> Any:
    if isinstance(value, dict):
        return {**value, "__interrupt__": interrupts}
    return {"__interrupt__": interrupts}

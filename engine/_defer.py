"""When `defer=True` nodes become ready: at the end of the step after which nothing else would
run (issue 27).

LangGraph decides it while applying a step's writes, so the step's checkpoint already holds
the deferred triggers as finished: a run stopped there (`interrupt_before` the deferred node)
finds the node next when it resumes or is inspected. Runs of graphs without deferred nodes
never call this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._plan import TASKS
from ._step import next_version

if TYPE_CHECKING:
    from ._run import Run

__all__ = ["finish_deferred"]


def finish_deferred(run: Run, updated: list[str]) -> list[str]:
    """`updated`, plus the deferred triggers that finish now: none while a channel the step
    updated makes a node ready or a `Send` is pending."""
    channels, lookup = run.channels, run.plan.trigger_to_nodes
    for name in updated:
        if name == TASKS or (name in lookup and channels[name].is_available()):
            return updated
    finished = [name for name in run.plan.deferred if channels[name].finish()]
    for name in finished:
        run.versions[name] = next_version()
        run.dirty.add(name)
    return [*updated, *finished] if finished else updated

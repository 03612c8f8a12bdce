"""Every program the fuzz tests (test_fuzz.py) failed on, kept as a plain test (issue 16).

None of them was a storage bug by the time the fuzzer ran (the fork and in-place bugs it also
finds are in test_forks.py, found first by reading `_deltas`); they were differences between
the two engines, outside the savers, which `differential` now steps around (each is named
where it does), and one bug of the harness itself (a node changed the shared input in place).
Programs that rely on a difference the harness avoids run on graphrun's back ends only:
their storage is still compared, with and without shortcuts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .differential import (
    Fork,
    Goto,
    Invoke,
    Node,
    Reopen,
    Resume,
    Spec,
    Stage,
    Update,
    Worlds,
    run_program,
)

GRAPHRUN = tuple(name for name in Worlds.NAMES if name != "lg")
ADD = Stage("node", (Node("n0", "add", 0),))
SEND = Stage("send", (Node("n0", "add", 0), Node("n1", "worker", 0)), (0,))

PROGRAMS: dict[str, tuple[Spec, list[Any], tuple[str, ...]]] = {
    # invoke returns None for `{}` stopped by a static interrupt (fixed, issue 17).
    "empty_input_at_a_static_interrupt": (
        Spec((ADD,), ("n0",)), [Invoke("t0", {}), Invoke("t0", {})], Worlds.NAMES,
    ),
    # New input on a thread paused by a static interrupt: LangGraph keeps `branch:to:n0`.
    "new_input_at_a_static_interrupt": (
        Spec((ADD,), ("n0",)),
        [Invoke("t0", {"items": []}), Invoke("t0", {"text": "", "items": [], "trail": []})],
        Worlds.NAMES,
    ),
    # A `Send` task's path in the history has a third element in graphrun.
    "send_task_path": (Spec((SEND,)), [Invoke("t0", {"items": []})], Worlds.NAMES),
    # `interrupt_before` on a `Send` target: both stop there (issue 17).
    "static_interrupt_on_a_send_target": (
        Spec((ADD, Stage("send", (Node("n1", "add", 0), Node("n2", "worker", 0)), (0,))),
             ("n2",)),
        [Invoke("t0", {"items": []}), Invoke("t0", None)], Worlds.NAMES,
    ),
    # The harness handed every back end the same input dict; the node appended to its list.
    "a_node_appends_to_the_input_list": (
        Spec((Stage("node", (Node("n0", "mutate_append", 0),)),)),
        [Invoke("t0", {"trail": [0, 0]}), Invoke("t0", {"trail": [0]})], Worlds.NAMES,
    ),
    # Resume, `Command(goto)` and `update_state` on a thread with no checkpoint.
    "empty_thread": (
        Spec((ADD,)),
        [Invoke("t0", {"items": []}), Resume("t1", 0), Goto("t1", "n0"),
         Update("t1", 0, {}, "n0"), Update("t1", 0, {}, None), Resume("t1", 0)],
        Worlds.NAMES,
    ),
    # `Command(goto)` on a thread paused by a static interrupt, or by `interrupt()`.
    "goto_at_an_interrupt": (
        Spec((ADD, Stage("node", (Node("n1", "ask", 0),)))),
        [Invoke("t0", {"items": []}), Goto("t0", "n0"), Resume("t0", 1), Goto("t0", "n1")],
        Worlds.NAMES,
    ),
    "goto_at_a_static_interrupt": (
        Spec((ADD,), ("n0",)), [Invoke("t0", {"items": []}), Goto("t0", "n0")], Worlds.NAMES,
    ),
    # Replaying the latest checkpoint writes a "fork" checkpoint first (fixed, issue 17).
    "replay_the_latest": (
        Spec((ADD,)), [Invoke("t0", {"items": []}), Fork("t0", 0)], Worlds.NAMES,
    ),
    # LangGraph derives a task's result from the update's writes it saves on the checkpoint.
    "task_result_at_an_updated_checkpoint": (
        Spec((ADD,)),
        [Invoke("t0", {"items": []}), Update("t0", 1, {}, None), Fork("t1", 0),
         Update("t0", 0, {"items": []}, "n0")],
        Worlds.NAMES,
    ),
    # Replaying a checkpoint of a thread `Command(goto)` ran on: the engines run other tasks.
    "replay_after_goto": (
        Spec((ADD, Stage("node", (Node("n1", "add", 0),)))),
        [Invoke("t0", {"items": []}), Invoke("t0", {"items": []}), Fork("t0", 0),
         Goto("t0", "n0"), Fork("t0", 1)],
        Worlds.NAMES,
    ),
    # `Command(goto)` on a thread with a task still to run (after an update of an interrupt).
    "goto_with_a_task_still_to_run": (
        Spec((ADD, Stage("node", (Node("n1", "ask", 0),)))),
        [Invoke("t0", {"items": []}), Update("t0", 0, {}, None), Goto("t0", "n0")],
        Worlds.NAMES,
    ),
    # `update_state` without `as_node` on a checkpoint made by an update (fixed, issue 17).
    "update_of_an_update": (
        Spec((ADD, Stage("node", (Node("n1", "add", 0),)))),
        [Invoke("t0", {"items": []}), Invoke("t0", {"items": []}), Reopen(),
         Update("t0", 0, {}, "n0"), Update("t0", 0, {}, None)],
        Worlds.NAMES,
    ),
    # `update_state` without `as_node` after a `Send`: the engines credit different nodes.
    "update_without_as_node_after_a_send": (
        Spec((SEND,)),
        [Invoke("t0", {"items": []}), Invoke("t0", {"items": []}), Update("t0", 0, {}, None)],
        GRAPHRUN,
    ),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_found_by_the_fuzzer(tmp_path: Path, name: str) -> None:
    spec, ops, names = PROGRAMS[name]
    run_program(spec, ops, tmp_path, names)

"""One program, several checkpoint back ends, the same history (issue 16).

A program is a graph (`Spec`, plain data built from a small vocabulary of channels and node
actions) and a sequence of operations (`Invoke`, `Resume`, `Update`, `Fork`, `Goto`, `Copy`,
`Prune`, `Delete`, `Reopen`). `Worlds` runs it on every back end at once:

- "lg": LangGraph 1.2.22 with its own `InMemorySaver` (its "async" durability serializes in the
  background, after later steps may have mutated a list in place, so it always runs "sync";
  it has no `copy_thread` or `prune`, and its engine differs from graphrun's when a run goes
  on from a checkpoint where an interrupt was answered, or what a failed step leaves saved:
  the threads those touch are no longer compared with it; `_as_lg_sees` lists the parts of a
  reading it is not compared on);
- "memory", "sqlite": graphrun with every storage shortcut (deltas, references);
- "memory_full", "sqlite_full": graphrun storing full values (`full_values=True`).

After every operation each world reads back every checkpoint of every thread (the state
history and the saver's tuples in every namespace: values, next, tasks, metadata, parents,
pending writes) and the readings must be identical once ids and timestamps are normalized.
The fuzz tests draw programs with Hypothesis; the regression tests spell them out.
"""

from __future__ import annotations

import copy
import dataclasses
import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import sqlite3

from checkpoints import InMemorySaver, SqliteSaver
from checkpoints._deltas import is_delta, needs_of
from checkpoints.serde import default_serializer
from tests.engine.parity.harness import Normalizer, first_difference, load_lib

__all__ = [
    "ACTIONS",
    "Copy",
    "Delete",
    "Fork",
    "Goto",
    "Invoke",
    "Node",
    "Prune",
    "Reopen",
    "Resume",
    "Spec",
    "Stage",
    "THREADS",
    "Update",
    "Worlds",
    "build",
    "run_program",
]

THREADS = ("t0", "t1", "t2")
SKIPPED = object()  # an outcome LangGraph cannot give (no copy_thread, no prune)
LIBS = {"lg": load_lib("lg"), "gr": load_lib("gr")}


def merge(old: dict, new: dict) -> dict:
    return {**old, **new}


class State(TypedDict, total=False):
    items: Annotated[list, operator.add]  # reducer list
    trail: list  # last-value list
    tags: Annotated[dict, merge]  # reducer dict
    meta: dict  # last-value dict
    note: Annotated[str, operator.add]  # reducer str
    text: str  # last-value str


STATE_KEYS = frozenset(State.__annotations__)


# -- node actions: what a node returns, given the state and its label ---------------------------


def _list(s: dict, ch: str) -> list:
    return s.get(ch) if isinstance(s.get(ch), list) else []


def _mutated(s: dict, ch: str, change: Any) -> list:
    """The state's own list object, changed in place (nodes are not supposed to; some do)."""
    value = s.get(ch)
    if not isinstance(value, list):
        value = []
    change(value)
    return value


def _set_first(label: Any) -> Any:
    def change(value: list) -> None:
        if value:
            value[0] = label
        else:
            value.append(label)

    return change


ACTIONS: dict[str, Any] = {
    # the reducer list
    "add": lambda s, lib, x: {"items": [x]},
    "add_two": lambda s, lib, x: {"items": [x, x]},
    "readd_tail": lambda s, lib, x: {"items": _list(s, "items")[-2:]},  # objects it holds
    "add_trail": lambda s, lib, x: {"items": _list(s, "trail")},  # another channel's value
    # the last-value list
    "extend": lambda s, lib, x: {"trail": _list(s, "trail") + [x]},
    "rewrite": lambda s, lib, x: {"trail": [x, x]},
    "shrink": lambda s, lib, x: {"trail": _list(s, "trail")[:-1]},
    "take_items": lambda s, lib, x: {"trail": _list(s, "items") + [x]},
    "same": lambda s, lib, x: {"trail": _list(s, "trail")},
    "mutate_append": lambda s, lib, x: {"trail": _mutated(s, "trail", lambda v: v.append(x))},
    "mutate_set": lambda s, lib, x: {"trail": _mutated(s, "trail", _set_first(x))},
    "mutate_pop": lambda s, lib, x: {
        "trail": _mutated(s, "trail", lambda v: v.pop() if v else None)
    },
    "mutate_silent": lambda s, lib, x: (_mutated(s, "trail", lambda v: v.append(x)), {})[1],
    # dicts and strings
    "tag": lambda s, lib, x: {"tags": {str(x): x}},
    "meta": lambda s, lib, x: {"meta": {**(s.get("meta") or {}), "k": x}},
    "note": lambda s, lib, x: {"note": str(x)},
    "text": lambda s, lib, x: {"text": (s.get("text") or "") + str(x)},
    # human in the loop
    "ask": lambda s, lib, x: {"trail": _list(s, "trail") + [lib.interrupt(x)]},
}
# Actions that change the state's objects in place: only where one task runs in its step (two
# parallel tasks mutating one list race, in either library).
MUTATING = frozenset({"mutate_append", "mutate_set", "mutate_pop", "mutate_silent"})


@dataclasses.dataclass(frozen=True)
class Node:
    name: str
    action: str
    label: Any


@dataclasses.dataclass(frozen=True)
class Stage:
    """One step of the graph: "node" (one node), "parallel" (nodes in one step), "send" (the
    first node fans out with `Send` to the second, once per item of `fan`), "subgraph" (a
    compiled graph of `inner` stages as one node)."""

    kind: str
    nodes: tuple[Node, ...]
    fan: tuple[Any, ...] = ()
    inner: tuple[Stage, ...] = ()


@dataclasses.dataclass(frozen=True)
class Spec:
    stages: tuple[Stage, ...]
    interrupt_before: tuple[str, ...] = ()


def _node_fn(lib: Any, node: Node) -> Any:
    action = ACTIONS[node.action]

    def fn(state: dict) -> dict:
        return action(state, lib, node.label)

    fn.__name__ = node.name
    return fn


def _worker_fn(node: Node) -> Any:
    def fn(arg: dict) -> dict:
        return {"items": [arg["item"]], "note": str(node.label)}

    fn.__name__ = node.name
    return fn


def _add_stages(lib: Any, builder: Any, stages: tuple[Stage, ...], prefix: str) -> None:
    exits: list[str] = [lib.START]
    for index, stage in enumerate(stages):
        entries, stage_exits = _add_stage(lib, builder, stage, f"{prefix}{index}")
        for source in exits:
            for target in entries:
                builder.add_edge(source, target)
        exits = stage_exits


def _add_stage(lib: Any, builder: Any, stage: Stage, key: str) -> tuple[list[str], list[str]]:
    if stage.kind == "subgraph":
        sub = lib.StateGraph(State)
        _add_stages(lib, sub, stage.inner, f"{key}_")
        name = stage.nodes[0].name
        builder.add_node(name, sub.compile())
        return [name], [name]
    if stage.kind == "send":
        router, worker = stage.nodes
        builder.add_node(router.name, _node_fn(lib, router))
        builder.add_node(worker.name, _worker_fn(worker))
        fan = stage.fan

        def route(state: dict) -> list[Any]:
            return [lib.Send(worker.name, {"item": item}) for item in fan]

        builder.add_conditional_edges(router.name, route, [worker.name])
        return [router.name], [worker.name]
    for node in stage.nodes:
        builder.add_node(node.name, _node_fn(lib, node))
    names = [n.name for n in stage.nodes]
    return names, names


def build(lib: Any, spec: Spec, checkpointer: Any) -> Any:
    """The compiled graph of `spec` in `lib` ("lg" or "gr" namespace of `load_lib`)."""
    builder = lib.StateGraph(State)
    _add_stages(lib, builder, spec.stages, "s")
    return builder.compile(
        checkpointer=checkpointer, interrupt_before=list(spec.interrupt_before) or None
    )


def node_names(spec: Spec) -> list[str]:
    """The top-level node names (what `update_state(as_node=)` and `goto` may name)."""
    return [n.name for stage in spec.stages for n in stage.nodes]


# -- operations ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Invoke:
    thread: str
    input: dict[str, Any] | None
    durability: str = "sync"


@dataclasses.dataclass(frozen=True)
class Resume:
    thread: str
    value: Any
    durability: str = "sync"


@dataclasses.dataclass(frozen=True)
class Update:
    """`update_state` on the `back`-th checkpoint of the thread's history (0: the latest)."""

    thread: str
    back: int
    values: dict[str, Any]
    as_node: str | None = None


@dataclasses.dataclass(frozen=True)
class Fork:
    """Run from the `back`-th checkpoint: replay (`how="replay"`) or with new input ("input");
    optionally after an `update_state` on it (`values`)."""

    thread: str
    back: int
    how: str = "replay"
    values: dict[str, Any] | None = None
    as_node: str | None = None
    durability: str = "sync"


@dataclasses.dataclass(frozen=True)
class Goto:
    """`invoke(Command(goto=node))` on the thread (its latest checkpoint)."""

    thread: str
    node: str
    durability: str = "sync"


@dataclasses.dataclass(frozen=True)
class Copy:
    source: str
    target: str


@dataclasses.dataclass(frozen=True)
class Prune:
    threads: tuple[str, ...]
    keep_last: int = 1
    strategy: str = "keep_latest"


@dataclasses.dataclass(frozen=True)
class Delete:
    thread: str


@dataclasses.dataclass(frozen=True)
class Reopen:
    """Close the SQLite savers and read on with fresh ones on the same files."""


def _written(op: Any) -> set[str]:
    """The threads an operation changes."""
    if isinstance(op, Copy):
        return {op.target}
    if isinstance(op, Prune):
        return set(op.threads)
    return {op.thread} if hasattr(op, "thread") else set()


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


# -- one back end -------------------------------------------------------------------------------


class World:
    """One back end running the program; `apply` and `read` give normalizable results."""

    def __init__(self, name: str, spec: Spec, directory: Path) -> None:
        self.name = name
        self.lib = LIBS["lg" if name == "lg" else "gr"]
        self.spec = spec
        self.path = directory / f"{name}.db"
        self.untracked: set[str] = set()  # threads LangGraph could not follow (copy, prune)
        self.went_to: set[str] = set()  # threads `Command(goto)` ran on
        self.saver: Any = None
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    def _open(self) -> None:
        if self.name == "lg":
            self.saver = self.lib.InMemorySaver()
        elif self.name.startswith("memory"):
            self.saver = InMemorySaver(full_values=self.name.endswith("_full"))
        else:
            self.saver = SqliteSaver(self.path, full_values=self.name.endswith("_full"))
        self.graph = build(self.lib, self.spec, self.saver)

    def close(self) -> None:
        if hasattr(self.saver, "close"):
            self.saver.close()
        self.saver = None

    def durability(self, asked: str) -> str:
        return "sync" if self.name == "lg" and asked == "async" else asked

    def history(self, thread: str) -> list[Any]:
        return list(self.graph.get_state_history(_cfg(thread)))

    def pick(self, thread: str, back: int) -> dict[str, Any] | None:
        history = self.history(thread)
        return history[back % len(history)].config if history else None

    def apply(self, op: Any) -> Any:
        """The result of `op` (a value, or the exception it raised), normalized; `SKIPPED`
        when LangGraph cannot follow it."""
        if self.name == "lg":
            touched = {getattr(op, "thread", None), getattr(op, "source", None)}
            if isinstance(op, (Copy, Prune)) or touched & self.untracked or self._answered(op):
                self.untracked.update(_written(op))
                return SKIPPED
        try:
            # A copy per world: a node may change the input's lists in place.
            return Normalizer()(self._apply(copy.deepcopy(op)))
        except Exception as error:  # noqa: BLE001 - the error is part of the outcome
            if self.name == "lg":  # what a failed step leaves saved is the engine's business
                self.untracked.update(_written(op))
            return Normalizer()(error)

    def _answered(self, op: Any) -> bool:
        """Whether `op` replays a checkpoint of a graph with a subgraph where an interrupt was
        answered, or forks a thread `Command(goto)` ran on: the engines differ there (inside a
        subgraph graphrun asks again and LangGraph reuses the answer; LangGraph saves a
        `Command`'s writes as pending writes and replays them, graphrun does not), differences
        of the engines left alone so far (issue 17)."""
        if isinstance(op, Goto):
            self.went_to.add(op.thread)
        if not isinstance(op, Fork):
            return False
        if op.thread in self.went_to:
            return True
        history = self.history(op.thread)
        if not history or all(stage.kind != "subgraph" for stage in self.spec.stages):
            return False  # the root graph asks again, as LangGraph (issue 17)
        found = self.saver.get_tuple(history[op.back % len(history)].config)
        return found is not None and any(w[1] == "__resume__" for w in found.pending_writes)

    def _apply(self, op: Any) -> Any:
        lib, graph = self.lib, self.graph
        if isinstance(op, Invoke):
            durability = self.durability(op.durability)
            return graph.invoke(op.input, _cfg(op.thread), durability=durability)
        if isinstance(op, (Resume, Goto, Update)) and not self.history(op.thread):
            # The engines differ on an empty thread (one raises, one does not; which node
            # `update_state` credits next): outside issue 16.
            return "empty"
        if isinstance(op, Resume):
            state = graph.get_state(_cfg(op.thread))
            if not any(task.interrupts for task in state.tasks):
                return "nothing to resume"  # the engines differ there (outside issue 16)
            return graph.invoke(
                lib.Command(resume=op.value), _cfg(op.thread),
                durability=self.durability(op.durability),
            )
        if isinstance(op, Goto):
            if graph.get_state(_cfg(op.thread)).next:
                # Tasks still to run (an interrupt, an update before a node): the engines
                # differ on what runs besides the goto target (outside issue 16).
                return "not finished"
            return graph.invoke(
                lib.Command(goto=op.node), _cfg(op.thread),
                durability=self.durability(op.durability),
            )
        if isinstance(op, Update):
            config = self.pick(op.thread, op.back) or _cfg(op.thread)
            return graph.update_state(config, op.values, as_node=op.as_node)
        if isinstance(op, Fork):
            return self._fork(op)
        if isinstance(op, Delete):
            return self.saver.delete_thread(op.thread)
        if isinstance(op, Copy):
            return self.saver.copy_thread(op.source, op.target)
        if isinstance(op, Prune):
            return self.saver.prune(list(op.threads), strategy=op.strategy, keep_last=op.keep_last)
        if isinstance(op, Reopen):
            if self.name.startswith("sqlite"):
                self.close()
                self._open()
            return None
        raise TypeError(op)

    def _fork(self, op: Fork) -> Any:
        history = self.history(op.thread)
        if not history:
            return "nothing to fork from"
        config = history[op.back % len(history)].config
        if op.values is not None:
            config = self.graph.update_state(config, op.values, as_node=op.as_node)
        durability = self.durability(op.durability)
        value = {"note": "fork"} if op.how == "input" else None
        return self.graph.invoke(value, config, durability=durability)

    def audit(self) -> list[str]:
        """Every delta a checkpoint reads builds only on versions that checkpoint or one of its
        ancestors holds (issue 16), where all its ancestors are still stored."""
        if self.name == "lg":
            return []
        if isinstance(self.saver, InMemorySaver):
            rows = [
                (t, ns, cid, s.parent_id, s.checkpoint)
                for t, namespaces in self.saver.storage.items()
                for ns, saved in namespaces.items()
                for cid, s in saved.items()
            ]
            blobs = {k: v for k, v in self.saver.blobs.items()}
        else:
            self.saver.flush()
            with sqlite3.connect(self.path) as conn:
                rows = conn.execute(
                    "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
                    "checkpoint FROM checkpoints"
                ).fetchall()
                blobs = {
                    tuple(r[:4]): r[4]
                    for r in conn.execute(
                        "SELECT thread_id, checkpoint_ns, channel, version, value FROM blobs"
                    )
                }
            conn.close()
        return _audit(rows, blobs)

    def read(self, thread: str) -> Any:
        """Everything stored for `thread`, normalized: the history, then the saver's tuples of
        every namespace, oldest first (ids are numbered in order of first appearance)."""
        norm = Normalizer()
        try:
            history = [norm(s) for s in reversed(self.history(thread))]
            tuples = _by_namespace(self.saver.list(_cfg(thread)))
        except Exception as error:  # noqa: BLE001
            return norm(error)
        updated = {
            t.parent_config["configurable"]["checkpoint_id"]
            for t in tuples
            if t.metadata.get("source") == "update" and t.parent_config
        }
        return {"history": history, "tuples": [_tuple(norm, t, updated) for t in tuples]}


def _audit(rows: list[tuple[Any, ...]], blobs: dict[tuple[Any, ...], Any]) -> list[str]:
    versions = {
        (t, ns, cid): default_serializer.loads(blob)["channel_versions"]
        for t, ns, cid, _, blob in rows
    }
    parents = {(t, ns, cid): parent for t, ns, cid, parent, _ in rows}
    problems = []
    for (t, ns, cid), own in versions.items():
        held, key = set(), (t, ns, cid)
        while key is not None:
            if key not in versions:
                break  # an ancestor was pruned or deleted: nothing left to check against
            held.update(versions[key].items())
            parent = parents[key]
            key = (t, ns, parent) if parent else None
        if key is not None:
            continue
        for ch, v in own.items():
            blob = blobs.get((t, ns, ch, v))
            if is_delta(blob):
                outside = [pair for pair in needs_of(blob, ch) if pair not in held]
                if outside:
                    problems.append(f"{t}/{ns}/{cid}: {ch}@{v} builds on {outside}")
    return problems


def _by_namespace(tuples: Any) -> list[Any]:
    """Namespaces in the order they began, each oldest first (LangGraph's `list` yields one
    namespace after another, graphrun's by checkpoint id; ids are time-ordered in both)."""
    found = list(tuples)
    first: dict[str, str] = {}
    for t in found:
        conf = t.config["configurable"]
        ns, cid = conf["checkpoint_ns"], conf["checkpoint_id"]
        first[ns] = min(first.get(ns, cid), cid)
    return sorted(found, key=lambda t: (
        first[t.config["configurable"]["checkpoint_ns"]], t.config["configurable"]["checkpoint_id"]
    ))


def _tuple(norm: Normalizer, t: Any, updated: set[str]) -> dict[str, Any]:
    """A saver's checkpoint tuple without what differs by design between back ends (channel
    versions: their format, and which channels LangGraph keeps a version of); pending writes
    grouped by task, the groups sorted (tasks of one step finish in any order), task ids left
    out."""
    groups: dict[str, list[Any]] = {}
    for task_id, channel, value in t.pending_writes or []:
        groups.setdefault(task_id, []).append((channel, norm(value)))
    return {
        "config": norm(t.config),
        "parent": norm(t.parent_config),
        "values": norm(t.checkpoint["channel_values"]),
        "metadata": norm(t.metadata),
        "writes": sorted((tuple(g) for g in groups.values()), key=repr),
        "updated": t.config["configurable"]["checkpoint_id"] in updated,
    }


def _as_lg_sees(read: Any) -> Any:
    """A reading as compared with LangGraph's, without differences of the engine (outside
    the savers, left alone by issue 16; compared among graphrun's back ends only):

    - the engines' own bookkeeping (`__resume__` of a resumed subgraph task, the `branch:to:`
      write of `Command(goto)` input, the `branch:to:` value kept after a static interrupt)
      differs: only the values of and writes to state channels are compared;
    - the path of a `Send` task in the history: graphrun's carries a third element
      (`("__pregel_push", 0, False)`): paths are compared on their first two;
    - a task that was interrupted and then resumed to a result still lists its interrupt in
      LangGraph's history, not in graphrun's, and the snapshot's own `interrupts` differ the
      other way round (the stored writes are the same): the interrupts of tasks with a result,
      and of snapshots with such a task, are left out.
    """
    if not isinstance(read, dict) or "tuples" not in read:
        return read
    tuples = [
        {
            **t,
            "values": {k: v for k, v in t["values"].items() if k in STATE_KEYS},
            "writes": _state_writes(t),
        }
        for t in read["tuples"]
    ]
    history = [_resumed_snapshot(s) for s in read["history"]]
    return {"history": history, "tuples": tuples}


def _state_writes(t: dict[str, Any]) -> list[Any]:
    groups = [tuple(w for w in group if w[0] in STATE_KEYS) for group in t["writes"]]
    return sorted((g for g in groups if g), key=repr)


def _resumed_snapshot(snapshot: dict[str, Any]) -> dict[str, Any]:
    tasks = tuple(map(_resumed, snapshot["tasks"]))
    if not any(task.get("result") is not None for task in tasks):
        return {**snapshot, "tasks": tasks}
    return {**snapshot, "tasks": tasks, "interrupts": None}


def _resumed(task: dict[str, Any]) -> dict[str, Any]:
    task = {**task, "path": tuple(task["path"])[:2]}
    return {**task, "interrupts": None} if task.get("result") is not None else task


class Worlds:
    """Every back end running one program; `step` applies an operation to all of them and
    checks that they agree."""

    NAMES = ("lg", "memory", "memory_full", "sqlite", "sqlite_full")

    def __init__(self, spec: Spec, directory: Path, names: tuple[str, ...] = NAMES) -> None:
        self.worlds: list[World] = []
        self.log: list[Any] = [spec]
        built = {}
        try:
            for name in names:
                try:
                    self.worlds.append(World(name, spec, directory))
                    built[name] = "built"
                except Exception as error:  # noqa: BLE001 - a graph both libraries refuse
                    built[name] = Normalizer()(error)
            self._agree("building the graph", built)
        except BaseException:
            self.close()
            raise
        self.built = len(self.worlds) == len(names)

    def close(self) -> None:
        for world in self.worlds:
            world.close()

    def __enter__(self) -> Worlds:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def step(self, op: Any) -> None:
        self.log.append(op)
        self._agree("outcome", {w.name: w.apply(op) for w in self.worlds})
        for world in self.worlds:
            problems = world.audit()
            assert not problems, f"{world.name} after {self.log}: {problems}"
        for thread in THREADS:
            reads = {w.name: w.read(thread) for w in self.worlds if thread not in w.untracked}
            self._agree(f"thread {thread}", reads)

    def _agree(self, what: str, found: dict[str, Any]) -> None:
        found = {name: value for name, value in found.items() if value is not SKIPPED}
        names = sorted(found, key=lambda name: name == "lg")  # compare with a graphrun world
        for name in names[1:]:
            expected, got = found[names[0]], found[name]
            if name == "lg":
                expected, got = _as_lg_sees(expected), _as_lg_sees(got)
            if got != expected:
                ops = "\n  ".join(map(repr, self.log))
                raise AssertionError(
                    f"{what} after:\n  {ops}\n{name} differs from {names[0]}: "
                    + first_difference([expected], [got])
                )


def run_program(
    spec: Spec, ops: list[Any], directory: Path, names: tuple[str, ...] = Worlds.NAMES
) -> None:
    """Run `ops` on every back end, checking after each that every thread reads back alike."""
    with Worlds(spec, directory, names) as worlds:
        if not worlds.built:
            return  # every library refused the graph alike
        for op in ops:
            worlds.step(op)

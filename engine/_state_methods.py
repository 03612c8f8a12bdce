"""The state methods of a compiled graph (read, history, update, bulk update): a mixin of
`CompiledStateGraph`, kept apart so `_pregel.py` holds the running of a graph only."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import anyio.to_thread

from checkpoints.base import CheckpointTuple

from ._config import merge_config
from ._nested import (
    ancestors_of, own_history_ns, subgraph_for_update, with_map, with_parents_map,
)
from ._run import Run, make_snapshot
from ._state import update_state_run
from ._stream import Sink
from ._subgraphs import node_subgraph
from ._tasks import flush_async, flush_sync
from ._update_routes import has_async_router, off_loop
from .types import END, StateSnapshot, StateUpdate

__all__ = ["StateMethods", "latest_config", "latest_requested"]

_BULK_ONLY = frozenset((END, "__input__", "__copy__"))  # update_state forms bulk handles


class StateMethods:
    """`get_state`, `get_state_history`, `update_state`, `bulk_update_state` and their async
    twins, on the graph's checkpointer (`self.checkpointer`, `self.run_class`)."""

    checkpointer: Any
    run_class: Any

    def _require_saver(self) -> Any:
        if not self.checkpointer:
            raise ValueError("No checkpointer set")
        return self.checkpointer

    def _snapshot(
        self, saved: CheckpointTuple | None, config: dict[str, Any], with_pending: bool = True
    ) -> StateSnapshot:
        if saved is None:
            return StateSnapshot({}, (), config, None, None, None, (), ())
        run = self.run_class(self, merge_config(saved.config), sink=Sink(frozenset(), False, _drop))
        run.restore(saved)
        return with_parents_map(make_snapshot(run, saved, with_pending))

    def get_state(self, config: dict[str, Any], *, subgraphs: bool = False) -> StateSnapshot:
        """The thread's state at its latest checkpoint (or the one `checkpoint_id` names)."""
        saver = self._require_saver()
        sub = subgraph_for_update(self, config)
        if sub is not None:  # the subgraph's own nodes give its next tasks (issue 27)
            return sub.get_state(config, subgraphs=subgraphs)
        snapshot = self._snapshot(saver.get_tuple(config), config, latest_requested(config))
        if subgraphs:
            snapshot = self._with_subgraph_states(snapshot, saver)
        return snapshot

    def _with_subgraph_states(self, snapshot: StateSnapshot, saver: Any) -> StateSnapshot:
        tasks = []
        conf = snapshot.config["configurable"]
        thread_id = conf.get("thread_id")
        parent_ns = conf.get("checkpoint_ns", "")
        checkpoint_map = conf.get("checkpoint_map") or {parent_ns: conf.get("checkpoint_id")}
        for task in snapshot.tasks:
            sub = node_subgraph(self, task.name)  # a node calling one too (issue 27)
            if sub is not None:
                ns = f"{parent_ns}|{task.name}:{task.id}" if parent_ns else f"{task.name}:{task.id}"
                if getattr(sub, "checkpointer", None) is True:
                    ns = own_history_ns(ns)  # issue 27
                sub_config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}
                saved = saver.get_tuple(sub_config)
                if saved is not None:
                    sub_snapshot = sub._snapshot(saved, sub_config)
                    sub_conf = dict(sub_snapshot.config["configurable"])
                    sub_conf["checkpoint_map"] = {**checkpoint_map, ns: sub_conf["checkpoint_id"]}
                    parent = sub_snapshot.parent_config
                    if parent is not None:
                        parent_conf = dict(parent["configurable"])
                        parent_conf["checkpoint_map"] = {
                            **checkpoint_map, ns: parent_conf["checkpoint_id"]
                        }
                        parent = {"configurable": parent_conf}
                    sub_snapshot = sub_snapshot._replace(
                        config={"configurable": sub_conf}, parent_config=parent
                    )
                    sub_snapshot = sub._with_subgraph_states(sub_snapshot, saver)
                    task = task._replace(state=sub_snapshot)
            tasks.append(task)
        return snapshot._replace(tasks=tuple(tasks))

    async def aget_state(self, config: dict[str, Any], *, subgraphs: bool = False) -> StateSnapshot:
        saver = self._require_saver()
        sub = subgraph_for_update(self, config)
        if sub is not None:
            return await sub.aget_state(config, subgraphs=subgraphs)
        snapshot = self._snapshot(
            await saver.aget_tuple(config), config, latest_requested(config)
        )
        if subgraphs:
            snapshot = await anyio.to_thread.run_sync(self._with_subgraph_states, snapshot, saver)
        return snapshot

    def get_state_history(
        self,
        config: dict[str, Any],
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[StateSnapshot]:
        """Every checkpoint of the thread, newest first."""
        saver = self._require_saver()
        sub = subgraph_for_update(self, config)
        if sub is not None:  # issue 27
            yield from sub.get_state_history(config, filter=filter, before=before, limit=limit)
            return
        for saved in saver.list(_root_ns(config), filter=filter, before=before, limit=limit):
            yield self._snapshot(saved, saved.config, with_pending=False)

    async def aget_state_history(
        self,
        config: dict[str, Any],
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[StateSnapshot]:
        saver = self._require_saver()
        sub = subgraph_for_update(self, config)
        if sub is not None:
            async for found in sub.aget_state_history(
                config, filter=filter, before=before, limit=limit
            ):
                yield found
            return
        async for saved in saver.alist(
            _root_ns(config), filter=filter, before=before, limit=limit
        ):
            yield self._snapshot(saved, saved.config, with_pending=False)

    def update_state(
        self,
        config: dict[str, Any],
        values: Any,
        as_node: str | None = None,
    ) -> dict[str, Any]:
        """Write `values` as if node `as_node` returned them; makes a `source="update"` checkpoint."""
        if as_node in _BULK_ONLY:  # LangGraph's special forms (issue 17)
            return self.bulk_update_state(config, [[StateUpdate(values, as_node)]])
        saver = self._require_saver()
        sub = subgraph_for_update(self, config)
        if sub is not None:
            return with_map(sub.update_state(config, values, as_node), config)
        run = self._update_run(config, saver)
        saved = saver.get_tuple(config)
        run.restore(saved)
        latest = latest_requested(config) or not self._replaying(
            saved, saver.get_tuple(latest_config(merge_config(config)))
        )
        update_state_run(run, values, as_node, keep_writes=latest)
        flush_sync(run)
        return run.checkpoint_config  # type: ignore[return-value]

    async def aupdate_state(
        self,
        config: dict[str, Any],
        values: Any,
        as_node: str | None = None,
    ) -> dict[str, Any]:
        if as_node in _BULK_ONLY:
            return await self.abulk_update_state(config, [[StateUpdate(values, as_node)]])
        saver = self._require_saver()
        sub = subgraph_for_update(self, config)
        if sub is not None:
            return with_map(await sub.aupdate_state(config, values, as_node), config)
        run = self._update_run(config, saver)
        saved = await saver.aget_tuple(config)
        run.restore(saved)
        latest = latest_requested(config) or not self._replaying(
            saved, await saver.aget_tuple(latest_config(merge_config(config)))
        )
        if has_async_router(self.plan):  # awaited from a worker thread (issue 27)
            await off_loop(update_state_run, run, values, as_node, latest)
        else:
            update_state_run(run, values, as_node, keep_writes=latest)
        await flush_async(run)
        return run.checkpoint_config  # type: ignore[return-value]

    def bulk_update_state(
        self, config: dict[str, Any], supersteps: Sequence[Sequence[Any]]
    ) -> dict[str, Any]:
        """Apply super-steps of `StateUpdate`s, one checkpoint each (LangGraph's semantics)."""
        from ._bulk import apply_superstep, check_supersteps

        saver = self._require_saver()
        check_supersteps(supersteps)
        for updates in supersteps:
            run = self._state_run(config, saver)
            run.restore(saver.get_tuple(config))
            apply_superstep(run, updates)
            flush_sync(run)
            config = run.checkpoint_config  # type: ignore[assignment]
        return config

    async def abulk_update_state(
        self, config: dict[str, Any], supersteps: Sequence[Sequence[Any]]
    ) -> dict[str, Any]:
        """Async `bulk_update_state`."""
        from ._bulk import apply_superstep, check_supersteps

        saver = self._require_saver()
        check_supersteps(supersteps)
        for updates in supersteps:
            run = self._state_run(config, saver)
            run.restore(await saver.aget_tuple(config))
            if has_async_router(self.plan):  # awaited from a worker thread (issue 27)
                await off_loop(apply_superstep, run, updates)
            else:
                apply_superstep(run, updates)
            await flush_async(run)
            config = run.checkpoint_config  # type: ignore[assignment]
        return config

    def _update_run(self, config: dict[str, Any], saver: Any) -> Run:
        """The run `update_state` writes through (a subgraph's update knows its ancestors)."""
        sink = Sink(frozenset(), False, _drop)
        run = self.run_class(self, merge_config(config), sink=sink, checkpointer=saver)
        run.parents_given = ancestors_of(config)
        return run

    def _state_run(self, config: dict[str, Any], saver: Any) -> Run:
        # "sync" durability: the next super-step reads this one's checkpoint back
        sink = Sink(frozenset(), False, _drop)
        return Run(self, merge_config(config), sink=sink, checkpointer=saver, durability="sync")


def latest_requested(config: dict[str, Any]) -> bool:
    """Reading a thread's latest state shows finished tasks' pending writes applied; an
    explicit `checkpoint_id` shows that checkpoint as stored (as LangGraph)."""
    return not (config.get("configurable") or {}).get("checkpoint_id")


def latest_config(lookup: dict[str, Any]) -> dict[str, Any]:
    conf = {k: v for k, v in lookup["configurable"].items() if k != "checkpoint_id"}
    return {"configurable": conf}


def _drop(_: Any) -> None:
    return None


def _root_ns(config: dict[str, Any]) -> dict[str, Any]:
    """`config` for listing a thread's checkpoints: the root namespace unless one is named."""
    conf = dict(config.get("configurable", {}))
    conf.setdefault("checkpoint_ns", "")
    return {"configurable": conf}

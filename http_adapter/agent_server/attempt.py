"""One attempt of a run, shared by the embedded queue and the cluster queue (issue 19 §2).

Streaming a run through the broker, deciding where a retried run resumes, computing its
thread's record afterwards, dropping a rolled-back run's checkpoints and calling webhooks are
the same whoever claimed the run; only how runs are claimed and where their records are written
differ (`queue.py` in process, `cluster/queue.py` on PostgreSQL).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import msgspec

from .._tracebacks import user_traceback
from .encode import dumps, plain
from .errors import ServerError
from .executor import (
    Outcome, engine_args, engine_modes, is_resumable, metadata_event, schema_context,
    stream_modes, wire_events,
)
from .held_updates import AfterReducers
from .langgraph_graph import ENGINE_LANGGRAPH, engine_of
from .output_keys import OutputViews
from .records import now
from .schemas import Run, Thread
from .thread_values import by_reference

logger = logging.getLogger("http_adapter.queue")

__all__ = [
    "Active", "EndedStateless", "cancelled", "create_subscribed", "drop_checkpoints", "failure", "resume_input",
    "stream", "thread_after", "webhook", "webhooks_enabled", "with_",
]


async def create_subscribed(
    broker: Any, run: Run, subscribe: bool, create: Callable[[], Awaitable[Run]]
) -> Any:
    """Open the run's event log, subscribe before the run can publish (so a streaming caller
    misses nothing), then `create` it; returns the run, or (run, subscription) with
    `subscribe`. A create that fails closes the subscription."""
    broker.open(run.run_id, resumable=is_resumable(run.kwargs))
    subscription = broker.attach(run.run_id) if subscribe else None
    try:
        if subscribe:  # a producer on another host sends its events (issue 32)
            await broker.watch(run.run_id)
        created = await create()
    except BaseException:
        if subscription is not None:
            subscription.close()
        raise
    return (created, subscription) if subscribe else created


@dataclasses.dataclass(slots=True)
class Active:
    """A run executing in this process: its cancel scope and why it was cancelled."""

    scope: anyio.CancelScope
    action: str | None = None  # "interrupt" | "rollback" | "timeout" | "release" (drain)
    # The attempt's right to write (issue 26, the cluster queue's `checkpoints.Fence`): its
    # checkpoints are stored and its events published only while it holds.
    fence: Any = None


class EndedStateless:
    """Stateless runs that ended before anyone joined them (issue 31 item 8).

    `langgraph dev` starts a run a few hundred ms after `POST /runs`, so a client's
    `runs.create(None, ...)` then `runs.join` finds it in flight and gets its result; here it
    may have ended already, its temporary thread gone. Each ended run answers one join (a
    second answers 404, as the reference's does once the thread is deleted); the last `limit`
    are kept, so unjoined ones cost little.
    """

    def __init__(self, limit: int = 100) -> None:
        self._ended: collections.OrderedDict[str, tuple[Run, Outcome]] = collections.OrderedDict()
        self._limit = limit

    def add(self, run: Run, outcome: Outcome) -> None:
        self._ended[run.run_id] = (run, outcome)
        while len(self._ended) > self._limit:
            self._ended.popitem(last=False)

    def take(self, thread_id: str, run_id: str) -> tuple[Run, Outcome] | None:
        """The run and how it ended, once; None for another thread's id or an unknown run."""
        found = self._ended.get(run_id)
        if found is None or found[0].thread_id != thread_id:
            return None
        return self._ended.pop(run_id)


async def stream(state: Any, run: Run, active: Active, *, stateless: bool, attempt: int,
                 resume: bool) -> Outcome:
    """Run the graph once, publishing its events to the broker; how it ended.

    With `resume`, a run that already wrote checkpoints continues from the last of them
    (finished steps are not run again) instead of starting over from its input.
    """
    assistant = await state.assistant(run.assistant_id)
    value, config, options = engine_args(
        run, assistant, thread_id=None if stateless else run.thread_id, attempt=attempt,
        api_url=state.settings.api_url,
    )
    try:
        async with state.run_graph(assistant.graph_id, stateless=stateless, config=config,
                                   context=options["context"]) as graph:
            options["context"] = schema_context(options["context"], graph)
            if active.fence is not None and not stateless:  # issue 26: writes carry the fence
                graph = graph.copy(checkpointer=state.saver.fenced(active.fence))
            return await _stream(state, run, active, graph, (value, config, options),
                                 stateless=stateless, attempt=attempt, resume=resume)
    except ServerError as error:  # the graph failed to load (issue 31): the run ends in error
        cause = error.__cause__  # what the factory raised; the reference's run reports it
        detail = ({"error": type(cause).__name__, "message": str(cause)} if cause is not None
                  else {"error": type(error).__name__, "message": str(error.detail)})
        state.broker.publish(run.run_id, "error", dumps(detail))
        return Outcome("error", error=detail)


async def _stream(state: Any, run: Run, active: Active, graph: Any, args: tuple[Any, ...], *,
                  stateless: bool, attempt: int, resume: bool) -> Outcome:
    value, config, options = args
    if resume and not stateless:
        value = await resume_input(state.saver, run, value)
    modes = stream_modes(run.kwargs)
    wanted = engine_modes(modes)
    engine = wanted if "values" in wanted else [*wanted, "values"]
    # issue 31 item 12: through the output schema where one is set apart (issue 28: subgraphs')
    views = OutputViews(graph, value, subgraphs=options["subgraphs"])
    if views.any and "updates" not in engine:
        engine = [*engine, "updates"]  # which steps wrote an output key
    convert = wire_events(modes, options["subgraphs"])
    fence = active.fence
    publish = state.broker.publish if fence is None else _fenced(state.broker.publish, fence)
    publish_lazy = (state.broker.publish_lazy if fence is None
                    else _fenced(state.broker.publish_lazy, fence))
    publish(run.run_id, *metadata_event(run.run_id, attempt))
    subgraphs = options["subgraphs"]
    last_values: Any = None
    # Every interrupt of the root graph, as `invoke` returns them (issue 17): the last
    # `values` chunk of a resume that answered one of two is the state with its write and
    # carries none; each interrupted task's own chunk carries its own.
    interrupts: list[Any] = []
    timeout = state.settings.run_timeout
    # issue 31 item 15: message ids as the reducers set them; not for LangGraph's runtime,
    # whose updates the reference encodes before its reducers run (issue 28)
    held = AfterReducers(hold=engine_of(graph) != ENGINE_LANGGRAPH)

    def take(item: Any) -> None:
        nonlocal last_values
        ns, mode = ((), item[0]) if not subgraphs else (item[0], item[1])
        send = True
        view = views.get(ns)
        if view is not None:
            chunk, send = view.see(mode, item[-1])
            item = (*item[:-1], chunk)
        if mode == "values" and not ns:
            last_values = item[-1]
            if isinstance(last_values, dict) and "__interrupt__" in last_values:
                interrupts.extend(last_values["__interrupt__"])
        if not send or mode not in wanted:
            return
        if mode == "messages":  # its accumulator must see every chunk
            for name, data in convert(item):
                publish(run.run_id, name, data)
        else:  # issue 32: encoded only if someone may receive it
            publish_lazy(run.run_id, functools.partial(convert, item))

    try:
        with active.scope:
            with anyio.fail_after(timeout) if timeout else _nullcontext():
                async for item in graph.astream(value, config, stream_mode=engine, **options):
                    ns, mode = ((), item[0]) if not subgraphs else (item[0], item[1])
                    for ready in held.feed(ns, mode, item):
                        take(ready)
    except TimeoutError:
        return Outcome("timeout", error={"error": "TimeoutError", "message": "Run timed out"})
    except Exception as error:  # the graph failed: the run ends in error
        for ready in held.rest():
            take(ready)
        _log_failure(run, config["configurable"]["graph_id"], error)
        detail = {"error": type(error).__name__, "message": str(error)}
        publish(run.run_id, "error", dumps(detail))
        return Outcome("error", error=detail)
    for ready in held.rest():
        take(ready)
    if active.scope.cancel_called:
        return cancelled(active.action)
    values = (
        {k: v for k, v in last_values.items() if k != "__interrupt__"}
        if isinstance(last_values, dict) else last_values
    )
    whole = views.get(()) is None and not interrupts and isinstance(last_values, dict)
    return Outcome("success", values=values, interrupts=interrupts, whole=whole)


def _log_failure(run: Run, graph_id: str, error: Exception) -> None:
    """The failed run's traceback, the user's frames only, at `error` on the server's terminal
    (issue 30: `langgraph dev` prints it too; the wire keeps the reference's `{error, message}`)."""
    logger.error(
        "Run %s failed (thread %s, graph %s): %s: %s\n%s", run.run_id, run.thread_id, graph_id,
        type(error).__name__, error, user_traceback(error),
        extra={"run_id": run.run_id, "thread_id": run.thread_id, "graph_id": graph_id},
    )


async def resume_input(saver: Any, run: Run, value: Any) -> Any:
    """A run that already wrote checkpoints continues from them (input None), whatever its
    attempt number says: a drained run gives its attempt back but keeps its checkpoints."""
    latest = await saver.aget_tuple(
        {"configurable": {"thread_id": run.thread_id, "checkpoint_ns": ""}}
    )
    if latest is not None and latest.metadata.get("run_id") == run.run_id:
        return None
    return value


async def thread_after(state: Any, thread: Thread, outcome: Outcome, *, others: bool,
                       run: Run | None = None) -> Thread:
    """Thread status, values and interrupts after a run ended (SPEC §3 rules); `others`: the
    thread has another run pending or running (it stays busy). `run`, the run that ended:
    as the reference, the thread is named after that run's graph (a run queued behind, or
    interrupting, one of another graph renames it when it ends) and read through it."""
    values, interrupts, has_next, held_at = outcome.values, {}, False, None
    thread = _named_after(thread, run)
    graph_id = (thread.metadata or {}).get("graph_id")
    current = None
    if graph_id in state.settings.graphs:
        current = await _current_state(state, graph_id, thread.thread_id)
    # One read of the latest checkpoint (a snapshot without metadata: the thread has none, and
    # the run's own values stand); it was two, 3 round trips each on PostgreSQL.
    if current is not None and current.metadata is not None:
        # issue 32: the record names the checkpoint holding the values, not a copy of them
        values, held_at = None, current.config["configurable"]["checkpoint_id"]
        has_next = bool(current.next)
        interrupts = {
            t.id: [{"value": i.value, "id": i.id} for i in t.interrupts]
            for t in current.tasks if t.interrupts
        }
    if (outcome.error or {}).get("error") == "UserRollback":
        # the reference ends a rolled-back run without a checkpoint: never `interrupted`
        # (issue 31), whatever the run before it left pending
        has_next, interrupts = False, {}
    if others:
        status = "busy"
    elif outcome.status in ("error", "timeout"):
        status = "error"
    elif has_next or interrupts:
        status = "interrupted"
    else:
        status = "idle"
    stamp = now()
    return by_reference(
        thread, plain(values), held_at, status=status, interrupts=plain(interrupts),
        error=outcome.error, updated_at=stamp, state_updated_at=stamp,
    )


def _named_after(thread: Thread, run: Run | None) -> Thread:
    """The thread named after `run`'s graph (issue 28: multitask_interrupt; langgraph-api's
    `set_joint_status` does it at every run's end)."""
    graph_id = ((run.kwargs or {}).get("config") or {}).get("configurable", {}).get(
        "graph_id") if run is not None else None
    metadata = thread.metadata or {}
    if graph_id is None or metadata.get("graph_id") == graph_id:
        return thread
    return with_(thread, metadata={**metadata, "graph_id": graph_id})


async def _current_state(state: Any, graph_id: str, thread_id: str) -> Any:
    """The thread's latest state, or None when its graph fails to load (issue 31: the run
    still ends and frees its thread; its own values and error stand)."""
    try:
        graph = await state.graph(graph_id)
    except ServerError:
        return None
    return await graph.aget_state({"configurable": {"thread_id": thread_id}})


async def drop_checkpoints(saver: Any, run: Run) -> None:
    """Delete the checkpoints a rolled-back run wrote: the thread is as before the run."""
    config = {"configurable": {"thread_id": run.thread_id, "checkpoint_ns": ""}}
    ids = [
        saved.checkpoint["id"] async for saved in saver.alist(config)
        if saved.metadata.get("run_id") == run.run_id
    ]
    if ids:
        await saver.adelete_checkpoints(run.thread_id, ids)


def _fenced(publish: Callable[..., None], fence: Any) -> Callable[..., None]:
    """`publish` (or `publish_lazy`) while the attempt may write: a stale one's events go
    nowhere (issue 26)."""

    def publish_fenced(run_id: str, *event: Any) -> None:
        if fence.holds():
            publish(run_id, *event)

    return publish_fenced


def cancelled(action: str | None) -> Outcome:
    """A cancelled run: status interrupted; the thread records why (as the LangGraph server)."""
    kind = "UserRollback" if action == "rollback" else "UserInterrupt"
    verb = "rollback" if action == "rollback" else "interrupt"
    message = f"{verb} requested via POST /threads/{{thread_id}}/runs/{{run_id}}/cancel"
    return Outcome("interrupted", error={"error": kind, "message": message})


def failure(error: Exception) -> Outcome:
    """The queue itself failed a run (not the graph): it ends in error."""
    return Outcome("error", error={"error": type(error).__name__, "message": str(error)})


def with_(record: Any, **changes: Any) -> Any:
    return msgspec.structs.replace(record, **changes)


def webhooks_enabled(settings: Any) -> bool:
    """langgraph.json `http.disable_webhooks`: runs keep their `webhook`, none is called."""
    return not (settings.extra.get("http") or {}).get("disable_webhooks")


async def webhook(state: Any, url: str, run: Run, outcome: Outcome) -> None:
    """POST the finished run to the caller's webhook through the server's webhook policy
    (`webhooks.py`, issue 26 §4-5); failures are logged, never raised."""
    payload = {**msgspec.structs.asdict(run), "status": run.status, "values": outcome.values,
               "error": outcome.error}
    await state.webhooks.send(url, payload, run.run_id)


class _nullcontext:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None

"""Every public method of the Python `langgraph-sdk` client, one call each (issue 31 "both
official SDKs' whole method lists"), through the sync client and through the async one.

`STEPS` is the table: each row names the method it calls and calls it with valid arguments on
state the earlier rows made. The scenario checks that each row called the method it names (a
proxy counts the calls), and `tests/http_adapter/test_sdk_methods.py` checks that every method
the installed SDK has is a row or in `SKIPPED`, so a new SDK version shows up there.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import subprocess
from collections.abc import Callable
from typing import Any

from langgraph_sdk import get_client

from ...js_tools import JS_DIR, node
from ..registry import scenario, wait_status
from ..transcript import Session

__all__ = ["CLIENT_METHODS", "RESOURCES", "SKIPPED", "STEPS", "sdk_methods", "sdk_methods_async",
           "sdk_methods_js"]

RESOURCES = ("assistants", "threads", "runs", "crons", "store", "http")
# The clients' own methods, which send nothing (`aclose` ends the async scenario).
CLIENT_METHODS = ("close", "aclose")

# Methods no row calls, and why (docs/differences.md names the same).
SKIPPED: dict[str, str] = {
    "threads.stream": "the v2 event-streaming protocol (/threads/{id}/commands, "
                      "/threads/{id}/stream/events) is not served by graphrun",
}

_SCHEDULE = "0 0 1 1 *"  # once a year: no cron fires during the scenario
Ctx = dict[str, Any]
Step = tuple[str, Callable[[Any, Ctx], Any]]


def _first_thread(c: Any, ctx: Ctx) -> Any:
    ctx["thread"] = c.threads.create(metadata={"t": "sdk"})["thread_id"]
    return ctx["thread"]


def _until_done(parts: Any) -> list[dict[str, Any]]:
    """A thread's stream never ends by itself: read until its run says it is done."""
    seen = []
    try:
        for part in parts:
            seen.append({"event": part.event, "data": part.data, "id": part.id})
            if part.event == "metadata" and part.data.get("status") == "run_done":
                break
    finally:
        parts.close()  # the connection, now
    return seen


STEPS: list[Step] = [
    ("assistants.create", lambda c, ctx: ctx.setdefault("assistant", c.assistants.create(
        "agent", config={"configurable": {"k": 1}}, metadata={"t": "sdk"}, name="first",
        description="one"))),
    ("assistants.get", lambda c, ctx: c.assistants.get(ctx["assistant"]["assistant_id"])),
    ("assistants.update", lambda c, ctx: c.assistants.update(
        ctx["assistant"]["assistant_id"], name="second", metadata={"t": "sdk2"})),
    ("assistants.get_versions", lambda c, ctx: c.assistants.get_versions(
        ctx["assistant"]["assistant_id"])),
    ("assistants.set_latest", lambda c, ctx: c.assistants.set_latest(
        ctx["assistant"]["assistant_id"], 1)),
    ("assistants.search", lambda c, ctx: c.assistants.search(metadata={"t": "sdk"})),
    ("assistants.count", lambda c, ctx: c.assistants.count(graph_id="agent")),
    ("assistants.get_graph", lambda c, ctx: c.assistants.get_graph(
        ctx["assistant"]["assistant_id"], xray=True)),
    ("assistants.get_schemas", lambda c, ctx: c.assistants.get_schemas(
        ctx["assistant"]["assistant_id"])),
    ("assistants.get_subgraphs", lambda c, ctx: c.assistants.get_subgraphs(
        ctx["assistant"]["assistant_id"], recurse=True)),
    ("threads.create", _first_thread),
    ("threads.get", lambda c, ctx: c.threads.get(ctx["thread"])),
    ("threads.update", lambda c, ctx: c.threads.update(ctx["thread"], metadata={"u": 1})),
    ("threads.search", lambda c, ctx: c.threads.search(metadata={"t": "sdk"})),
    ("threads.count", lambda c, ctx: c.threads.count(metadata={"t": "sdk"})),
    ("runs.wait", lambda c, ctx: c.runs.wait(ctx["thread"], "agent", input={"x": 1})),
    ("runs.stream", lambda c, ctx: c.runs.stream(ctx["thread"], "agent", input={"x": 2},
                                                 stream_mode=["values", "updates"])),
    ("runs.create", lambda c, ctx: ctx.setdefault("run", c.runs.create(
        ctx["thread"], "agent", input={"x": 3}, stream_resumable=True))),
    ("runs.join", lambda c, ctx: c.runs.join(ctx["thread"], ctx["run"]["run_id"])),
    ("runs.join_stream", lambda c, ctx: c.runs.join_stream(
        ctx["thread"], ctx["run"]["run_id"], last_event_id="0-0")),
    ("runs.get", lambda c, ctx: c.runs.get(ctx["thread"], ctx["run"]["run_id"])),
    ("runs.list", lambda c, ctx: c.runs.list(ctx["thread"])),
    ("threads.join_stream", lambda c, ctx: _until_done(c.threads.join_stream(
        ctx["thread"], last_event_id="0-0"))),
    ("threads.get_state", lambda c, ctx: c.threads.get_state(ctx["thread"])),
    ("threads.get_history", lambda c, ctx: c.threads.get_history(ctx["thread"], limit=2)),
    ("threads.update_state", lambda c, ctx: c.threads.update_state(
        ctx["thread"], {"x": 10}, as_node="a")),
    ("threads.copy", lambda c, ctx: c.threads.copy(ctx["thread"])),
    ("runs.cancel", lambda c, ctx: c.runs.cancel(
        ctx["held"], ctx["hold"]["run_id"], wait=True)),
    ("runs.cancel_many", lambda c, ctx: c.runs.cancel_many(
        thread_id=ctx["held"], run_ids=[ctx["hold"]["run_id"]])),
    ("runs.delete", lambda c, ctx: c.runs.delete(ctx["thread"], ctx["run"]["run_id"])),
    ("runs.create_batch", lambda c, ctx: c.runs.create_batch(
        [{"assistant_id": "router", "input": {"x": 1}}])),
    ("crons.create", lambda c, ctx: ctx.setdefault("cron", c.crons.create(
        "agent", schedule=_SCHEDULE, input={"x": 1}))),
    ("crons.create_for_thread", lambda c, ctx: c.crons.create_for_thread(
        ctx["thread"], "agent", schedule=_SCHEDULE, input={"x": 1})),
    ("crons.search", lambda c, ctx: c.crons.search(assistant_id=ctx["cron"]["assistant_id"])),
    ("crons.count", lambda c, ctx: c.crons.count(assistant_id=ctx["cron"]["assistant_id"])),
    ("crons.update", lambda c, ctx: c.crons.update(ctx["cron"]["cron_id"],
                                                   schedule="0 0 2 1 *")),
    ("crons.delete", lambda c, ctx: c.crons.delete(ctx["cron"]["cron_id"])),
    ("store.put_item", lambda c, ctx: c.store.put_item(["sdk", "a"], "k", {"v": 1})),
    ("store.get_item", lambda c, ctx: c.store.get_item(["sdk", "a"], "k")),
    ("store.search_items", lambda c, ctx: c.store.search_items(["sdk"])),
    ("store.list_namespaces", lambda c, ctx: c.store.list_namespaces(prefix=["sdk"])),
    ("store.delete_item", lambda c, ctx: c.store.delete_item(["sdk", "a"], "k")),
    ("http.get", lambda c, ctx: c.http.get(f"/threads/{ctx['thread']}/state")),
    ("http.post", lambda c, ctx: c.http.post("/threads/count", json={"metadata": {"t": "sdk"}})),
    ("http.put", lambda c, ctx: c.http.put("/store/items", json={
        "namespace": ["sdk", "a"], "key": "k2", "value": {"v": 2}})),
    ("http.patch", lambda c, ctx: c.http.patch(f"/threads/{ctx['thread']}",
                                               json={"metadata": {"p": 1}})),
    ("http.delete", lambda c, ctx: c.http.delete("/store/items", json={
        "namespace": ["sdk", "a"], "key": "k2"})),
    ("http.stream", lambda c, ctx: c.http.stream("/runs/stream", "POST", json={
        "assistant_id": "router", "input": {"x": 2}, "stream_mode": ["updates"]})),
    ("http.request_reconnect", lambda c, ctx: c.http.request_reconnect(
        f"/threads/{ctx['thread']}/runs/wait", "POST", json={"assistant_id": "router",
                                                            "input": {"x": 4}})),
    ("threads.prune", lambda c, ctx: c.threads.prune([ctx["thread"]])),
    ("threads.delete", lambda c, ctx: c.threads.delete(ctx["thread"])),
    ("assistants.delete", lambda c, ctx: c.assistants.delete(ctx["assistant"]["assistant_id"])),
]


def _held(s: Session, c: Any, ctx: Ctx) -> None:
    """Before a cancel: a run that waits until cancelled, seen running (unrecorded), after the
    one before it ended."""
    if "held" in ctx:
        wait_status(lambda: s.sdk.runs.get(ctx["held"], ctx["hold"]["run_id"]), ("interrupted",))
    ctx["held"] = c.threads.create()["thread_id"]
    ctx["hold"] = c.runs.create(ctx["held"], "i31_hold", input={"wait": True})
    wait_status(lambda: s.sdk.runs.get(ctx["held"], ctx["hold"]["run_id"]), ("running",))
    # and its first step started: the reference's `cancel?wait=1` answers the values streamed
    # after the cancel, so a cancel before the input's `values` event would answer them
    wait_status(lambda: {"status": s.sdk.threads.get_state(ctx["held"])["next"]}, (["hold"],))


def _drive(s: Session, client: Any) -> None:
    counted = _Counting(client)
    ctx: Ctx = {}
    for name, step in STEPS:
        if name in ("runs.cancel", "runs.cancel_many"):
            _held(s, client, ctx)
        s.call(name, step, counted, ctx)
        assert counted.called == {name}, (name, counted.called)
        counted.called.clear()


@scenario
def sdk_methods(s: Session) -> None:
    """The sync client (`get_sync_client`), every method."""
    _drive(s, s.sdk)


@scenario
def sdk_methods_async(s: Session) -> None:
    """The async client (`get_client`), every method, through a loop of its own."""
    loop = asyncio.new_event_loop()
    client = get_client(url=s.url, api_key=None, timeout=30)
    try:
        _drive(s, _Blocking(client, loop))
    finally:
        loop.run_until_complete(client.aclose())
        loop.close()


class _Counting:
    """`client.<resource>.<method>` that records the names it was asked for."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.called: set[str] = set()

    def __getattr__(self, resource: str) -> Any:
        return _Resource(getattr(self._client, resource), resource, self.called)


class _Resource:
    def __init__(self, inner: Any, name: str, called: set[str]) -> None:
        self._inner, self._name, self._called = inner, name, called

    def __getattr__(self, method: str) -> Any:
        self._called.add(f"{self._name}.{method}")
        return getattr(self._inner, method)


class _Blocking:
    """The async client seen as a sync one: coroutines run to the end, async iterators are
    read into lists (a thread's endless stream is cut by `_until_done` on the sync side, so it
    is read here through a bounded iterator)."""

    def __init__(self, client: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._client, self._loop = client, loop

    def __getattr__(self, resource: str) -> Any:
        return _BlockingResource(getattr(self._client, resource), self._loop)


class _BlockingResource:
    def __init__(self, inner: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._inner, self._loop = inner, loop

    def __getattr__(self, method: str) -> Any:
        fn = getattr(self._inner, method)

        def call(*args: Any, **kwargs: Any) -> Any:
            result = fn(*args, **kwargs)
            if inspect.iscoroutine(result):  # (the async `threads.join_stream` returns a stream)
                result = self._loop.run_until_complete(result)
            if hasattr(result, "__aiter__"):
                return _SyncIter(result, self._loop)
            return result

        return call


class _SyncIter:
    """An async iterator read one item at a time on the loop (so a reader may stop early)."""

    def __init__(self, parts: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._parts, self._loop = parts.__aiter__(), loop

    def __iter__(self) -> _SyncIter:
        return self

    def __next__(self) -> Any:
        try:
            return self._loop.run_until_complete(self._parts.__anext__())
        except StopAsyncIteration:
            raise StopIteration from None

    def close(self) -> None:
        self._loop.run_until_complete(self._parts.aclose())


@scenario
def sdk_methods_js(s: Session) -> None:
    """The JS client (`@langchain/langgraph-sdk` of tests/http_adapter/js), every method, run
    by js/sdk_methods.mjs in node; each row's answer (or HTTP error) lands in the log."""
    done = subprocess.run([node(), "sdk_methods.mjs", s.url], cwd=JS_DIR, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for row in json.loads(done.stdout):
        entry = {"sdk": f"js {row.pop('method')}"}
        entry.update(row)
        s.log.append(entry)

"""LangChain callbacks in `config["callbacks"]` see the graph run and each node run, nested as
under LangGraph (issue 27: LangSmith traces depend on it), and a node's `TracePolicy` decides
what tracers record of it (issue 29).

Only a root run given callbacks (with langchain-core loaded) traces; its subgraphs trace under
the node that called them. Everything here is skipped otherwise: the run's `trace` stays None.
A `TracePolicy` changes what `BaseTracer`s record; other handlers, the run and its streams see
the real values; a processor that raises is ignored (the real value is recorded).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from ._context import current_scope

if TYPE_CHECKING:
    from ._context import TaskScope
    from ._node import Callee
    from ._run import Run

__all__ = ["start_graph", "traced_acall", "traced_call", "wants_trace", "with_graph_run",
           "with_graph_run_async"]


def wants_trace(run: Run) -> bool:
    """A root run given callbacks, or a subgraph run inside a traced node."""
    if "langchain_core" not in sys.modules:
        return False
    if run.parent is None:
        return bool(run.config.get("callbacks")) or _langsmith_enabled()
    return run.parent.trace is not None


def _langsmith_enabled() -> bool:
    """LangSmith tracing switched on (`tracing_context(enabled=True)`, `LANGSMITH_TRACING`):
    LangChain then adds its tracer to the run's callbacks, as under LangGraph (issue 29)."""
    if "langsmith" not in sys.modules:
        return False
    from langsmith.utils import tracing_is_enabled

    return bool(tracing_is_enabled())


def _run_tree_of(children: Any) -> Any:
    """`langsmith.get_current_run_tree()` inside the node: its run, as LangChain's tracer
    recorded it (a context manager; a null one without a LangChain tracer)."""
    import contextlib

    if "langchain_core.tracers.langchain" in sys.modules:
        from langchain_core.tracers.langchain import LangChainTracer
        from langsmith import tracing_context

        for handler in children.handlers:
            if isinstance(handler, LangChainTracer):
                tree = handler.run_map.get(str(children.parent_run_id))
                if tree is not None:
                    return tracing_context(parent=tree)
    return contextlib.nullcontext()


def start_graph(run: Run, value: Any) -> None:
    from langchain_core.callbacks import CallbackManager

    config = run.config
    scope = current_scope.get()
    if run.parent is not None and scope is not None and scope.run is run.parent:
        manager = _node_children(scope)  # nested under the node that invoked this graph
    else:
        manager = CallbackManager.configure(
            config.get("callbacks"), None, inheritable_tags=config.get("tags"),
            inheritable_metadata=config.get("metadata"),
        )
    if manager is None:
        return
    name = config.get("run_name") or run.graph.name
    run.trace = manager.on_chain_start(None, _payload(value), name=name,
                                       run_id=config.get("run_id"))


def _finish(run: Run, error: BaseException | None) -> None:
    from .errors import GraphBubbleUp

    trace, run.trace = run.trace, None
    if trace is None:
        return
    if error is not None and not isinstance(error, GraphBubbleUp):
        trace.on_chain_error(error)
        return
    output = run.output() if run.status != "failed" else None
    if isinstance(output, dict):
        output = {k: v for k, v in output.items() if k != "__interrupt__"}
    trace.on_chain_end(output if isinstance(output, dict) else {"output": output})


def with_graph_run(run: Run, value: Any, driver: Iterator[None]) -> Iterator[None]:
    """`driver` inside a LangChain chain run for the graph."""
    start_graph(run, value)
    try:
        yield from driver
    except BaseException as error:
        _finish(run, error)
        raise
    _finish(run, None)


async def with_graph_run_async(
    run: Run, value: Any, driver: AsyncIterator[None]
) -> AsyncIterator[None]:
    start_graph(run, value)
    try:
        async for item in driver:
            yield item
    except BaseException as error:
        _finish(run, error)
        raise
    finally:
        await driver.aclose()  # type: ignore[attr-defined]
    _finish(run, None)


# -- node runs --------------------------------------------------------------------------------


class _NodeRun:
    """One node's chain run: started once per handler group (tracers see what its
    `TracePolicy` makes of the payloads, other handlers the payloads themselves)."""

    __slots__ = ("groups", "children")

    def __init__(self, scope: TaskScope) -> None:
        import uuid

        from langchain_core.callbacks import CallbackManager
        from langchain_core.tracers.base import BaseTracer

        from ._calls import is_call, named_input

        task, run = scope.task, scope.run
        value = task.input
        caller = _caller(run, task) if is_call(task) else None
        if caller is not None:  # a `@task` call: a child of the node run that called it
            step = caller.children.copy()
            value = named_input(task)
        else:
            step = run.trace.get_child(f"graph:step:{run.step}")
            step.add_metadata(run.task_metadata(task), inherit=False)
        policy = task.node.trace_policy
        run_id = uuid.uuid4()
        kwargs = {"name": task.name, "run_id": run_id}
        if policy is None:
            self.groups = [(step.on_chain_start(None, _payload(value), **kwargs), None)]
        else:
            self.groups = []
            for tracers in (True, False):
                handlers = [h for h in step.handlers if isinstance(h, BaseTracer) == tracers]
                if not handlers:
                    continue
                inherit = [h for h in step.inheritable_handlers if h in handlers]
                manager = CallbackManager(handlers, inherit, step.parent_run_id, tags=step.tags,
                                          inheritable_tags=step.inheritable_tags,
                                          metadata=step.metadata,
                                          inheritable_metadata=step.inheritable_metadata)
                out = policy.process_outputs if tracers else None
                inputs = _processed(policy.process_inputs if tracers else None, value)
                self.groups.append((manager.on_chain_start(None, _payload(inputs), **kwargs), out))
        # what the node calls hangs under its run; LangGraph's node is a sequence whose first
        # step is the node's function, hence the tag its children carry
        self.children = CallbackManager(
            step.inheritable_handlers, step.inheritable_handlers, run_id, tags=["seq:step:1"],
            inheritable_tags=step.inheritable_tags, inheritable_metadata=step.inheritable_metadata,
        )

    def end(self, output: Any, error: BaseException | None) -> None:
        for manager, process in self.groups:
            if error is not None:
                manager.on_chain_error(error)
            else:
                manager.on_chain_end(_payload(_processed(process, output), "output"))


def _processed(process: Any, value: Any) -> Any:
    if process is None:
        return value
    try:
        return process(value)
    except Exception:  # fail open: the real value is recorded
        return value


def _payload(value: Any, key: str = "input") -> Any:
    """What LangChain records: a dict as is, anything else under `key` (as LangGraph)."""
    return value if isinstance(value, dict) else {key: value} if value is not None else {}


def _caller(run: Run, task: Any) -> _NodeRun | None:
    """The run of the node (or call) whose call this task is: its path holds the caller's."""
    runs = getattr(run, "node_runs", None)
    return runs.get(task.path[1]) if runs and len(task.path) > 1 else None


def _node_children(scope: TaskScope) -> Any:
    node_run = (getattr(scope.run, "node_runs", None) or {}).get(scope.task)
    return node_run.children if node_run is not None else None


def _enter(scope: TaskScope) -> tuple[_NodeRun, Any]:
    """Start the node's run and make it the parent of what the node calls (its config's
    callbacks, and the config LangChain runnables inherit)."""
    from langchain_core.callbacks import BaseCallbackManager
    from langchain_core.runnables.config import var_child_runnable_config

    node_run = _NodeRun(scope)
    runs = getattr(scope.run, "node_runs", None)
    if runs is None:
        runs = scope.run.node_runs = {}
    runs[scope.task] = runs[scope.task.path] = node_run  # by path: its calls find it
    config = scope.config
    children = node_run.children.copy()
    given = config.get("callbacks")
    # what graphrun itself added rides along: the `messages`/`events` handler (a manager), a
    # timed attempt's progress handler (appended to the user's list)
    if isinstance(given, BaseCallbackManager):
        for handler in given.handlers:
            children.add_handler(handler, inherit=True)
        children.add_tags(given.tags, inherit=False)
    elif isinstance(given, list):
        for handler in given:
            if handler not in children.handlers:
                children.add_handler(handler, inherit=True)
    scope._config = {**config, "callbacks": children}
    return node_run, var_child_runnable_config.set(scope._config)


def traced_call(callee: Callee, value: Any, scope: TaskScope) -> Any:
    node_run, token = _enter(scope)
    try:
        with _run_tree_of(node_run.children):
            output = callee.plain_call(value, scope)
    except BaseException as error:
        node_run.end(None, error)
        raise
    finally:
        token.var.reset(token)
    node_run.end(output, None)
    return output


async def traced_acall(callee: Callee, value: Any, scope: TaskScope) -> Any:
    node_run, token = _enter(scope)
    try:
        with _run_tree_of(node_run.children):
            output = await callee.plain_acall(value, scope)
    except BaseException as error:
        node_run.end(None, error)
        raise
    finally:
        token.var.reset(token)
    node_run.end(output, None)
    return output

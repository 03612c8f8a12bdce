"""Node error handlers and builder-wide node defaults, as LangGraph 1.2 (issue 29).

`add_node(name, fn, error_handler=h)` adds a node `__error_handler__<name>`; when `name` fails
for good (its retries spent), the failure is saved with a marker write naming the node, and
the handler runs at once, in the same step and thread as the failed task, on the failed task's
input, with a `NodeError` for a parameter that asks for one. Its writes (an update, a
`Command(goto=...)`) apply with the step; if it fails, the run fails with its error. On a
resume the failed node does not run again: its handler does, told the saved error.
`set_node_defaults(...)` gives every node without its own a retry policy, timeout, cache
policy (not handlers) and error handler (`__default_error_handler__`; not handlers).

A node whose own code raises `asyncio.CancelledError` failed (`NodeCancelledError`, as LangGraph
1.2): told apart from a real cancellation (a cancelled run, a timeout, a failed sibling) by the
asyncio task's `cancelling()` count; only a real one tears the step down silently.
"""

from __future__ import annotations

import asyncio
import builtins
import dataclasses
import functools
import inspect
from typing import TYPE_CHECKING, Any

from checkpoints.base import ERROR

from ._context import current_scope
from ._pending import describe_error
from .errors import NodeCancelledError, NodeError
from .types import TimeoutPolicy

if TYPE_CHECKING:
    from ._run import Run
    from ._step import Task
    from .graph import StateGraph

__all__ = [
    "DEFAULT_HANDLER", "ERROR_SOURCE", "NodeDefaults", "add_handler_node", "handle_failure",
    "node_cancelled", "resume_handlers", "set_defaults", "with_node_defaults",
]

HANDLER_PREFIX = "__error_handler__"
DEFAULT_HANDLER = "__default_error_handler__"
ERROR_SOURCE = "__error_source_node__"  # pending write: this task failed and was handled
_PUSH = ("__pregel_push",)


@dataclasses.dataclass(slots=True)
class NodeDefaults:
    """What `set_node_defaults` recorded; applied when the graph compiles."""

    retry_policy: Any = None
    cache_policy: Any = None
    error_handler: Any = None
    timeout: Any = None


# -- building ---------------------------------------------------------------------------------


def set_defaults(defaults: NodeDefaults, **given: Any) -> None:
    for name, value in given.items():
        if value is not None:
            setattr(defaults, name, TimeoutPolicy.coerce(value) if name == "timeout" else value)


def add_handler_node(builder: StateGraph[Any], name: str, handler: Any, schema: Any) -> str:
    """Add a handler as a node of its own (LangGraph names and draws it so)."""
    from .graph import NodeSpec

    if name in builder.nodes:
        raise ValueError(f"Auto-generated error handler node `{name}` already exists.")
    builder.nodes[name] = NodeSpec(
        name=name, action=_with_node_error(handler), input_schema=schema, is_error_handler=True
    )
    return name


def with_node_defaults(builder: StateGraph[Any]) -> StateGraph[Any]:
    """The builder to compile: itself, or a copy with `set_node_defaults` applied (per-node
    values win; a later edit of the defaults changes no graph compiled before)."""
    defaults = builder.node_defaults
    if defaults == NodeDefaults():
        return builder
    graph = builder._frozen()
    default_handler = None
    if defaults.error_handler is not None:
        if DEFAULT_HANDLER in graph.nodes:
            raise ValueError(
                f"Auto-generated default error handler node `{DEFAULT_HANDLER}` already exists."
            )
        default_handler = add_handler_node(graph, DEFAULT_HANDLER, defaults.error_handler, None)
    for name, spec in list(graph.nodes.items()):
        graph.nodes[name] = _defaulted(spec, defaults, default_handler)
    return graph


def _defaulted(spec: Any, defaults: NodeDefaults, handler: str | None) -> Any:
    changes: dict[str, Any] = {}
    if spec.retry_policy is None and defaults.retry_policy is not None:
        changes["retry_policy"] = defaults.retry_policy
    if spec.timeout is None and defaults.timeout is not None:
        changes["timeout"] = defaults.timeout
    if not spec.is_error_handler:  # a handler is never cached, nor handled by a handler
        if spec.cache_policy is None and defaults.cache_policy is not None:
            changes["cache_policy"] = defaults.cache_policy
        if spec.error_handler is None and handler is not None:
            changes["error_handler"] = handler
    return dataclasses.replace(spec, **changes) if changes else spec


def _error_param(fn: Any) -> str | None:
    """The parameter a handler takes its `NodeError` by: typed so, else named `error`."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None
    for param in list(params.values())[1:]:
        note = param.annotation
        if note is NodeError or (isinstance(note, str) and note.split(".")[-1] == "NodeError"):
            return param.name
    return "error" if "error" in params else None


def _with_node_error(handler: Any) -> Any:
    """`handler` with its `NodeError` parameter filled from the running handler task."""
    param = _error_param(handler) if callable(handler) else None
    if param is None:
        return handler
    signature = inspect.signature(handler)
    rest = signature.replace(
        parameters=[p for p in signature.parameters.values() if p.name != param]
    )
    if inspect.iscoroutinefunction(handler):

        async def acall(state: Any, **kwargs: Any) -> Any:
            return await handler(state, **kwargs, **{param: _current_error()})

        call: Any = acall
    else:

        def call(state: Any, **kwargs: Any) -> Any:
            return handler(state, **kwargs, **{param: _current_error()})

    functools.update_wrapper(call, handler)
    call.__signature__ = rest
    del call.__wrapped__  # `inspect.signature` must see `rest`, not the handler's
    return call


def _current_error() -> NodeError | None:
    scope = current_scope.get()
    errors = getattr(scope.run, "node_errors", None) if scope is not None else None
    return errors.get(scope.task) if errors else None  # type: ignore[union-attr]


# -- running ----------------------------------------------------------------------------------


def handle_failure(run: Run, task: Task, error: BaseException) -> Task | None:
    """`task` failed for good: fail it, or, when its node has a handler, record the failure
    as handled and return the handler's task for the executor to run now."""
    name = task.node.error_handler
    if name is None or not isinstance(error, Exception):
        run.task_failed(task, error)
        return None
    _record_handled(run, task, error)
    return _handler_task(run, task, name, error)


def _record_handled(run: Run, task: Task, error: Exception) -> None:
    """Saved and streamed as a failure (the error and the marker in one write, so a resume
    knows), but the step goes on without it."""
    task.error = error
    if run.events is not None:
        run.events.node_error(task, error)
    run._put_writes(task, [(ERROR, describe_error(error)), (ERROR_SOURCE, task.name)])
    if run.emits and ("tasks" in run.sink.modes or "debug" in run.sink.modes):
        run._emit_task_result(task)
    task.error = None
    task.writes = []
    task.done = True


def _handler_task(run: Run, failed: Task, name: str, error: BaseException) -> Task:
    from ._step import Task

    kind, key = failed.order
    order = (kind, f"{key}\uffff" if isinstance(key, str) else key + 0.5)  # right after it
    handler = Task(
        None, run.plan.nodes[name], failed.input, (*failed.path[:3], "node_error_handler", False),
        _PUSH, failed.parent_ns, order,
        (run.checkpoint_id or "", run.ns, run.step, name, "node_error_handler", failed.id),
    )
    errors = getattr(run, "node_errors", None)
    if errors is None:
        errors = run.node_errors = {}
    errors[handler] = NodeError(node=failed.name, error=error)
    run.tasks.append(handler)  # the step's list: its writes apply with the step's
    return handler


def resume_handlers(run: Run, tasks: list[Task]) -> None:
    """On a resumed step: a task that failed and was handled does not run again; its handler
    does (unless it finished before), told the saved error."""
    from ._run import pending_by_task

    by_task = pending_by_task(run.pending)
    for task in list(tasks):
        outcome = by_task.get(task.id)
        name = task.node.error_handler
        if name is None or outcome is None or (ERROR_SOURCE, task.name) not in outcome.writes:
            continue
        task.writes, task.done, task.cached = [], True, True
        handler = _handler_task(run, task, name, _revive(outcome.error))
        done = by_task.get(handler.id)
        if done is not None and done.finished:
            handler.writes, handler.done, handler.cached = done.writes, True, True


def _revive(saved: Any) -> BaseException:
    """A saved error (`{"error": class name, "message": ...}`) as an exception again."""
    if isinstance(saved, BaseException):
        return saved
    if not isinstance(saved, dict):
        return Exception(str(saved))
    cls = getattr(builtins, str(saved.get("error")), None)
    message = str(saved.get("message", ""))
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(message)
        except Exception:  # an exception class whose constructor wants more
            pass
    return Exception(f"{saved.get('error')}: {message}")


def node_cancelled(task: Task, error: asyncio.CancelledError) -> NodeCancelledError:
    """The node failure `error` stands for; re-raises `error` if the task is being cancelled."""
    try:
        current = asyncio.current_task()
    except RuntimeError:  # not asyncio (trio): its own cancellation is not this exception
        current = None
    if current is None or current.cancelling() > 0:
        raise error
    return NodeCancelledError(task.name)

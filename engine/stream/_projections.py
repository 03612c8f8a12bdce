"""The built-in one-mode projections of a v3 run: `run.values`, `run.updates`, ... (issue 29).

Each keeps the events of one stream mode emitted at its run's own level (its `scope`); a
subgraph's events reach the subgraph handle's projections instead.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ._channel import StreamChannel
from ._transformer import ProtocolEvent, StreamTransformer

__all__ = [
    "CheckpointsTransformer",
    "CustomTransformer",
    "DebugTransformer",
    "TasksTransformer",
    "UpdatesTransformer",
    "ValuesTransformer",
]


class _ModeProjection(StreamTransformer):
    """Pushes the `data` of this scope's events of one mode onto a channel named `key`."""

    _native = True
    key: ClassVar[str]

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Any] = StreamChannel()
        self._scope_list = list(scope)

    def init(self) -> dict[str, Any]:
        return {self.key: self._log}

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] == self.key and event["params"]["namespace"] == self._scope_list:
            self._take(event["params"])
        return True

    def _take(self, params: Any) -> None:
        self._log.push(params["data"])


class ValuesTransformer(_ModeProjection):
    """`run.values`: the state after each step of this run (not of its subgraphs)."""

    key = "values"
    required_stream_modes = ("values",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._latest: Any = None
        self._interrupted = False
        self._interrupts: list[Any] = []

    @property
    def error(self) -> BaseException | None:
        """The error that ended the run, once it failed."""
        return self._log._error

    def _take(self, params: Any) -> None:
        self._latest = params["data"]
        if interrupts := params.get("interrupts", ()):
            self._interrupted = True
            self._interrupts.extend(interrupts)
        self._log.push(params["data"])


class CustomTransformer(_ModeProjection):
    """`run.custom`: what this run's nodes wrote with their stream writer."""

    key = "custom"
    required_stream_modes = ("custom",)


class UpdatesTransformer(_ModeProjection):
    """`run.updates`: each step's `{node: update}`."""

    key = "updates"
    required_stream_modes = ("updates",)


class CheckpointsTransformer(_ModeProjection):
    """`run.checkpoints`: each checkpoint as `get_state()` shows it (with a checkpointer)."""

    key = "checkpoints"
    required_stream_modes = ("checkpoints",)


class DebugTransformer(_ModeProjection):
    """`run.debug`: the `debug` mode's checkpoint, task and task-result events."""

    key = "debug"
    required_stream_modes = ("debug",)


class TasksTransformer(_ModeProjection):
    """`run.tasks`: task starts and results."""

    key = "tasks"
    required_stream_modes = ("tasks",)

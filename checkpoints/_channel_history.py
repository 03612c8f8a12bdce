"""A channel's writes along a checkpoint's ancestry, LangGraph's `get_delta_channel_history`.

LangGraph 1.2 savers answer it for its `DeltaChannel` (a channel stored as its writes since a
seed value). Any saver can answer it from the public protocol: walk `parent_config` from the
checkpoint, collect each checkpoint's pending writes to the channel, and stop at the nearest
ancestor storing a value for it (the seed). Issue 27: LangGraph's tests subclass savers with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["ChannelWalk"]


class ChannelWalk:
    """The walk's state: what was collected so far, fed one ancestor at a time."""

    def __init__(self, channels: Sequence[str]) -> None:
        self.channels = list(channels)
        self.writes: dict[str, list[Any]] = {c: [] for c in channels}
        self.seeds: dict[str, Any] = {}
        self.remaining = set(channels)

    def visit(self, saved: Any) -> Any:
        """Take one ancestor; returns the next config to read, or None when done."""
        for write in reversed(saved.pending_writes or ()):
            if write[1] in self.remaining:
                self.writes[write[1]].append(write)
        values = saved.checkpoint["channel_values"]
        for channel in list(self.remaining):
            if channel in values:
                self.seeds[channel] = values[channel]
                self.remaining.discard(channel)
        return saved.parent_config if self.remaining else None

    def result(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for channel in self.channels:
            entry: dict[str, Any] = {"writes": list(reversed(self.writes[channel]))}
            if channel in self.seeds:
                entry["seed"] = self.seeds[channel]
            out[channel] = entry
        return out

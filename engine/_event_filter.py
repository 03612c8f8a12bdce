"""`astream_events`' include/exclude filters (LangChain's `include_names`, `include_types`,
`include_tags` and their `exclude_*` twins, issue 27): an event passes when it matches any
include given (or none is given) and no exclude. An event's type is its run's kind, read
from the event name (`on_chat_model_start` is a `chat_model` event)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

__all__ = ["EventFilter", "filter_events"]

_KEYS = ("include_names", "include_types", "include_tags",
         "exclude_names", "exclude_types", "exclude_tags")


class EventFilter:
    """The filters one `astream_events` call was given."""

    def __init__(self, given: dict[str, Sequence[str] | None]) -> None:
        self.include_names = given.get("include_names")
        self.include_types = given.get("include_types")
        self.include_tags = given.get("include_tags")
        self.exclude_names = given.get("exclude_names")
        self.exclude_types = given.get("exclude_types")
        self.exclude_tags = given.get("exclude_tags")

    @classmethod
    def take(cls, kwargs: dict[str, Any]) -> EventFilter | None:
        """Pop the filter keywords from `kwargs`; None when none was given."""
        given = {key: kwargs.pop(key) for key in _KEYS if key in kwargs}
        return cls(given) if any(v is not None for v in given.values()) else None

    def keeps(self, event: dict[str, Any]) -> bool:
        name, tags = event.get("name"), event.get("tags") or ()
        kind = event.get("event", "")[3:].rsplit("_", 1)[0]  # "on_<kind>_<phase>"
        include = (self.include_names is None and self.include_types is None
                   and self.include_tags is None)
        if self.include_names is not None:
            include = include or name in self.include_names
        if self.include_types is not None:
            include = include or kind in self.include_types
        if self.include_tags is not None:
            include = include or any(tag in self.include_tags for tag in tags)
        if self.exclude_names is not None and name in self.exclude_names:
            return False
        if self.exclude_types is not None and kind in self.exclude_types:
            return False
        if self.exclude_tags is not None and any(tag in self.exclude_tags for tag in tags):
            return False
        return include


async def filter_events(events: Any, keep: EventFilter) -> AsyncIterator[dict[str, Any]]:
    """The events `keep` lets through; closing this closes the run's stream."""
    try:
        async for event in events:
            if keep.keeps(event):
                yield event
    finally:
        await events.aclose()

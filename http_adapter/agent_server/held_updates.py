"""`updates` events whose messages have no id yet, held until the step's reducers ran (issue 31
item 15).

The engine streams a node's update when the node ends and applies it to the state when the
whole step ends; `add_messages` then gives each id-less message object its id, in place. The
update and the state share the objects, so the id shows in the update only if it is encoded
after the reducer ran: in process the caller reads the chunk later (always after), over HTTP the
server encoded it at once, racing the step's end (a supervisor's handoff `ToolMessage` came with
`id: null` in about 1 run in 5). The reference always shows the id. Holding such an update, and
everything after it (the order stays), until the `values` chunk of its namespace (published once
the reducers ran) makes the id deterministic. Updates whose messages all have ids, the usual
case, pass at once.

A graph LangGraph's runtime executes is not held (issue 28): that is the reference's runtime,
whose server encodes each update as it comes, while LangGraph's loop waits before applying the
step's writes, so the handoff `ToolMessage` shows `id: null` there, every time (recorded).
"""

from __future__ import annotations

from typing import Any

__all__ = ["AfterReducers"]


class AfterReducers:
    """Engine stream items in, the same items out in the same order, some a little later."""

    def __init__(self, *, hold: bool = True) -> None:
        self._hold = hold  # False: every item passes at once (LangGraph's runtime, issue 28)
        self._held: list[Any] = []
        self._waiting: set[tuple[str, ...]] = set()

    def feed(self, ns: tuple[str, ...], mode: str, item: Any) -> list[Any]:
        """The items ready to publish now (`item` among them unless held)."""
        if not self._hold:
            return [item]
        if mode == "updates" and _idless_message(item[-1]):
            self._waiting.add(ns)
        elif mode == "values":
            self._waiting.discard(ns)
        if not self._waiting and not self._held:
            return [item]
        self._held.append(item)
        if self._waiting:
            return []
        ready, self._held = self._held, []
        return ready

    def rest(self) -> list[Any]:
        """What is still held when the stream ends (a step that wrote no state)."""
        ready, self._held = self._held, []
        self._waiting.clear()
        return ready


def _idless_message(chunk: Any) -> bool:
    """Whether a node's update holds a message object without an id (`{node: {key: [msg]}}`,
    or a list of such dicts for a node that wrote a key twice)."""
    if not isinstance(chunk, dict):
        return False
    for update in chunk.values():
        for written in update if isinstance(update, list) else [update]:
            if isinstance(written, dict) and any(_idless(v) for v in written.values()):
                return True
    return False


def _idless(value: Any) -> bool:
    values = value if isinstance(value, list | tuple) else [value]
    # objects only: the reducer gives a dict message a new dict with an id, never the same one
    return any(not isinstance(v, dict) and hasattr(v, "content") and getattr(v, "id", "") is None
               for v in values)

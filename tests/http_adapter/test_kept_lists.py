"""A long message list's JSON is kept and extended, never served stale (issue 32).

`encode.dumps` answers a state's long lists from `kept_lists.KeptLists`: each case compares its
bytes with the encoder's own item-by-item JSON of the same value at that moment.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
from langchain_core.messages import AIMessage, HumanMessage

from http_adapter.agent_server import encode
from http_adapter.agent_server.kept_lists import KeptLists

_plain = msgspec.json.Encoder(enc_hook=encode._hook)


def _thread(turns: int, tag: str) -> list[Any]:
    out: list[Any] = []
    for t in range(turns):
        out += [HumanMessage(f"{tag} question {t}", id=f"{tag}-h{t}"),
                AIMessage(f"{tag} answer {t}", id=f"{tag}-a{t}")]
    return out


def _same(value: Any) -> dict[str, Any]:
    """`dumps(value)`, checked against the item-by-item encoding, decoded."""
    got = encode.dumps(value)
    assert got == _plain.encode(value)
    assert b"".join(encode.dumps_parts(value)) == got
    return json.loads(got)


class _Counting:
    """The encoder's list encoding, counting the items it was asked for."""

    def __init__(self) -> None:
        self.items = 0

    def __call__(self, items: list[Any]) -> bytes:
        self.items += len(items)
        return _plain.encode(items)


def test_a_longer_list_encodes_only_what_it_adds() -> None:
    counting = _Counting()
    kept = KeptLists(counting, shortest=4)
    messages = _thread(50, "grow")
    assert bytes(kept.raw(messages)) == _plain.encode(messages)  # type: ignore[arg-type]
    assert counting.items == 100
    for turn in range(3):
        messages = [*messages, HumanMessage(f"more {turn}"), AIMessage(f"reply {turn}")]
        assert bytes(kept.raw(messages)) == _plain.encode(messages)  # type: ignore[arg-type]
    assert counting.items == 106
    assert bytes(kept.raw(list(messages))) == _plain.encode(messages)  # type: ignore[arg-type]
    assert counting.items == 106  # the same objects in a new list: nothing encoded


def test_short_lists_and_plain_items_are_not_kept() -> None:
    counting = _Counting()
    kept = KeptLists(counting, shortest=4)
    assert kept.raw(_thread(1, "short")) is None
    plain = [{"type": "human", "content": str(i)} for i in range(10)]
    assert bytes(kept.raw(plain)) == _plain.encode(plain)  # type: ignore[arg-type]
    assert bytes(kept.raw(plain)) == _plain.encode(plain)  # type: ignore[arg-type]
    assert counting.items == 20  # dicts have no fields to prove them unchanged: encoded again


def test_a_message_changed_anywhere_in_the_kept_prefix_is_encoded_again() -> None:
    messages = _thread(40, "change")
    state = {"messages": messages}
    _same(state)
    messages[3].content = "assigned anew"
    assert _same(state)["messages"][3]["content"] == "assigned anew"
    messages[5].additional_kwargs["seen"] = True  # in place: the same dict object
    assert _same(state)["messages"][5]["additional_kwargs"] == {"seen": True}
    messages[7].tool_calls.append({"name": "t", "args": {"q": 1}, "id": "c1", "type": "tool_call"})
    longer = {"messages": [*messages, HumanMessage("next")]}
    assert _same(longer)["messages"][7]["tool_calls"][0]["args"] == {"q": 1}
    messages[7].tool_calls[0]["args"]["q"] = 2  # deep in a kept, extended list
    assert _same(longer)["messages"][7]["tool_calls"][0]["args"] == {"q": 2}
    messages[9].extra_field = "added"  # a pydantic extra, kept outside `__dict__`
    assert _same(longer)["messages"][9]["extra_field"] == "added"
    assert _same({"m": messages[9]})["m"]["extra_field"] == "added"  # one message alone too
    messages[11].__dict__["in_dict"] = "added"  # one more field: the counts differ
    assert _same(longer) == json.loads(_plain.encode(longer))


def test_lists_that_share_their_first_message_but_differ_later() -> None:
    base = _thread(40, "fork")
    first = {"messages": base}
    _same(first)
    fork = [*base[:10], AIMessage("another branch", id="other")]
    fork += _thread(40, "tail")
    assert _same({"messages": fork})["messages"][10]["content"] == "another branch"
    assert _same({"messages": base[:30]})["messages"][-1]["id"] == base[29].id  # shorter
    assert _same(first) == json.loads(_plain.encode(first))


def test_lists_in_a_nested_state_are_answered_and_others_left_alone() -> None:
    messages = _thread(40, "nested")
    state = {"values": {"messages": messages, "notes": list(range(100))}, "next": []}
    assert _same(state)["values"]["notes"] == list(range(100))
    assert _same([state])[0]["values"]["messages"][0]["id"] == "nested-h0"


def test_the_kept_bytes_stay_under_their_limit() -> None:
    kept = KeptLists(_plain.encode, shortest=4, limit=20_000)
    lists = [_thread(50, f"limit{i}") for i in range(10)]
    for messages in lists:
        assert bytes(kept.raw(messages)) == _plain.encode(messages)  # type: ignore[arg-type]
    assert 0 < kept._bytes <= 20_000 and len(kept._kept) < 10
    assert bytes(kept.raw(lists[0])) == _plain.encode(lists[0])  # dropped: encoded again


def test_parts_hold_each_kept_list_as_it_is_kept() -> None:
    """`dumps_parts` writes a kept list as its kept bytes (no copy of a long thread's history
    into one answer), around outer JSON whose strings may hold NULs of their own."""
    messages = _thread(40, "parts")
    state = {"values": {"messages": messages, "log": _thread(35, "log")}, "note": "a\x00b"}
    first = encode.dumps_parts(state)
    assert len(first) == 5 and b"".join(first) == _plain.encode(state)
    again = encode.dumps_parts(state)
    assert again[1] is first[1] and again[3] is first[3]  # the kept bytes themselves
    assert json.loads(b"".join(again))["note"] == "a\x00b"
    short = {"short": _thread(2, "s")}
    assert encode.dumps_parts(short) == [encode.dumps(short)]
    assert encode.dumps_parts([messages]) == [_plain.encode([messages])]  # only a dict's lists

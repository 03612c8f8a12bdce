"""The parity transcripts' own rules: what normalization keeps and what it replaces (issue 18)."""

from __future__ import annotations

import uuid

from .transcript import normalize, parse_sse

_A, _B = str(uuid.uuid4()), str(uuid.uuid4())
_AGENT = str(uuid.uuid5(uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8"), "agent"))


def test_ids_are_numbered_by_first_appearance_with_keys_sorted() -> None:
    # "a" sorts first, so _B is <id:1> whatever order the server wrote the keys in
    first = normalize({"z": _A, "a": _B, "ns": f"node:{_A}", "list": [_B, _A.upper()]})
    second = normalize({"a": _B, "z": _A, "ns": f"node:{_A}", "list": [_B, _A]})
    assert first == second == {"a": "<id:1>", "list": ["<id:1>", "<id:2>"], "ns": "node:<id:2>",
                               "z": "<id:2>"}


def test_builtin_assistants_times_versions_and_ports() -> None:
    out = normalize({
        "assistant_id": _AGENT, "created_at": "2026-11-25T16:29:48.369904+00:00",
        "v": "00000000000000000000000000000002.0.2431", "url": "http://127.0.0.1:54783/x",
        "configurable": {"__request_start_time_ms__": 1795624369380}, "hex": "0f" * 16,
        "id": "1795624896512-3", "n": 5,
    })
    assert out == {
        "assistant_id": "<assistant:agent>", "created_at": "<ts>", "v": "<version>",
        "url": "http://127.0.0.1:<port>/x", "configurable": {"__request_start_time_ms__": "<time>"},
        "hex": "<id:1>", "id": "<ms>-3", "n": 5,
    }


def test_sse_frames_crlf_or_lf_and_heartbeats_dropped() -> None:
    raw = ('event: metadata\r\ndata: {"run_id":"r"}\r\n\r\n: heartbeat\r\n\r\n'
           'event: values\ndata: {"x":1}\nid: 7-0\n\n')
    assert parse_sse(raw) == [
        {"event": "metadata", "data": {"run_id": "r"}},
        {"event": "values", "data": {"x": 1}, "id": "7-0"},
    ]

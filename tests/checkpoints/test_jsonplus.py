"""`JsonPlusSerializer`, LangGraph's serializer surface over graphrun's encoding (issue 29)."""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any

import pytest

from checkpoints import InMemorySaver, SerializationError
from checkpoints.jsonplus import JsonPlusSerializer, register_safe_types


@dataclasses.dataclass
class Point:
    x: int
    y: int


@dataclasses.dataclass
class Registered:
    name: str


class Mood(enum.Enum):
    CALM = "calm"


register_safe_types(Registered)


def test_typed_formats_round_trip() -> None:
    serde = JsonPlusSerializer()
    for value in (None, b"raw", bytearray(b"ba"), {"p": Point(1, 2), "t": (1, 2)}, Mood.CALM):
        kind, data = serde.dumps_typed(value)
        assert serde.loads_typed((kind, data)) == value
        assert type(serde.loads_typed((kind, data))) is type(value)
    assert serde.dumps_typed(None) == ("null", b"")
    assert serde.dumps_typed(b"raw") == ("bytes", b"raw")
    with pytest.raises(SerializationError, match="Unknown serialization format"):
        serde.loads_typed(("pickle", b""))


def test_strict_msgpack_rebuilds_only_safe_and_allowed_classes() -> None:
    permissive, strict = JsonPlusSerializer(), JsonPlusSerializer(allowed_msgpack_modules=None)
    blob = permissive.dumps_typed({"p": Point(1, 2), "r": Registered("a"), "m": Mood.CALM})
    assert strict.loads_typed(blob) == {"p": {"x": 1, "y": 2}, "r": Registered("a"), "m": "calm"}
    allowed = strict.with_msgpack_allowlist([Point, (Mood.__module__, "Mood")])
    assert allowed.loads_typed(blob) == {"p": Point(1, 2), "r": Registered("a"), "m": Mood.CALM}
    assert JsonPlusSerializer(allowed_msgpack_modules=[Point]).loads_typed(blob)["p"] == Point(1, 2)


def test_legacy_json_constructors_are_rebuilt_when_allowed() -> None:
    record = {"lc": 2, "type": "constructor", "id": [*Point.__module__.split("."), "Point"],
              "kwargs": {"x": 1, "y": 2}}
    data = json.dumps({"points": [record]}).encode()
    assert JsonPlusSerializer(allowed_json_modules=True).loads_typed(("json", data)) == {
        "points": [Point(1, 2)]}
    prefix = tuple(Point.__module__.split(".")[:1])
    assert JsonPlusSerializer(allowed_json_modules=[prefix]).loads_typed(("json", data)) == {
        "points": [Point(1, 2)]}
    assert JsonPlusSerializer().loads_typed(("json", data)) == {"points": [record]}


def test_pickle_fallback_only_when_asked() -> None:
    with pytest.raises(SerializationError):  # msgpack has no form for a range
        JsonPlusSerializer().dumps_typed(range(3))
    serde = JsonPlusSerializer(pickle_fallback=True)
    kind, data = serde.dumps_typed(Point(3, 4))
    assert kind == "msgpack" and serde.loads_typed((kind, data)) == Point(3, 4)
    kind, data = serde.dumps_typed(range(3))
    assert kind == "pickle" and serde.loads_typed((kind, data)) == range(3)
    with pytest.raises(SerializationError):
        JsonPlusSerializer().loads_typed((kind, data))


def test_a_saver_runs_a_subclass_override() -> None:
    """LangGraph's extension point is `dumps_typed`: a saver given a subclass goes through it."""

    class Faulty(JsonPlusSerializer):
        def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
            raise ValueError("Faulty serializer")

    saver = InMemorySaver(serde=Faulty())
    checkpoint = {"v": 4, "id": "1", "ts": "", "channel_values": {"k": 1},
                  "channel_versions": {"k": 1}, "versions_seen": {}}
    with pytest.raises(ValueError, match="Faulty serializer"):
        saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, checkpoint, {},
                  {"k": 1})
    plain = InMemorySaver(serde=JsonPlusSerializer())
    config = plain.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, checkpoint, {},
                       {"k": 1})
    assert plain.get_tuple(config).checkpoint["channel_values"] == {"k": 1}

"""Round trips of the checkpoint serializer keep exact types, nested ones included."""

from __future__ import annotations

import dataclasses
import enum
import uuid
from collections import OrderedDict
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Any, NamedTuple
from zoneinfo import ZoneInfo

import msgspec
import pytest

try:
    import pydantic
except ImportError:  # pragma: no cover - the pydantic test is skipped
    pydantic = None  # type: ignore[assignment]

from checkpoints import SerializationError, Serializer
from checkpoints.serde import default_serializer


class Color(enum.Enum):
    RED = "red"
    PAIR = (1, 2)


class Level(enum.IntEnum):
    LOW = 1


class Perm(enum.Flag):
    R = 1
    W = 2


@dataclasses.dataclass
class Point:
    x: int
    tags: tuple[str, ...]
    seen: set[int] = dataclasses.field(default_factory=set)


@dataclasses.dataclass(frozen=True)
class Frozen:
    when: datetime
    nested: Point


class Pair(NamedTuple):
    left: Any
    right: Any


class Item(msgspec.Struct):
    name: str
    ids: frozenset[int]
    point: Point | None = None


class NotSerializable:
    pass


if pydantic is not None:

    class Account(pydantic.BaseModel):
        id: int = pydantic.Field(alias="ID")
        window: tuple[int, int]
        owner: Point
        note: str = ""


def type_tree(value: Any) -> Any:
    """The value's types, descending into containers and dataclasses, for exact comparisons."""
    if isinstance(value, dict):
        return (dict, tuple((type_tree(k), type_tree(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(type_tree(v) for v in value))
    if isinstance(value, (set, frozenset)):
        return (type(value), tuple(sorted(repr(type_tree(v)) for v in value)))
    if dataclasses.is_dataclass(value):
        fields = dataclasses.fields(value)
        return (type(value), tuple(type_tree(getattr(value, f.name)) for f in fields))
    return type(value)


def roundtrip(value: Any) -> Any:
    return default_serializer.loads(default_serializer.dumps(value))


VALUES = {
    "scalars": [None, True, 1, -(2**63), 2**64 - 1, 1.5, "text", b"raw"],
    "tuple": (1, (2, "3"), [4, (5,)]),
    "set": {1, 2, (3, 4)},
    "frozenset": frozenset({"a", frozenset({1})}),
    "nested dict": {"a": {"b": [(1, 2), {3}]}, "c": ()},
    "non-string keys": {1: "int", (1, 2): "tuple", frozenset({3}): "frozenset", None: 0},
    "naive datetime": datetime(2024, 5, 6, 7, 8, 9, 123456),
    "date": date(2024, 2, 29),
    "time": time(23, 59, 1, 5),
    "aware time": time(1, 2, tzinfo=timezone(timedelta(hours=-3))),
    "timedelta": timedelta(days=-2, seconds=7, microseconds=9),
    "uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "decimal": Decimal("-1.2300"),
    "enum": [Color.RED, Color.PAIR, Level.LOW, Perm.R | Perm.W],
    "dataclass": Point(1, ("a", "b"), {3}),
    "frozen dataclass": Frozen(datetime(2020, 1, 1, tzinfo=timezone.utc), Point(2, (), set())),
    "namedtuple": Pair((1,), {"k": Pair(None, b"x")}),
    "struct": Item("n", frozenset({1, 2}), Point(0, ("t",))),
}


@pytest.mark.parametrize("value", list(VALUES.values()), ids=list(VALUES))
def test_round_trip_keeps_exact_types(value: Any) -> None:
    result = roundtrip(value)
    assert result == value
    assert type_tree(result) == type_tree(value)


@pytest.mark.parametrize("value", [bytearray(b"\x00\xff"), memoryview(b"\x00\xff")])
def test_byte_buffers_come_back_as_bytes_as_in_langgraph(value: Any) -> None:
    assert roundtrip(value) == b"\x00\xff"
    assert type(roundtrip(value)) is bytes
    assert roundtrip({"k": (value,)}) == {"k": (b"\x00\xff",)}  # inside a typed value too
    assert roundtrip({1: value}) == {1: b"\x00\xff"}  # and on the walk (non-string keys)


def test_data_written_with_the_bytearray_ext_still_reads_back() -> None:
    from msgspec.msgpack import Encoder, Ext

    assert default_serializer.loads(Encoder().encode(Ext(4, Encoder().encode(b"ab")))) == (
        bytearray(b"ab")
    )


@pytest.mark.parametrize(
    "value",
    [
        datetime(2024, 1, 1, 12, tzinfo=timezone.utc),
        datetime(2024, 1, 1, 12, tzinfo=timezone(timedelta(hours=5, minutes=30))),
        datetime(2024, 7, 1, 12, tzinfo=ZoneInfo("Europe/Paris")),
        datetime(2021, 11, 7, 1, 30, tzinfo=ZoneInfo("America/New_York"), fold=1),
    ],
    ids=["utc", "offset", "zoneinfo", "zoneinfo-fold"],
)
def test_aware_datetimes_keep_their_zone(value: datetime) -> None:
    result = roundtrip(value)
    assert result == value
    assert result.tzinfo == value.tzinfo
    assert result.utcoffset() == value.utcoffset()
    assert result.fold == value.fold


def test_mutating_the_original_does_not_change_the_copy() -> None:
    value: dict[str, Any] = {"items": [1, 2], "point": Point(1, ())}
    data = default_serializer.dumps(value)
    value["items"].append(3)
    value["point"].x = 9
    assert default_serializer.loads(data) == {"items": [1, 2], "point": Point(1, ())}


def test_typed_round_trip() -> None:
    kind, data = default_serializer.dumps_typed((1, "a"))
    assert kind == "msgpack"
    assert default_serializer.loads_typed((kind, data)) == (1, "a")


def test_unknown_typed_format_is_refused() -> None:
    with pytest.raises(SerializationError, match="pickle"):
        Serializer().loads_typed(("pickle", b""))


def test_unserializable_object_names_its_type() -> None:
    with pytest.raises(SerializationError, match="Object of type 'NotSerializable'") as info:
        default_serializer.dumps({"state": [NotSerializable()]})
    assert isinstance(info.value, TypeError)


def test_locally_defined_class_is_refused_when_written() -> None:
    @dataclasses.dataclass
    class Local:
        x: int

    with pytest.raises(SerializationError, match="Local"):
        default_serializer.dumps(Local(1))


def test_int_beyond_64_bits_is_refused() -> None:
    with pytest.raises(SerializationError, match="int"):
        default_serializer.dumps({"n": 2**70})


def test_builtin_subclasses_are_stored_as_their_base() -> None:
    result = roundtrip(OrderedDict(a=(1,)))
    assert type(result) is dict
    assert result == {"a": (1,)}


def test_decoding_refuses_a_class_of_the_wrong_kind() -> None:
    # A file that names an arbitrary class as a dataclass must not get it called.
    payload = msgspec.msgpack.encode(["builtins:dict", {}])
    data = msgspec.msgpack.encode(msgspec.msgpack.Ext(14, payload))
    with pytest.raises(SerializationError, match="builtins:dict"):
        default_serializer.loads(data)


@pytest.mark.skipif(pydantic is None, reason="pydantic is not installed")
def test_pydantic_models_round_trip() -> None:
    original = Account(ID=7, window=(1, 2), owner=Point(1, ("x",)))
    model = roundtrip({"model": original})["model"]
    assert type(model) is Account
    assert model == original
    assert type(model.window) is tuple
    assert type(model.owner) is Point
    assert model.model_fields_set == {"id", "window", "owner"}
    assert model.model_dump(by_alias=True, exclude_unset=True)["ID"] == 7


def test_langchain_messages_round_trip() -> None:
    messages = pytest.importorskip("langchain_core.messages")

    history = [
        messages.SystemMessage("be brief"),
        messages.HumanMessage("hi", id="h1", additional_kwargs={"k": (1, 2)}),
        messages.AIMessage("", tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "call-1"}]),
        messages.ToolMessage("result", tool_call_id="call-1"),
        messages.AIMessageChunk("par"),
    ]
    result = roundtrip({"messages": history})["messages"]
    assert result == history
    assert [type(m) for m in result] == [type(m) for m in history]
    assert result[1].additional_kwargs["k"] == (1, 2)
    assert result[2].tool_calls[0]["args"] == {"q": "x"}


@pytest.mark.parametrize(
    "value", [v for k, v in VALUES.items() if k != "non-string keys"], ids=[
        k for k in VALUES if k != "non-string keys"
    ]
)
def test_the_c_encoder_writes_the_same_bytes_as_the_python_walk(value: Any) -> None:
    """Both encoders must write one format: old files, and values that fall back to the walk
    (non-string keys), are read by the same decoder."""
    from checkpoints import serde

    assert serde._fast_encode(value) == serde._encode(serde._walk(value))


def test_langchain_messages_encode_alike_on_both_paths() -> None:
    messages = pytest.importorskip("langchain_core.messages")
    from checkpoints import serde

    value = [
        messages.HumanMessage("hi", id="1"),
        messages.AIMessage(
            "", id="2", tool_calls=[{"name": "search", "args": {"q": ("x", 1)}, "id": "c1"}]
        ),
        messages.ToolMessage("result", tool_call_id="c1", id="3"),
    ]
    assert serde._fast_encode(value) == serde._encode(serde._walk(value))
    assert roundtrip(value) == value


@pytest.mark.skipif(pydantic is None, reason="pydantic is not installed")
@pytest.mark.parametrize("wrap", [lambda m: m, lambda m: {"in": [m, (1, m)]}, lambda m: {1: m}])
def test_a_locally_defined_pydantic_model_reads_back_as_its_fields(wrap: Any) -> None:
    # issue 27: LangGraph's serializer stores it (a graph's pydantic input often is one) and
    # gives its fields back; the class, which no import path reaches, is never looked up
    class Local(pydantic.BaseModel):
        query: str
        window: tuple[int, int] = (1, 2)

    original = Local(query="q")
    expected = {"query": "q", "window": (1, 2)}
    assert roundtrip(wrap(original)) == wrap(expected)  # ({1: ...}: the Python walk's path)

"""Type-preserving msgpack serialization for checkpoints, writes and metadata.

msgpack decodes tuples, sets, UUIDs, dataclasses, Structs ... back as lists, strings and dicts.
Checkpoint state must come back with its exact types (a node that put a tuple in the state reads
a tuple after a resume), so every type msgpack cannot name travels as an ``Ext`` (code + nested
msgpack payload).

Encoding is one C pass of ormsgpack, whose passthrough options hand exactly those types to our
hook (`_fast_default`) and encode everything plain itself. msgspec has no such option (it encodes
tuples, dataclasses ... natively and lossily), so with msgspec alone the plain parts had to be
checked by a Python walk first, at several times the cost of the encode. A value ormsgpack refuses
as a whole (a dict with non-string keys, an unsupported type) takes the Python walk `_walk`, which
also words the errors. Decoding is msgspec's. bytearray and memoryview are stored as bytes, as in
LangGraph's serializer (ormsgpack encodes them natively); ext 4 is still read back.

Ext codes (stable: they are stored in checkpoint files)::

     1 tuple        2 set          3 frozenset     4 bytearray (read only) 5 dict, non-scalar keys
     7 datetime     8 date         9 time         10 timedelta    11 UUID
    12 Decimal     13 Enum        14 dataclass    15 namedtuple   16 msgspec Struct
    17 pydantic model (LangChain messages are pydantic models)
    18 the fields of a pydantic model defined inside a function: no import path rebuilds
       its class, so it reads back as a dict of its fields, as LangGraph's serializer does
       (a pydantic state validates it back into its model; issue 27); the class is never
       looked up. Other classes defined in a function stay refused.

Classes (Enum, dataclass, namedtuple, Struct, pydantic) are stored by import path and rebuilt
from their fields; pydantic is never imported here, only recognised when the caller has it loaded.
The walk is cached per exact type, so the common case (dicts, lists, strings) stays a dict lookup.
Integers must fit in 64 bits (msgpack's range, as in LangGraph's serializer).
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import sys
import uuid
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import msgspec
import ormsgpack
from msgspec.msgpack import Ext

__all__ = ["SerializationError", "Serializer", "default_serializer"]

TYPE_MSGPACK = "msgpack"


class SerializationError(TypeError):
    """A value cannot be stored in (or rebuilt from) a checkpoint."""


def _unsupported(t: type) -> SerializationError:
    return SerializationError(f"Object of type {t.__qualname__!r} is not serializable by graphrun")


_encode = msgspec.msgpack.Encoder().encode

# Every type msgpack would store lossily goes to `_fast_default` instead (bytearray cannot).
_PASSTHROUGH = (
    ormsgpack.OPT_PASSTHROUGH_BIG_INT
    | ormsgpack.OPT_PASSTHROUGH_DATACLASS
    | ormsgpack.OPT_PASSTHROUGH_DATETIME
    | ormsgpack.OPT_PASSTHROUGH_ENUM
    | ormsgpack.OPT_PASSTHROUGH_SUBCLASS
    | ormsgpack.OPT_PASSTHROUGH_TUPLE
    | ormsgpack.OPT_PASSTHROUGH_UUID
)
_packb = ormsgpack.packb
_OrmExt = ormsgpack.Ext


def _fast_default(obj: Any) -> Any:
    """ormsgpack's hook: the walk's Ext for `obj`, with its payload also encoded in C."""
    t = type(obj)
    if t is int:
        raise OverflowError("int out of range")  # a big int: the walk's error words it
    make = _fast_exts.get(t)
    if make is None:
        make = _fast_exts[t] = _fast_ext_for(t)
    return make(obj)


def _fast_ext_for(t: type) -> _Converter:
    """Per type, once: the same Ext as `_converter_for`, but the payload is handed to ormsgpack
    unwalked, so only the typed values inside it come back through Python."""
    if t is tuple or t is set or t is frozenset:
        code = {tuple: 1, set: 2, frozenset: 3}[t]
        return lambda o: _OrmExt(code, _fast_encode(list(o)))
    if _is_local_model(t):
        name = t.__qualname__
        return lambda o: _OrmExt(18, _fast_encode([name, _model_fields(o)]))
    if _is_pydantic_model(t):
        path = _class_path(t)

        def model(o: Any) -> Any:
            extra = o.__pydantic_extra__
            fields = o.__dict__ if not extra else {**o.__dict__, **extra}
            return _OrmExt(17, _fast_encode([path, fields, list(o.__pydantic_fields_set__)]))

        return model
    names: tuple[str, ...] | None = None
    if issubclass(t, msgspec.Struct):
        code, names = 16, t.__struct_fields__
    elif dataclasses.is_dataclass(t):
        code, names = 14, tuple(f.name for f in dataclasses.fields(t) if f.init)
    if names is not None:
        path = _class_path(t)
        return lambda o: _OrmExt(code, _fast_encode([path, {n: getattr(o, n) for n in names}]))

    def walked(o: Any) -> Any:  # everything else: the walk's own conversion
        converted = _walk(o)
        return _OrmExt(converted.code, converted.data) if type(converted) is Ext else converted

    return walked


def _fast_encode(obj: Any) -> bytes:
    return _packb(obj, default=_fast_default, option=_PASSTHROUGH)


_fast_exts: dict[type, _Converter] = {}

# Types msgpack stores and returns unchanged (also as map keys); the rest go through a converter.
_PLAIN = frozenset({str, int, float, bool, bytes, type(None)})

_Converter = Callable[[Any], Any]


def _walk(obj: Any) -> Any:
    """Turn `obj` into data msgspec encodes without losing a type."""
    t = type(obj)
    if t in _PLAIN:
        return obj
    conv = _converters.get(t)
    if conv is None:
        conv = _converters[t] = _converter_for(t)
    return conv(obj)


def _ext(code: int, payload: Any) -> Ext:
    return Ext(code, _encode(payload))


# Containers test for plain items inline: a function call per string would double the cost.
def _list(obj: list[Any]) -> list[Any]:
    return [v if type(v) in _PLAIN else _walk(v) for v in obj]


def _dict(obj: dict[Any, Any]) -> Any:
    out = {}
    for k, v in obj.items():
        if type(k) not in _PLAIN:
            return _ext(5, [[_walk(k), _walk(v)] for k, v in obj.items()])
        out[k] = v if type(v) in _PLAIN else _walk(v)
    return out


def _datetime(obj: datetime) -> Ext:
    # A ZoneInfo keeps its name (and DST rules); any other tzinfo keeps its fixed offset.
    if isinstance(obj.tzinfo, ZoneInfo):
        return _ext(7, [obj.replace(tzinfo=None).isoformat(), obj.tzinfo.key, obj.fold])
    return _ext(7, [obj.isoformat()])


def _timedelta(obj: timedelta) -> Ext:
    return _ext(10, [obj.days, obj.seconds, obj.microseconds])


_converters: dict[type, _Converter] = {
    list: _list,
    dict: _dict,
    tuple: lambda o: _ext(1, _list(o)),
    set: lambda o: _ext(2, _list(o)),
    frozenset: lambda o: _ext(3, _list(o)),
    bytearray: bytes,  # as ormsgpack stores it on the fast path
    memoryview: bytes,
    datetime: _datetime,
    date: lambda o: _ext(8, o.isoformat()),
    time: lambda o: _ext(9, o.isoformat()),
    timedelta: _timedelta,
    uuid.UUID: lambda o: _ext(11, o.bytes),
    Decimal: lambda o: _ext(12, str(o)),
}


def _class_path(t: type) -> str:
    if "<locals>" in t.__qualname__:
        # It could be written but never read back; fail while the caller can still see why.
        raise _unsupported(t)
    return f"{t.__module__}:{t.__qualname__}"


def _is_local_model(t: type) -> bool:
    return "<locals>" in t.__qualname__ and _is_pydantic_model(t)


def _model_fields(o: Any) -> dict[str, Any]:
    extra = o.__pydantic_extra__
    return o.__dict__ if not extra else {**o.__dict__, **extra}


def _converter_for(t: type) -> _Converter:
    """Pick (once per type) how instances of a class are written."""
    if _is_local_model(t):
        name = t.__qualname__
        return lambda o: _ext(18, [name, _dict(_model_fields(o))])
    if issubclass(t, enum.Enum):
        path = _class_path(t)
        return lambda o: _ext(13, [path, _walk(o.value)])
    if issubclass(t, msgspec.Struct):
        return _fields_converter(16, t, t.__struct_fields__)
    if dataclasses.is_dataclass(t):
        names = tuple(f.name for f in dataclasses.fields(t) if f.init)
        return _fields_converter(14, t, names)
    if _is_pydantic_model(t):
        return _pydantic_converter(t)
    if issubclass(t, tuple) and hasattr(t, "_fields"):
        path = _class_path(t)
        return lambda o: _ext(15, [path, _list(o)])
    return _base_converter(t)


def _fields_converter(code: int, t: type, names: tuple[str, ...]) -> _Converter:
    path = _class_path(t)
    return lambda o: _ext(code, [path, {n: _walk(getattr(o, n)) for n in names}])


def _is_pydantic_model(t: type) -> bool:
    pydantic = sys.modules.get("pydantic")  # not loaded means `t` cannot be a model
    return pydantic is not None and issubclass(t, pydantic.BaseModel)


def _pydantic_converter(t: type) -> _Converter:
    """Store a model's attributes as they are (nested models keep their class through `_walk`).

    Reading `__dict__` directly skips pydantic's `__iter__`; the fields-set keeps `exclude_unset`
    dumps identical after a round trip.
    """
    path = _class_path(t)

    def convert(o: Any) -> Ext:
        fields = o.__dict__ if not o.__pydantic_extra__ else {**o.__dict__, **o.__pydantic_extra__}
        return _ext(17, [path, _dict(fields), list(o.__pydantic_fields_set__)])

    return convert


def _base_converter(t: type) -> _Converter:
    """Subclasses of builtin containers and scalars are stored as their base type."""
    for base in (str, bytes, float, int, list, dict, tuple, set, frozenset):
        if issubclass(t, base):
            conv = _converters.get(base)
            return conv if conv is not None else base
    raise _unsupported(t)


# --- decoding -------------------------------------------------------------------------------

_class_cache: dict[str, type] = {}


def _import_class(path: str, kind: type | None = None) -> Any:
    """Resolve ``module:qualname``; refuse anything that is not the kind the code promised."""
    cls = _class_cache.get(path)
    if cls is None:
        module, _, qualname = path.partition(":")
        try:
            obj: Any = importlib.import_module(module)
            for part in qualname.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as exc:
            raise SerializationError(f"Cannot rebuild {path!r}: {exc}") from exc
        if not isinstance(obj, type) or (kind is not None and not issubclass(obj, kind)):
            raise SerializationError(f"{path!r} is not a class graphrun can rebuild")
        cls = _class_cache[path] = obj
    return cls


def _load_datetime(payload: list[Any]) -> datetime:
    value = datetime.fromisoformat(payload[0])
    if len(payload) == 3:
        value = value.replace(tzinfo=ZoneInfo(payload[1]), fold=payload[2])
    return value


def _load_enum(payload: list[Any]) -> Any:
    return _import_class(payload[0], enum.Enum)(payload[1])


def _load_dataclass(payload: list[Any]) -> Any:
    cls = _import_class(payload[0])
    if not hasattr(cls, "__dataclass_fields__"):  # what dataclasses.is_dataclass checks
        raise SerializationError(f"{payload[0]!r} is not a dataclass")
    return cls(**payload[1])


def _load_namedtuple(payload: list[Any]) -> Any:
    return _import_class(payload[0], tuple)(*payload[1])


def _load_struct(payload: list[Any]) -> Any:
    return _import_class(payload[0], msgspec.Struct)(**payload[1])


def _load_pydantic(payload: list[Any]) -> Any:
    import pydantic  # only reached when a model was stored, so pydantic is installed

    cls = _import_class(payload[0], pydantic.BaseModel)
    return cls.model_construct(_fields_set=set(payload[2]), **payload[1])


def _load_time(payload: str) -> time:
    return time.fromisoformat(payload)


_loaders: dict[int, Callable[[Any], Any]] = {
    1: tuple,
    2: set,
    3: frozenset,
    4: bytearray,
    5: lambda pairs: {k: v for k, v in pairs},
    7: _load_datetime,
    8: date.fromisoformat,
    9: _load_time,
    10: lambda p: timedelta(days=p[0], seconds=p[1], microseconds=p[2]),
    11: lambda b: uuid.UUID(bytes=b),
    12: Decimal,
    13: _load_enum,
    14: _load_dataclass,
    15: _load_namedtuple,
    16: _load_struct,
    17: _load_pydantic,
    18: lambda payload: payload[1],  # a local model's fields
}


def _ext_hook(code: int, data: memoryview) -> Any:
    loader = _loaders.get(code)
    if loader is None:
        raise SerializationError(f"Unknown graphrun msgpack extension code {code}")
    return loader(_decode(data))


_decode = msgspec.msgpack.Decoder(ext_hook=_ext_hook).decode


class Serializer:
    """Encodes checkpoint values to msgpack bytes and back, preserving Python types.

    Stateless and thread-safe; the encoder and decoder are module-level and shared.
    """

    def dumps(self, obj: Any) -> bytes:
        """Encode `obj`; raises `SerializationError` naming the first unsupported type."""
        if obj is None:  # a branch channel's value, stored every step: no encoder call
            return b"\xc0"
        # `_fast_encode` inline: one frame less per value (a long thread's step serializes 7).
        try:
            return _packb(obj, default=_fast_default, option=_PASSTHROUGH)
        except TypeError:  # ormsgpack refused it as a whole (see the module docstring)
            pass
        try:
            return _encode(_walk(obj))
        except OverflowError as exc:
            raise SerializationError(f"Object of type 'int' is not serializable: {exc}") from exc

    def loads(self, data: bytes) -> Any:
        """Rebuild a value written by `dumps`."""
        return _decode(data)

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Encode with a format tag, the shape LangGraph savers store."""
        return TYPE_MSGPACK, self.dumps(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Rebuild a value written by `dumps_typed`."""
        kind, payload = data
        if kind != TYPE_MSGPACK:
            raise SerializationError(f"Unknown serialization format {kind!r}")
        return _decode(payload)


default_serializer = Serializer()

"""JSON bodies in PostgreSQL `jsonb`, and where `jsonb` and Python disagree about equality.

Bodies cross the wire as msgspec JSON bytes in `jsonb`'s binary format (a version byte, then the
text), so asyncpg never builds a Python `str` of them; readers decode straight to Structs.

`records.matches` (JSON containment) recurses into objects only and compares everything else with
Python's `==`, where `True == 1` and `[1, 2] != [1]`; `jsonb @>` treats arrays as containment and
never equates a boolean with a number. So searches send PostgreSQL a pattern whose matches are a
superset of Python's (`sql_pattern`), then apply `matches` to what comes back: the index or scan
narrows, Python decides (issue 19, SCALEOUT §1).
"""

from __future__ import annotations

import re
from typing import Any

import asyncpg

from ..errors import UnprocessableEntity

__all__ = ["JSONB_VERSION", "NUL_REFUSED", "no_nul", "numeric_free", "setup_codec", "sql_pattern"]

NUL_REFUSED = (
    "PostgreSQL cannot store the NUL character (\\u0000) in JSON or text, and this server "
    "keeps its records there"
)
# `\u0000` in msgspec's JSON is a NUL unless its backslash is itself escaped (`\\u0000` is the
# six characters \u0000): an even run of backslashes before it is text, an odd one a NUL.
_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")

JSONB_VERSION = b"\x01"  # jsonb binary format: version 1 followed by the JSON text


def _encode(body: bytes) -> bytes:
    return JSONB_VERSION + body


def _decode(data: bytes) -> bytes:
    return data[1:]


async def setup_codec(conn: asyncpg.Connection) -> None:
    """jsonb parameters are JSON bytes; jsonb results come back as JSON bytes (pool `init`)."""
    await conn.set_type_codec(
        "jsonb", schema="pg_catalog", encoder=_encode, decoder=_decode, format="binary"
    )


def no_nul(body: bytes) -> bytes:
    """`body` (msgspec JSON), or 422 when it holds a NUL, which `jsonb` refuses (a 500 from the
    database otherwise). The common case costs one substring search."""
    if b"\\u0000" in body and _NUL.search(body):
        raise UnprocessableEntity(NUL_REFUSED)
    return body


def numeric_free(value: Any) -> bool:
    """True when `value` holds no boolean or number at any depth: for such values Python `==`
    and `jsonb` equality agree (only `True == 1`, `False == 0.0`... differ). A NUL character,
    which `jsonb` refuses, counts as a number: such a value is left to Python."""
    if value is None:
        return True
    if isinstance(value, str):
        return "\x00" not in value
    if isinstance(value, list):
        return all(numeric_free(item) for item in value)
    if isinstance(value, dict):
        return all("\x00" not in k and numeric_free(v) for k, v in value.items())
    return False


def sql_pattern(subset: dict[str, Any]) -> dict[str, Any]:
    """A `jsonb @>` pattern every container that `matches(container, subset)` accepts also
    satisfies. Kept: values whose `jsonb` equality is Python's (strings, null, and lists and
    objects of those: equal arrays contain each other); a non-empty object, as an object
    pattern (`matches` needs an object there too). Dropped: an empty object (`matches` accepts
    any value under the key, `@>` only an object) and anything with a boolean or number."""
    pattern: dict[str, Any] = {}
    for key, value in subset.items():
        if "\x00" in key:
            continue
        if isinstance(value, dict):
            if value:
                pattern[key] = sql_pattern(value)
        elif numeric_free(value):
            pattern[key] = value
    return pattern

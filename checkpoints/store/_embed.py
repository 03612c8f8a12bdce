"""Semantic-search plumbing: which text of a value to embed, calling the user's embedder, and
exact cosine similarity over float32 vectors (numpy is not a dependency).

The `index` config follows LangGraph's (SPEC §2 Store): ``embed`` is a sync function
``list[str] -> list[list[float]]``, an async one, an object with ``embed_documents`` /
``embed_query`` (LangChain ``Embeddings``), or a ``"provider:model"`` string resolved through
LangChain when it is installed. Field paths use LangGraph's syntax so embedded texts match:
``"$"`` (the whole value), ``"a.b"``, ``"a[0]"``, ``"a[*].b"``, ``"*"``, ``"{a,b}"``.
"""

from __future__ import annotations

import inspect
import json
import math
import operator
import re
import sys
from array import array
from collections.abc import Sequence
from typing import Any, TypeAlias

import anyio.to_thread

Vector: TypeAlias = "array[float]"  # array("f"): float32, the precision both back ends store

_TOKEN = re.compile(r"\[[^\]]*\]|\{[^}]*\}|[^.\[{]+")


def tokenize_path(path: str) -> list[str]:
    """Split a field path into field names, ``[i]`` / ``[*]`` indexes and ``{a,b}`` groups."""
    return _TOKEN.findall(path)


def _leaf_texts(obj: Any) -> list[str]:
    if obj is None:
        return []
    if isinstance(obj, (list, dict)):
        return [json.dumps(obj, sort_keys=True, ensure_ascii=False)]
    return [str(obj)]


def _index_texts(obj: Any, index: str, rest: list[str]) -> list[str]:
    if not isinstance(obj, list):
        return []
    if index == "*":
        return [text for element in obj for text in _texts(element, rest)]
    try:
        position = int(index)
    except ValueError:
        return []
    return _texts(obj[position], rest) if -len(obj) <= position < len(obj) else []


def _texts(obj: Any, tokens: list[str]) -> list[str]:
    if not tokens:
        return _leaf_texts(obj)
    head, rest = tokens[0], tokens[1:]
    if head.startswith("["):
        return _index_texts(obj, head[1:-1], rest)
    if head.startswith("{"):
        fields = [f.strip() for f in head[1:-1].split(",")]
        return [text for f in fields for text in _texts(obj, tokenize_path(f) + rest)]
    if head == "*":
        children = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, list) else ()
        return [text for child in children for text in _texts(child, rest)]
    return _texts(obj[head], rest) if isinstance(obj, dict) and head in obj else []


def field_texts(value: dict[str, Any], paths: Sequence[str]) -> list[tuple[str, str]]:
    """``(field, text)`` pairs to embed; a path yielding several texts names them ``path.i``."""
    pairs: list[tuple[str, str]] = []
    for path in paths:
        texts = _leaf_texts(value) if path == "$" else _texts(value, tokenize_path(path))
        if len(texts) == 1:
            pairs.append((path, texts[0]))
        else:
            pairs.extend((f"{path}.{i}", text) for i, text in enumerate(texts))
    return pairs


def _is_async_callable(func: Any) -> bool:
    # An object whose __call__ is async counts too (LangGraph's rule).
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(type(func).__call__)


def _from_string(spec: str) -> Any:
    try:
        from langchain.embeddings import init_embeddings  # type: ignore[import-not-found]
    except ImportError as exc:
        raise ValueError(
            f"index embed {spec!r} names a provider model; that needs the `langchain` package "
            "(and the provider's). Pass an embedding function or object instead."
        ) from exc
    return init_embeddings(spec)


class Embedder:
    """Uniform sync and async access to whatever the user configured as ``embed``."""

    def __init__(self, embed: Any, dims: int | None) -> None:
        if embed is None:
            raise ValueError("index config needs an 'embed' function or object.")
        if not isinstance(dims, int) or dims <= 0:
            raise ValueError(f"index config needs 'dims', a positive int; got {dims!r}.")
        self.dims = dims
        self._obj = _from_string(embed) if isinstance(embed, str) else embed
        self._is_object = hasattr(self._obj, "embed_documents")
        self._is_async = not self._is_object and _is_async_callable(self._obj)

    def documents(self, texts: list[str]) -> list[Vector]:
        """Embed texts for storage (blocking)."""
        if self._is_object:
            return self._checked(self._obj.embed_documents(texts))
        if self._is_async:
            raise ValueError(
                "The index's embed function is async; use the async store methods "
                "(aput, asearch, abatch) or give a sync function."
            )
        return self._checked(self._obj(texts))

    def query(self, text: str) -> Vector:
        """Embed a search query (blocking); Embeddings objects may treat queries differently."""
        if self._is_object:
            return self._checked([self._obj.embed_query(text)])[0]
        return self.documents([text])[0]

    async def adocuments(self, texts: list[str]) -> list[Vector]:
        """Embed texts for storage without blocking the event loop."""
        if self._is_async:
            return self._checked(await self._obj(texts))
        if self._is_object and hasattr(self._obj, "aembed_documents"):
            return self._checked(await self._obj.aembed_documents(texts))
        return await anyio.to_thread.run_sync(self.documents, texts)

    async def aquery(self, text: str) -> Vector:
        """Embed a search query without blocking the event loop."""
        if self._is_object and hasattr(self._obj, "aembed_query"):
            return self._checked([await self._obj.aembed_query(text)])[0]
        if self._is_object:
            return await anyio.to_thread.run_sync(self.query, text)
        return (await self.adocuments([text]))[0]

    def _checked(self, vectors: Sequence[Sequence[float]]) -> list[Vector]:
        out = [array("f", vector) for vector in vectors]
        for vector in out:
            if len(vector) != self.dims:
                raise ValueError(
                    f"The embedder returned a {len(vector)}-dim vector; the index expects "
                    f"dims={self.dims}."
                )
        return out


def cosine(a: Vector, b: Vector) -> float:
    """Exact cosine similarity; 0.0 when either vector is all zeros."""
    norms = math.sqrt(sum(map(operator.mul, a, a)) * sum(map(operator.mul, b, b)))
    return sum(map(operator.mul, a, b)) / norms if norms else 0.0


def to_blob(vector: Vector) -> bytes:
    """Little-endian float32 bytes, so a database file reads the same on any machine."""
    if sys.byteorder == "big":
        vector = array("f", vector)
        vector.byteswap()
    return vector.tobytes()


def from_blob(blob: bytes) -> Vector:
    """Inverse of `to_blob`."""
    vector = array("f")
    vector.frombytes(blob)
    if sys.byteorder == "big":
        vector.byteswap()
    return vector

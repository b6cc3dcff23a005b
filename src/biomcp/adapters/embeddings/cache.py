"""A persistent embedding cache in front of any `Embedder`.

`CachingEmbedder(inner, path)` keeps vectors in a SQLite file (`cache_sqlite`), or in a
PostgreSQL table that replicas share (`cache_pg`), keyed by (`model_id`, `dim`, SHA-256 of the
text). `embed` looks every text up first, sends only the
distinct misses to the inner embedder in one call, stores them and answers in input order.
Vectors are stored as little-endian float32 (what the models compute in); a miss is answered
with the same float32-rounded values a later hit will return, so hits and misses agree exactly.

The cache never makes embedding fail: when the store cannot be read or written, a warning is
logged and the inner embedder's vectors are used as they come. The inner embedder's errors
pass through unchanged.
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Protocol, Self

from biomcp.adapters.embeddings.cache_sqlite import SqliteEmbeddingCache
from biomcp.ports.embeddings import Embedder, EmbeddingError

__all__ = ["CachingEmbedder", "EmbeddingCacheStore"]


class EmbeddingCacheStore(Protocol):
    """Where `CachingEmbedder` keeps vectors, keyed by (model id, dimension, text digest).

    A store never raises: when it cannot be read or written it logs a warning and answers as
    if empty (a miss, nothing stored).
    """

    #: Where the vectors are, for status lines ("on disk", "in the database").
    where: str

    def lookup(self, model_id: str, dim: int, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        """The packed vectors of the distinct `keys` held."""
        ...

    def store(self, model_id: str, dim: int, rows: Sequence[tuple[bytes, bytes]]) -> None:
        """Keep (key, packed vector) rows."""
        ...

    def count(self) -> int:
        """The number of vectors held (all models)."""
        ...

    def clear(self) -> None:
        """Forget every vector (all models)."""
        ...

    def close(self) -> None:
        """Release the connection (idempotent; the next call opens another)."""
        ...


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def _pack(vector: Sequence[float]) -> bytes:
    packed = array("f", vector)
    if sys.byteorder != "little":  # pragma: no cover - big-endian hosts only
        packed.byteswap()
    return packed.tobytes()


def _unpack(blob: bytes) -> list[float]:
    values = array("f")
    values.frombytes(blob)
    if sys.byteorder != "little":  # pragma: no cover - big-endian hosts only
        values.byteswap()
    return values.tolist()


class CachingEmbedder:
    """`Embedder` answering from a cache of vectors, embedding only what it has not seen.

    Args:
        inner: the embedder that computes missing vectors.
        cache_path: the SQLite file (created with its parent folders on first use), or a
            store of vectors.

    Attributes:
        hits: inputs answered without the inner embedder (from the file, or a repeat of a text
            embedded in the same call).
        misses: texts sent to the inner embedder.
    """

    def __init__(self, inner: Embedder, cache_path: Path | str | EmbeddingCacheStore) -> None:
        self.inner = inner
        if isinstance(cache_path, str | Path):
            cache_path = SqliteEmbeddingCache(cache_path)
        self.store: EmbeddingCacheStore = cache_path
        self.hits = 0
        self.misses = 0

    @property
    def cache_path(self) -> Path:
        """The SQLite file of the cache.

        Raises:
            AttributeError: the cache is not a file (a shared store).
        """
        if not isinstance(self.store, SqliteEmbeddingCache):
            raise AttributeError(f"{self.store!r} is not a file")
        return self.store.path

    # -- the port ------------------------------------------------------------------------------

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def max_tokens(self) -> int | None:
        return self.inner.max_tokens

    @property
    def runtime(self) -> str:
        """The inner embedder's runtime, and that vectors are cached."""
        inner = getattr(self.inner, "runtime", type(self.inner).__name__)
        return f"{inner}; vectors cached {self.store.where}"

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not a single str")
        if not texts:
            return []
        model_id, dim = self.inner.model_id, self.inner.dim
        keys = [_digest(text) for text in texts]
        found = await asyncio.to_thread(self._lookup, model_id, dim, keys)
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in found and key not in missing:
                missing[key] = text
        if missing:
            fresh = await self.inner.embed(list(missing.values()))
            if len(fresh) != len(missing):
                raise EmbeddingError(
                    f"the inner embedder returned {len(fresh)} vectors for {len(missing)} texts"
                )
            rows = [(key, _pack(vector)) for key, vector in zip(missing, fresh, strict=True)]
            for key, blob in rows:
                found[key] = _unpack(blob)
            await asyncio.to_thread(self._store, model_id, dim, rows)
        self.misses += len(missing)
        self.hits += len(texts) - len(missing)
        return [list(found[key]) for key in keys]

    # -- housekeeping --------------------------------------------------------------------------

    def load(self) -> None:
        """Load the inner embedder's model now, when it has one to load (`load()`)."""
        load = getattr(self.inner, "load", None)
        if load is not None:
            load()

    def __len__(self) -> int:
        """The number of cached vectors (all models)."""
        return self.store.count()

    def clear(self) -> None:
        """Forget every cached vector (all models) and reset the counters."""
        self.store.clear()
        self.hits = self.misses = 0

    def close(self) -> None:
        """Close the store's connection (idempotent; a later `embed` reopens it)."""
        self.store.close()

    async def aclose(self) -> None:
        """Close the store's connection, then the inner embedder when it has `aclose`."""
        self.close()
        inner_close = getattr(self.inner, "aclose", None)
        if inner_close is not None:
            await inner_close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"CachingEmbedder({self.inner!r}, {self.store!r})"

    # -- the store (called in a worker thread) ------------------------------------------------

    def _lookup(self, model_id: str, dim: int, keys: Iterable[bytes]) -> dict[bytes, list[float]]:
        found = self.store.lookup(model_id, dim, list(dict.fromkeys(keys)))
        return {key: _unpack(blob) for key, blob in found.items() if len(blob) == 4 * dim}

    def _store(self, model_id: str, dim: int, rows: Sequence[tuple[bytes, bytes]]) -> None:
        self.store.store(model_id, dim, rows)

"""A persistent embedding cache in front of any `Embedder`.

`CachingEmbedder(inner, path)` keeps vectors in a SQLite file (WAL journal) keyed by
(`model_id`, `dim`, SHA-256 of the text). `embed` looks every text up first, sends only the
distinct misses to the inner embedder in one call, stores them and answers in input order.
Vectors are stored as little-endian float32 (what the models compute in); a miss is answered
with the same float32-rounded values a later hit will return, so hits and misses agree exactly.

The cache never makes embedding fail: when the file cannot be read or written, a warning is
logged and the inner embedder's vectors are used as they come. The inner embedder's errors
pass through unchanged.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import sqlite3
import sys
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

from biomcp.adapters.cache_file import CacheFile, select_in
from biomcp.ports.embeddings import Embedder, EmbeddingError

__all__ = ["CachingEmbedder"]

_log = logging.getLogger("biomcp.embeddings.cache")
_LOOKUP_CHUNK = 500
_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model_id TEXT NOT NULL,
    dim INTEGER NOT NULL,
    text_sha256 BLOB NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model_id, dim, text_sha256)
) WITHOUT ROWID
"""


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
    """`Embedder` answering from a SQLite cache, embedding only what it has not seen.

    Args:
        inner: the embedder that computes missing vectors.
        cache_path: the SQLite file (created with its parent folders on first use).

    Attributes:
        hits: inputs answered without the inner embedder (from the file, or a repeat of a text
            embedded in the same call).
        misses: texts sent to the inner embedder.
    """

    def __init__(self, inner: Embedder, cache_path: Path | str) -> None:
        self.inner = inner
        self.cache_path = Path(cache_path)
        self.hits = 0
        self.misses = 0
        self._file = CacheFile(self.cache_path, (_SCHEMA,), what="embedding cache", log=_log)

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
        return f"{inner}; vectors cached on disk"

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
        return self._file.count("SELECT count(*) FROM embeddings")

    def clear(self) -> None:
        """Forget every cached vector (all models) and reset the counters."""
        self._file.write("clear", lambda conn: conn.execute("DELETE FROM embeddings"))
        self.hits = self.misses = 0

    def close(self) -> None:
        """Close the SQLite connection (idempotent; a later `embed` reopens it)."""
        self._file.close()

    async def aclose(self) -> None:
        """Close the SQLite connection, then the inner embedder when it has `aclose`."""
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
        return f"CachingEmbedder({self.inner!r}, {str(self.cache_path)!r})"

    # -- SQLite (called in a worker thread) ----------------------------------------------------

    def _lookup(self, model_id: str, dim: int, keys: Iterable[bytes]) -> dict[bytes, list[float]]:
        distinct = list(dict.fromkeys(keys))
        query = (
            "SELECT text_sha256, vector FROM embeddings "
            "WHERE model_id = ? AND dim = ? AND text_sha256 IN ({marks})"
        )

        def lookup(conn: sqlite3.Connection) -> dict[bytes, list[float]]:
            rows = select_in(conn, query, (model_id, dim), distinct, chunk=_LOOKUP_CHUNK)
            return {bytes(key): _unpack(blob) for key, blob in rows if len(blob) == 4 * dim}

        return self._file.run("lookup", lookup, {})

    def _store(self, model_id: str, dim: int, rows: Sequence[tuple[bytes, bytes]]) -> None:
        self._file.write(
            "write",
            lambda conn: conn.executemany(
                "INSERT OR REPLACE INTO embeddings (model_id, dim, text_sha256, vector) "
                "VALUES (?, ?, ?, ?)",
                [(model_id, dim, key, blob) for key, blob in rows],
            ),
        )

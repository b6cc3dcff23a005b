"""The embedding cache's vectors in one SQLite file (WAL journal), for one machine.

`SqliteEmbeddingCache` follows `cache.EmbeddingCacheStore` over a `CacheFile`: rows of
`embeddings` keyed by (`model_id`, `dim`, SHA-256 of the text), each with its packed vector.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from biomcp.adapters.cache_file import CacheFile, select_in

__all__ = ["SqliteEmbeddingCache"]

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


class SqliteEmbeddingCache:
    """The vectors of `CachingEmbedder` in a SQLite file (created on first use)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.where = "on disk"
        self._file = CacheFile(self.path, (_SCHEMA,), what="embedding cache", log=_log)

    def lookup(self, model_id: str, dim: int, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        query = (
            "SELECT text_sha256, vector FROM embeddings "
            "WHERE model_id = ? AND dim = ? AND text_sha256 IN ({marks})"
        )

        def lookup(conn: sqlite3.Connection) -> dict[bytes, bytes]:
            rows = select_in(conn, query, (model_id, dim), keys, chunk=_LOOKUP_CHUNK)
            return {bytes(key): bytes(blob) for key, blob in rows}

        return self._file.run("lookup", lookup, {})

    def store(self, model_id: str, dim: int, rows: Sequence[tuple[bytes, bytes]]) -> None:
        self._file.write(
            "write",
            lambda conn: conn.executemany(
                "INSERT OR REPLACE INTO embeddings (model_id, dim, text_sha256, vector) "
                "VALUES (?, ?, ?, ?)",
                [(model_id, dim, key, blob) for key, blob in rows],
            ),
        )

    def count(self) -> int:
        return self._file.count("SELECT count(*) FROM embeddings")

    def clear(self) -> None:
        self._file.write("clear", lambda conn: conn.execute("DELETE FROM embeddings"))

    def close(self) -> None:
        self._file.close()

    def __repr__(self) -> str:
        return f"SqliteEmbeddingCache({str(self.path)!r})"

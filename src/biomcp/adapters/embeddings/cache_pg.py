"""The embedding cache's vectors in PostgreSQL, shared by every replica over one database.

`PgEmbeddingCache` follows `cache.EmbeddingCacheStore` over the `embedding_cache` table
(migration 0010), with the keys of the SQLite file: (`model_id`, `dim`, SHA-256 of the text).
A query one replica embedded is a hit on every other. Like the file, the table keeps every
vector: a vector never goes stale, and the texts embedded are queries and chunks the corpus has.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from biomcp.adapters.cache_pg import CacheDatabase

if TYPE_CHECKING:
    import psycopg

__all__ = ["PgEmbeddingCache"]

_log = logging.getLogger("biomcp.embeddings.cache")
_LOOKUP = (
    "SELECT text_sha256, vector FROM embedding_cache "
    "WHERE model_id = %s AND dim = %s AND text_sha256 = ANY(%s)"
)
# DO NOTHING: a vector of one text by one model is the same whoever stored it first.
_INSERT = (
    "INSERT INTO embedding_cache (model_id, dim, text_sha256, vector) VALUES (%s, %s, %s, %s) "
    "ON CONFLICT (model_id, dim, text_sha256) DO NOTHING"
)


class PgEmbeddingCache:
    """The vectors of `CachingEmbedder` in a PostgreSQL table every replica shares.

    Args:
        url: the metadata database (`BIOMCP_DATABASE_URL`), migrated to 0010 or later.
        retry_s: seconds a failed database is left alone (see `CacheDatabase`).
        monotonic: the clock of those pauses (tests pass their own).
    """

    where = "in the database"

    def __init__(
        self, url: str, *, retry_s: float = 30.0, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self.database = CacheDatabase(
            url, what="embedding cache", log=_log, retry_s=retry_s, clock=monotonic
        )

    def lookup(self, model_id: str, dim: int, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        def lookup(conn: psycopg.Connection[tuple[Any, ...]]) -> dict[bytes, bytes]:
            rows = conn.execute(_LOOKUP, (model_id, dim, list(keys))).fetchall()
            return {bytes(key): bytes(blob) for key, blob in rows}

        return self.database.run("lookup", lookup, {})

    def store(self, model_id: str, dim: int, rows: Sequence[tuple[bytes, bytes]]) -> None:
        # In key order, so that two replicas storing the same texts never deadlock.
        values = [(model_id, dim, key, blob) for key, blob in sorted(rows)]

        def store(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
            with conn.cursor() as cursor:
                cursor.executemany(_INSERT, values)

        self.database.write("write", store)

    def count(self) -> int:
        return self.database.count("SELECT count(*) FROM embedding_cache")

    def clear(self) -> None:
        self.database.write("clear", lambda conn: conn.execute("DELETE FROM embedding_cache"))

    def close(self) -> None:
        self.database.close()

    def __repr__(self) -> str:
        return "PgEmbeddingCache()"

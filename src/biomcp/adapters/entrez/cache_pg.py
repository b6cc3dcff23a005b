"""The NCBI response cache's entries in PostgreSQL, shared by every replica over one database.

`PgEntrezCache` follows `cache.EntrezCacheStore` over the `ncbi_cache_entries` table (migration
0010), with the keys of the SQLite file: (namespace, kind, key). The first replica that fetches
an article stores it; the others read it from the table.

The size bound costs no scan per write. Each process counts the bytes it has written; once they
pass `trim_after_bytes` (and at its first write), it trims: expired rows go, then the oldest
until the bodies fit `max_bytes`, read in batches along the `stored_at` index. One replica trims
at a time (a try-lock: the others skip), and rows that a writer holds are skipped, so a trim
never waits on a writer. Between trims the table may pass the bound by what was written since.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from biomcp.adapters.cache_pg import CacheDatabase, advisory_key

if TYPE_CHECKING:
    import psycopg

__all__ = ["PgEntrezCache"]

_log = logging.getLogger("biomcp.entrez.cache")

_TABLE = "ncbi_cache_entries"
_TRIM_LOCK = advisory_key("ncbi-cache-trim")
_EVICT_BATCH = 500
_LOOKUP = (
    f"SELECT key, body, stored_at FROM {_TABLE} "  # noqa: S608 - no input
    "WHERE ns = %s AND kind = %s AND key = ANY(%s)"
)
_UPSERT = (
    f"INSERT INTO {_TABLE} (ns, kind, key, body, size, stored_at) "  # noqa: S608 - no input
    "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (ns, kind, key) DO UPDATE SET "
    "body = EXCLUDED.body, size = EXCLUDED.size, stored_at = EXCLUDED.stored_at"
)
_DELETE = f"DELETE FROM {_TABLE} WHERE ns = %s AND kind = %s AND key = ANY(%s)"  # noqa: S608
_EXPIRE = (
    f"DELETE FROM {_TABLE} WHERE (ns, kind, key) IN ("  # noqa: S608 - no input
    f"SELECT ns, kind, key FROM {_TABLE} WHERE stored_at < %s FOR UPDATE SKIP LOCKED)"
)
_OLDEST = (
    f"SELECT ns, kind, key, size FROM {_TABLE} "  # noqa: S608 - no input
    "ORDER BY stored_at, ns, kind, key LIMIT %s FOR UPDATE SKIP LOCKED"
)
_EVICT = (
    f"DELETE FROM {_TABLE} WHERE (ns, kind, key) IN ("  # noqa: S608 - no input
    "SELECT * FROM unnest(%s::text[], %s::text[], %s::text[]))"
)


class PgEntrezCache:
    """The entries of `CachingEntrezClient` in a PostgreSQL table every replica shares.

    Args:
        url: the metadata database (`BIOMCP_DATABASE_URL`), migrated to 0010 or later.
        ttl_s: seconds an entry stays; older ones are dropped at each trim.
        max_bytes: the most the bodies may weigh in all; the oldest go first.
        trim_after_bytes: bytes this process writes between trims (None: `max_bytes // 16`).
        retry_s: seconds a failed database is left alone (see `CacheDatabase`).
        monotonic: the clock of those pauses (tests pass their own).
    """

    where = "in the database"

    def __init__(
        self,
        url: str,
        *,
        ttl_s: float,
        max_bytes: int,
        trim_after_bytes: int | None = None,
        retry_s: float = 30.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl_s = float(ttl_s)
        self.max_bytes = int(max_bytes)
        self.trim_after_bytes = max_bytes // 16 if trim_after_bytes is None else trim_after_bytes
        self.database = CacheDatabase(
            url, what="NCBI cache", log=_log, retry_s=retry_s, clock=monotonic
        )
        #: Bytes written since this process last trimmed; None before its first trim.
        self._untrimmed: int | None = None

    def lookup(self, ns: str, kind: str, keys: Sequence[str], oldest: float) -> dict[str, bytes]:
        def lookup(conn: psycopg.Connection[tuple[Any, ...]]) -> dict[str, bytes]:
            rows = conn.execute(_LOOKUP, (ns, kind, list(keys))).fetchall()
            return {str(key): bytes(body) for key, body, at in rows if at >= oldest}

        return self.database.run("lookup", lookup, {})

    def write(self, ns: str, kind: str, bodies: Mapping[str, bytes], now: float) -> tuple[int, int]:
        # In key order, so that two replicas storing the same articles never deadlock.
        rows = [(ns, kind, key, bodies[key], len(bodies[key]), now) for key in sorted(bodies)]

        def write(conn: psycopg.Connection[tuple[Any, ...]]) -> tuple[int, int]:
            with conn.transaction(), conn.cursor() as cursor:
                cursor.executemany(_UPSERT, rows)
            written = sum(row[4] for row in rows) + (self._untrimmed or 0)
            if self._untrimmed is not None and written < self.trim_after_bytes:
                self._untrimmed = written
                return len(rows), 0
            evicted = self._trim(conn, now)
            self._untrimmed = 0
            return len(rows), evicted

        return self.database.run("write", write, (0, 0))

    def delete(self, ns: str, kind: str, keys: Sequence[str]) -> None:
        self.database.write("delete", lambda conn: conn.execute(_DELETE, (ns, kind, list(keys))))

    def count(self) -> int:
        return self.database.count(f"SELECT count(*) FROM {_TABLE}")  # noqa: S608 - no input

    def size_bytes(self) -> int:
        return self.database.count(f"SELECT coalesce(sum(size), 0) FROM {_TABLE}")  # noqa: S608

    def clear(self) -> None:
        self.database.write("clear", lambda conn: conn.execute(f"DELETE FROM {_TABLE}"))  # noqa: S608

    def close(self) -> None:
        self.database.close()

    def __repr__(self) -> str:
        return f"PgEntrezCache(ttl_s={self.ttl_s}, max_bytes={self.max_bytes})"

    def _trim(self, conn: psycopg.Connection[tuple[Any, ...]], now: float) -> int:
        """Drop the expired rows, then the oldest past the bound; the number dropped."""
        with conn.transaction():
            row = conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (_TRIM_LOCK,)).fetchone()
            if row is None or not row[0]:
                return 0  # another replica is trimming now
            dropped = 0
            if self.ttl_s > 0:
                dropped += max(0, conn.execute(_EXPIRE, (now - self.ttl_s,)).rowcount)
            total_row = conn.execute(f"SELECT coalesce(sum(size), 0) FROM {_TABLE}").fetchone()  # noqa: S608
            total = int(total_row[0]) if total_row is not None else 0
            while total > self.max_bytes:
                oldest = conn.execute(_OLDEST, (_EVICT_BATCH,)).fetchall()
                victims: list[tuple[str, str, str]] = []
                for ns, kind, key, size in oldest:
                    if total <= self.max_bytes:
                        break
                    victims.append((ns, kind, key))
                    total -= int(size)
                if not victims:
                    break
                columns = [list(column) for column in zip(*victims, strict=True)]
                conn.execute(_EVICT, columns)
                dropped += len(victims)
            return dropped

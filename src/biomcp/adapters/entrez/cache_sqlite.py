"""The NCBI response cache's entries in one SQLite file (WAL journal), for one machine.

`SqliteEntrezCache` follows `cache.EntrezCacheStore` over a `CacheFile`: rows of `entries` keyed
by (namespace, kind, key), each with its body, its size and when it was stored. Every write
drops the expired rows and then the oldest until the bodies fit the size bound.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path

from biomcp.adapters.cache_file import CacheFile, SizeBound, select_in

__all__ = ["SqliteEntrezCache"]

_log = logging.getLogger("biomcp.entrez.cache")

_LOOKUP_CHUNK = 400
_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS entries (
        ns TEXT NOT NULL,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        body BLOB NOT NULL,
        size INTEGER NOT NULL,
        stored_at REAL NOT NULL,
        PRIMARY KEY (ns, kind, key)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX IF NOT EXISTS entries_by_age ON entries (stored_at)",
)
_DELETE = "DELETE FROM entries WHERE ns = ? AND kind = ? AND key = ?"


class SqliteEntrezCache:
    """The entries of `CachingEntrezClient` in a SQLite file (created on first use).

    Args:
        path: the SQLite file.
        ttl_s: seconds an entry stays; older ones are dropped at each write.
        max_bytes: the most the bodies may weigh in all; the oldest go first.
    """

    def __init__(self, path: Path | str, *, ttl_s: float, max_bytes: int) -> None:
        self.path = Path(path)
        self.where = str(self.path)
        self._file = CacheFile(
            self.path,
            _SCHEMA,
            what="NCBI cache",
            log=_log,
            bound=SizeBound("entries", ("kind", "key", "ns"), max_bytes, max_age_s=ttl_s),
        )

    def lookup(self, ns: str, kind: str, keys: Sequence[str], oldest: float) -> dict[str, bytes]:
        query = (
            "SELECT key, body, stored_at FROM entries "
            "WHERE ns = ? AND kind = ? AND key IN ({marks})"
        )

        def lookup(conn: sqlite3.Connection) -> dict[str, bytes]:
            found: dict[str, bytes] = {}
            expired: list[str] = []
            for key, body, stored_at in select_in(
                conn, query, (ns, kind), keys, chunk=_LOOKUP_CHUNK
            ):
                if stored_at >= oldest:
                    found[str(key)] = bytes(body)
                else:
                    expired.append(str(key))
            if expired:
                with conn:
                    conn.executemany(_DELETE, [(ns, kind, key) for key in expired])
            return found

        return self._file.run("lookup", lookup, {})

    def write(self, ns: str, kind: str, bodies: Mapping[str, bytes], now: float) -> tuple[int, int]:
        rows = [(ns, kind, key, body, len(body), now) for key, body in bodies.items()]

        def write(conn: sqlite3.Connection) -> tuple[int, int]:
            with conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO entries (ns, kind, key, body, size, stored_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    rows,
                )
                evicted = self._file.trim(conn, now)
            return len(rows), evicted

        return self._file.run("write", write, (0, 0))

    def delete(self, ns: str, kind: str, keys: Sequence[str]) -> None:
        self._file.write(
            "delete", lambda conn: conn.executemany(_DELETE, [(ns, kind, key) for key in keys])
        )

    def count(self) -> int:
        return self._file.count("SELECT count(*) FROM entries")

    def size_bytes(self) -> int:
        return self._file.count("SELECT coalesce(sum(size), 0) FROM entries")

    def clear(self) -> None:
        self._file.write("clear", lambda conn: conn.execute("DELETE FROM entries"))

    def close(self) -> None:
        self._file.close()

    def connection(self) -> sqlite3.Connection | None:
        """The open connection, or None when the file is unusable (tests and repairs)."""
        return self._file.connection()

    def __repr__(self) -> str:
        return f"SqliteEntrezCache({self.where!r})"

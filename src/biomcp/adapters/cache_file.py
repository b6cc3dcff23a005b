"""The SQLite file behind an on-disk cache (embeddings, NCBI answers).

`CacheFile` owns what every cache file needs: opening it on first use (parent folders, WAL
journal, schema), one lock so that worker threads take turns on the one connection, an
optional size bound, and closing. A cache must never make its caller fail: when the file
cannot be created, opened or written, a warning is logged and the caller gets a default
answer, so it works uncached. An unusable file is tried again on the next call.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["CacheFile", "SizeBound", "select_in"]

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class SizeBound:
    """How one table of a cache file is kept small.

    Rows older than `max_age_s` go first, then the oldest until the `size` column sums to at
    most `max_bytes`. Rows are ordered by `age`, then by the `key` columns, which name a row.
    """

    table: str
    key: tuple[str, ...]
    max_bytes: int
    max_age_s: float | None = None
    age: str = "stored_at"
    size: str = "size"


class CacheFile:
    """One SQLite cache file, opened on first use and shared by the threads that call it.

    Args:
        path: the SQLite file (created with its parent folders on first use).
        schema: statements run at every opening (`CREATE ... IF NOT EXISTS`).
        what: names the cache in warnings ("NCBI cache").
        log: where warnings go.
        bound: keeps a table within a size; None keeps everything.
    """

    def __init__(
        self,
        path: Path | str,
        schema: Sequence[str],
        *,
        what: str,
        log: logging.Logger,
        bound: SizeBound | None = None,
    ) -> None:
        self.path = Path(path)
        self.schema = tuple(schema)
        self.what = what
        self.bound = bound
        self._log = log
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def run(self, action: str, work: Callable[[sqlite3.Connection], _T], default: _T) -> _T:
        """`work(connection)` under the lock; `default` when the file is unusable or SQLite
        fails (a warning names `action`). `work` opens its own transactions."""
        with self._lock:
            conn = self._open()
            if conn is None:
                return default
            try:
                return work(conn)
            except sqlite3.Error as exc:
                self._log.warning("%s %s %s failed: %s", self.what, self.path, action, exc)
                return default

    def write(self, action: str, work: Callable[[sqlite3.Connection], Any]) -> None:
        """`work(connection)` in one transaction under the lock; rolled back, with a warning,
        when SQLite fails; nothing when the file is unusable."""

        def in_transaction(conn: sqlite3.Connection) -> None:
            with conn:
                work(conn)

        self.run(action, in_transaction, None)

    def count(self, query: str) -> int:
        """The integer a one-value `query` answers (a count, a sum); 0 when unusable."""
        return self.run("count", lambda conn: int(conn.execute(query).fetchone()[0]), 0)

    def trim(self, conn: sqlite3.Connection, now: float) -> int:
        """Apply the size bound within the caller's transaction; the number of rows dropped.
        Call from inside `write`."""
        bound = self.bound
        if bound is None:
            return 0
        dropped = 0
        if bound.max_age_s is not None:
            gone = conn.execute(
                f"DELETE FROM {bound.table} WHERE {bound.age} < ?",  # noqa: S608 - no input
                (now - bound.max_age_s,),
            )
            dropped += max(0, gone.rowcount)
        total = int(
            conn.execute(
                f"SELECT coalesce(sum({bound.size}), 0) FROM {bound.table}"  # noqa: S608
            ).fetchone()[0]
        )
        if total <= bound.max_bytes:
            return dropped
        keys = ", ".join(bound.key)
        victims: list[tuple[Any, ...]] = []
        for *key, size in conn.execute(
            f"SELECT {keys}, {bound.size} FROM {bound.table} "  # noqa: S608 - no input
            f"ORDER BY {bound.age}, {keys}"
        ):
            if total <= bound.max_bytes:
                break
            victims.append(tuple(key))
            total -= int(size)
        where = " AND ".join(f"{column} = ?" for column in bound.key)
        conn.executemany(f"DELETE FROM {bound.table} WHERE {where}", victims)  # noqa: S608
        return dropped + len(victims)

    def connection(self) -> sqlite3.Connection | None:
        """The open connection (opened now if need be), or None when the file is unusable.
        For tests and one-off repairs: cache code goes through `run` and `write`."""
        with self._lock:
            return self._open()

    def close(self) -> None:
        """Close the connection (idempotent; the next call reopens the file)."""
        with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                conn.close()

    def __repr__(self) -> str:
        return f"CacheFile({str(self.path)!r}, what={self.what!r})"

    def _open(self) -> sqlite3.Connection | None:
        """The connection, opened on first use; None with a warning when the file is
        unusable. Call with `_lock` held."""
        if self._conn is not None:
            return self._conn
        conn: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            with conn:
                for statement in self.schema:
                    conn.execute(statement)
        except (OSError, sqlite3.Error) as exc:
            if conn is not None:
                conn.close()
            self._log.warning("%s %s unusable: %s", self.what, self.path, exc)
            return None
        self._conn = conn
        return conn


def select_in(
    conn: sqlite3.Connection,
    query: str,
    params: Sequence[Any],
    keys: Sequence[Any],
    *,
    chunk: int,
) -> Iterator[Any]:
    """The rows of `query` for every key of `keys`, asked `chunk` keys at a time, since SQLite
    caps the number of parameters. `query` ends with `IN ({marks})`; `params` come first."""
    for start in range(0, len(keys), chunk):
        part = list(keys[start : start + chunk])
        yield from conn.execute(query.format(marks=",".join("?" * len(part))), (*params, *part))

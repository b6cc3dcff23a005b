"""The PostgreSQL connection behind a cache that replicas share (embeddings, NCBI answers).

`CacheDatabase` is the counterpart of `cache_file.CacheFile` for the tables of migration 0010:
one psycopg connection per cache and process, opened on first use (autocommit; writers open
their own transactions), one lock so that worker threads take turns on it, and closing.

A cache must never make its caller fail. When the database cannot be reached, or the tables are
missing, the call gets its default answer (a miss) and the caller works uncached. One warning
names the error's type (never the URL, which may hold a password); the database is left alone
for `retry_s` seconds, then tried again. A connection that worked and then failed is opened
again once at once, since the server may have restarted.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any, TypeVar

from biomcp.adapters.libpq import advisory_key, libpq_url

if TYPE_CHECKING:
    import psycopg

__all__ = ["CONNECT_TIMEOUT_S", "CacheDatabase", "advisory_key", "libpq_url"]

_T = TypeVar("_T")

#: Bounds on one connection attempt and one statement: past them the call works uncached.
CONNECT_TIMEOUT_S = 3
STATEMENT_TIMEOUT_MS = 10_000


class CacheDatabase:
    """One PostgreSQL connection of one cache, opened on first use and shared by threads.

    Args:
        url: the database (SQLAlchemy or libpq form; shown nowhere).
        what: names the cache in warnings ("NCBI cache").
        log: where warnings go.
        retry_s: seconds a failed database is left alone before the next attempt.
        clock: monotonic seconds (tests pass their own).
    """

    def __init__(
        self,
        url: str,
        *,
        what: str,
        log: logging.Logger,
        retry_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._url = libpq_url(url)
        self.what = what
        self.retry_s = float(retry_s)
        self._log = log
        self._clock = clock
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[tuple[Any, ...]] | None = None
        self._resting_until: float | None = None
        self.failing = False

    def run(
        self,
        action: str,
        work: Callable[[psycopg.Connection[tuple[Any, ...]]], _T],
        default: _T,
    ) -> _T:
        """`work(connection)` under the lock; `default` when the database fails (one warning
        per outage). `work` opens its own transactions."""
        import psycopg

        with self._lock:
            if self._resting_until is not None and self._clock() < self._resting_until:
                return default
            worked_before = self._conn is not None
            for attempt in (1, 2):
                try:
                    answer = work(self._connection())
                except (psycopg.Error, OSError) as exc:
                    self._drop()
                    if attempt == 1 and worked_before:
                        continue
                    self._fail(action, exc)
                    return default
                if self.failing:
                    self._log.warning("%s: the database is usable again", self.what)
                self.failing = False
                self._resting_until = None
                return answer
        return default  # pragma: no cover - the loop always returns

    def write(
        self, action: str, work: Callable[[psycopg.Connection[tuple[Any, ...]]], Any]
    ) -> None:
        """`work(connection)` in one transaction; rolled back when the database fails."""

        def in_transaction(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
            with conn.transaction():
                work(conn)

        self.run(action, in_transaction, None)

    def count(self, query: str) -> int:
        """The integer a one-value `query` answers (a count, a sum); 0 when unusable."""

        def count(conn: psycopg.Connection[tuple[Any, ...]]) -> int:
            row = conn.execute(query).fetchone()
            return int(row[0]) if row is not None and row[0] is not None else 0

        return self.run("count", count, 0)

    def close(self) -> None:
        """Close the connection (idempotent; the next call opens another)."""
        with self._lock:
            self._drop()

    def __repr__(self) -> str:
        return f"CacheDatabase(what={self.what!r})"

    def _connection(self) -> psycopg.Connection[tuple[Any, ...]]:
        if self._conn is None or self._conn.closed:
            import psycopg

            conn = psycopg.connect(self._url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
            conn.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}")
            self._conn = conn
        return self._conn

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with suppress(Exception):  # a broken connection cannot be closed more
                conn.close()

    def _fail(self, action: str, exc: BaseException) -> None:
        self._resting_until = self._clock() + self.retry_s
        if self.failing:
            self._log.debug("%s %s failed again: %s", self.what, action, type(exc).__name__)
            return
        self.failing = True
        hint = " (run `biomcp db upgrade`)" if type(exc).__name__ == "UndefinedTable" else ""
        self._log.warning(
            "%s in the database cannot be used (%s during %s)%s; working uncached, trying "
            "again in %.0f s",
            self.what,
            type(exc).__name__,
            action,
            hint,
            self.retry_s,
        )

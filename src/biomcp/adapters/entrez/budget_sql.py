"""NCBI's request budget shared by replicas on several machines, through PostgreSQL.

`SqlStartLog` keeps the starts of one NCBI identity as rows of `ncbi_budget_starts` (migration
0008). A start is checked and recorded in one transaction under `pg_advisory_xact_lock` on the
identity, which also prunes the starts too old to matter. Start times come from the database
server's `clock_timestamp()`: the one clock all replicas share, whatever their own clocks say.

The log owns one psycopg connection per process, opened on the first `take`, in autocommit
mode (each `take` writes its own BEGIN and COMMIT, two round trips in all). `take` waits on
the network, so it says `blocking` and the limiter calls it from a worker thread. A connection
that worked and then failed is opened again once; a log that still fails (the database is
down, the table is missing) logs one warning naming the error's type (never the URL, which
may hold a password) and turns unusable, like the file log.
"""

from __future__ import annotations

import logging
import threading
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from biomcp.adapters.entrez.budget import wait_for_start
from biomcp.adapters.libpq import advisory_key, libpq_url

if TYPE_CHECKING:
    import psycopg

__all__ = ["SqlBudget", "SqlStartLog", "libpq_url"]

#: Bounds on one connection attempt and one statement (the advisory lock's wait included):
#: past them the log is unusable rather than stalling every request of the process.
CONNECT_TIMEOUT_S = 5
STATEMENT_TIMEOUT_MS = 5_000

_log = logging.getLogger("biomcp.entrez")

_READ = """
BEGIN;
SELECT pg_advisory_xact_lock(%(lock)s);
DELETE FROM ncbi_budget_starts WHERE identity = %(identity)s
    AND started_at < clock_timestamp() - make_interval(secs => %(keep)s);
SELECT extract(epoch FROM clock_timestamp())::float8,
    ARRAY(SELECT extract(epoch FROM started_at)::float8 FROM ncbi_budget_starts
          WHERE identity = %(identity)s ORDER BY started_at DESC LIMIT %(limit)s);
"""
_RECORD = """
INSERT INTO ncbi_budget_starts (identity, started_at) VALUES (%(identity)s, clock_timestamp());
COMMIT;
"""
_CLAMP = """
UPDATE ncbi_budget_starts SET started_at = to_timestamp(%(now)s)
    WHERE identity = %(identity)s AND started_at > to_timestamp(%(now)s);
COMMIT;
"""


@dataclass(frozen=True, slots=True)
class SqlBudget:
    """Where one identity's budget lives: a PostgreSQL database (its URL is never shown)."""

    url: str = field(repr=False)
    identity: str


class SqlStartLog:
    """The last starts of one NCBI identity, in a PostgreSQL table every replica shares.

    Follows `budget.StartLog`; `starts` and `close` are for inspection and tests.
    """

    #: A database round trip: ask from a worker thread.
    blocking = True

    def __init__(self, budget: SqlBudget) -> None:
        self._url = libpq_url(budget.url)
        self._identity = budget.identity
        self._lock_key = advisory_key(f"ncbi-budget:{budget.identity}")
        self._guard = threading.Lock()
        self._conn: psycopg.Connection[tuple[Any, ...]] | None = None
        self.usable = True

    def __repr__(self) -> str:
        return f"SqlStartLog(identity={self._identity!r})"

    def take(self, limit: int, span: float, interval: float) -> float:
        """See `budget.StartLog.take`: 0 after recording a start now (the server's clock),
        else the seconds to wait. Raises nothing."""
        with self._guard:
            if not self.usable:
                return 0.0
            fresh = self._conn is None
            try:
                return self._take(limit, span, interval)
            except Exception as first:  # psycopg's errors, and any other: fall back, never fail
                self._drop()
                if fresh:
                    return self._give_up(first)
            try:  # a connection that worked and then failed: the server may have restarted
                return self._take(limit, span, interval)
            except Exception as second:
                self._drop()
                return self._give_up(second)

    def starts(self) -> list[float]:
        """The starts recorded, oldest first (the server's Unix time)."""
        with self._guard:
            cursor = self._connection().execute(
                "SELECT extract(epoch FROM started_at)::float8 FROM ncbi_budget_starts"
                " WHERE identity = %s ORDER BY started_at",
                (self._identity,),
            )
            return [float(value) for (value,) in cursor.fetchall()]

    def close(self) -> None:
        """Close the connection (the next `take` opens another)."""
        with self._guard:
            self._drop()

    def _take(self, limit: int, span: float, interval: float) -> float:
        conn = self._connection()
        params = {
            "lock": self._lock_key,
            "identity": self._identity,
            "keep": max(span, interval),
            "limit": limit,
        }
        try:
            cursor = conn.execute(_READ, params)
            while cursor.nextset():  # the last statement's row: the time and the starts
                pass
            row = cursor.fetchone()
            if row is None:
                raise RuntimeError("the budget query returned no row")
            now = float(row[0])
            recorded = sorted(float(start) for start in row[1])
            starts, wait = wait_for_start(recorded, now, limit, span, interval)
            if wait > 0:
                if starts != recorded:  # the server's clock went back: those starts count as now
                    conn.execute(_CLAMP, {"now": now, "identity": self._identity})
                else:
                    conn.execute("COMMIT")
                return wait
            conn.execute(_RECORD, {"identity": self._identity})
            return 0.0
        except BaseException:
            with suppress(Exception):  # a broken connection is dropped by the caller
                conn.execute("ROLLBACK")
            raise

    def _connection(self) -> psycopg.Connection[tuple[Any, ...]]:
        if self._conn is None or self._conn.closed:
            import psycopg

            # Client-side binding: one round trip may carry several statements with values.
            conn = psycopg.connect(
                self._url,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                cursor_factory=psycopg.ClientCursor,
            )
            conn.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}")
            self._conn = conn
        return self._conn

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with suppress(Exception):  # a broken connection cannot be closed more
                conn.close()

    def _give_up(self, exc: BaseException) -> float:
        self.usable = False
        _log.warning(
            "the shared NCBI budget in the database cannot be used (%s); this process now "
            "limits itself to its own share of the rate",
            type(exc).__name__,
        )
        return 0.0

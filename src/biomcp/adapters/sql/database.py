"""The database under every SQL store: its URL, its engine, opened lazily, and its health.

The ports are async, SQLAlchemy's engine synchronous: each call runs its work in a worker
thread (`asyncio.to_thread`) on one engine per store, created on first use.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Self, TypeVar

from sqlalchemy import Engine, text
from sqlalchemy import exc as sa_exc

from biomcp.adapters.sql.engine import make_engine, parse_url, redact, resolve_url, sqlite_path
from biomcp.adapters.sql.errors import translated, unavailable_on_error
from biomcp.adapters.sql.migrate import prepare_schema
from biomcp.adapters.sql.readonly import open_sqlite
from biomcp.ports.clock import Clock
from biomcp.ports.store_errors import StoreUnavailableError

__all__ = ["SqlDatabase", "unique"]

T = TypeVar("T")

#: The most findings `quick_check` reports (SQLite stops looking after them).
_QUICK_CHECK_LIMIT = 20


def unique(items: Sequence[str]) -> list[str]:
    """`items` without repeats, in first-seen order."""
    return list(dict.fromkeys(items))


class SqlDatabase:
    """One SQLite or PostgreSQL database, opened on first use; the base of each role's store.

    Args:
        url: a SQLAlchemy URL (`sqlite:///path`, `postgresql+psycopg://...`; `postgresql://`
            means psycopg 3). None: the SQLite file `biomcp.sqlite3` under `data_dir`.
        data_dir: the folder of the default SQLite file (default: the user data directory of
            `bio-mcp`); created on first use.
        auto_migrate: migrate the schema to head on first use. Default: on for SQLite (the
            embedded store upgrades itself), off for PostgreSQL, where first use only checks
            that the schema is at head and `biomcp db upgrade` migrates.
        clock: where `last_seen_at`, retraction moments and project creation times come from
            (default: the system clock in UTC).

    Nothing connects until the first call (or `open()`). Use as `async with` or call
    `aclose()`. Every method raises only `MetadataStoreError`s; the constructor raises
    `StoreUnavailableError` on a malformed or unsupported URL (in-memory SQLite included).
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        data_dir: Path | None = None,
        auto_migrate: bool | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._url = parse_url(resolve_url(url, data_dir))
        self._backend = self._url.get_backend_name()
        path = sqlite_path(self._url)
        if self._backend == "sqlite" and path is None:
            raise StoreUnavailableError("in-memory SQLite is not supported: give a file path")
        self._sqlite_file = Path(os.path.abspath(path)) if path is not None else None
        self._auto_migrate = self._backend == "sqlite" if auto_migrate is None else auto_migrate
        self._clock = clock
        self._engine: Engine | None = None
        self._opening = threading.Lock()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({redact(self._url)!r})"

    @property
    def url(self) -> str:
        """The database URL, password hidden."""
        return redact(self._url)

    @property
    def backend(self) -> str:
        """`sqlite` or `postgresql`."""
        return self._backend

    @property
    def sqlite_file(self) -> Path | None:
        """The SQLite database file (None on PostgreSQL)."""
        return self._sqlite_file

    def _now(self) -> datetime:
        return self._clock.now() if self._clock is not None else datetime.now(UTC)

    def _open_engine(self) -> Engine:
        with self._opening:
            if self._engine is None:
                if self._sqlite_file is None:
                    self._engine = self._open_read_write()
                else:  # a full disk or a read-only folder still serves reads
                    self._engine = open_sqlite(self._sqlite_file, self._open_read_write)
            return self._engine

    def _open_read_write(self) -> Engine:
        with unavailable_on_error(f"opening {self.url}"):
            engine = make_engine(self._url)
            try:
                prepare_schema(engine, migrate=self._auto_migrate)
            except BaseException:
                engine.dispose()
                raise
        return engine

    def _call(self, what: str, work: Callable[[Engine], T]) -> T:
        with translated(what):
            return work(self._open_engine())

    async def _run(self, what: str, work: Callable[[Engine], T]) -> T:
        return await asyncio.to_thread(self._call, what, work)

    async def _point_read(self, what: str, work: Callable[[Engine], T]) -> T:
        """A read of one row by its key. On an open SQLite engine it runs on the event loop:
        in WAL mode a reader never waits for a writer, and the read (tens of microseconds) is
        cheaper than the hop to a worker thread and back, which dominated `rag_get`. Anything
        else (the first open and its migration, PostgreSQL's network round trip) goes to a
        worker thread as usual."""
        if self._engine is not None and self._backend == "sqlite":
            return self._call(what, work)
        return await self._run(what, work)

    # -- lifecycle --------------------------------------------------------------------------

    async def open(self) -> None:
        """Connect and migrate (SQLite) or check the schema (PostgreSQL) now, not on first use.

        Raises:
            StoreUnavailableError: when the database cannot be reached, opened or migrated.
        """
        await self._run(f"opening {self.url}", lambda engine: None)

    async def aclose(self) -> None:
        """Close the pooled connections; the store reopens on its next use."""

        def close() -> None:
            with self._opening:
                engine, self._engine = self._engine, None
            if engine is not None:
                engine.dispose()

        await asyncio.to_thread(close)

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def ping(self) -> None:
        """Raise StoreUnavailableError unless the database answers `SELECT 1`."""

        def work() -> None:
            with (
                unavailable_on_error("pinging the database"),
                self._open_engine().connect() as connection,
            ):
                connection.execute(text("SELECT 1"))

        await asyncio.to_thread(work)

    async def quick_check(self) -> list[str]:
        """What SQLite's `PRAGMA quick_check` finds wrong in the database file (at most
        `_QUICK_CHECK_LIMIT` findings); empty when it finds nothing. PostgreSQL checks its own
        pages: nothing to report there."""
        if self._backend != "sqlite":
            return []

        def work(engine: Engine) -> list[str]:
            try:
                with engine.connect() as connection:
                    rows = connection.exec_driver_sql(
                        f"PRAGMA quick_check({_QUICK_CHECK_LIMIT})"
                    ).all()
            except sa_exc.DatabaseError as exc:
                if isinstance(exc, sa_exc.OperationalError):  # locked, unreadable: not damage
                    raise
                return [f"the check stopped: {exc.orig}"]  # "database disk image is malformed"
            found = [str(row[0]) for row in rows]
            return [] if found == ["ok"] else found

        return await self._run("checking the database's integrity", work)

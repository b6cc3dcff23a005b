"""Opening the SQLite database read-only when it cannot be opened for writing.

A full disk or a read-only data folder stops writes, not reads. When the read-write open fails
for such a cause, `open_read_only` opens the file for reads only and names the cause; every
write on that engine then fails at `BEGIN IMMEDIATE` with a `StoreUnavailableError` that says
what to fix.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import quote

from sqlalchemy import URL, Connection, Engine, create_engine, event, text

from biomcp.adapters.sql.engine import BUSY_TIMEOUT_MS
from biomcp.adapters.sql.errors import unavailable_on_error
from biomcp.adapters.sql.migrate import prepare_schema
from biomcp.adapters.sqlite_errors import is_write_failure
from biomcp.ports.store_errors import StoreUnavailableError

__all__ = [
    "ReadOnlyCause",
    "WritableFirst",
    "open_read_only",
    "open_sqlite",
    "read_only_cause",
]

_log = logging.getLogger("biomcp.sql")

#: Less free space than this on the data folder's disk counts as a full disk.
LOW_SPACE_BYTES = 1024 * 1024


class ReadOnlyCause:
    """Why the database could not be opened for writing, and what fixes it."""

    def __init__(self, reason: str, fix: str, error: str) -> None:
        self.reason = reason
        self.fix = fix
        self.error = error

    def refusal(self, database: Path) -> str:
        """The message of a write refused on the read-only database `database`."""
        return (
            f"the metadata database {database} is open read-only because {self.reason} "
            f"({self.error}): reads work, writes (syncs, projects) do not; {self.fix}"
        )


def _sqlite_error(exc: BaseException) -> sqlite3.Error | None:
    """The first sqlite3 error in `exc`'s chain."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, sqlite3.Error):
            return seen
        seen = seen.__cause__ or getattr(seen, "orig", None)
    return None


def _unwritable(database: Path, error: str) -> ReadOnlyCause | None:
    """The cause when the folder or file of `database` refuses writes, else None."""
    folder = database.parent
    restart = "then restart bio-mcp"
    try:
        mounted_read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        mounted_read_only = False
    if mounted_read_only:
        return ReadOnlyCause(
            f"the file system holding {folder} is mounted read-only",
            f"mount it read-write or set BIOMCP_DATA_DIR to a writable folder, {restart}",
            error,
        )
    if not (os.access(folder, os.W_OK) and os.access(database, os.W_OK)):
        return ReadOnlyCause(
            f"the data folder {folder} is not writable by this user",
            f"make it writable or set BIOMCP_DATA_DIR to a writable folder, {restart}",
            error,
        )
    return None


def read_only_cause(database: Path, exc: BaseException) -> ReadOnlyCause | None:
    """Why the read-write open of `database` failed with `exc`, when a read-only open may
    still serve reads (the file exists and the failure is about writing); else None."""
    found = _sqlite_error(exc)
    if found is None or not is_write_failure(found):
        return None
    name = getattr(found, "sqlite_errorname", "")
    if not database.is_file():
        return None
    error = f"SQLite: {found}, {name}"
    if (cause := _unwritable(database, error)) is not None:
        return cause
    folder = database.parent
    try:
        disk = os.statvfs(folder)
        free = disk.f_bavail * disk.f_frsize
    except OSError:
        free = LOW_SPACE_BYTES
    if free < LOW_SPACE_BYTES:
        return ReadOnlyCause(
            f"the disk holding {folder} is full ({free // 1024} KiB free)",
            "free some space on it, then restart bio-mcp",
            error,
        )
    return ReadOnlyCause(
        "it could not be opened for writing",
        f"check the file and its folder ({folder}), then restart bio-mcp",
        error,
    )


def _uri(database: Path, **params: str) -> URL:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    location = f"file:{quote(str(database))}?{query}"
    return URL.create("sqlite", database=location, query={"uri": "true"})


def _guard(engine: Engine, refusal: str) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy emits BEGIN (see `_on_begin`)
        dbapi_connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        if connection.get_execution_options().get("biomcp_sqlite_begin") == "IMMEDIATE":
            raise StoreUnavailableError(refusal)
        connection.exec_driver_sql("BEGIN DEFERRED")


def _answers(engine: Engine) -> bool:
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT count(*) FROM sqlite_master")).scalar_one()
    except Exception as exc:  # the next way is tried; the caller reports the first failure
        _log.debug("read-only open failed: %s", exc)
        return False
    return True


def open_read_only(database: Path, cause: ReadOnlyCause) -> Engine | None:
    """An engine that reads `database` and refuses writes naming `cause`; None when no
    read-only open answers either.

    A WAL database is read through its `-shm` index. `readonly_shm=1` maps an existing `-shm`
    read-only: with another process attached, its index is used; alone, SQLite rebuilds the
    index in private memory from the `-wal` (so a short `-shm` left by a full disk needs no
    repair, and nothing is written). Only when the `-shm` is missing and cannot be created
    (a read-only folder after a clean close) is the file opened `immutable=1`, which skips
    locks and the `-wal`: no process can have it open then, as a writer would have created
    the `-shm`, and a clean close leaves every commit in the main file.
    """
    refusal = cause.refusal(database)
    wal = database.with_name(database.name + "-wal")
    for params in ({"mode": "ro", "readonly_shm": "1"}, {"immutable": "1"}):
        engine = create_engine(_uri(database, **params))
        _guard(engine, refusal)
        if _answers(engine):
            if "immutable" in params and wal.is_file() and wal.stat().st_size > 0:
                _log.warning(
                    "%s has no -shm index and cannot get one: commits still in its -wal are "
                    "not visible until it is opened read-write",
                    database,
                )
            _log.warning(
                "metadata database %s opened read-only: %s (%s); %s",
                database,
                cause.reason,
                cause.error,
                cause.fix,
            )
            return engine
        engine.dispose()
    return None


def _read_only_at_head(database: Path, cause: ReadOnlyCause) -> Engine | None:
    """`open_read_only`, its schema checked to be at head; the engine carries the refusal
    message in its execution option `biomcp_read_only`."""
    engine = open_read_only(database, cause)
    if engine is None:
        return None
    try:
        with unavailable_on_error(f"opening {database} read-only"):
            prepare_schema(engine, migrate=False)
    except BaseException:
        engine.dispose()
        raise
    return engine.execution_options(biomcp_read_only=cause.refusal(database))


def open_sqlite(database: Path, open_read_write: Callable[[], Engine]) -> Engine:
    """`open_read_write()`, or a read-only engine of `database` when its folder refuses
    writes or the read-write open fails for a cause that still lets reads through.

    SQLite itself would open a file it cannot write read-only, without saying so: the folder
    is checked first, so that writes are refused with the cause.

    Raises:
        StoreUnavailableError: the read-write open's error, when no read-only open helps.
    """
    if database.is_file() and (cause := _unwritable(database, "checked before opening")):
        engine = _read_only_at_head(database, cause)
        if engine is not None:
            return engine
    try:
        return open_read_write()
    except StoreUnavailableError as exc:
        cause = read_only_cause(database, exc)
        engine = _read_only_at_head(database, cause) if cause is not None else None
        if engine is None:
            raise
        return engine


class WritableFirst(AbstractAsyncContextManager[None]):
    """`lock` (a query-key lock, taken before a write), entered only when the database takes
    writes: on a read-only one, entering raises the `StoreUnavailableError` a write would,
    rather than the lock file's own failure in the same folder."""

    def __init__(self, open_engine: Callable[[], Engine], lock: AbstractAsyncContextManager[None]):
        self._open_engine = open_engine
        self._lock = lock

    async def __aenter__(self) -> None:
        engine = await asyncio.to_thread(self._open_engine)
        refusal = engine.get_execution_options().get("biomcp_read_only")
        if refusal:
            raise StoreUnavailableError(refusal)
        await self._lock.__aenter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        return await self._lock.__aexit__(exc_type, exc, traceback)

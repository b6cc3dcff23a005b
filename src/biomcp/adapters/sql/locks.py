"""Per-query-key locks that exclude other holders, in this process and in others.

SQLite: an `flock` on `<database>.locks/<sha256(key)[:32]>.lock`. Each holder opens the file
anew, and flock locks belong to the open file, so a second holder in the same process is
excluded as well as one in another process. PostgreSQL: a session advisory lock on a
connection kept for the block (each holder has its own session). The kernel (flock) or the
server (advisory) drops the lock when its holder dies, so a crashed sync never blocks the next.

A waiter never holds a thread while it waits. Each attempt is short (a non-blocking `flock`
on the event loop, one `pg_try_advisory_lock` in a worker thread), and the wait between two
attempts is an `asyncio.sleep`, so waiting is cancellable at once and leaves every worker
thread to the holder. Past the timeout, `LockTimeoutError` names the holder when it is known:
the lock file carries the holder's pid, host, program and start; an advisory lock's holder is
read from `pg_stat_activity`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
from collections.abc import Callable
from datetime import UTC
from pathlib import Path
from types import TracebackType

from sqlalchemy import Connection, Engine, text

from biomcp.adapters.filelocks import read_holder, try_lock_exclusive, whoami, write_holder
from biomcp.adapters.sql.errors import translated
from biomcp.ports.holders import describe_holder
from biomcp.ports.store_errors import LockTimeoutError

__all__ = ["AdvisoryQueryLock", "FileQueryLock", "advisory_key", "lock_file"]

#: The first pause between two attempts; each pause is longer, up to `_POLL_MAX_S`.
_POLL_S = 0.05
_POLL_MAX_S = 0.5
_log = logging.getLogger("biomcp.sql")


def _log_release_failure(release: asyncio.Future[None]) -> None:
    if not release.cancelled() and (exc := release.exception()) is not None:
        _log.error("releasing a query-key lock failed: %s", exc)


def lock_file(database: Path, query_key: str) -> Path:
    """The lock file of `query_key` next to the SQLite file `database`."""
    digest = hashlib.sha256(query_key.encode("utf-8")).hexdigest()[:32]
    return database.with_name(database.name + ".locks") / f"{digest}.lock"


def advisory_key(query_key: str) -> int:
    """A signed 64-bit advisory-lock key for `query_key`."""
    digest = hashlib.sha256(b"biomcp:query:" + query_key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class _PollingLock:
    """Acquire by short attempts (`_try`) with asynchronous pauses until `timeout_s` passed.

    Subclasses say whether an attempt may block (`_BLOCKING`: it then runs in a worker
    thread, one attempt at a time) and who holds the lock (`_holder`)."""

    _BLOCKING = False

    def __init__(self, query_key: str, timeout_s: float) -> None:
        self._query_key = query_key
        self._timeout_s = max(0.0, timeout_s)
        self._held = False

    def _setup(self) -> None:
        """Prepare what `_try` needs (open a file, a connection)."""

    def _try(self) -> bool:
        raise NotImplementedError

    def _release(self) -> None:
        """Release the lock if held and free what `_setup` took; safe to call twice."""

    def _holder(self) -> dict[str, object] | None:
        """Who holds the lock, when known (never a path)."""
        return None

    def _attempt(self) -> bool:
        """One attempt; on failure or error, frees what `_setup` took."""
        with translated(f"locking query key {self._query_key!r}"):
            try:
                self._setup()
                if self._try():
                    return True
            except BaseException:
                self._release()
                raise
            self._release()
            return False

    async def _attempt_async(self) -> bool:
        if not self._BLOCKING:
            return self._attempt()
        attempt = asyncio.ensure_future(asyncio.to_thread(self._attempt))
        try:
            return await asyncio.shield(attempt)
        except asyncio.CancelledError:
            # The thread may still win the lock after we stop waiting: give it straight back.
            attempt.add_done_callback(self._release_if_won)
            raise

    async def __aenter__(self) -> None:
        if self._held:
            raise RuntimeError("this lock object is already held")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._timeout_s
        pause = _POLL_S
        while not await self._attempt_async():
            remaining = deadline - loop.time()
            if remaining <= 0:
                holder = await self._holder_async()
                who = describe_holder(holder, "another holder")
                raise LockTimeoutError(
                    f"query key {self._query_key!r} is locked by {who} "
                    f"(waited {self._timeout_s:g} s)",
                    query_key=self._query_key,
                    holder=holder,
                    waited_s=self._timeout_s,
                )
            await asyncio.sleep(min(pause, remaining))
            pause = min(pause * 1.5, _POLL_MAX_S)
        self._held = True

    async def _holder_async(self) -> dict[str, object] | None:
        try:
            if self._BLOCKING:
                return await asyncio.to_thread(self._holder)
            return self._holder()
        except Exception:  # who holds it is a courtesy: never the error itself
            _log.debug("could not read a lock's holder", exc_info=True)
            return None

    def _release_if_won(self, attempt: asyncio.Future[bool]) -> None:
        if not attempt.cancelled() and attempt.exception() is None and attempt.result():
            attempt.get_loop().run_in_executor(None, self._release)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._held = False
        if not self._BLOCKING:
            self._release_translated()
            return
        # Release even when the caller is being cancelled: an anyio cancel scope cancels every
        # await left in it, this one included, and a cancelled `to_thread` whose job has not
        # started yet never runs it. The release runs in its own task, shielded.
        release = asyncio.ensure_future(asyncio.to_thread(self._release_translated))
        try:
            await asyncio.shield(release)
        except asyncio.CancelledError:
            release.add_done_callback(_log_release_failure)
            raise

    def _release_translated(self) -> None:
        with translated(f"unlocking query key {self._query_key!r}"):
            self._release()


class FileQueryLock(_PollingLock):
    """The SQLite flavour: an exclusive `flock` on the key's lock file, which names its holder."""

    def __init__(self, database: Path, query_key: str, timeout_s: float) -> None:
        super().__init__(query_key, timeout_s)
        self._path = lock_file(database, query_key)
        self._fd: int | None = None
        self._mine = False

    def _setup(self) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)

    def _try(self) -> bool:
        if self._fd is None:
            raise RuntimeError("lock file not open")
        if not try_lock_exclusive(self._fd):
            return False
        self._mine = True
        write_holder(self._fd)
        return True

    def _release(self) -> None:
        fd, self._fd = self._fd, None
        mine, self._mine = self._mine, False
        if fd is not None:
            if mine:  # only the holder clears the holder's name
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, 0)
            os.close(fd)  # closing the only descriptor of the open file drops its flock

    def _holder(self) -> dict[str, object] | None:
        return read_holder(self._path)


class AdvisoryQueryLock(_PollingLock):
    """The PostgreSQL flavour: `pg_try_advisory_lock` on a connection held for the block.

    The holding session's `application_name` names the process (`biomcp pid N on HOST`), so a
    waiter can say who holds the lock from `pg_stat_activity`."""

    _BLOCKING = True

    def __init__(self, engine: Callable[[], Engine], query_key: str, timeout_s: float) -> None:
        super().__init__(query_key, timeout_s)
        self._engine = engine
        self._key = advisory_key(query_key)
        self._connection: Connection | None = None
        self._locked = False
        self._previous_name: str | None = None

    def _setup(self) -> None:
        connection = self._engine().connect()
        self._connection = connection.execution_options(isolation_level="AUTOCOMMIT")

    def _try(self) -> bool:
        if self._connection is None:
            raise RuntimeError("lock connection not open")
        query = text("SELECT pg_try_advisory_lock(:key)")
        self._locked = bool(self._connection.execute(query, {"key": self._key}).scalar_one())
        if self._locked:
            me = whoami()
            name = f"biomcp pid {me['pid']} on {me['host']}"[:63]
            self._previous_name = self._connection.execute(
                text("SELECT current_setting('application_name')")
            ).scalar_one()
            self._connection.execute(
                text("SELECT set_config('application_name', :name, false)"), {"name": name}
            )
        return self._locked

    def _release(self) -> None:
        connection, self._connection = self._connection, None
        if connection is None:
            return
        try:
            if self._locked:
                query = text("SELECT pg_advisory_unlock(:key)")
                connection.execute(query, {"key": self._key})
                if self._previous_name is not None:
                    connection.execute(
                        text("SELECT set_config('application_name', :name, false)"),
                        {"name": self._previous_name},
                    )
        except BaseException:
            # A session that cannot unlock must not go back to the pool still holding it.
            connection.invalidate()
            raise
        finally:
            self._locked = False
            self._previous_name = None
            connection.close()

    def _holder(self) -> dict[str, object] | None:
        unsigned = self._key & 0xFFFFFFFFFFFFFFFF
        query = text(
            "SELECT a.pid, a.application_name, a.state_change FROM pg_locks l"
            " JOIN pg_stat_activity a ON a.pid = l.pid"
            " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
            " AND l.classid = CAST(:hi AS oid) AND l.objid = CAST(:lo AS oid)"
        )
        with self._engine().connect() as connection:
            row = connection.execute(
                query, {"hi": unsigned >> 32, "lo": unsigned & 0xFFFFFFFF}
            ).first()
        if row is None:
            return None
        holder: dict[str, object] = {"backend_pid": row.pid}
        name = str(row.application_name or "")
        if name.startswith("biomcp pid "):
            pid, _, host = name.removeprefix("biomcp pid ").partition(" on ")
            holder.update({"pid": int(pid) if pid.isdigit() else pid, "host": host})
            holder["program"] = "biomcp"
        if row.state_change is not None:
            holder["since"] = row.state_change.astimezone(UTC).isoformat(timespec="seconds")
        return holder

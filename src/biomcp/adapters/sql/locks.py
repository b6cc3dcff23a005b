"""Per-query-key locks that exclude other holders, in this process and in others.

SQLite: an `flock` on `<database>.locks/<sha256(key)[:32]>.lock`. Each holder opens the file
anew, and flock locks belong to the open file, so a second holder in the same process is
excluded as well as one in another process. PostgreSQL: a session advisory lock on a
connection kept for the block (each holder has its own session). The kernel (flock) or the
server (advisory) drops the lock when its holder dies, so a crashed sync never blocks the next.

Acquiring polls in a worker thread until the timeout; `LockTimeoutError` when it runs out.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from sqlalchemy import Connection, Engine, text

from biomcp.adapters.filelocks import try_lock_exclusive
from biomcp.adapters.sql.errors import translated
from biomcp.ports.metadata import LockTimeoutError

__all__ = ["AdvisoryQueryLock", "FileQueryLock", "advisory_key", "lock_file"]

_POLL_S = 0.05
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
    """Acquire by polling `_try` in a worker thread until `timeout_s` has passed."""

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

    def _acquire_blocking(self) -> bool:
        deadline = time.monotonic() + self._timeout_s
        with translated(f"locking query key {self._query_key!r}"):
            self._setup()
            try:
                while not self._try():
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        self._release()
                        return False
                    time.sleep(min(_POLL_S, remaining))
            except BaseException:
                self._release()
                raise
        self._held = True
        return True

    async def __aenter__(self) -> None:
        if self._held:
            raise RuntimeError("this lock object is already held")
        loop = asyncio.get_running_loop()
        attempt = loop.run_in_executor(None, self._acquire_blocking)
        try:
            acquired = await asyncio.shield(attempt)
        except asyncio.CancelledError:
            # The worker may still win the lock after we stop waiting: give it straight back.
            attempt.add_done_callback(self._release_if_won)
            raise
        if not acquired:
            raise LockTimeoutError(
                f"query key {self._query_key!r} is locked by another sync "
                f"(waited {self._timeout_s:g} s)"
            )

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
    """The SQLite flavour: an exclusive `flock` on the key's lock file."""

    def __init__(self, database: Path, query_key: str, timeout_s: float) -> None:
        super().__init__(query_key, timeout_s)
        self._path = lock_file(database, query_key)
        self._fd: int | None = None

    def _setup(self) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)

    def _try(self) -> bool:
        if self._fd is None:
            raise RuntimeError("lock file not open")
        return try_lock_exclusive(self._fd)

    def _release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the only descriptor of the open file drops its flock


class AdvisoryQueryLock(_PollingLock):
    """The PostgreSQL flavour: `pg_try_advisory_lock` on a connection held for the block."""

    def __init__(self, engine: Callable[[], Engine], query_key: str, timeout_s: float) -> None:
        super().__init__(query_key, timeout_s)
        self._engine = engine
        self._key = advisory_key(query_key)
        self._connection: Connection | None = None
        self._locked = False

    def _setup(self) -> None:
        connection = self._engine().connect()
        self._connection = connection.execution_options(isolation_level="AUTOCOMMIT")

    def _try(self) -> bool:
        if self._connection is None:
            raise RuntimeError("lock connection not open")
        query = text("SELECT pg_try_advisory_lock(:key)")
        self._locked = bool(self._connection.execute(query, {"key": self._key}).scalar_one())
        return self._locked

    def _release(self) -> None:
        connection, self._connection = self._connection, None
        if connection is None:
            return
        try:
            if self._locked:
                query = text("SELECT pg_advisory_unlock(:key)")
                connection.execute(query, {"key": self._key})
        except BaseException:
            # A session that cannot unlock must not go back to the pool still holding it.
            connection.invalidate()
            raise
        finally:
            self._locked = False
            connection.close()

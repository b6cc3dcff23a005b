"""The writer's turn on one embedded collection, shared by every process on the data folder.

An exclusive `flock` on the collection's `LOCK` file, taken only for the duration of a write
(never while a process merely has the collection open), so any number of processes read while
writers take turns. Each acquisition opens the file anew: flock locks belong to the open file,
so two stores of one process exclude each other too. The kernel drops the lock of a dead
process, so a writer killed with SIGKILL never blocks the next one.

Waiters queue through a second lock, the turnstile (`LOCK.queue`): a writer that waits takes
the turnstile first and keeps it until it has the turn, and every waiting writer passes it on
the way in. So a writer that takes turns back to back (a sync deleting the old chunks of one
document after another) lets a waiting writer in after its current turn instead of starving
it: a waiter polling the lock alone saw it free only in the microseconds between two turns.

The holder writes who it is into the file (pid, program name, since when) so that a waiter
that runs out of patience can say what holds the collection; the file never carries a path.

A folder that cannot be written (mounted read-only, or not ours) has no turn to take. A block
that can do without the turn runs without it; a write that needs it gets the `OSError`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from collections.abc import Iterator
from pathlib import Path

from biomcp.adapters.filelocks import (
    FileLocksUnavailableError,
    read_holder,
    try_lock_exclusive,
    write_holder,
)
from biomcp.ports.holders import describe_holder
from biomcp.ports.vectors import VectorStoreBusyError, VectorStoreUnavailableError

__all__ = ["UNWRITABLE", "WriterLock"]

_POLL_S = 0.02

#: The `errno` values of a lock file that cannot be opened for writing.
UNWRITABLE = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def _try_flock(path: Path) -> int | None:
    """A new descriptor of `path` holding its exclusive flock, or None when another holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        taken = try_lock_exclusive(fd)
    except FileLocksUnavailableError as exc:
        os.close(fd)
        raise VectorStoreUnavailableError(str(exc)) from exc
    except BaseException:
        os.close(fd)
        raise
    if not taken:
        os.close(fd)
        return None
    return fd


class WriterLock:
    """The writer's turn on the collection `name`, through the lock file `path`."""

    def __init__(self, path: Path, name: str, *, wait_s: float) -> None:
        self.path = path
        self.name = name
        self.wait_s = max(0.0, wait_s)
        self._fd: int | None = None
        #: Why the last turn without waiting was not taken, when the folder cannot be written.
        self.unwritable: OSError | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the turn if nobody holds it; True when taken (or already held here)."""
        if self._fd is not None:
            return True
        fd = _try_flock(self.path)
        if fd is None:
            return False
        self._fd = fd
        write_holder(fd)
        return True

    def acquire(self) -> None:
        """Take the turn, waiting at most `wait_s` seconds.

        Raises:
            VectorStoreBusyError: another writer kept it for the whole wait.
        """
        if self._fd is not None:
            return
        deadline = time.monotonic() + self.wait_s
        queue = self.path.with_name(self.path.name + ".queue")
        gate = _try_flock(queue)
        try:
            while gate is None:  # another waiter is ahead: it gets the next turn
                self._pause(deadline)
                gate = _try_flock(queue)
            while not self.try_acquire():
                self._pause(deadline)
        finally:
            if gate is not None:
                os.close(gate)  # the next waiter may queue

    def _pause(self, deadline: float) -> None:
        """Sleep one poll interval, or raise VectorStoreBusyError past `deadline`."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            holder = self.holder()
            who = describe_holder(holder, "another writer")
            raise VectorStoreBusyError(
                f"collection {self.name!r} is being written by {who}; waited {self.wait_s:g} s",
                holder=holder,
            )
        time.sleep(min(_POLL_S, remaining))

    def release(self) -> None:
        """Give the turn back (idempotent; never raises for a lock already gone)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        os.close(fd)  # closing the only descriptor of the open file drops its flock

    @contextlib.contextmanager
    def turn(self, *, wait: bool = True) -> Iterator[bool]:
        """Hold the turn for the block (re-entrant: an outer turn is kept). With `wait`
        False, a busy turn is not waited for: the block gets False and runs without it. So
        does a folder that cannot be written.

        Raises:
            VectorStoreBusyError: (`wait`) another writer kept it for the whole wait.
            OSError: (`wait`) the lock file cannot be written (see `UNWRITABLE`).
        """
        if self._fd is not None:
            yield True
            return
        if wait:
            self.acquire()
        elif not self._try_acquire_if_writable():
            yield False
            return
        try:
            yield True
        finally:
            self.release()

    def _try_acquire_if_writable(self) -> bool:
        """`try_acquire`, False when the lock file cannot be written."""
        try:
            taken = self.try_acquire()
        except OSError as exc:
            if exc.errno not in UNWRITABLE:
                raise
            self.unwritable = exc
            return False
        self.unwritable = None
        return taken

    def holder(self) -> dict[str, object] | None:
        """Who holds the turn, as its holder wrote it; None when unknown."""
        return read_holder(self.path)

"""NCBI's request budget shared by every process that uses one data folder.

NCBI counts the requests of an IP (3 per second) or of an API key (10 per second), whatever
process sends them. A `RateLimiter` alone keeps its start log in memory, so two processes
(a cron `biomcp sync --all` and a desktop client's server) would each spend the whole budget.
A `StartLog` is the log they share. `FileStartLog` keeps the last starts of one NCBI identity
in a small file beside the database; a start is checked and recorded under an exclusive
`flock`, held for a read and a write only. Replicas on several machines share one in
PostgreSQL instead (`budget_sql.SqlStartLog`).

Start times are wall-clock seconds, the one clock processes share. A start recorded in the
future (the clock was set back) counts as now, so it delays the next start by one span at most.
A process that cannot use the file (a read-only folder, a failed lock) logs one warning and
falls back to its own limiter with a share of the budget (`fallback_share`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from biomcp.adapters.filelocks import lock_exclusive

__all__ = [
    "FileStartLog",
    "StartLog",
    "budget_file",
    "budget_identity",
    "fallback_share",
    "wait_for_start",
]

_log = logging.getLogger("biomcp.entrez")

#: One start: a double, wall-clock seconds.
_START = struct.Struct("<d")


class StartLog(Protocol):
    """The request starts of one NCBI identity, shared by every process that sends for it.

    `take` records a start now and returns 0 when fewer than `limit` starts fall within the
    last `span` seconds and the last is at least `interval` ago; else it returns the seconds
    until one could. It raises nothing: a failure sets `usable` false and returns 0, and the
    caller then limits itself (`fallback_share`). A log whose `take` may wait on the network
    says so with `blocking`, and is asked from a worker thread, never on an event loop.
    """

    usable: bool
    blocking: bool

    def take(self, limit: int, span: float, interval: float) -> float: ...


def budget_identity(base_url: str, api_key: str | None) -> str:
    """A short hash naming one NCBI identity: the API key when there is one, else the
    service address. It never reveals the key."""
    identity = f"key:{api_key}" if api_key else f"url:{base_url.rstrip('/')}"
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()[:16]


def budget_file(folder: Path, base_url: str, api_key: str | None) -> Path:
    """The file of one NCBI identity in `folder` (named by `budget_identity`)."""
    return folder / f"ncbi-budget-{budget_identity(base_url, api_key)}.bin"


def wait_for_start(
    recorded: list[float], now: float, limit: int, span: float, interval: float
) -> tuple[list[float], float]:
    """NCBI's rule on a start log: the starts with any in the future counted as `now`, and the
    seconds until a start is allowed (0: now). At most `limit` starts fall within any `span`
    seconds, and starts are at least `interval` apart. `recorded` is oldest first."""
    starts = [min(start, now) for start in recorded]
    due = now
    if len(starts) >= limit:
        due = max(due, starts[-limit] + span)
    if starts:
        due = max(due, starts[-1] + interval)
    return starts, due - now


def fallback_share(limit: int) -> int:
    """The starts per window a process allows itself when it cannot share the budget: a third
    of it (at least one), so three such processes together stay within NCBI's rule."""
    return max(1, limit // 3)


class FileStartLog:
    """The last starts of one NCBI identity, in a file every local process reads and writes.

    `take` is the one operation: under the file's lock, it records a start now and returns 0
    when the rule allows one, or returns how long to wait. `usable` turns false after the first
    failure, and the caller then limits itself (`fallback_share`).
    """

    #: A read and a write of a local file, under a lock held for those only.
    blocking = False

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock
        self._guard = threading.Lock()
        self.usable = True

    def take(self, limit: int, span: float, interval: float) -> float:
        """Record a start now if fewer than `limit` starts fall within the last `span` seconds
        and the last one is at least `interval` ago (return 0); else return the seconds until
        one could. Raises nothing: a failure marks the log unusable and returns 0."""
        if not self.usable:
            return 0.0
        try:
            with self._guard:
                return self._take(limit, span, interval)
        except OSError as exc:
            self.usable = False
            _log.warning(
                "the shared NCBI budget file cannot be used (%s); this process now limits "
                "itself to its own share of the rate",
                type(exc).__name__,
            )
            return 0.0

    def starts(self) -> list[float]:
        """The starts recorded, oldest first (for inspection)."""
        with self._guard, self._locked() as fd:
            return self._read(fd)

    def _take(self, limit: int, span: float, interval: float) -> float:
        with self._locked() as fd:
            now = self._clock()
            recorded = self._read(fd)[-limit:]
            starts, wait = wait_for_start(recorded, now, limit, span, interval)
            if wait > 0:
                if starts != recorded:  # the clock went back: keep the starts as now
                    self._write(fd, starts)
                return wait
            self._write(fd, [*starts, now][-limit:])
            return 0.0

    def _locked(self) -> _Locked:
        return _Locked(self.path)

    @staticmethod
    def _write(fd: int, starts: list[float]) -> None:
        os.ftruncate(fd, 0)
        os.pwrite(fd, b"".join(_START.pack(s) for s in starts), 0)

    @staticmethod
    def _read(fd: int) -> list[float]:
        size = os.fstat(fd).st_size
        data = os.pread(fd, size - size % _START.size, 0)
        return [value for (value,) in _START.iter_unpack(data)]


class _Locked:
    """The budget file, open and exclusively locked for a `with` block."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._fd = -1

    def __enter__(self) -> int:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            lock_exclusive(self._fd)
        except BaseException:
            os.close(self._fd)
            raise
        return self._fd

    def __exit__(self, *exc: object) -> None:
        os.close(self._fd)  # closing releases the lock

"""Exclusive file locks (POSIX `flock`) for the embedded stores, taken through one function.

`fcntl` is imported when a lock is first taken, not when bio-mcp is: a system without POSIX
file locks (Windows) still imports every module, and the embedded stores then say why they
cannot run (`FileLocksUnavailableError`) instead of the server dying with an ImportError.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

__all__ = [
    "NO_FILE_LOCKS",
    "FileLocksUnavailableError",
    "lock_exclusive",
    "read_holder",
    "try_lock_exclusive",
    "whoami",
    "write_holder",
]

#: What a lock file says of its holder (never a path).
_HOLDER_KEYS = ("pid", "host", "program", "since")

NO_FILE_LOCKS = (
    "the embedded stores lock their files with POSIX flock, which this system does not have: "
    "run bio-mcp on Linux or macOS (on Windows: inside WSL), or use PostgreSQL and Weaviate"
)


class FileLocksUnavailableError(OSError):
    """This system has no POSIX file locks (`fcntl`)."""

    def __init__(self) -> None:
        super().__init__(NO_FILE_LOCKS)


def _fcntl() -> ModuleType:
    try:
        import fcntl
    except ImportError as exc:
        raise FileLocksUnavailableError from exc
    return fcntl


def try_lock_exclusive(fd: int) -> bool:
    """Take the exclusive flock of the open file `fd` if nobody holds it: True when taken,
    False when another open file holds it (locks belong to the open file, so a second
    descriptor of the same process is excluded too; the kernel drops them with the process).

    Raises:
        FileLocksUnavailableError: the system has no POSIX file locks.
        OSError: the descriptor cannot be locked.
    """
    fcntl = _fcntl()
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def lock_exclusive(fd: int) -> None:
    """Wait for the exclusive flock of the open file `fd` and take it.

    Raises:
        FileLocksUnavailableError: the system has no POSIX file locks.
        OSError: the descriptor cannot be locked.
    """
    fcntl = _fcntl()
    fcntl.flock(fd, fcntl.LOCK_EX)


def whoami() -> dict[str, object]:
    """This process as a lock holder: pid, host, program name (without its folder), since now."""
    program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "program": program or Path(sys.executable).name,
        "since": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def write_holder(fd: int) -> None:
    """Write this process as the holder into the lock file `fd` it has just locked. Who holds
    a lock is a courtesy to waiters: a failure to write it is ignored."""
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(whoami()).encode("utf-8"), 0)


def read_holder(path: Path) -> dict[str, object] | None:
    """The holder a lock file names; None when it names nobody or cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
        found = json.loads(text) if text.strip() else None
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict):
        return None
    return {k: found[k] for k in _HOLDER_KEYS if k in found} or None

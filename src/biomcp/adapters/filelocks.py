"""Exclusive file locks (POSIX `flock`) for the embedded stores, taken through one function.

`fcntl` is imported when a lock is first taken, not when bio-mcp is: a system without POSIX
file locks (Windows) still imports every module, and the embedded stores then say why they
cannot run (`FileLocksUnavailableError`) instead of the server dying with an ImportError.
"""

from __future__ import annotations

from types import ModuleType

__all__ = ["NO_FILE_LOCKS", "FileLocksUnavailableError", "try_lock_exclusive"]

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

"""Which SQLite failures of a read-write open leave the file readable: one rule for the
metadata database and the embedded collections' rows, which both fall back to read-only."""

from __future__ import annotations

__all__ = ["is_write_failure"]

#: SQLite result codes of a read-write open that a read-only open may get past.
_WRITE_FAILURES = (
    "SQLITE_IOERR",
    "SQLITE_READONLY",
    "SQLITE_CANTOPEN",
    "SQLITE_FULL",
    "SQLITE_PERM",
)


def is_write_failure(exc: BaseException) -> bool:
    """Whether `exc` (a `sqlite3.Error`) says the file cannot be written, not that it is bad."""
    name = getattr(exc, "sqlite_errorname", None)
    return isinstance(name, str) and name.startswith(_WRITE_FAILURES)

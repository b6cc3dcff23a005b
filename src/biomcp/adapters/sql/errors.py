"""Translation of SQLAlchemy, driver and Alembic exceptions into the port's errors.

Connection-level trouble (refused, lost, unopenable or read-only file, locked database, bad
URL, missing driver) becomes `StoreUnavailableError`; anything else a `MetadataStoreError`.
Messages keep the driver's first line, never the SQL parameters (a record can be megabytes).
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import exc as sa_exc

from biomcp.ports.store_errors import MetadataStoreError, StoreUnavailableError

__all__ = ["translate", "translated", "unavailable_on_error"]

_VENDOR_MODULES = ("sqlalchemy", "sqlite3", "psycopg", "alembic")

# Result codes that mean the file cannot be used, as opposed to a statement being wrong.
_SQLITE_UNAVAILABLE = frozenset(
    {
        "SQLITE_BUSY",
        "SQLITE_LOCKED",
        "SQLITE_READONLY",
        "SQLITE_IOERR",
        "SQLITE_CORRUPT",
        "SQLITE_FULL",
        "SQLITE_CANTOPEN",
        "SQLITE_PROTOCOL",
        "SQLITE_NOTADB",
        "SQLITE_PERM",
        "SQLITE_AUTH",
    }
)
# SQLSTATE classes / codes: connection exception, insufficient resources, authorization,
# unknown database, server shutting down or starting.
_PG_UNAVAILABLE_PREFIXES = ("08", "53", "28", "3D000", "57P")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    return line if len(line) <= 500 else line[:497] + "..."


def _sqlite_unavailable(orig: BaseException) -> bool:
    name = getattr(orig, "sqlite_errorname", None)
    if isinstance(name, str):
        return "_".join(name.split("_")[:2]) in _SQLITE_UNAVAILABLE
    message = str(orig).lower()
    return any(
        s in message for s in ("unable to open", "readonly", "locked", "disk i/o", "not a database")
    )


def _is_unavailable(exc: BaseException) -> bool:
    if isinstance(exc, sa_exc.DBAPIError):
        if exc.connection_invalidated:
            return True
        orig = exc.orig
        if isinstance(orig, sqlite3.Error):
            return _sqlite_unavailable(orig)
        if type(orig).__module__.startswith("psycopg"):
            state = getattr(orig, "sqlstate", None)
            if isinstance(state, str):
                return state.startswith(_PG_UNAVAILABLE_PREFIXES)
        return isinstance(exc, sa_exc.OperationalError | sa_exc.InterfaceError)
    if isinstance(exc, sqlite3.Error):
        return _sqlite_unavailable(exc)
    return isinstance(
        exc,
        sa_exc.DisconnectionError | sa_exc.TimeoutError | sa_exc.ArgumentError | OSError,
    ) or _is_alembic_error(exc)


def _is_alembic_error(exc: BaseException) -> bool:
    # Alembic is imported only when migrating; its errors cannot exist before that.
    util = sys.modules.get("alembic.util")
    return util is not None and isinstance(exc, util.CommandError)


def translate(exc: BaseException, what: str) -> MetadataStoreError:
    """The port error for `exc`, raised while doing `what` (a short phrase)."""
    detail = exc.orig if isinstance(exc, sa_exc.DBAPIError) and exc.orig is not None else exc
    message = f"{what}: {_first_line(detail)}"
    if _is_unavailable(exc):
        return StoreUnavailableError(message)
    return MetadataStoreError(message)


def _is_vendor(exc: BaseException) -> bool:
    if isinstance(exc, OSError | ValueError | sa_exc.SQLAlchemyError | sqlite3.Error):
        return True
    return type(exc).__module__.split(".")[0] in _VENDOR_MODULES


@contextmanager
def translated(what: str) -> Iterator[None]:
    """Re-raise vendor, OS and value (bad data) exceptions of the block as port errors;
    port errors and programming errors pass through unchanged."""
    try:
        yield
    except MetadataStoreError:
        raise
    except Exception as exc:
        if not _is_vendor(exc):
            raise
        raise translate(exc, what) from exc


@contextmanager
def unavailable_on_error(what: str) -> Iterator[None]:
    """Like `translated`, for opening and migrating: every failure there leaves the store
    unusable, so every port error becomes a `StoreUnavailableError`."""
    try:
        with translated(what):
            yield
    except StoreUnavailableError:
        raise
    except MetadataStoreError as exc:
        raise StoreUnavailableError(str(exc)) from exc

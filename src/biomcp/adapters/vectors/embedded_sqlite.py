"""How the row store talks to SQLite: opening a file, transactions, and batches of ids."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from biomcp.adapters.sqlite_errors import is_write_failure

__all__ = ["BATCH", "Transaction", "batches", "connect", "placeholders"]

_log = logging.getLogger("biomcp.vectors")

BATCH = 900  # stays under SQLite's bound-parameter limit with room to spare


def batches(items: Sequence[Any], size: int = BATCH) -> Iterator[Sequence[Any]]:
    """`items` in consecutive slices of at most `size`."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def placeholders(count: int) -> str:
    """`count` comma-separated `?` placeholders (`?,?,?`)."""
    return ",".join("?" * count)


def _open_read_write(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        db.execute("PRAGMA journal_mode = WAL")
    except BaseException:
        db.close()
        raise
    return db


def connect(path: Path) -> sqlite3.Connection:
    """`path` opened read-write in WAL mode; read-only when that fails on a full disk or in a
    read-only folder, so searches go on (writes then fail as SQLite's "readonly database").

    As for the metadata database: `readonly_shm=1` maps an existing `-shm` read-only (SQLite
    rebuilds the index in private memory when no other process has the file open), and only a
    file with no `-shm` that cannot get one, which no process can have open, is `immutable`."""
    try:
        return _open_read_write(path)
    except sqlite3.OperationalError as exc:
        if not is_write_failure(exc):
            raise
        if not path.is_file():
            raise
        for params in ("mode=ro&readonly_shm=1", "immutable=1"):
            uri = f"file:{quote(str(path))}?{params}"
            db = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            try:
                db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            except sqlite3.Error:
                db.close()
                continue
            _log.warning("%s opened read-only (%s): searches work, writes do not", path, exc)
            return db
        raise


class Transaction:
    """`with Transaction(db):` a write transaction (`BEGIN IMMEDIATE`), committed on success
    and rolled back on an exception."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self._db.execute("COMMIT")
        else:
            self._db.execute("ROLLBACK")

"""The SQLite file behind the on-disk caches (embeddings, NCBI answers).

A cache must never make its caller fail: `open_cache_db` returns None, with a warning, when
the file cannot be created, opened or given its schema, and the caller then works uncached.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable
from pathlib import Path

__all__ = ["open_cache_db"]

_log = logging.getLogger("biomcp.cache")


def open_cache_db(path: Path, schema: Iterable[str], what: str) -> sqlite3.Connection | None:
    """A connection to `path` (WAL journal, usable from any thread) with the `schema`
    statements applied, or None when the file is unusable (`what` names it in the warning)."""
    conn: sqlite3.Connection | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=30.0, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        with conn:
            for statement in schema:
                conn.execute(statement)
    except (OSError, sqlite3.Error) as exc:
        if conn is not None:
            conn.close()
        _log.warning("%s %s unusable: %s", what, path, exc)
        return None
    return conn

"""Copies of the embedded store's collections, and their restoration.

Only each collection's `rows.sqlite` is copied: it is the source of truth, and the lexical and
vector indexes beside it are derived from it (a restored collection rebuilds them when first
opened). `hold_writers` takes every collection's writer turn, so no process writes a chunk
while the caller copies the rows and, inside the same turns, the metadata database; the pair
is then one point in time.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from biomcp.adapters.vectors.embedded_lock import WriterLock
from biomcp.adapters.vectors.embedded_settings import StoreSettings

__all__ = ["ROWS", "chunk_count", "collection_names", "drop_collection", "hold_writers"]

ROWS = "rows.sqlite"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")


def collection_names(vectors_dir: Path) -> list[str]:
    """The collections under `vectors_dir` that have a rows file, sorted."""
    if not vectors_dir.is_dir():
        return []
    return sorted(
        child.name
        for child in vectors_dir.iterdir()
        if _NAME.fullmatch(child.name) and (child / ROWS).is_file()
    )


@contextmanager
def hold_writers(vectors_dir: Path, *, wait_s: float | None = None) -> Iterator[list[str]]:
    """Hold the writer's turn of every collection (in name order) for the block; the names.

    Raises:
        VectorStoreBusyError: a writer kept one turn for the whole wait.
    """
    wait = StoreSettings().write_wait_s if wait_s is None else wait_s
    names = collection_names(vectors_dir)
    with ExitStack() as stack:
        for name in names:
            lock = WriterLock(vectors_dir / name / "LOCK", name, wait_s=wait)
            stack.enter_context(lock.turn())
        yield names


def chunk_count(rows_file: Path) -> int:
    """How many chunks the rows file holds (read-only)."""
    db = sqlite3.connect(f"{rows_file.as_uri()}?mode=ro", uri=True)
    try:
        return int(db.execute("SELECT count(*) FROM chunks").fetchone()[0])
    finally:
        db.close()


def drop_collection(vectors_dir: Path, name: str, *, wait_s: float | None = None) -> None:
    """Move the collection's folder aside under its writer's turn, then delete it."""
    root = vectors_dir / name
    if not root.exists():
        return
    wait = StoreSettings().write_wait_s if wait_s is None else wait_s
    with WriterLock(root / "LOCK", name, wait_s=wait).turn():
        aside = vectors_dir / f".{name}.dropped-{time.time_ns()}"
        root.rename(aside)
    shutil.rmtree(aside, ignore_errors=True)

"""The row store of one embedded collection: SQLite, the durable source of truth.

The file's layout is in `embedded_schema`. Every mutating transaction bumps `generation` by
one. A derived index records the generation it reflects; anything newer (rows with `gen`
above it, `deleted` rows above it) is replayed into it at the next open. `reset_generation`
marks a wholesale drop (model change): an index older than it is rebuilt from scratch.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from biomcp.adapters.vectors.embedded_schema import (
    FACETS_SCHEMA,
    FORMAT,
    RECORD_COLUMNS,
    SCHEMA,
    SENTENCES_SCHEMA,
    UPSERT,
    record_from_row,
    row_from_record,
)
from biomcp.adapters.vectors.embedded_sqlite import Transaction, batches, connect, placeholders
from biomcp.adapters.vectors.sentence_blobs import decode
from biomcp.ports.vectors import ChunkRecord

__all__ = ["HIT_COLUMNS", "ChunkRow", "Manifest", "RowStore"]

#: Tables keyed by rid beside `chunks`, each made by the first write of a file older than it
#: (a reader treats one that is missing as empty): name -> its schema statements.
_SIDE_TABLES = {"facets": FACETS_SCHEMA, "sentences": SENTENCES_SCHEMA}

#: Generations of tombstones kept for processes following the rows incrementally.
TOMBSTONE_WINDOW = 1000
_PRUNED = "tombstones_pruned_through"

# What the derived indexes need of a row (no text for the vector index, no vector for BM25).
INDEX_COLUMNS = "rid, doc_id, year, evidence_type, quality_total, journal"
HIT_COLUMNS = (
    "rid, uuid, doc_id, chunk_id, text, section, evidence_type, quality_total, year, journal, "
    "has_numbers, metadata"
)


@dataclass(frozen=True, slots=True)
class Manifest:
    model_id: str
    dim: int
    created: str
    generation: int
    reset_generation: int


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """A validated chunk ready to write: its record, float32 vector and sentence blob."""

    record: ChunkRecord
    vector: np.ndarray
    sentences: bytes = b""


class RowStore:
    """SQLite access for one collection. Not thread-safe: the collection serializes calls."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = connect(path)
        self._db.execute("PRAGMA synchronous = FULL")
        self._db.execute("PRAGMA busy_timeout = 5000")
        #: The file's inode when opened (a file replaced since is another collection).
        self.inode = path.stat().st_ino
        self._has_side = {name: self._table_exists(name) for name in _SIDE_TABLES}

    def _table_exists(self, name: str) -> bool:
        sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
        return self._db.execute(sql, (name,)).fetchone() is not None

    def close(self) -> None:
        self._db.close()

    # --- manifest ------------------------------------------------------------------------

    def manifest(self) -> Manifest | None:
        """The manifest, or None when the file holds no (complete) collection."""
        has_table = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'manifest'"
        ).fetchone()
        if not has_table:
            return None
        row = self._db.execute(
            "SELECT model_id, dim, created, generation, reset_generation FROM manifest"
        ).fetchone()
        return None if row is None else Manifest(*row)

    def create(self, model_id: str, dim: int) -> Manifest:
        created = datetime.now(UTC).isoformat(timespec="seconds")
        with self._transaction():
            for statement in [*SCHEMA.split(";"), *_side_schema()]:
                if statement.strip():
                    self._db.execute(statement)
            self._db.execute(
                "INSERT INTO manifest VALUES (1, ?, ?, ?, ?, 0, 0)",
                (FORMAT, model_id, dim, created),
            )
        return Manifest(model_id, dim, created, 0, 0)

    def reset(self, model_id: str, dim: int) -> Manifest:
        """Drop every chunk and take a new model (one transaction)."""
        with self._transaction():
            gen = self._next_generation()
            self._db.execute("DELETE FROM chunks")
            self._db.execute("DELETE FROM deleted")
            self._ensure_side_tables()
            for name in _SIDE_TABLES:
                self._db.execute(f"DELETE FROM {name}")  # noqa: S608 - our own table names
            self._db.execute(
                "UPDATE manifest SET model_id = ?, dim = ?, reset_generation = ?",
                (model_id, dim, gen),
            )
        manifest = self.manifest()
        if manifest is None:  # pragma: no cover - the transaction above wrote it
            raise sqlite3.DatabaseError("manifest vanished")
        return manifest

    # --- writes --------------------------------------------------------------------------

    def upsert(self, rows: Sequence[ChunkRow], prune_below: int) -> tuple[int, list[int]]:
        """Write `rows` in one transaction; returns (generation, rid of each row)."""
        with self._transaction():
            gen = self._next_generation()
            rids = [
                self._db.execute(UPSERT, row_from_record(r.record, r.vector, gen)).fetchone()[0]
                for r in rows
            ]
            self._ensure_side_tables()
            self._delete_side_rows(rids)
            self._db.executemany(
                "INSERT OR IGNORE INTO facets VALUES (?, ?, ?)",
                [
                    (key, value, rid)
                    for rid, r in zip(rids, rows, strict=True)
                    for key, values in r.record.facets.items()
                    for value in values
                ],
            )
            self._db.executemany(
                "INSERT INTO sentences VALUES (?, ?)",
                [(rid, r.sentences) for rid, r in zip(rids, rows, strict=True) if r.sentences],
            )
            self._prune(prune_below)
        return gen, rids

    def _ensure_side_tables(self) -> None:
        """Within a write transaction: the side tables of a file made before they existed."""
        for statement in _side_schema():
            self._db.execute(statement)

    def _side_ready(self, name: str) -> bool:
        """Whether the file has side table `name` (another process may have made it since)."""
        if not self._has_side[name]:
            self._has_side[name] = self._table_exists(name)
        return self._has_side[name]

    def _delete_side_rows(self, rids: Sequence[int]) -> None:
        """Within a write transaction: the side-table rows of `rids`."""
        for name in _SIDE_TABLES:
            for part in batches(rids):
                marks = placeholders(len(part))
                sql = f"DELETE FROM {name} WHERE rid IN ({marks})"  # noqa: S608
                self._db.execute(sql, part)

    def delete_doc(
        self, doc_id: str, keep: Iterable[str], prune_below: int
    ) -> tuple[int, list[int]]:
        """Delete the chunks of `doc_id` not in `keep`; returns (generation, deleted rids)."""
        keep_set = set(keep)
        with self._transaction():
            found = self._db.execute(
                "SELECT rid, chunk_id FROM chunks WHERE doc_id = ?", (doc_id,)
            ).fetchall()
            rids = [rid for rid, chunk_id in found if chunk_id not in keep_set]
            return self._delete_rids(rids, prune_below)

    def delete_docs(self, doc_ids: Sequence[str], prune_below: int) -> tuple[int, list[int]]:
        """Delete every chunk of `doc_ids`; returns (generation, deleted rids)."""
        with self._transaction():
            rids: list[int] = []
            for part in batches(list(doc_ids)):
                marks = placeholders(len(part))
                rids.extend(
                    rid
                    for (rid,) in self._db.execute(
                        f"SELECT rid FROM chunks WHERE doc_id IN ({marks})",  # noqa: S608
                        part,
                    )
                )
            return self._delete_rids(rids, prune_below)

    def _delete_rids(self, rids: list[int], prune_below: int) -> tuple[int, list[int]]:
        """Within a transaction: delete the rows `rids` as a new generation."""
        if not rids:
            return self.generation(), []
        gen = self._next_generation()
        for part in batches(rids):
            marks = placeholders(len(part))
            self._db.execute(f"DELETE FROM chunks WHERE rid IN ({marks})", part)  # noqa: S608
        self._ensure_side_tables()
        self._delete_side_rows(rids)
        self._db.executemany(
            "INSERT OR REPLACE INTO deleted VALUES (?, ?)", [(r, gen) for r in rids]
        )
        self._prune(prune_below)
        return gen, rids

    # --- reads ---------------------------------------------------------------------------

    def generation(self) -> int:
        return int(self._db.execute("SELECT generation FROM manifest").fetchone()[0])

    def count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM chunks").fetchone()[0])

    def rids_with_facets(
        self, facets: Sequence[tuple[str, frozenset[str]]]
    ) -> tuple[set[int], bool]:
        """The rows that have, for every key (at least one), at least one of its values, and
        whether that is every row (read in one snapshot). When it is every row, the set is
        left empty: the caller has no use for it."""
        if not self._side_ready("facets"):
            return set(), False
        self._db.execute("BEGIN")  # one read snapshot for the counts and the sets
        try:
            total = self.count()
            if len(facets) == 1:  # counted through the index first: often every row passes
                key, values = facets[0]
                marks = placeholders(len(values))
                sql = (
                    "SELECT count(DISTINCT rid) FROM facets "  # noqa: S608
                    f"WHERE key = ? AND value IN ({marks})"
                )
                [(matching,)] = self._db.execute(sql, [key, *sorted(values)]).fetchall()
                if matching == total:
                    return set(), total > 0
            found: set[int] | None = None
            for key, values in facets:
                marks = placeholders(len(values))
                sql = f"SELECT rid FROM facets WHERE key = ? AND value IN ({marks})"  # noqa: S608
                rids = {rid for (rid,) in self._db.execute(sql, [key, *sorted(values)])}
                found = rids if found is None else found & rids
                if not found:
                    return set(), False
        finally:
            self._db.execute("COMMIT")
        matched = found or set()
        return matched, len(matched) == total

    def rids_with_any_facet(self, facets: Sequence[tuple[str, frozenset[str]]]) -> set[int]:
        """The rows that have, under any key, at least one of its values."""
        if not self._side_ready("facets"):
            return set()
        found: set[int] = set()
        for key, values in facets:
            if values:
                marks = placeholders(len(values))
                sql = f"SELECT rid FROM facets WHERE key = ? AND value IN ({marks})"  # noqa: S608
                found.update(rid for (rid,) in self._db.execute(sql, [key, *sorted(values)]))
        return found

    def sample(self, n: int, columns: str) -> list[tuple[Any, ...]]:
        """The first `n` rows by rid (the oldest)."""
        sql = f"SELECT {columns} FROM chunks ORDER BY rid LIMIT ?"  # noqa: S608
        return self._db.execute(sql, (max(0, n),)).fetchall()

    def documents(self) -> int:
        return int(self._db.execute("SELECT count(DISTINCT doc_id) FROM chunks").fetchone()[0])

    def existing(self, uuids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for part in batches(uuids):
            marks = placeholders(len(part))
            sql = f"SELECT uuid FROM chunks WHERE uuid IN ({marks})"  # noqa: S608
            found.update(u for (u,) in self._db.execute(sql, part))
        return found

    def records(self, uuids: Sequence[str]) -> list[ChunkRecord]:
        """The stored rows of `uuids` as the records they were written from."""
        rows: list[tuple[Any, ...]] = []
        for part in batches(uuids):
            marks = placeholders(len(part))
            sql = f"SELECT {RECORD_COLUMNS} FROM chunks WHERE uuid IN ({marks})"  # noqa: S608
            rows.extend(self._db.execute(sql, part))
        facets: dict[int, dict[str, list[str]]] = {}
        if rows and self._side_ready("facets"):
            for part in batches([r[0] for r in rows]):
                marks = placeholders(len(part))
                sql = f"SELECT rid, key, value FROM facets WHERE rid IN ({marks})"  # noqa: S608
                for rid, key, value in self._db.execute(sql, part):
                    facets.setdefault(rid, {}).setdefault(key, []).append(value)
        blobs = self.sentence_blobs([r[0] for r in rows])
        return [  # a row's dimension is its float32 vector's length
            record_from_row(
                r, facets.get(r[0], {}), decode(blobs.get(r[0]), len(r[16]) // 4).tolist()
            )
            for r in rows
        ]

    def sentence_blobs(self, rids: Sequence[int]) -> dict[int, bytes]:
        """rid -> its sentence blob, for the rows of `rids` that have one."""
        out: dict[int, bytes] = {}
        if not rids or not self._side_ready("sentences"):
            return out
        for part in batches(rids):
            marks = placeholders(len(part))
            sql = f"SELECT rid, vectors FROM sentences WHERE rid IN ({marks})"  # noqa: S608
            out.update(self._db.execute(sql, part))
        return out

    def uuids_after(self, after: str | None, limit: int) -> list[str]:
        """Up to `limit` stored uuids in order, each after `after` (the UNIQUE index walks them)."""
        sql = "SELECT uuid FROM chunks WHERE uuid > ? ORDER BY uuid LIMIT ?"
        return [u for (u,) in self._db.execute(sql, (after or "", max(0, limit)))]

    def uuids_by_rid(self, rids: Sequence[int]) -> dict[int, str]:
        """rid -> uuid through a covering index (the rows themselves are large)."""
        out: dict[int, str] = {}
        for part in batches(rids):
            marks = placeholders(len(part))
            sql = f"SELECT rid, uuid FROM chunks INDEXED BY chunks_rid_uuid WHERE rid IN ({marks})"  # noqa: S608
            out.update(self._db.execute(sql, part))
        return out

    def rows_by_uuid(self, uuids: Sequence[str], columns: str) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        for part in batches(uuids):
            marks = placeholders(len(part))
            sql = f"SELECT {columns} FROM chunks WHERE uuid IN ({marks})"  # noqa: S608
            out.extend(self._db.execute(sql, part))
        return out

    def rows_by_rid(self, rids: Sequence[int], columns: str) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        for part in batches(rids):
            marks = placeholders(len(part))
            sql = f"SELECT {columns} FROM chunks WHERE rid IN ({marks})"  # noqa: S608
            out.extend(self._db.execute(sql, part))
        return out

    def iter_rows(
        self, columns: str, *, since: int | None = None, batch: int = 20_000
    ) -> Iterator[list[tuple[Any, ...]]]:
        """Every row in rid order, in batches; with `since`, only the rows written after that
        generation (in no set order), found through the generation index (a scan in rid
        order would read every row's pages, vectors included, to find the few new ones)."""
        if since is not None:
            found = self._db.execute("SELECT rid FROM chunks WHERE gen > ?", (int(since),))
            rids = sorted(rid for (rid,) in found)
            for start in range(0, len(rids), batch):
                rows = self.rows_by_rid(rids[start : start + batch], columns)
                if rows:
                    yield rows
            return
        last = -1
        while True:
            sql = f"SELECT {columns} FROM chunks WHERE rid > ? ORDER BY rid LIMIT ?"  # noqa: S608
            rows = self._db.execute(sql, (last, batch)).fetchall()
            if not rows:
                return
            yield rows
            last = rows[-1][0]

    def quick_check(self) -> list[str]:
        """SQLite's own consistency check of the file: empty when it is sound."""
        found = [str(row[0]) for row in self._db.execute("PRAGMA quick_check")]
        return [] if found == ["ok"] else found[:5]

    def pruned_through(self) -> int:
        """Tombstones of generations up to this one may be gone (`deleted_since` is complete
        only for a generation at or above it)."""
        try:
            row = self._db.execute(
                "SELECT value FROM counters WHERE name = ?", (_PRUNED,)
            ).fetchone()
        except sqlite3.OperationalError:  # written by an older bio-mcp: assume the worst
            return self.generation()
        return int(row[0]) if row is not None else 0

    def deleted_since(self, gen: int) -> list[int]:
        return [r for (r,) in self._db.execute("SELECT rid FROM deleted WHERE gen > ?", (gen,))]

    # --- plumbing ------------------------------------------------------------------------

    def _prune(self, below: int) -> None:
        """Drop the tombstones of generations <= `below` (and of the window before now)."""
        below = min(below, self.generation() - TOMBSTONE_WINDOW)
        if below <= 0:
            return
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)"
        )
        self._db.execute("DELETE FROM deleted WHERE gen <= ?", (below,))
        self._db.execute(
            "INSERT INTO counters VALUES (?, ?) ON CONFLICT (name) "
            "DO UPDATE SET value = max(value, excluded.value)",
            (_PRUNED, below),
        )

    def _next_generation(self) -> int:
        self._db.execute("UPDATE manifest SET generation = generation + 1")
        return self.generation()

    def _transaction(self) -> Transaction:
        return Transaction(self._db)


def _side_schema() -> list[str]:
    return [statement for schema in _SIDE_TABLES.values() for statement in schema]

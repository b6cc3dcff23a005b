"""The row store of one embedded collection: SQLite, the durable source of truth.

One file `rows.sqlite` (WAL, `synchronous=FULL`) per collection holds:

* `manifest`: one row (model_id, dim, created, `generation`, `reset_generation`).
* `chunks`: every field of a `ChunkRecord`, the vector as little-endian float32 bytes, and the
  `gen` of the write that last touched the row. `rid` is an AUTOINCREMENT key, never reused,
  so the derived indexes can key on it.
* `deleted`: (rid, gen) of deleted rows (tombstones), kept until the shared lexical index has
  caught up and for `TOMBSTONE_WINDOW` generations besides, so that other processes can follow
  deletions incrementally; `counters.tombstones_pruned_through` says how far they were pruned
  (a process that saw less than that re-reads the rows instead).

Every mutating transaction bumps `generation` by one. A derived index records the generation
it reflects; anything newer (rows with `gen` above it, `deleted` rows above it) is replayed
into it at the next open. `reset_generation` marks a wholesale drop (model change): an index
older than it is rebuilt from scratch.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np

from biomcp.adapters.sqlite_errors import is_write_failure
from biomcp.ports.vectors import ChunkRecord

__all__ = ["ChunkRow", "Manifest", "RowStore", "row_from_record"]

_log = logging.getLogger("biomcp.vectors")

FORMAT = 1
#: Generations of tombstones kept for processes following the rows incrementally.
TOMBSTONE_WINDOW = 1000
_PRUNED = "tombstones_pruned_through"
_BATCH = 900  # stays under SQLite's bound-parameter limit with room to spare

_SCHEMA = """
CREATE TABLE IF NOT EXISTS manifest (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    format INTEGER NOT NULL,
    model_id TEXT NOT NULL,
    dim INTEGER NOT NULL,
    created TEXT NOT NULL,
    generation INTEGER NOT NULL,
    reset_generation INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    rid INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    text TEXT NOT NULL,
    section TEXT,
    year INTEGER,
    evidence_type TEXT,
    quality_total REAL,
    journal TEXT,
    pub_types TEXT NOT NULL,
    edat TEXT,
    lr TEXT,
    source_url TEXT,
    has_numbers INTEGER,
    metadata TEXT NOT NULL,
    vector BLOB NOT NULL,
    gen INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (doc_id);
CREATE INDEX IF NOT EXISTS chunks_gen ON chunks (gen);
CREATE INDEX IF NOT EXISTS chunks_rid_uuid ON chunks (rid, uuid);
CREATE TABLE IF NOT EXISTS deleted (rid INTEGER PRIMARY KEY, gen INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS deleted_gen ON deleted (gen);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""
# Keyword facets of each row (tags, citekey, source...): what a facet filter matches. Created
# with the first write of a file made before facets existed; a reader treats it as absent.
_FACETS_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS facets (key TEXT NOT NULL, value TEXT NOT NULL, "
    "rid INTEGER NOT NULL, PRIMARY KEY (key, value, rid)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS facets_rid ON facets (rid)",
)

_UPSERT = """
INSERT INTO chunks (
    uuid, doc_id, chunk_id, text, section, year, evidence_type, quality_total, journal,
    pub_types, edat, lr, source_url, has_numbers, metadata, vector, gen
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (uuid) DO UPDATE SET
    doc_id = excluded.doc_id, chunk_id = excluded.chunk_id, text = excluded.text,
    section = excluded.section, year = excluded.year, evidence_type = excluded.evidence_type,
    quality_total = excluded.quality_total, journal = excluded.journal,
    pub_types = excluded.pub_types, edat = excluded.edat, lr = excluded.lr,
    source_url = excluded.source_url, has_numbers = excluded.has_numbers,
    metadata = excluded.metadata, vector = excluded.vector, gen = excluded.gen
RETURNING rid
"""
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
    """A validated chunk ready to write: its record and float32 vector."""

    record: ChunkRecord
    vector: np.ndarray


def row_from_record(record: ChunkRecord, vector: np.ndarray, gen: int) -> tuple[Any, ...]:
    return (
        record.uuid,
        record.doc_id,
        record.chunk_id,
        record.text,
        record.section,
        record.year,
        record.evidence_type,
        record.quality_total,
        record.journal,
        json.dumps(list(record.pub_types)),
        record.edat,
        record.lr,
        record.source_url,
        None if record.has_numbers is None else int(record.has_numbers),
        json.dumps(dict(record.metadata), sort_keys=True),
        vector.astype("<f4").tobytes(),
        gen,
    )


def _chunks(items: Sequence[Any], size: int = _BATCH) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _open_read_write(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        db.execute("PRAGMA journal_mode = WAL")
    except BaseException:
        db.close()
        raise
    return db


def _connect(path: Path) -> sqlite3.Connection:
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


class RowStore:
    """SQLite access for one collection. Not thread-safe: the collection serializes calls."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = _connect(path)
        self._db.execute("PRAGMA synchronous = FULL")
        self._db.execute("PRAGMA busy_timeout = 5000")
        #: The file's inode when opened (a file replaced since is another collection).
        self.inode = path.stat().st_ino
        self._has_facets = self._table_exists("facets")

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
            for statement in [*_SCHEMA.split(";"), *_FACETS_SCHEMA]:
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
            self._ensure_facets()
            self._db.execute("DELETE FROM facets")
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
                self._db.execute(_UPSERT, row_from_record(r.record, r.vector, gen)).fetchone()[0]
                for r in rows
            ]
            self._ensure_facets()
            self._delete_facets(rids)
            self._db.executemany(
                "INSERT OR IGNORE INTO facets VALUES (?, ?, ?)",
                [
                    (key, value, rid)
                    for rid, r in zip(rids, rows, strict=True)
                    for key, values in r.record.facets.items()
                    for value in values
                ],
            )
            self._prune(prune_below)
        return gen, rids

    def _ensure_facets(self) -> None:
        """Within a write transaction: the facets table of a file made before it existed."""
        for statement in _FACETS_SCHEMA:
            self._db.execute(statement)

    def _facets_ready(self) -> bool:
        """Whether the file has its facets table (another process may have made it since)."""
        if not self._has_facets:
            self._has_facets = self._table_exists("facets")
        return self._has_facets

    def _delete_facets(self, rids: Sequence[int]) -> None:
        for part in _chunks(rids):
            marks = ",".join("?" * len(part))
            self._db.execute(f"DELETE FROM facets WHERE rid IN ({marks})", part)  # noqa: S608

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
            for part in _chunks(list(doc_ids)):
                marks = ",".join("?" * len(part))
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
        for part in _chunks(rids):
            marks = ",".join("?" * len(part))
            self._db.execute(f"DELETE FROM chunks WHERE rid IN ({marks})", part)  # noqa: S608
        self._ensure_facets()
        self._delete_facets(rids)
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
        if not self._facets_ready():
            return set(), False
        self._db.execute("BEGIN")  # one read snapshot for the counts and the sets
        try:
            total = self.count()
            if len(facets) == 1:  # counted through the index first: often every row passes
                key, values = facets[0]
                marks = ",".join("?" * len(values))
                sql = (
                    "SELECT count(DISTINCT rid) FROM facets "  # noqa: S608
                    f"WHERE key = ? AND value IN ({marks})"
                )
                [(matching,)] = self._db.execute(sql, [key, *sorted(values)]).fetchall()
                if matching == total:
                    return set(), total > 0
            found: set[int] | None = None
            for key, values in facets:
                marks = ",".join("?" * len(values))
                sql = f"SELECT rid FROM facets WHERE key = ? AND value IN ({marks})"  # noqa: S608
                rids = {rid for (rid,) in self._db.execute(sql, [key, *sorted(values)])}
                found = rids if found is None else found & rids
                if not found:
                    return set(), False
        finally:
            self._db.execute("COMMIT")
        matched = found or set()
        return matched, len(matched) == total

    def sample(self, n: int, columns: str) -> list[tuple[Any, ...]]:
        """The first `n` rows by rid (the oldest)."""
        sql = f"SELECT {columns} FROM chunks ORDER BY rid LIMIT ?"  # noqa: S608
        return self._db.execute(sql, (max(0, n),)).fetchall()

    def documents(self) -> int:
        return int(self._db.execute("SELECT count(DISTINCT doc_id) FROM chunks").fetchone()[0])

    def existing(self, uuids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for part in _chunks(uuids):
            marks = ",".join("?" * len(part))
            sql = f"SELECT uuid FROM chunks WHERE uuid IN ({marks})"  # noqa: S608
            found.update(u for (u,) in self._db.execute(sql, part))
        return found

    def records(self, uuids: Sequence[str]) -> list[ChunkRecord]:
        """The stored rows of `uuids` as the records they were written from."""
        columns = (
            "rid, uuid, doc_id, chunk_id, text, section, year, evidence_type, quality_total, "
            "journal, pub_types, edat, lr, source_url, has_numbers, metadata, vector"
        )
        rows: list[tuple[Any, ...]] = []
        for part in _chunks(uuids):
            marks = ",".join("?" * len(part))
            sql = f"SELECT {columns} FROM chunks WHERE uuid IN ({marks})"  # noqa: S608
            rows.extend(self._db.execute(sql, part))
        facets: dict[int, dict[str, list[str]]] = {}
        if rows and self._facets_ready():
            for part in _chunks([r[0] for r in rows]):
                marks = ",".join("?" * len(part))
                sql = f"SELECT rid, key, value FROM facets WHERE rid IN ({marks})"  # noqa: S608
                for rid, key, value in self._db.execute(sql, part):
                    facets.setdefault(rid, {}).setdefault(key, []).append(value)
        return [
            ChunkRecord(
                uuid=r[1], doc_id=r[2], chunk_id=r[3], text=r[4], section=r[5], year=r[6],
                evidence_type=r[7], quality_total=r[8], journal=r[9],
                pub_types=tuple(json.loads(r[10])), edat=r[11], lr=r[12], source_url=r[13],
                has_numbers=None if r[14] is None else bool(r[14]), metadata=json.loads(r[15]),
                vector=np.frombuffer(r[16], dtype="<f4").tolist(),
                facets={k: tuple(v) for k, v in facets.get(r[0], {}).items()},
            )
            for r in rows
        ]  # fmt: skip

    def uuids_by_rid(self, rids: Sequence[int]) -> dict[int, str]:
        """rid -> uuid through a covering index (the rows themselves are large)."""
        out: dict[int, str] = {}
        for part in _chunks(rids):
            marks = ",".join("?" * len(part))
            sql = f"SELECT rid, uuid FROM chunks INDEXED BY chunks_rid_uuid WHERE rid IN ({marks})"  # noqa: S608
            out.update(self._db.execute(sql, part))
        return out

    def rows_by_rid(self, rids: Sequence[int], columns: str) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        for part in _chunks(rids):
            marks = ",".join("?" * len(part))
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

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self._db.execute("COMMIT")
        else:
            self._db.execute("ROLLBACK")

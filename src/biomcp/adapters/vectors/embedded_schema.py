"""The layout of a collection's row file, and a chunk's row in both directions.

One file `rows.sqlite` (WAL, `synchronous=FULL`) per collection holds:

* `manifest`: one row (model_id, dim, created, `generation`, `reset_generation`).
* `chunks`: every field of a `ChunkRecord`, the vector as little-endian float32 bytes, and the
  `gen` of the write that last touched the row. `rid` is an AUTOINCREMENT key, never reused,
  so the derived indexes can key on it.
* `deleted`: (rid, gen) of deleted rows (tombstones), kept until the shared lexical index has
  caught up and for `embedded_rows.TOMBSTONE_WINDOW` generations besides, so that others follow
  deletions incrementally; `counters.tombstones_pruned_through` says how far they were pruned
  (a process that saw less than that re-reads the rows instead).
* `facets`: the keyword facets of each row (tags, citekey, source...), what a facet filter
  matches.
* `sentences`: the sentence vectors of the rows that have them, one blob per row
  (`sentence_blobs`), apart from `chunks` so that reading a row never reads them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from biomcp.ports.vectors import ChunkRecord

__all__ = [
    "FACETS_SCHEMA",
    "FORMAT",
    "RECORD_COLUMNS",
    "SCHEMA",
    "SENTENCES_SCHEMA",
    "UPSERT",
    "record_from_row",
    "row_from_record",
]

FORMAT = 1

SCHEMA = """
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
# Created with the first write of a file made before facets existed; a reader treats it as
# absent.
FACETS_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS facets (key TEXT NOT NULL, value TEXT NOT NULL, "
    "rid INTEGER NOT NULL, PRIMARY KEY (key, value, rid)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS facets_rid ON facets (rid)",
)

# Created with the first write of a file made before sentence vectors existed; a reader treats
# it as empty.
SENTENCES_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS sentences (rid INTEGER PRIMARY KEY, vectors BLOB NOT NULL)",
)

UPSERT = """
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
#: What `record_from_row` reads, in its order.
RECORD_COLUMNS = (
    "rid, uuid, doc_id, chunk_id, text, section, year, evidence_type, quality_total, "
    "journal, pub_types, edat, lr, source_url, has_numbers, metadata, vector"
)


def row_from_record(record: ChunkRecord, vector: np.ndarray, gen: int) -> tuple[Any, ...]:
    """The `UPSERT` parameters of `record` with its `vector`, written as generation `gen`."""
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


def record_from_row(
    row: Sequence[Any],
    facets: Mapping[str, Sequence[str]],
    sentences: Sequence[Sequence[float]] = (),
) -> ChunkRecord:
    """The record a row of `RECORD_COLUMNS` was written from, with its `facets` and
    `sentences` (its sentence vectors)."""
    r = row
    return ChunkRecord(
        uuid=r[1], doc_id=r[2], chunk_id=r[3], text=r[4], section=r[5], year=r[6],
        evidence_type=r[7], quality_total=r[8], journal=r[9],
        pub_types=tuple(json.loads(r[10])), edat=r[11], lr=r[12], source_url=r[13],
        has_numbers=None if r[14] is None else bool(r[14]), metadata=json.loads(r[15]),
        vector=np.frombuffer(r[16], dtype="<f4").tolist(),
        facets={k: tuple(v) for k, v in facets.items()},
        sentence_vectors=tuple(sentences),
    )  # fmt: skip

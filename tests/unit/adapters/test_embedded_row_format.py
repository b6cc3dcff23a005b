"""The embedded row file: a chunk's row in both directions, transactions and id batches."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import numpy as np
import pytest

from biomcp.adapters.vectors.embedded_schema import (
    RECORD_COLUMNS,
    SCHEMA,
    UPSERT,
    record_from_row,
    row_from_record,
)
from biomcp.adapters.vectors.embedded_sqlite import Transaction, batches, placeholders
from biomcp.ports.vectors import ChunkRecord

pytestmark = pytest.mark.unit


@pytest.fixture
def db() -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.executescript(SCHEMA)
    yield conn
    conn.close()


def _store(db: sqlite3.Connection, record: ChunkRecord) -> tuple[object, ...]:
    vector = np.asarray(record.vector, dtype=np.float32)
    db.execute(UPSERT, row_from_record(record, vector, gen=1))
    row: tuple[object, ...] = db.execute(f"SELECT {RECORD_COLUMNS} FROM chunks").fetchone()  # noqa: S608
    return row


def test_a_stored_row_reads_back_as_the_record_it_was_written_from(
    db: sqlite3.Connection,
) -> None:
    record = ChunkRecord(
        uuid="u1", doc_id="pmid:1", chunk_id="abstract:0", text="Asthma in adults.",
        vector=[0.5, -1.0, 0.25], section="abstract", year=2021, evidence_type="rct",
        quality_total=7.5, journal="BMJ", pub_types=("Journal Article", "Review"),
        edat="2021-01-02", lr="2021-03-04", source_url="https://example.org/1",
        has_numbers=False, metadata={"nested": {"a": [1, 2]}},
        facets={"tag": ("screened", "kept")},
    )  # fmt: skip
    assert record_from_row(_store(db, record), record.facets) == record


def test_a_row_without_optional_values_reads_back_with_none(db: sqlite3.Connection) -> None:
    record = ChunkRecord(uuid="u2", doc_id="note:x", chunk_id="0", text="t", vector=[1.0])
    back = record_from_row(_store(db, record), {})
    assert back == record
    assert back.has_numbers is None


def test_a_failed_transaction_leaves_nothing_behind(db: sqlite3.Connection) -> None:
    record = ChunkRecord(uuid="u3", doc_id="d", chunk_id="0", text="t", vector=[1.0])

    def write_then_fail() -> None:
        with Transaction(db):
            db.execute(UPSERT, row_from_record(record, np.ones(1, dtype=np.float32), gen=1))
            raise RuntimeError("abort")

    with pytest.raises(RuntimeError):
        write_then_fail()
    assert db.execute("SELECT count(*) FROM chunks").fetchone() == (0,)
    with Transaction(db):
        db.execute(UPSERT, row_from_record(record, np.ones(1, dtype=np.float32), gen=1))
    assert db.execute("SELECT count(*) FROM chunks").fetchone() == (1,)


def test_batches_cover_every_item_in_order_in_slices_of_at_most_the_size() -> None:
    items = list(range(7))
    assert [list(b) for b in batches(items, size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(batches([], size=3)) == []
    assert placeholders(3) == "?,?,?"

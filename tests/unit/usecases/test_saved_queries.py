"""The saved-query use cases over the in-memory stores: no database, no network, no files."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pytest

from biomcp.domain.records import utc
from biomcp.ports.jobs import SyncJob
from biomcp.ports.saved_queries import Checkpoint
from biomcp.ports.store_errors import LockTimeoutError
from biomcp.testing.memory import MemoryMetadataStore
from biomcp.usecases.documents import GetDocument
from biomcp.usecases.errors import InvalidRequestError, NotFoundError
from biomcp.usecases.saved_queries import SavedQueries, SyncRequest, records_of_query
from tests.support.sql_records import FakeClock, full_record, upsert_of

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(clock: FakeClock) -> MemoryMetadataStore:
    return MemoryMetadataStore(clock=clock)


@pytest.fixture
def queries(store: MemoryMetadataStore, clock: FakeClock) -> SavedQueries:
    return SavedQueries(store, clock=clock)


def _hold(store: MemoryMetadataStore, key: str, *pmids: str) -> None:
    run(store.upsert_documents([upsert_of(full_record(p)) for p in pmids], held_by=key))


def _job(key: str, term: str, started: datetime) -> SyncJob:
    return SyncJob(f"{key}-{started:%H%M}", key, term, started, started, "succeeded")


def test_every_saved_query_is_listed_with_its_latest_term(
    store: MemoryMetadataStore, queries: SavedQueries
) -> None:
    run(store.record_job(_job("asthma", "asthma[mh]", utc(2025, 8, 1))))
    run(store.record_job(_job("asthma", "asthma[tiab]", utc(2025, 8, 2))))
    run(store.set_checkpoint("manual", utc(2025, 7, 1), actor="a", reason="r", at=utc(2025, 8, 1)))

    saved = run(queries.every())

    assert [q.query_key for q in saved] == ["asthma", "manual"]
    assert saved[0].last_job is not None
    assert saved[0].last_job.term == "asthma[tiab]"
    assert saved[1].last_job is None
    assert saved[1].checkpoint is not None


def test_a_watermark_in_the_future_is_refused_and_a_past_one_is_audited(
    queries: SavedQueries, clock: FakeClock
) -> None:
    with pytest.raises(InvalidRequestError, match="in the future"):
        run(queries.set("glp1", clock.now() + timedelta(days=1)))
    assert run(queries.audit("glp1")) == []

    audit = run(queries.set("  glp1  ", "2025-06-01T00:00:00Z", actor="ops", reason="backfill"))

    assert (audit.query_key, audit.new, audit.actor) == ("glp1", utc(2025, 6, 1), "ops")
    assert run(queries.get("glp1")).last_edat == utc(2025, 6, 1)
    assert run(queries.audit("glp1")) == [audit]


def test_a_key_with_a_control_character_is_refused_before_anything_is_written(
    store: MemoryMetadataStore, queries: SavedQueries
) -> None:
    with pytest.raises(InvalidRequestError):
        run(queries.set("bad\u202ekey", "2025-06-01T00:00:00Z"))
    assert run(store.list_checkpoints()) == []


def test_a_query_being_synced_cannot_be_forgotten(
    store: MemoryMetadataStore, queries: SavedQueries
) -> None:
    run(
        store.advance_checkpoint(
            "glp1", utc(2025, 8, 1), utc(2025, 8, 2), window_start=None, term="q"
        )
    )

    async def scenario() -> None:
        async with store.query_lock("glp1"):
            with pytest.raises(LockTimeoutError):
                await queries.forget("glp1")

    run(scenario())
    assert run(queries.get("glp1")).last_edat == utc(2025, 8, 1)
    assert run(queries.forget("glp1")).checkpoint is True
    assert run(queries.get("glp1")) == Checkpoint("glp1")


def test_deleting_records_is_refused_while_another_query_is_untracked(
    store: MemoryMetadataStore, clock: FakeClock
) -> None:
    opened: list[str] = []

    def vectors() -> Any:
        opened.append("vectors")
        raise AssertionError("the vector store is opened only to delete")

    queries = SavedQueries(store, clock=clock, vectors=vectors)
    _hold(store, "glp1", "30000001")
    store.tables.checkpoints["legacy"] = Checkpoint("legacy", records_tracked=False)

    with pytest.raises(InvalidRequestError) as refused:
        run(queries.forget("glp1", records=True))

    assert refused.value.details == {"untracked_queries": ["legacy"]}
    assert opened == []
    assert run(store.records_of("glp1")) == ["30000001"]  # nothing went


def test_a_dry_prune_counts_the_records_no_query_holds_without_a_vector_store(
    store: MemoryMetadataStore, queries: SavedQueries
) -> None:
    _hold(store, "glp1", "30000001", "30000002")
    run(store.upsert_documents([upsert_of(full_record("30000003"))]))
    run(queries.forget("glp1"))

    pruned = run(queries.prune(dry_run=True))

    assert (pruned.records, pruned.deleted, pruned.chunks_deleted) == (3, 0, 0)
    assert run(queries.unheld_count()) == 3
    with pytest.raises(InvalidRequestError, match="vector store"):
        run(queries.prune())


def test_the_records_of_a_query_name_the_known_keys_when_it_holds_none(
    store: MemoryMetadataStore,
) -> None:
    _hold(store, "glp1", "30000002", "30000001")

    assert run(records_of_query(store, " glp1 ", purpose="search")) == ["30000001", "30000002"]
    with pytest.raises(NotFoundError) as missing:
        run(records_of_query(store, "nope", purpose="search"))
    assert missing.value.details == {"query_key": "nope", "saved_queries": ["glp1"]}
    store.tables.checkpoints["glp1"] = Checkpoint("glp1", records_tracked=False)
    with pytest.raises(InvalidRequestError, match="--rescan"):
        run(records_of_query(store, "glp1", purpose="search"))


def test_a_sync_request_is_checked_once_and_stripped() -> None:
    request = SyncRequest.check("  glp1  ", "  obesity[mh] ", 3)

    assert request == SyncRequest("glp1", "obesity[mh]", 3)
    with pytest.raises(InvalidRequestError, match="term is empty"):
        SyncRequest.check("glp1", "   ")
    with pytest.raises(InvalidRequestError, match="overlap_days"):
        SyncRequest.check("glp1", "q", -1)
    with pytest.raises(InvalidRequestError):
        SyncRequest.check("x" * 201, "q")


def test_a_stored_document_is_read_by_its_id_and_an_unknown_one_is_not_found(
    store: MemoryMetadataStore,
) -> None:
    run(store.upsert_documents([upsert_of(full_record("31452104"))]))
    read = GetDocument(store)

    payload = run(read.run("pmid:31452104"))

    assert payload["doc_id"] == "pmid:31452104"
    with pytest.raises(NotFoundError):
        run(read.run("pmid:1"))
    with pytest.raises(InvalidRequestError):
        run(read.run("doi:10.1/x"))


def test_memory_times_are_utc_like_sql_times(store: MemoryMetadataStore) -> None:
    paris = datetime(2025, 8, 9, 2, tzinfo=UTC).astimezone()
    run(store.set_export_mark("glp1", paris))
    mark = run(store.export_mark("glp1"))
    assert mark == paris
    assert mark is not None
    assert mark.tzinfo == UTC

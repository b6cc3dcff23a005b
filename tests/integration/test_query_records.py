"""Which saved queries brought each record: a sync records its key as holding every record of
its window (stored or found stored already), not the records it re-fetches for another reason
(the retraction re-check); forgetting a key with `records` deletes, from the vector store and
then from SQL, the records no other key holds, and leaves every other key's whole; a `rescan`
reads the key's history again, and a sync that reads it marks the key's records as tracked.

The fake E-utilities over HTTP, both store pairs (SQLite + embedded; PostgreSQL + Weaviate in
CI), the deterministic embedder.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from biomcp.ports.metadata import MetadataStore
from biomcp.ports.saved_queries import Checkpoint
from biomcp.ports.vectors import SearchFilters, VectorStore
from biomcp.testing.eutils import FakeEutilsServer
from biomcp.usecases.errors import InvalidRequestError, NotFoundError
from biomcp.usecases.saved_queries import SavedQueries
from biomcp.usecases.search import SearchConfig, SearchCorpus
from biomcp.usecases.sync import SyncDelta, WindowBasis
from tests.support.sync_harness import (
    BackendSpec,
    SteppingClock,
    Untracked,
    embedder,
    entrez_client,
    make_corpus,
    make_sync,
    matching,
    run,
)

pytestmark = pytest.mark.integration

START, END = date(2025, 1, 1), date(2025, 3, 31)
NOW = datetime(2025, 4, 1, 12, tzinfo=UTC)


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    with FakeEutilsServer(make_corpus(40, START, END, seed=7), warm=True) as server:
        yield server


@asynccontextmanager
async def _corpus(
    backend: BackendSpec, fake: FakeEutilsServer
) -> AsyncIterator[tuple[SteppingClock, MetadataStore, VectorStore, SyncDelta]]:
    """The stores of `backend` and a sync from the fake, on a clock at NOW."""
    clock = SteppingClock(NOW)
    async with backend.stores(clock) as (metadata, vectors):
        entrez = entrez_client(fake.base_url)
        try:
            yield (
                clock,
                metadata,
                vectors,
                make_sync(entrez, metadata, vectors, embedder(), clock, backend.collection),
            )
        finally:
            await entrez.aclose()


async def _missing_chunks(
    sync: SyncDelta, metadata: MetadataStore, pmids: Sequence[str]
) -> set[str]:
    """The PMIDs among `pmids` (stored now) with a chunk missing from the vector store."""
    stored = await metadata.get_documents(list(pmids))
    wanted = sync.indexer.chunk_uuids([d.record for d in stored.values()])
    return set(await sync.indexer.missing_chunks(wanted))


def test_forgetting_a_query_with_its_records_deletes_only_those_no_other_query_holds(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    hypertension = set(matching(fake.corpus, "Hypertension"))
    humans = set(matching(fake.corpus, "Humans"))
    only_mine, shared = hypertension - humans, hypertension & humans
    assert only_mine, "the seed should give records only one query holds"
    assert shared, "the seed should give records both queries hold"

    async def scenario() -> None:
        async with _corpus(backend, fake) as (clock, metadata, vectors, sync):
            await sync.run("htn", "Hypertension[mh]")
            await sync.run("humans", "Humans[mh]")
            # A replay records nothing twice.
            clock.advance(timedelta(days=1))
            await sync.run("htn", "Hypertension[mh]")
            counts = await metadata.query_record_counts()
            assert (counts["htn"], counts["humans"]) == (len(hypertension), len(humans))
            assert set(await metadata.records_held_only_by("htn")) == only_mine
            chunks_before = await vectors.count(backend.collection)
            kept = await metadata.get_documents(sorted(humans))
            assert set(kept) == humans

            checkpoints = SavedQueries(
                metadata, clock=clock, vectors=lambda: vectors, collection=backend.collection
            )
            gone = await checkpoints.forget("htn", records=True)

            assert (gone.records, gone.records_deleted) == (len(hypertension), len(only_mine))
            assert (gone.checkpoint, gone.jobs, gone.records_tracked) == (True, 2, True)
            assert gone.chunks_deleted > 0
            assert await vectors.count(backend.collection) == chunks_before - gone.chunks_deleted
            assert await metadata.get_documents(sorted(only_mine)) == {}
            assert await metadata.get_checkpoint("htn") == Checkpoint("htn")
            assert "htn" not in await metadata.query_record_counts()
            # Every record of the other query is whole: stored, indexed, every chunk there.
            after = await metadata.get_documents(sorted(humans))
            assert {p: d.version for p, d in after.items()} == {
                p: d.version for p, d in kept.items()
            }
            assert all(d.indexed_version == d.version for d in after.values())
            assert await _missing_chunks(sync, metadata, sorted(humans)) == set()
            # Its next sync finds nothing to do: none of its records went.
            clock.advance(timedelta(days=1))
            again = await sync.run("humans", "Humans[mh]", overlap_days=400)
            assert (again.inserted, again.updated, again.texts_embedded) == (0, 0, 0)
            # A query synced again after being forgotten brings its records back.
            back = await sync.run("htn", "Hypertension[mh]")
            assert back.inserted == len(only_mine)
            assert await _missing_chunks(sync, metadata, sorted(hypertension)) == set()

    run(scenario())


def test_without_records_forgetting_keeps_every_record_and_says_how_many(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    hypertension = set(matching(fake.corpus, "Hypertension"))

    async def scenario() -> None:
        async with _corpus(backend, fake) as (clock, metadata, vectors, sync):
            await sync.run("htn", "Hypertension[mh]")
            chunks_before = await vectors.count(backend.collection)

            gone = await SavedQueries(metadata, clock=clock).forget("htn")

            assert (gone.records, gone.records_deleted, gone.chunks_deleted) == (
                len(hypertension), 0, 0,
            )  # fmt: skip
            assert set(await metadata.get_documents(sorted(hypertension))) == hypertension
            assert await vectors.count(backend.collection) == chunks_before

    run(scenario())


def test_prune_deletes_the_records_of_forgotten_queries_and_keeps_every_held_one(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    hypertension = set(matching(fake.corpus, "Hypertension"))
    humans = set(matching(fake.corpus, "Humans"))
    orphaned = hypertension - humans

    async def scenario() -> None:
        async with _corpus(backend, fake) as (clock, metadata, vectors, sync):
            await sync.run("htn", "Hypertension[mh]")
            await sync.run("humans", "Humans[mh]")
            checkpoints = SavedQueries(
                metadata, clock=clock, vectors=lambda: vectors, collection=backend.collection
            )
            await checkpoints.forget("htn")  # its records stay, some held by no query now
            chunks_before = await vectors.count(backend.collection)

            counted = await checkpoints.prune(dry_run=True)
            assert (counted.records, counted.deleted, counted.chunks_deleted) == (
                len(orphaned), 0, 0,
            )  # fmt: skip
            assert await vectors.count(backend.collection) == chunks_before

            pruned = await checkpoints.prune()

            assert (pruned.records, pruned.deleted) == (len(orphaned), len(orphaned))
            assert pruned.chunks_deleted > 0
            assert await vectors.count(backend.collection) == chunks_before - pruned.chunks_deleted
            assert await metadata.get_documents(sorted(orphaned)) == {}
            # The other query is whole: stored, indexed, every chunk there.
            assert set(await metadata.get_documents(sorted(humans))) == humans
            assert await _missing_chunks(sync, metadata, sorted(humans)) == set()
            again = await checkpoints.prune()
            assert (again.records, again.deleted, again.chunks_deleted) == (0, 0, 0)
            # Refused, touching nothing, while a query's records are not all recorded.
            await checkpoints.forget("humans")
            legacy = SavedQueries(
                Untracked(metadata, "older_topic"),
                clock=clock,
                vectors=lambda: vectors,
                collection=backend.collection,
            )
            with pytest.raises(InvalidRequestError, match="older_topic"):
                await legacy.prune()
            with pytest.raises(InvalidRequestError, match="older_topic"):
                await legacy.prune(dry_run=True)
            assert set(await metadata.get_documents(sorted(humans))) == humans

    run(scenario())


def test_records_are_not_deleted_while_another_query_was_synced_before_they_were_recorded(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    hypertension = set(matching(fake.corpus, "Hypertension"))

    async def scenario() -> None:
        async with _corpus(backend, fake) as (clock, metadata, vectors, sync):
            await sync.run("htn", "Hypertension[mh]")
            legacy = Untracked(metadata, "older_topic")
            checkpoints = SavedQueries(
                legacy,
                clock=clock,
                vectors=lambda: vectors,
                collection=backend.collection,
            )

            with pytest.raises(InvalidRequestError, match="older_topic") as refused:
                await checkpoints.forget("htn", records=True)

            assert "--rescan" in refused.value.message
            assert refused.value.details == {"untracked_queries": ["older_topic"]}
            # Nothing was touched: the key is still saved, its records all there.
            assert (await metadata.get_checkpoint("htn")).last_edat is not None
            assert set(await metadata.get_documents(sorted(hypertension))) == hypertension
            assert await _missing_chunks(sync, metadata, sorted(hypertension)) == set()

    run(scenario())


class _Advances:
    """The store, noting what each completed sync said of the history it read."""

    def __init__(self, inner: MetadataStore) -> None:
        self.inner = inner
        self.read_history: list[bool] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def advance_checkpoint(self, *args: Any, **kwargs: Any) -> Checkpoint:
        self.read_history.append(kwargs["read_history"])
        return await self.inner.advance_checkpoint(*args, **kwargs)


def test_a_rescan_reads_the_keys_history_again_and_tracks_its_records(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    """A key first synced 45 days back: a sync from its checkpoint reads the overlap only, a
    rescan its whole history (from `covers_from`, not the term's), with no revisions' ESearch
    (the window holds them); both the first sync and the rescan read the key's history."""
    scope = (NOW - timedelta(days=45)).date()
    in_scope = set(matching(fake.corpus, "Hypertension", lo=scope))
    assert set(matching(fake.corpus, "Hypertension")) - in_scope, "older records must exist"

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        async with backend.stores(clock) as (inner, vectors):
            metadata = _Advances(inner)
            entrez = entrez_client(fake.base_url)
            sync = make_sync(
                entrez, metadata, vectors, embedder(), clock, backend.collection,
                initial_days=45,
            )  # fmt: skip
            first = await sync.run("htn", "Hypertension[mh]")
            covers = (await inner.get_checkpoint("htn")).covers_from
            clock.advance(timedelta(days=30))
            onward = await sync.run("htn", None)
            clock.advance(timedelta(days=1))
            rescan = await sync.run("htn", None, rescan=True)

            assert first.pmids_found == len(in_scope)
            assert onward.window_basis == WindowBasis.CHECKPOINT
            assert rescan.window_basis == WindowBasis.RESCAN
            assert rescan.window_start == covers
            assert rescan.pmids_found == len(in_scope)  # the key's history, not the term's
            assert rescan.revisions_found == 0
            assert (rescan.inserted, rescan.updated) == (0, 0)
            assert metadata.read_history == [True, False, True]
            assert (await inner.query_record_counts())["htn"] == len(in_scope)
            await entrez.aclose()

    run(scenario())


def test_a_rescan_of_a_key_never_synced_is_its_first_sync(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    async def scenario() -> None:
        async with _corpus(backend, fake) as (_clock, _metadata, _vectors, sync):
            report = await sync.run("new", "Hypertension[mh]", rescan=True)
            assert report.window_basis == WindowBasis.WHOLE_HISTORY
            assert report.inserted == len(matching(fake.corpus, "Hypertension"))

    run(scenario())


def test_a_search_within_a_saved_query_returns_only_the_records_it_synced(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    hypertension = {f"pmid:{p}" for p in matching(fake.corpus, "Hypertension")}
    humans = {f"pmid:{p}" for p in matching(fake.corpus, "Humans")}
    assert humans - hypertension, "the seed should give records outside the narrow query"

    async def scenario() -> None:
        async with _corpus(backend, fake) as (_clock, metadata, vectors, sync):
            await sync.run("htn", "Hypertension[mh]")
            await sync.run("humans", "Humans[mh]")
            config = SearchConfig(collection=backend.collection)
            search = SearchCorpus(vectors, embedder(), config=config, metadata=metadata)

            everywhere = await search.run("patients outcomes trial", top_k=100)
            within = await search.run("patients outcomes trial", top_k=100, query_key="htn")

            assert {h.doc_id for h in everywhere} - hypertension, "the corpus search is wider"
            assert within
            assert {h.doc_id for h in within} <= hypertension
            # Other records no longer crowd the query's own out of the top_k.
            assert len(within) >= sum(1 for h in everywhere if h.doc_id in hypertension)
            # Combined with other filters, both hold.
            one = sorted(hypertension)[0]
            narrowed = await search.run(
                "patients", top_k=100, query_key=" htn ",
                filters=SearchFilters(doc_ids=frozenset({one, "pmid:1"})),
            )  # fmt: skip
            assert {h.doc_id for h in narrowed} == {one}
            outside = next(iter(humans - hypertension))
            assert (
                await search.run(
                    "patients", query_key="htn", filters=SearchFilters(doc_ids=frozenset({outside}))
                )
                == []
            )

            with pytest.raises(NotFoundError, match="htn, humans") as unknown:
                await search.run("patients", query_key="htm")
            assert unknown.value.details == {"query_key": "htm", "saved_queries": ["htn", "humans"]}
            with pytest.raises(InvalidRequestError, match="empty"):
                await search.run("patients", query_key="  ")

    run(scenario())


def test_a_search_within_a_query_synced_before_records_were_recorded_says_to_rescan(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    async def scenario() -> None:
        async with _corpus(backend, fake) as (_clock, metadata, vectors, sync):
            await sync.run("htn", "Hypertension[mh]")
            legacy = Untracked(metadata, "htn")
            config = SearchConfig(collection=backend.collection)
            search = SearchCorpus(vectors, embedder(), config=config, metadata=legacy)

            with pytest.raises(InvalidRequestError, match="--rescan"):
                await search.run("patients", query_key="htn")

    run(scenario())


def test_a_sync_counts_the_records_new_to_its_query_stored_or_not(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    hypertension = set(matching(fake.corpus, "Hypertension"))
    humans = set(matching(fake.corpus, "Humans"))
    assert hypertension & humans, "the seed should give records of both"
    assert humans - hypertension, "the seed should give records of one only"

    async def scenario() -> None:
        async with _corpus(backend, fake) as (_clock, metadata, _vectors, sync):
            first = await sync.run("htn", "Hypertension[mh]")
            assert (first.inserted, first.new_to_query) == (len(hypertension),) * 2
            second = await sync.run("humans", "Humans[mh]")
            # Records htn stored are skipped as documents, and still new to this query.
            assert second.inserted == len(humans - hypertension)
            assert second.skipped == len(humans & hypertension)
            assert second.new_to_query == len(humans)
            again = await sync.run("humans", "Humans[mh]", rescan=True)  # its history again
            assert (again.pmids_processed, again.new_to_query) == (len(humans), 0)
            assert await metadata.records_of("humans") == sorted(humans)

    run(scenario())

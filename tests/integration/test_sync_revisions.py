"""Records PubMed revises after their Entrez-date window (`SyncConfig.follow_revisions`):
MEDLINE indexing adds MeSH terms and publication types weeks after a record appears, when an
EDAT window has long passed it. Each sync also asks for the term's records modified (mdat)
since the last sync, so a stored record gets its indexed version (and the design read from
it), and a record that matches a MeSH query only once indexed is synced at all.

The fake E-utilities over HTTP (its `mdat` is the record's DateRevised), both store pairs
(SQLite + embedded; PostgreSQL + Weaviate in CI), the deterministic embedder.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta

import pytest

from biomcp.domain.design import StudyDesign, classify_design
from biomcp.testing.eutils import FakeEutilsServer
from tests.support.sync_harness import (
    BackendSpec,
    CountingVectorStore,
    FlakyEntrezClient,
    SteppingClock,
    embedder,
    entrez_client,
    make_corpus,
    make_sync,
    matching,
    medline_index,
    record_of,
    run,
    unindex,
)

pytestmark = pytest.mark.integration

N = 40
START, END = date(2025, 1, 1), date(2025, 3, 31)
NOW = datetime(2025, 4, 1, 12, tzinfo=UTC)
MESH = "Humans"
TERM = f"{MESH}[mh]"
KEY = "revisions"
RCT = ("D016449", "Randomized Controlled Trial")


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    corpus = make_corpus(N, START, END, seed=7)  # each record revised the day it appeared
    with FakeEutilsServer(corpus, warm=True) as server:
        yield server


def _picks(fake: FakeEutilsServer) -> tuple[str, str]:
    """Two human records that are not trials: one to be indexed as an RCT after its sync, one
    not MeSH-indexed when the first sync runs."""
    humans = [
        p
        for p in matching(fake.corpus, MESH, hi=END - timedelta(days=20))  # past any overlap
        if classify_design(record_of(fake.corpus, p)).design is not StudyDesign.RCT
    ]
    assert len(humans) >= 2, humans
    return humans[0], humans[-1]


def _medline_indexing(
    fake: FakeEutilsServer,
    clock: SteppingClock,
    indexed_later: str,
    unindexed: tuple[str, bytes] | None = None,
) -> None:
    """Six weeks on, MEDLINE indexing reaches the picked records, their EDATs long past: the
    first becomes an RCT, the second (a PMID and the MeSH `unindex` took away) gets its MeSH."""
    clock.advance(timedelta(days=42))
    day = (NOW + timedelta(days=41)).date()
    medline_index(fake.corpus, indexed_later, day, publication_type=RCT)
    if unindexed is not None:
        pmid, mesh = unindexed
        medline_index(fake.corpus, pmid, day, mesh=mesh)


def test_a_sync_fetches_the_records_pubmed_revised_since_the_last_one(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    indexed_later, unindexed = _picks(fake)
    mesh = unindex(fake.corpus, unindexed)  # not MeSH-indexed yet: "Humans[mh]" misses it
    first_found = set(matching(fake.corpus, MESH))
    assert unindexed not in first_found

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        counting = embedder()
        async with backend.stores(clock) as (metadata, inner):
            vectors = CountingVectorStore(inner)
            entrez = entrez_client(fake.base_url)
            sync = make_sync(entrez, metadata, vectors, counting, clock, backend.collection)
            first = await sync.run(KEY, TERM)
            assert first.inserted == len(first_found)
            assert first.revisions_found == 0  # no last scan yet
            assert await metadata.get_document(unindexed) is None
            before = await metadata.get_document(indexed_later)
            assert before is not None
            checkpoint = (await metadata.get_checkpoint(KEY)).last_edat

            _medline_indexing(fake, clock, indexed_later, (unindexed, mesh))

            second = await sync.run(KEY, TERM)
            assert checkpoint is not None
            overlap = matching(fake.corpus, MESH, lo=(checkpoint - timedelta(days=5)).date())
            assert second.pmids_found == len(overlap)  # the window: nothing new, the overlap
            assert second.revisions_found == 2
            assert (second.inserted, second.updated) == (1, 1)
            assert second.skipped == len(overlap)
            now_rct = await metadata.get_document(indexed_later)
            assert now_rct is not None
            assert now_rct.version == before.version + 1
            assert "Randomized Controlled Trial" in now_rct.record.publication_types
            assert now_rct.evidence.design is not None
            assert now_rct.evidence.design.design is StudyDesign.RCT
            assert now_rct.indexed_version == now_rct.version
            arrived = await metadata.get_document(unindexed)
            assert arrived is not None
            assert arrived.indexed_version == arrived.version == 1
            assert MESH.lower() in arrived.record.mesh_descriptors
            # Their Entrez dates are old: the watermark does not move back or on.
            assert (await metadata.get_checkpoint(KEY)).last_edat == checkpoint
            hits = await inner.fetch_chunks(
                backend.collection,
                sync.indexer.chunk_uuids([now_rct.record, arrived.record])[unindexed],
            )
            assert hits
            assert {h.doc_id for h in hits} == {f"pmid:{unindexed}"}

            # The next day the same two are in the window again (the overlap): fetched and
            # skipped, nothing embedded or written.
            clock.advance(timedelta(days=1))
            texts = counting.texts
            vectors.reset()
            third = await sync.run(KEY, TERM)
            assert third.revisions_found == 2
            assert (third.inserted, third.updated) == (0, 0)
            assert third.skipped == third.pmids_found + 2
            assert counting.texts == texts
            assert vectors.writes == 0
            await entrez.aclose()

    run(scenario())


def test_with_revisions_off_a_sync_sees_only_its_entrez_date_window(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    indexed_later, unindexed = _picks(fake)
    mesh = unindex(fake.corpus, unindexed)

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        async with backend.stores(clock) as (metadata, vectors):
            entrez = entrez_client(fake.base_url)
            sync = make_sync(
                entrez, metadata, vectors, embedder(), clock, backend.collection,
                follow_revisions=False,
            )  # fmt: skip
            await sync.run(KEY, TERM)
            _medline_indexing(fake, clock, indexed_later, (unindexed, mesh))

            second = await sync.run(KEY, TERM)
            assert second.revisions_found == 0
            assert second.pmids_processed == second.pmids_found  # the overlap only
            assert (second.inserted, second.updated) == (0, 0)
            stale = await metadata.get_document(indexed_later)
            assert stale is not None
            assert stale.version == 1
            assert await metadata.get_document(unindexed) is None
            await entrez.aclose()

    run(scenario())


def test_when_pubmed_cannot_list_the_revisions_the_window_is_synced_and_the_checkpoint_held(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    indexed_later, _ = _picks(fake)

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        async with backend.stores(clock) as (metadata, vectors):
            entrez = entrez_client(fake.base_url)
            sync = make_sync(entrez, metadata, vectors, embedder(), clock, backend.collection)
            await sync.run(KEY, TERM)
            held = await metadata.get_checkpoint(KEY)
            _medline_indexing(fake, clock, indexed_later)

            # The window's ESearch is answered; the revisions' fails every retry.
            retries = entrez.settings.max_retries
            answered = {"kind": "slow", "delay": 0}
            fake.faults.sequence([answered, *["500"] * (retries + 1)], endpoint="esearch")
            failed = await sync.run(KEY, TERM)
            fake.faults.clear()
            assert failed.revisions_found == 0
            [warning] = [w for w in failed.warnings if "records revised since" in w]
            assert "the next sync asks again" in warning
            assert failed.skipped == failed.pmids_found  # the window was synced
            assert await metadata.get_checkpoint(KEY) == held  # last scan included
            stale = await metadata.get_document(indexed_later)
            assert stale is not None
            assert stale.version == 1

            clock.advance(timedelta(days=1))
            caught_up = await sync.run(KEY, TERM)
            assert caught_up.revisions_found == 1
            assert caught_up.updated == 1
            fresh = await metadata.get_document(indexed_later)
            assert fresh is not None
            assert fresh.version == 2
            assert (await metadata.get_checkpoint(KEY)).last_scan_at != held.last_scan_at
            await entrez.aclose()

    run(scenario())


def test_revisions_past_the_esearch_cap_are_a_warning_and_do_not_hold_the_checkpoint(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    indexed_later, _ = _picks(fake)

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        async with backend.stores(clock) as (metadata, vectors):
            entrez = entrez_client(fake.base_url, flaky=True)
            assert isinstance(entrez, FlakyEntrezClient)
            sync = make_sync(entrez, metadata, vectors, embedder(), clock, backend.collection)
            await sync.run(KEY, TERM)
            _medline_indexing(fake, clock, indexed_later)

            # A day with more revised records than ESearch lists (PubMed's yearly MeSH update):
            # asking again would meet the same cap, so the checkpoint is not held for it.
            entrez.incomplete = "mdat"
            report = await sync.run(KEY, TERM)
            assert report.revisions_found == 1
            assert report.updated == 1  # what was listed is synced
            [warning] = [w for w in report.warnings if "than ESearch can list" in w]
            assert "move the checkpoint back" in warning
            after = await metadata.get_checkpoint(KEY)
            assert after.last_scan_at is not None
            assert after.last_scan_at > NOW + timedelta(days=41)  # this sync's scan
            await entrez.aclose()

    run(scenario())


def test_an_overlap_reaching_before_year_one_asks_for_every_revision(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    async def scenario() -> None:
        clock = SteppingClock(NOW)
        async with backend.stores(clock) as (metadata, vectors):
            entrez = entrez_client(fake.base_url)
            sync = make_sync(entrez, metadata, vectors, embedder(), clock, backend.collection)
            first = await sync.run(KEY, TERM)
            clock.advance(timedelta(days=1))
            fake.clear_log()
            again = await sync.run(KEY, TERM, 800_000)  # 2,190 years before the last scan
            assert again.pmids_found == first.inserted  # the whole history by Entrez date
            assert again.revisions_found == 0  # every revised one is in that window
            asked = [
                (e["params"]["mindate"], e["params"].get("datetype"))
                for e in fake.log
                if e["endpoint"] == "esearch" and "mindate" in e["params"]
            ]
            assert ("1700/01/01", "mdat") in asked
            await entrez.aclose()

    run(scenario())


def test_revisions_stay_inside_the_history_the_key_covers(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    """A key first synced `initial_days` back covers that history: PubMed revising an older
    record of its term (its yearly MeSH update revises most of them) does not add it. An
    operator's backfill widens what the key covers, and the revisions' ESearch with it."""
    scope_day = date(2025, 2, 15)  # NOW less 45 days
    older = matching(fake.corpus, MESH, hi=scope_day - timedelta(days=2))
    inside = matching(fake.corpus, MESH, lo=scope_day, hi=END - timedelta(days=20))
    assert len(older) >= 2, older
    assert inside

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        async with backend.stores(clock) as (metadata, vectors):
            entrez = entrez_client(fake.base_url)
            sync = make_sync(
                entrez, metadata, vectors, embedder(), clock, backend.collection,
                initial_days=45,
            )  # fmt: skip
            first = await sync.run(KEY, TERM)
            assert first.inserted == len(matching(fake.corpus, MESH, lo=scope_day))
            covered = await metadata.get_checkpoint(KEY)
            assert covered.covers_from is not None
            assert covered.covers_from.date() == scope_day  # the first window's start

            clock.advance(timedelta(days=42))
            day = (NOW + timedelta(days=41)).date()
            for pmid in (older[0], inside[0]):
                medline_index(fake.corpus, pmid, day, publication_type=RCT)
            second = await sync.run(KEY, TERM)
            assert second.revisions_found == 1
            assert second.updated == 1
            revised = await metadata.get_document(inside[0])
            assert revised is not None
            assert revised.version == 2
            assert await metadata.get_document(older[0]) is None
            assert (await metadata.get_checkpoint(KEY)).covers_from == covered.covers_from

            # The operator backfills from the start of the year: the window brings the older
            # records in, and their later revisions are followed too.
            backfill = datetime(2025, 1, 1, tzinfo=UTC)
            await metadata.set_checkpoint(
                KEY, backfill, actor="test", reason="backfill", at=clock.now()
            )
            clock.advance(timedelta(days=10))  # the revisions above, past the next overlap
            widened = await sync.run(KEY, TERM, 0)
            assert widened.inserted == len(older)
            assert (await metadata.get_checkpoint(KEY)).covers_from == backfill
            clock.advance(timedelta(days=30))
            medline_index(fake.corpus, older[1], (clock.now() - timedelta(days=1)).date(),
                          publication_type=RCT)  # fmt: skip
            followed = await sync.run(KEY, TERM)
            assert followed.revisions_found == 1
            assert followed.updated == 1
            refreshed = await metadata.get_document(older[1])
            assert refreshed is not None
            assert refreshed.version == 2
            await entrez.aclose()

    run(scenario())

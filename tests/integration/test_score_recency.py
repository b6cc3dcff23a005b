"""Quality recency follows the calendar (`usecases.rescoring`): a score counted in 2026 is
counted again by the first sync of 2027, in SQL and on the chunks, without a new version or
an embedding, and a failed pass is a warning that the next sync makes good.

The fake E-utilities over HTTP, both store pairs (SQLite + embedded; PostgreSQL + Weaviate in
CI), the deterministic embedder, a test clock moved across New Year.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta

import pytest

from biomcp.domain.quality import QualityConfig, recency_points, total_score
from biomcp.domain.records import QualityBreakdown
from biomcp.ports.documents import StoredDocument
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.vectors import VectorStore
from biomcp.testing.eutils import FakeEutilsServer
from biomcp.usecases.maintenance import IndexMaintenance
from biomcp.usecases.sync import SyncDelta
from tests.support.sync_harness import (
    BackendSpec,
    CountingVectorStore,
    SteppingClock,
    embedder,
    entrez_client,
    make_corpus,
    make_sync,
    record_of,
    run,
)

pytestmark = pytest.mark.integration

N = 48
# Publication years 2015-2021: in 2026 a 2021 paper is 5 years old (recency 2) and a 2016
# paper 10 (recency 1); in 2027 they are 6 (1) and 11 (0). 2017-2020 keep 1 in both years.
START, END = date(2015, 2, 1), date(2021, 10, 31)
IN_2026 = datetime(2026, 12, 30, 12, tzinfo=UTC)
TERM = "Journal Article[pt]"
KEY = "recency"


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    with FakeEutilsServer(make_corpus(N, START, END, seed=41), warm=True) as server:
        yield server


def _expected(quality: QualityBreakdown, year: int | None, today: date) -> tuple[int, int]:
    recency = recency_points(year, today, QualityConfig())
    weights = QualityConfig().weights
    parts = (quality.design, recency, quality.journal, quality.human, quality.sample_size)
    return recency, total_score(*parts, weights)


async def _stored(metadata: MetadataStore, pmids: list[str]) -> dict[str, StoredDocument]:
    docs = await metadata.get_documents(pmids)
    assert set(docs) == set(pmids)
    return docs


async def _assert_chunks_carry_sql_totals(
    vectors: VectorStore, collection: str, docs: dict[str, StoredDocument], sync: SyncDelta
) -> None:
    """Every chunk of every document in `docs` carries the document's stored total."""
    wanted = sync.indexer.chunk_uuids([d.record for d in docs.values()])
    uuids = [u for us in wanted.values() for u in us]
    totals: dict[str, set[float | None]] = {}
    for chunk in await vectors.fetch_chunks(collection, uuids):
        assert chunk.pmid is not None
        totals.setdefault(chunk.pmid, set()).add(chunk.quality_total)
    assert totals == {p: {float(d.quality.total)} for p, d in docs.items()}


def _crossing(fake: FakeEutilsServer) -> set[str]:
    """The records published in 2016 or 2021: those whose recency moves on 2027-01-01."""
    return {p for p in fake.corpus.pmids() if record_of(fake.corpus, p).year in (2016, 2021)}


def test_the_first_sync_of_a_new_year_counts_recency_again_in_sql_and_on_the_chunks(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    pmids = fake.corpus.pmids()
    years = {p: record_of(fake.corpus, p).year for p in pmids}
    moving = _crossing(fake)
    assert moving, years  # the fixture crosses both boundaries...
    assert len(moving) < len(pmids), years  # ...and has years that keep their recency

    async def scenario() -> None:
        clock = SteppingClock(IN_2026)
        counting = embedder()
        async with backend.stores(clock) as (metadata, vectors):
            entrez = entrez_client(fake.base_url)
            sync = make_sync(entrez, metadata, vectors, counting, clock, backend.collection)
            first = await sync.run(KEY, TERM)
            assert first.inserted == len(pmids)
            assert first.rescored == 0
            before = await _stored(metadata, pmids)
            for pmid, doc in before.items():
                assert doc.quality.scored_in == 2026
                assert doc.quality.recency == recency_points(years[pmid], IN_2026.date(),
                                                             QualityConfig())  # fmt: skip
            assert await metadata.count_documents(scored_before=2026) == 0
            assert await metadata.count_documents(scored_before=2027) == len(pmids)

            clock.advance(timedelta(days=3))  # 2027-01-02
            today = date(2027, 1, 2)
            texts = counting.texts
            second = await sync.run(KEY, TERM)
            assert counting.texts == texts  # nothing chunked or embedded again
            after = await _stored(metadata, pmids)
            moved = {
                p
                for p in pmids
                if (after[p].quality.recency, after[p].quality.total)
                != (before[p].quality.recency, before[p].quality.total)
            }
            assert moved == moving
            assert second.rescored == len(moving)
            for pmid, doc in after.items():
                assert (doc.quality.recency, doc.quality.total) == _expected(
                    before[pmid].quality, years[pmid], today
                )
                assert doc.quality.scored_in == 2027
                assert doc.version == before[pmid].version  # the content did not change
                assert doc.indexed_version == doc.version
                assert doc.quality.design == before[pmid].quality.design
            await _assert_chunks_carry_sql_totals(vectors, backend.collection, after, sync)
            assert await metadata.count_documents(scored_before=2027) == 0

            third = await sync.run(KEY, TERM)
            assert third.rescored == 0
            assert third.chunks_written == 0
            await entrez.aclose()

    run(scenario())


def test_a_failed_pass_leaves_the_old_scores_and_the_next_sync_updates_them(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    pmids = fake.corpus.pmids()
    moving = _crossing(fake)

    async def scenario() -> None:
        clock = SteppingClock(IN_2026)
        async with backend.stores(clock) as (metadata, inner):
            vectors = CountingVectorStore(inner)
            entrez = entrez_client(fake.base_url)
            sync = make_sync(entrez, metadata, vectors, embedder(), clock, backend.collection)
            await sync.run(KEY, TERM)
            before = await _stored(metadata, pmids)

            clock.advance(timedelta(days=3))
            vectors.reset()
            vectors.fail_on_upsert = 1  # the replay writes nothing else: the pass's write
            failed = await sync.run(KEY, TERM)
            assert failed.rescored == 0
            assert any("recency of stored quality scores failed" in w for w in failed.warnings)
            now = await _stored(metadata, pmids)
            assert {p: d.quality for p, d in now.items()} == {
                p: d.quality for p, d in before.items()
            }
            assert await metadata.count_documents(scored_before=2027) > 0

            vectors.fail_on_upsert = None
            healed = await sync.run(KEY, TERM)
            assert healed.rescored == len(moving)
            assert not any("recency" in w for w in healed.warnings)
            after = await _stored(metadata, pmids)
            await _assert_chunks_carry_sql_totals(inner, backend.collection, after, sync)
            assert await metadata.count_documents(scored_before=2027) == 0
            await entrez.aclose()

    run(scenario())


def test_rebuild_with_rederive_counts_the_scores_again_and_doctor_s_drift_counts_them(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    pmids = fake.corpus.pmids()
    moving = _crossing(fake)

    async def scenario() -> None:
        clock = SteppingClock(IN_2026)
        async with backend.stores(clock) as (metadata, vectors):
            entrez = entrez_client(fake.base_url)
            sync = make_sync(entrez, metadata, vectors, embedder(), clock, backend.collection)
            await sync.run(KEY, TERM)
            before = await _stored(metadata, pmids)
            clock.advance(timedelta(days=3))
            maintenance = IndexMaintenance(metadata, sync.indexer, derive=sync.derive)

            drift = await maintenance.drift()
            assert drift.recency == len(pmids)  # every score was counted in 2026
            assert not drift.stale  # the rules did not change

            report = await maintenance.rebuild(rederive=True)
            assert report.rederived == 0  # no record changed: no new version
            assert report.rescored == len(pmids)  # every score now says 2027
            after = await _stored(metadata, pmids)
            assert {p for p, d in after.items() if d.quality.scored_in != 2027} == set()
            await _assert_chunks_carry_sql_totals(vectors, backend.collection, after, sync)
            changed = {p for p, d in after.items() if d.quality != before[p].quality}
            assert changed == set(pmids)  # scored_in moved for all
            moved = {p for p in pmids if after[p].quality.recency != before[p].quality.recency}
            assert moved == moving
            assert all(after[p].version == before[p].version for p in pmids)
            assert (await maintenance.drift()).recency == 0
            await entrez.aclose()

    run(scenario())

"""Neighbour smoothing through `SearchCorpus` on both store pairs: each of the best papers
moves by the share of the gap to its nearest neighbour, read from the stored chunk vectors.

The fake E-utilities over HTTP, SQLite + the embedded store (PostgreSQL + Weaviate in CI),
the deterministic embedder.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, date, datetime

import pytest

from biomcp.domain.neighbours import NEIGHBOUR_PAPERS, NEIGHBOUR_SHARE, neighbour_shifts
from biomcp.testing.eutils import FakeEutilsServer
from biomcp.usecases.search import SearchConfig, SearchCorpus, SearchHit
from tests.support.sync_harness import (
    BackendSpec,
    SteppingClock,
    embedder,
    entrez_client,
    make_corpus,
    make_sync,
    run,
)

pytestmark = pytest.mark.integration

NOW = datetime(2024, 7, 1, 12, tzinfo=UTC)
QUERY = "randomized trial outcomes in adults"
DEEP = 400  # deeper than the corpus: both rankings hold every chunk


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    corpus = make_corpus(60, date(2024, 1, 1), date(2024, 6, 30), seed=31)
    with FakeEutilsServer(corpus, warm=True) as server:
        yield server


def _papers(hits: list[SearchHit]) -> list[tuple[str, float]]:
    best: dict[str, float] = {}
    for hit in hits:
        best.setdefault(hit.doc_id, hit.score)
    return list(best.items())


def test_each_best_paper_moves_towards_its_nearest_neighbour(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    async def scenario() -> None:
        counting = embedder()
        entrez = entrez_client(fake.base_url)
        async with backend.stores(SteppingClock(NOW)) as (metadata, vectors):
            sync = make_sync(
                entrez, metadata, vectors, counting, SteppingClock(NOW), backend.collection
            )
            await sync.run("all_v1", "Journal Article[pt]")
            plain = SearchConfig(collection=backend.collection, neighbour_share=0.0)
            before = await SearchCorpus(vectors, counting, config=plain).ranked(QUERY, DEEP)
            smoothing = replace(plain, neighbour_share=NEIGHBOUR_SHARE)
            after = await SearchCorpus(vectors, counting, config=smoothing).ranked(QUERY, DEEP)

            papers = _papers(before)
            best = {doc for doc, _ in papers[:NEIGHBOUR_PAPERS]}
            ranked = [h for h in before if h.doc_id in best]
            stored = await vectors.fetch_chunks(backend.collection, [h.uuid for h in ranked])
            by_uuid = {c.uuid: c.vector for c in stored}
            chunk_vectors: dict[str, list[list[float]]] = {}
            for hit in ranked:
                chunk_vectors.setdefault(hit.doc_id, []).append(list(by_uuid[hit.uuid]))
            shifts = neighbour_shifts(papers, chunk_vectors)
            assert len(shifts) == min(NEIGHBOUR_PAPERS, len(papers)) > 2
            assert any(abs(s) > 1e-6 for s in shifts.values())

            old = {h.uuid: h.score for h in before}
            assert {h.uuid for h in after} == set(old)
            for hit in after:
                assert hit.score == pytest.approx(old[hit.uuid] + shifts.get(hit.doc_id, 0.0))
            assert [h.score for h in after] == sorted((h.score for h in after), reverse=True)
            assert [d for d, _ in _papers(after)] != [d for d, _ in papers]  # the order moved
        await entrez.aclose()

    run(scenario())

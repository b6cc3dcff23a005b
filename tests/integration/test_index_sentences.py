"""`verify` finds the chunks stored without their sentence vectors; `rebuild` adds them.

A corpus synced with sentence vectors off (or before they were kept) has chunks that the
best-sentence arm can only rank by their own vector. The fake E-utilities over HTTP, both
store pairs (SQLite + embedded; PostgreSQL + Weaviate in CI), the deterministic embedder.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime

import pytest

from biomcp.domain.chunking import chunk_record, sentence_units
from biomcp.testing.eutils import FakeEutilsServer
from biomcp.usecases.maintenance import IndexMaintenance
from tests.support.sync_harness import (
    BackendSpec,
    SteppingClock,
    embedder,
    entrez_client,
    make_corpus,
    make_sync,
    record_of,
    run,
)

pytestmark = pytest.mark.integration

N = 24
NOW = datetime(2024, 7, 1, 12, tzinfo=UTC)
KEY = "sentences_v1"
TERM = "Humans[mh]"


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    corpus = make_corpus(N, date(2024, 1, 1), date(2024, 6, 30), seed=31)
    with FakeEutilsServer(corpus, warm=True) as server:
        yield server


def test_verify_counts_chunks_without_sentence_vectors_and_rebuild_adds_them(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    async def scenario() -> None:
        clock = SteppingClock(NOW)
        counting = embedder()
        entrez = entrez_client(fake.base_url)
        async with backend.stores(clock) as (metadata, vectors):
            old = make_sync(
                entrez, metadata, vectors, counting, clock, backend.collection,
                sentence_vectors=False,
            )  # fmt: skip
            report = await old.run(KEY, TERM)
            assert report.inserted > 0
            pmids = await metadata.document_pmids("", 1_000)
            chunking = old.indexer.chunking
            with_units = {
                pmid: [
                    c.uuid
                    for c in chunk_record(record_of(fake.corpus, pmid), chunking)
                    if sentence_units(c.text)
                ]
                for pmid in pmids
            }
            expected = {p: uuids for p, uuids in with_units.items() if uuids}
            assert expected, "the fixture's chunks hold several sentences"

            current = make_sync(entrez, metadata, vectors, counting, clock, backend.collection)
            maintenance = IndexMaintenance(metadata, current.indexer)
            check = await maintenance.verify()
            assert check.ok
            assert check.chunks_missing == 0
            assert check.documents_without_sentences == len(expected)
            assert check.chunks_without_sentences == sum(len(u) for u in expected.values())
            assert check.as_dict()["chunks_without_sentences"] == check.chunks_without_sentences

            # With sentence vectors off, none are wanted: nothing to report.
            off = await IndexMaintenance(metadata, old.indexer).verify()
            assert (off.chunks_without_sentences, off.documents_without_sentences) == (0, 0)

            # A chunk missing altogether counts as missing, not as lacking sentences.
            gone_pmid, gone = next(iter(expected.items()))
            await vectors.delete_chunks(backend.collection, f"pmid:{gone_pmid}", keep=set())
            check = await maintenance.verify()
            assert check.chunks_missing >= len(gone)
            assert check.documents_without_sentences == len(expected) - 1

            rebuilt = await maintenance.rebuild()
            assert rebuilt.documents == len(pmids)
            check = await maintenance.verify()
            assert check.ok
            assert (check.chunks_without_sentences, check.documents_without_sentences) == (0, 0)
            every = [u for uuids in expected.values() for u in uuids]
            axis = [1.0] + [0.0] * (counting.dim - 1)
            scored = await vectors.sentence_scores(backend.collection, every, axis)
            assert set(scored) == set(every)
        await entrez.aclose()

    run(scenario())

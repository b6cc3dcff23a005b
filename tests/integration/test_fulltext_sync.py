"""A saved query that keeps full text (`biomcp.usecases.fulltext_sync`), end to end.

The fake E-utilities over HTTP serve synthetic PubMed records, some with PMC ids, and their
synthetic JATS (open access, restricted when the PMID ends in 1, withdrawn when it ends in 7);
both store pairs (SQLite + embedded; PostgreSQL + Weaviate in CI); the deterministic embedder.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from biomcp.adapters.entrez.ratelimit import RateLimiter
from biomcp.domain.chunking import chunk_record, sentence_units
from biomcp.domain.fulltext import PmcArticleSet
from biomcp.domain.fulltext_chunks import chunk_article
from biomcp.ports.entrez import EntrezUnavailableError
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer
from biomcp.testing.eutils.pmc import pmc_store
from biomcp.testing.eutils.synthetic import generate_articles
from biomcp.usecases.documents import GetDocument
from biomcp.usecases.fulltext_sync import FullTextConfig
from biomcp.usecases.search import SearchConfig, SearchCorpus
from biomcp.usecases.search_filters import with_source
from tests.support.sync_harness import (
    BackendSpec,
    FlakyEntrezClient,
    SteppingClock,
    embedder,
    entrez_client,
    expected_chunk_total,
    make_sync,
    run,
)

pytestmark = pytest.mark.integration

N = 30
START, END = date(2025, 1, 1), date(2025, 3, 31)
NOW = datetime(2025, 4, 1, 12, tzinfo=UTC)
KEY = "fulltext"
TERM = "Journal Article[pt]"


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(
            N, start=START, end=END, seed=11, pmid_start=31_000_000,
            revised_after_days=0, pmc_share=0.7,
        )
    )  # fmt: skip
    with FakeEutilsServer(corpus, warm=True) as server:
        yield server


def _expected(fake: FakeEutilsServer) -> dict[str, str]:
    """Each record's expected status, from the fake's rules (see the module docstring)."""
    wanted: dict[str, str] = {}
    for entry in fake.corpus.entries():
        record = entry.record
        assert record is not None
        assert "Journal Article" in record.publication_types  # TERM finds every record
        if not record.pmcid:
            wanted[record.pmid] = "not_in_pmc"
        elif record.pmid.endswith("1"):
            wanted[record.pmid] = "not_open_access"
        elif record.pmid.endswith("7"):
            wanted[record.pmid] = "withdrawn"
        else:
            wanted[record.pmid] = "available"
    return wanted


def _pmc_fetches(fake: FakeEutilsServer) -> int:
    return sum(
        1
        for e in fake.log
        if e.get("endpoint") == "efetch" and (e.get("params") or {}).get("db") == "pmc"
    )


class _PmcDown(FlakyEntrezClient):
    """A real HTTP client whose PMC requests fail while `down` is set."""

    down = False

    async def efetch_pmc(self, pmcids: Sequence[str]) -> PmcArticleSet:
        if self.down:
            raise EntrezUnavailableError("PMC is unreachable (test)")
        return await super().efetch_pmc(pmcids)


def test_a_saved_query_with_fulltext_indexes_open_access_articles_and_records_every_status(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    expected = _expected(fake)
    assert {"available", "not_in_pmc", "not_open_access"} <= set(expected.values())

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        counting = embedder()
        async with backend.stores(clock) as (metadata, vectors):
            entrez = entrez_client(fake.base_url)
            sync = make_sync(entrez, metadata, vectors, counting, clock, backend.collection)
            report = await sync.run(KEY, TERM, fulltext=True)
            assert report.checkpoint_advanced
            assert report.fulltext is not None
            states = await metadata.fulltext_states(list(expected))
            assert {p: s.status for p, s in states.items()} == expected
            available = [p for p, s in expected.items() if s == "available"]
            assert report.fulltext.indexed == len(available)
            assert all(states[p].chunks > 0 and states[p].content_hash for p in available)
            assert (await metadata.get_checkpoint(KEY)).fulltext is True

            search = SearchCorpus(
                vectors, counting, config=SearchConfig(collection=backend.collection),
                metadata=metadata,
            )  # fmt: skip
            full = await search.run("synthetic results", 50, filters=with_source(None, "fulltext"))
            assert full
            assert all(h.source == "fulltext" for h in full)
            assert {h.doc_id.removeprefix("pmid:") for h in full} <= set(available)
            assert all(h.section and h.chunk_id[0] in "ftgx" for h in full)
            plain = await search.run("synthetic results", 50, filters=with_source(None, "abstract"))
            assert plain
            assert all(h.source == "abstract" for h in plain)

            doc = await GetDocument(metadata).run(available[0], fulltext=[])
            assert doc["fulltext"]["status"] == "available"
            assert doc["fulltext"]["mode"] == "outline"
            assert any("Results" in s["title"] for s in doc["fulltext"]["sections"])
            shut = await GetDocument(metadata).run(
                next(p for p, s in expected.items() if s == "not_open_access")
            )
            assert shut["fulltext"]["status"] == "not_open_access"
            assert shut["fulltext"]["reason"]

            # The next sync remembers the choice; nothing is due, so PMC is not asked.
            requests, texts = _pmc_fetches(fake), counting.texts
            again = await sync.run(KEY, None)
            assert again.fulltext is not None
            assert (again.fulltext.checked, _pmc_fetches(fake)) == (0, requests)
            assert counting.texts == texts
            await entrez.aclose()

    run(scenario())


def test_a_revised_article_is_indexed_again_and_an_unchanged_one_costs_no_embedding(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    expected = _expected(fake)
    available = sorted(p for p, s in expected.items() if s == "available")

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        counting = embedder()
        async with backend.stores(clock) as (metadata, vectors):
            entrez = entrez_client(fake.base_url)
            sync = make_sync(entrez, metadata, vectors, counting, clock, backend.collection)
            await sync.run(KEY, TERM, fulltext=True)
            before = await metadata.fulltext_states(available)
            revised = available[0]
            record = await metadata.get_document(revised)
            assert record is not None
            assert record.record.pmcid
            pmc_store(fake.state).revise(record.record.pmcid)

            clock.advance(timedelta(days=31))  # past the recheck interval
            texts = counting.texts
            later = await sync.run(KEY, None)
            assert later.fulltext is not None
            assert later.fulltext.indexed == 1
            assert later.fulltext.unchanged == len(available) - 1
            after = await metadata.fulltext_states(available)
            assert after[revised].content_hash != before[revised].content_hash
            assert all(after[p].content_hash == before[p].content_hash for p in available[1:])
            assert all(after[p].checked_at > before[p].checked_at for p in available)
            # Only the revised record's chunks and their sentences reached the embedder (its
            # abstract's too: the product's embedding cache answers those, this test's
            # embedder has none).
            article = (await metadata.fulltext_articles([revised]))[revised]
            pieces = [
                *chunk_record(record.record, sync.chunking),
                *chunk_article(revised, article, sync.chunking, title=record.record.title),
            ]
            own = len({t for c in pieces for t in (c.text, *sentence_units(c.text))})
            assert after[revised].chunks < counting.texts - texts <= own
            await entrez.aclose()

    run(scenario())


def test_a_failed_fetch_is_retried_next_sync_without_holding_the_checkpoint(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    expected = _expected(fake)
    asked = [p for p, s in expected.items() if s != "not_in_pmc"]

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        async with backend.stores(clock) as (metadata, vectors):
            base = entrez_client(fake.base_url)
            entrez = _PmcDown(base.settings, limiter=RateLimiter(1000.0))
            await base.aclose()
            entrez.down = True
            sync = make_sync(entrez, metadata, vectors, embedder(), clock, backend.collection)
            first = await sync.run(KEY, TERM, fulltext=True)
            assert first.checkpoint_advanced
            assert first.fulltext is not None
            assert first.fulltext.statuses.get("failed") == len(asked)
            assert any("full text" in w for w in first.warnings)
            states = await metadata.fulltext_states(asked)
            assert {s.status for s in states.values()} == {"failed"}
            assert all(s.reason and "unreachable" in s.reason for s in states.values())

            entrez.down = False
            clock.advance(timedelta(hours=1))
            second = await sync.run(KEY, None)
            assert second.fulltext is not None
            assert second.fulltext.checked == len(asked)
            states = await metadata.fulltext_states(list(expected))
            assert {p: s.status for p, s in states.items()} == expected
            await entrez.aclose()

    run(scenario())


def test_turning_fulltext_off_stops_the_checks_and_keeps_what_is_indexed(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    async def scenario() -> None:
        clock = SteppingClock(NOW)
        async with backend.stores(clock) as (metadata, vectors):
            entrez = entrez_client(fake.base_url)
            sync = make_sync(entrez, metadata, vectors, embedder(), clock, backend.collection)
            await sync.run(KEY, TERM, fulltext=True)
            total = await vectors.count(backend.collection)
            clock.advance(timedelta(days=40))  # everything would be due again
            requests = _pmc_fetches(fake)
            off = await sync.run(KEY, None, fulltext=False)
            assert _pmc_fetches(fake) == requests
            assert off.fulltext is None
            assert (await metadata.get_checkpoint(KEY)).fulltext is False
            assert await vectors.count(backend.collection) == total
            await entrez.aclose()

    run(scenario())


def test_five_hundred_records_under_pmc_faults_store_each_article_once_and_settle(
    backend: BackendSpec, tmp_path: Path
) -> None:
    """500 synthetic records with PMC ids (9 in 10), one article over the size bound, and
    failures aimed at EFetch `db=pmc`: a batch that fails every retry leaves its records
    `failed`; the next sync fetches those alone; the one after asks PMC nothing and embeds
    nothing."""
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(
            500, start=START, end=END, seed=23, pmid_start=34_000_000,
            revised_after_days=0, pmc_share=0.9,
        )
    )  # fmt: skip
    big_pmid = max(  # the last: the failing batch is the first
        e.pmid
        for e in corpus.entries()
        if e.record is not None and e.record.pmcid and e.pmid[-1] not in "17"
    )

    async def scenario(fake: FakeEutilsServer) -> None:
        big = fake.corpus.get(big_pmid)
        assert big is not None
        assert big.record is not None
        assert big.record.pmcid
        pmc_store(fake.state).add_synthetic(big_pmid, big.record.pmcid, paragraph_chars=30_000)
        clock = SteppingClock(NOW)
        counting = embedder()
        async with backend.stores(clock) as (metadata, vectors):
            entrez = entrez_client(fake.base_url)
            retries = entrez.settings.max_retries
            fake.faults.sequence(["429", *["500"] * (retries + 1)], endpoint="efetch:pmc")
            sync = make_sync(
                entrez, metadata, vectors, counting, clock, backend.collection,
                fulltext=FullTextConfig(max_chars=60_000),
            )  # fmt: skip
            first = await sync.run(KEY, TERM, fulltext=True)
            assert first.fulltext is not None
            statuses = first.fulltext.statuses
            assert set(statuses) == {
                "available", "not_open_access", "not_in_pmc", "withdrawn", "too_large", "failed"
            }  # fmt: skip
            assert statuses["too_large"] == 1
            failed = statuses["failed"]
            assert 0 < failed <= FullTextConfig().batch_size
            assert sum(statuses.values()) == 500

            fetches = _pmc_fetches(fake)
            second = await sync.run(KEY, None)
            assert second.fulltext is not None
            assert second.fulltext.checked == failed  # only the failed ones were due
            assert _pmc_fetches(fake) - fetches == 1
            assert "failed" not in second.fulltext.statuses

            pmids = list(await metadata.records_of(KEY))
            states = await metadata.fulltext_states(pmids)
            docs = await metadata.get_documents(pmids)
            abstract_chunks = expected_chunk_total((d.record for d in docs.values()), sync.chunking)
            full_chunks = sum(s.chunks for s in states.values() if s.status == "available")
            assert full_chunks > 0
            assert await vectors.count(backend.collection) == abstract_chunks + full_chunks

            calls, fetches = counting.calls, _pmc_fetches(fake)
            clock.advance(timedelta(days=1))
            third = await sync.run(KEY, None)
            assert third.fulltext is not None
            assert third.fulltext.checked == 0
            assert (counting.calls, _pmc_fetches(fake)) == (calls, fetches)
            await entrez.aclose()

    with FakeEutilsServer(corpus, warm=True) as fake:
        run(scenario(fake))

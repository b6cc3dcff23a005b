"""SyncDelta end to end: the fake E-utilities over HTTP, real stores, the deterministic embedder.

Every scenario runs on both backend pairs: SQLite + the embedded vector store, and PostgreSQL +
Weaviate (skipped with the reason without `BIOMCP_TEST_POSTGRES_URL` / `BIOMCP_TEST_WEAVIATE_URL`,
failed under CI). What a term should match is computed from the parsed records (the oracle in
`tests.support.sync_harness.matching`), not by the fake's search engine.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from biomcp.domain.chunking import chunk_record
from biomcp.entrypoints.mcp.contract import SPEC_OUTPUTS, V11_OUTPUTS
from biomcp.testing.eutils import FakeEutilsServer
from biomcp.usecases.documents import GetDocument
from biomcp.usecases.payloads import iso_utc
from biomcp.usecases.search import SearchConfig, SearchCorpus
from biomcp.usecases.sync import SyncReport
from tests.support.sync_harness import (
    BackendSpec,
    SteppingClock,
    add_articles,
    backend_spec,
    chunk_uuids,
    embedder,
    entrez_client,
    expected_chunk_total,
    expected_distinct_texts,
    make_corpus,
    make_sync,
    matching,
    record_of,
    replace_abstract,
    revise,
    run,
)

pytestmark = pytest.mark.integration

N = 250
START, END = date(2024, 1, 1), date(2024, 6, 30)
NOW = datetime(2024, 7, 1, 12, tzinfo=UTC)
MESH = "Humans"
TERM = f"{MESH}[mh]"
KEY = "humans_v1"
#: An overlap reaching back past the corpus's first day: the replay covers the whole window.
WHOLE = (NOW.date() - START).days + 1


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    with FakeEutilsServer(make_corpus(N, START, END, seed=11), warm=True) as server:
        yield server


def _spec_projection(payload: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """The v1.0 fields of a v1.1 answer (what a v1.0 client reads)."""
    return {k: v for k, v in payload.items() if k in schema["properties"]}


def _check_report_payload(report: SyncReport) -> None:
    jsonschema.validate(report.as_payload(), SPEC_OUTPUTS["pubmed.sync_delta"])
    assert report.job_id.startswith("sync_")


def _esearch_windows(fake: FakeEutilsServer, datetype: str = "edat") -> list[tuple[str, str]]:
    """The date windows the sync's ESearches asked for: the Entrez-date window's (`edat`), or
    the revisions' since the last sync (`mdat`); not the retraction re-check's."""
    return [
        (entry["params"]["mindate"], entry["params"]["maxdate"])
        for entry in fake.log
        if entry["endpoint"] == "esearch"
        and entry["status"] == 200
        and entry["params"].get("datetype") == datetype
    ]


def test_first_sync_stores_every_match_and_an_immediate_replay_writes_nothing(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    expected = matching(fake.corpus, MESH)
    assert 0 < len(expected) < N  # the term selects: counting it means something
    records = [record_of(fake.corpus, pmid) for pmid in expected]
    max_edat = max(r.edat for r in records if r.edat is not None)

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        counting = embedder()
        entrez = entrez_client(fake.base_url)
        async with backend.stores(clock) as (metadata, vectors):
            sync = make_sync(entrez, metadata, vectors, counting, clock, backend.collection)
            first = await sync.run(KEY, TERM)
            _check_report_payload(first)
            assert (first.inserted, first.updated, first.skipped) == (len(expected), 0, 0)
            assert first.pmids_processed == first.pmids_found == len(expected)
            assert first.warnings == ()
            assert first.window_start is None  # no checkpoint, no initial_days: all history
            assert first.max_edat_seen == max_edat
            assert first.checkpoint == max_edat
            assert first.checkpoint_advanced
            assert (await metadata.get_checkpoint(KEY)).last_edat == max_edat

            chunks = expected_chunk_total(records, sync.chunking)
            assert first.texts_embedded == chunks
            # each distinct text embedded once (the synthetic corpus repeats a few chunks)
            assert counting.texts == expected_distinct_texts(records, sync.chunking)
            assert len({c.text for r in records for c in chunk_record(r, sync.chunking)}) < chunks
            assert first.chunks_written == vectors.chunks_upserted == chunks
            assert await vectors.count(backend.collection) == chunks
            assert await metadata.count_documents() == len(expected)
            stored = await metadata.get_documents(expected)
            assert set(stored) == set(expected)
            assert {(d.version, d.indexed_version) for d in stored.values()} == {(1, 1)}
            assert await metadata.documents_to_index(expected) == []

            counting.reset()
            vectors.reset()
            for overlap in (5, WHOLE):  # the default overlap, then the whole window again
                replay = await sync.run(KEY, TERM, overlap)
                _check_report_payload(replay)
                assert (replay.inserted, replay.updated) == (0, 0)
                assert replay.skipped == replay.pmids_processed > 0
                assert replay.texts_embedded == replay.chunks_written == 0
                assert not replay.checkpoint_advanced
                assert replay.checkpoint == max_edat
            assert replay.skipped == len(expected)
            assert counting.calls == 0, "a replay of an unchanged window embedded texts"
            assert vectors.writes == 0, "a replay of an unchanged window wrote vectors"
            assert await vectors.count(backend.collection) == chunks

            jobs = await metadata.list_jobs(KEY)
            assert [j.status for j in jobs] == ["succeeded"] * 3
            assert jobs[-1].inserted == len(expected)
        await entrez.aclose()

    run(scenario())


def test_a_part_of_the_term_pubmed_finds_nowhere_is_a_warning_of_the_widened_window(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    # PubMed leaves such a part out and searches the rest: ANDed, the window holds more than
    # the saved query asks for, and the report says so.
    expected = matching(fake.corpus, MESH)

    async def scenario() -> None:
        entrez = entrez_client(fake.base_url)
        with backend_spec("sqlite-embedded", tmp_path) as backend:
            async with backend.stores(SteppingClock(NOW)) as (metadata, vectors):
                for term, missing in (
                    (f"{TERM} AND zzqxnotaword", "PhraseNotFound"),
                    (f'{TERM} AND "zzqx notaphrase"', "QuotedPhraseNotFound"),
                ):
                    sync = make_sync(
                        entrez, metadata, vectors, embedder(), SteppingClock(NOW),
                        backend.collection,
                    )  # fmt: skip
                    report = await sync.run(f"widened_{missing}", term)
                    assert report.pmids_found == len(expected)
                    (warning,) = report.warnings
                    assert missing in warning
                    assert "zzqx" in warning
                    assert "searched without it" in warning
                    _check_report_payload(report)
        await entrez.aclose()

    run(scenario())


def test_revised_and_rewritten_records_are_updated_rechunked_and_reembedded(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    corpus = fake.corpus
    expected = matching(corpus, MESH)

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        counting = embedder()
        entrez = entrez_client(fake.base_url)
        async with backend.stores(clock) as (metadata, vectors):
            sync = make_sync(entrez, metadata, vectors, counting, clock, backend.collection)
            await sync.run(KEY, TERM)
            chunking = sync.chunking

            # A structured abstract (several chunks) is replaced by one unlabelled section
            # with a word no other record has: its old chunks must go.
            rewritten = next(
                p for p in expected if len(chunk_record(record_of(corpus, p), chunking)) >= 2
            )
            old_uuids = chunk_uuids(record_of(corpus, rewritten), chunking)
            replace_abstract(
                corpus,
                rewritten,
                "Zorblaxin lowered the event rate by 42% (95% CI 30 to 51) in 812 adults.",
            )
            new_uuids = chunk_uuids(record_of(corpus, rewritten), chunking)
            assert not old_uuids & new_uuids
            # Two others only get a later DateRevised (LR): same text, new version.
            revised = [p for p in expected if p != rewritten][:2]
            for pmid in revised:
                lr = record_of(corpus, pmid).lr
                assert lr is not None
                revise(corpus, pmid, lr.date() + timedelta(days=30))
            changed = [rewritten, *revised]
            changed_chunks = expected_chunk_total((record_of(corpus, p) for p in changed), chunking)

            clock.advance(timedelta(days=1))
            counting.reset()
            vectors.reset()
            report = await sync.run(KEY, TERM, WHOLE)
            _check_report_payload(report)
            assert (report.inserted, report.updated) == (0, 3)
            assert report.skipped == len(expected) - 3
            assert report.texts_embedded == changed_chunks
            changed_records = [record_of(corpus, p) for p in changed]
            assert counting.texts == expected_distinct_texts(changed_records, chunking)
            assert report.chunks_written == changed_chunks
            assert report.chunks_deleted == len(old_uuids)

            documents = GetDocument(metadata)
            for pmid in changed:
                payload = await documents.run(f"pmid:{pmid}")
                assert payload["version"] == 2
                assert payload["lr"] == iso_utc(record_of(corpus, pmid).lr)
                stored = await metadata.get_document(pmid)
                assert stored is not None
                assert stored.indexed_version == 2
            untouched = next(p for p in expected if p not in changed)
            assert (await documents.run(f"pmid:{untouched}"))["version"] == 1
            rewritten_doc = await documents.run(f"pmid:{rewritten}")
            assert "Zorblaxin" in rewritten_doc["abstract"]

            collection = backend.collection
            assert await vectors.existing_uuids(collection, old_uuids) == set()
            assert await vectors.existing_uuids(collection, new_uuids) == new_uuids
            current = [record_of(corpus, p) for p in expected]
            assert await vectors.count(collection) == expected_chunk_total(current, chunking)

            search = SearchCorpus(vectors, counting, config=SearchConfig(collection=collection))
            hits = await search.run("zorblaxin event rate", top_k=5)
            assert hits[0].doc_id == f"pmid:{rewritten}"
            assert hits[0].uuid in new_uuids
            assert hits[0].text is not None
            assert "Zorblaxin" in hits[0].text
            assert all(h.uuid not in old_uuids for h in hits)

            # And the new versions are final: replaying again changes nothing.
            counting.reset()
            vectors.reset()
            again = await sync.run(KEY, TERM, WHOLE)
            assert (again.inserted, again.updated) == (0, 0)
            assert counting.calls == vectors.writes == 0
        await entrez.aclose()

    run(scenario())


def test_a_later_window_picks_up_only_the_new_records(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    corpus = fake.corpus
    before = matching(corpus, MESH)

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        counting = embedder()
        entrez = entrez_client(fake.base_url)
        async with backend.stores(clock) as (metadata, vectors):
            sync = make_sync(entrez, metadata, vectors, counting, clock, backend.collection)
            first = await sync.run(KEY, TERM)
            checkpoint = first.checkpoint
            assert checkpoint is not None

            added = add_articles(
                corpus, 60, date(2024, 7, 10), date(2024, 7, 29), seed=99, pmid_start=31_000_000
            )
            new = [p for p in matching(corpus, MESH) if p in set(added)]
            assert 0 < len(new) < len(added)
            window_day = (checkpoint - timedelta(days=5)).date()
            overlap = matching(corpus, MESH, lo=window_day, hi=END)
            assert overlap  # the overlap re-reads some old records, which must be skipped
            new_records = [record_of(corpus, p) for p in new]

            clock.advance(timedelta(days=30))  # 2024-07-31
            counting.reset()
            fake.clear_log()
            later = await sync.run(KEY, TERM, 5)
            _check_report_payload(later)
            assert _esearch_windows(fake) == [
                (window_day.strftime("%Y/%m/%d"), date(2024, 7, 31).strftime("%Y/%m/%d"))
            ]
            # ...and the records revised since the first sync's scan (2024-07-01), less the
            # same overlap: none here (`test_sync_revisions.py` has some).
            assert _esearch_windows(fake, "mdat") == [("2024/06/26", "2024/07/31")]
            assert (later.inserted, later.updated) == (len(new), 0)
            assert later.skipped == len(overlap)
            assert later.pmids_processed == len(new) + len(overlap)
            assert later.texts_embedded == expected_chunk_total(new_records, sync.chunking)
            assert counting.texts == expected_distinct_texts(new_records, sync.chunking)
            newest = max(r.edat for r in new_records if r.edat is not None)
            assert later.checkpoint == newest
            assert later.checkpoint_advanced
            assert await metadata.count_documents() == len(before) + len(new)
            stored = await metadata.get_documents(new)
            assert {d.version for d in stored.values()} == {1}
            assert set(stored) == set(new)
        await entrez.aclose()

    run(scenario())


def test_a_first_sync_without_checkpoint_starts_initial_days_back(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    days = 30
    first_day = (NOW - timedelta(days=days)).date()  # 2024-06-01
    expected = matching(fake.corpus, MESH, lo=first_day, hi=NOW.date())
    assert 0 < len(expected) < len(matching(fake.corpus, MESH))

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        entrez = entrez_client(fake.base_url)
        async with backend.stores(clock) as (metadata, vectors):
            sync = make_sync(
                entrez, metadata, vectors, embedder(), clock, backend.collection, initial_days=days
            )
            report = await sync.run(KEY, TERM)
            assert report.window_start is not None
            assert abs(report.window_start - (NOW - timedelta(days=days))) < timedelta(seconds=1)
            assert _esearch_windows(fake) == [("2024/06/01", "2024/07/01")]
            assert report.inserted == len(expected)
            assert await metadata.count_documents() == len(expected)
            assert set(await metadata.get_documents(expected)) == set(expected)
        await entrez.aclose()

    run(scenario())


def test_search_hits_carry_ids_and_scores_and_resolve_to_spec_documents(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    corpus = fake.corpus
    expected = set(matching(corpus, MESH))

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        counting = embedder()
        entrez = entrez_client(fake.base_url)
        async with backend.stores(clock) as (metadata, vectors):
            sync = make_sync(entrez, metadata, vectors, counting, clock, backend.collection)
            await sync.run(KEY, TERM)
            search = SearchCorpus(
                vectors, counting, config=SearchConfig(collection=backend.collection)
            )
            hits = await search.run("metformin mortality in type 2 diabetes", top_k=10)
            assert len(hits) == 10
            results = [hit.as_payload() for hit in hits]
            jsonschema.validate({"results": results}, V11_OUTPUTS["rag.search"])
            item_schema = SPEC_OUTPUTS["rag.search"]["properties"]["results"]["items"]
            spec_results = [_spec_projection(r, item_schema) for r in results]
            jsonschema.validate({"results": spec_results}, SPEC_OUTPUTS["rag.search"])
            scores = [hit.score for hit in hits]
            assert scores == sorted(scores, reverse=True)
            assert any(hit.sim is not None and hit.bm25 is not None for hit in hits)
            assert all(hit.quality is not None for hit in hits)

            documents = GetDocument(metadata)
            for hit in hits:
                pmid = hit.doc_id.removeprefix("pmid:")
                assert pmid in expected
                record = record_of(corpus, pmid)
                assert hit.uuid in chunk_uuids(record, sync.chunking)
                payload = await documents.run(hit.doc_id)
                jsonschema.validate(payload, V11_OUTPUTS["rag.get"])
                jsonschema.validate(
                    _spec_projection(payload, SPEC_OUTPUTS["rag.get"]), SPEC_OUTPUTS["rag.get"]
                )
                assert payload["doc_id"] == hit.doc_id
                assert payload["title"] == record.title
                assert payload["pub_types"] == list(record.publication_types)
                assert payload["edat"] == iso_utc(record.edat)
                assert payload["version"] == 1
                assert payload["quality"]["total"] == hit.quality
        await entrez.aclose()

    run(scenario())


def test_a_corpus_of_another_model_is_refused_naming_the_command_that_re_embeds(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    """A corpus filled by the PyTorch int8 model, searched by the default ONNX embedder (or any
    other model): an EMBEDDINGS error naming `biomcp index rebuild --reset`, never a ranking of
    vectors from two spaces."""
    from biomcp.adapters.embeddings import HashingEmbedder
    from biomcp.entrypoints.errors import classify
    from biomcp.ports.vectors import EmbeddingMismatchError

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        entrez = entrez_client(fake.base_url)
        async with backend.stores(clock) as (metadata, vectors):
            sync = make_sync(entrez, metadata, vectors, embedder(), clock, backend.collection)
            await sync.run(KEY, TERM)
            config = SearchConfig(collection=backend.collection)
            other = HashingEmbedder(model_id="sentence-transformers/other+int8")
            with pytest.raises(EmbeddingMismatchError) as caught:
                await SearchCorpus(vectors, other, config=config).run("metformin", top_k=3)
            code, message, details = classify(caught.value)
            assert code == "EMBEDDINGS"
            assert "biomcp index rebuild --reset" in message
            assert details["requested"].startswith("sentence-transformers/other+int8")
            # The model that filled it still searches it.
            hits = await SearchCorpus(vectors, embedder(), config=config).run("metformin", top_k=3)
            assert hits
        await entrez.aclose()

    run(scenario())


def test_a_batch_is_embedded_while_the_next_is_stored_and_the_previous_written(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    """The sync's stages overlap: batch k is embedded while batch k+1 is fetched and stored,
    and written while batch k+1 is embedded. Each batch's embedding here waits until the next
    batch's records are being stored, and each batch's vector write until the next batch's
    embedding has begun: a sync whose stages ran one after the other would wait forever (and
    fail at the guard's timeout). The result is exactly that of a sync without the overlap."""
    from collections.abc import Sequence

    from biomcp.adapters.entrez.client import EntrezSettings, HttpEntrezClient
    from biomcp.adapters.entrez.ratelimit import RateLimiter
    from biomcp.ports.entrez import FetchResult
    from tests.support.sync_harness import FAST_RETRIES

    events: list[str] = []
    counts = {"fetch": 0, "store": 0, "embed": 0, "write": 0}
    changed = asyncio.Condition()

    async def happened(event: str) -> int:
        async with changed:
            counts[event] += 1
            events.append(f"{event} {counts[event]}")
            changed.notify_all()
            return counts[event]

    async def until(event: str, count: int, last: int) -> None:
        # The last batch has no next one to wait for.
        async with changed:
            await asyncio.wait_for(
                changed.wait_for(lambda: counts[event] >= min(count, last)), timeout=30
            )

    class Recording(HttpEntrezClient):
        async def efetch(self, pmids: Sequence[str]) -> FetchResult:
            await happened("fetch")
            return await super().efetch(pmids)

    class Passing:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    expected = matching(fake.corpus, MESH)
    batches = -(-len(expected) // 40)
    assert batches >= 3

    class Storing(Passing):
        async def upsert_documents(self, docs: Sequence[Any], *, held_by: str | None = None) -> Any:
            await happened("store")
            return await self.inner.upsert_documents(docs, held_by=held_by)

    class Embedding(Passing):
        async def embed(self, texts: Sequence[str]) -> list[list[float]]:
            k = await happened("embed")  # one call per batch: 40 records, < 256 chunks
            await until("store", k + 1, batches)
            return list(await self.inner.embed(texts))

    class Writing(Passing):
        async def upsert_chunks(self, collection: str, chunks: Sequence[Any]) -> Any:
            k = await happened("write")
            await until("embed", k + 1, batches)
            return await self.inner.upsert_chunks(collection, chunks)

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        settings = EntrezSettings(base_url=fake.base_url, **FAST_RETRIES)
        entrez = Recording(settings, limiter=RateLimiter(1000.0))
        with backend_spec("sqlite-embedded", tmp_path) as backend:
            async with backend.stores(clock) as (metadata, vectors):
                sync = make_sync(
                    entrez, Storing(metadata), Writing(vectors), Embedding(embedder()), clock,
                    backend.collection, batch_size=40,
                )  # fmt: skip
                report = await sync.run(KEY, TERM)
                assert report.pmids_processed == report.inserted == len(expected)
                assert report.checkpoint_advanced
                assert report.chunks_written == await vectors.count(backend.collection)
                documents = await metadata.get_documents(expected)
                assert {(d.version, d.indexed_version) for d in documents.values()} == {(1, 1)}
        await entrez.aclose()

    run(scenario())
    assert counts == {"fetch": batches, "store": batches, "embed": batches, "write": batches}
    # batch k+1 was fetched and stored before batch k's embedding ended, and embedded before
    # batch k was written
    for k in range(1, batches):
        assert events.index(f"store {k + 1}") < events.index(f"write {k}"), events

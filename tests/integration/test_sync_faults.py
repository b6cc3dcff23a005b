"""SyncDelta under failure: a flaky NCBI, a vector store that goes away mid-sync, two syncs of
one key at once (in one process and from two processes), and answers that are incomplete.

The promise under test (DESIGN.md, "one sync"): the checkpoint moves only when every record of
the window is stored and indexed, a failed run is recorded as failed, and the next run
completes what is missing without losing or duplicating anything.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from biomcp.adapters.sql import SqlMetadataStore, upgrade
from biomcp.ports.jobs import SyncJob
from biomcp.ports.vectors import SearchFilters, VectorStoreUnavailableError
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, FaultInjector
from biomcp.usecases.ranking import hybrid_search
from tests.support.services import postgres_url, weaviate_url
from tests.support.sql_databases import postgres_schema
from tests.support.sync_harness import (
    BackendSpec,
    CountingVectorStore,
    FlakyEntrezClient,
    SteppingClock,
    add_articles,
    backend_spec,
    chunk_uuids,
    embedder,
    entrez_client,
    expected_chunk_total,
    make_corpus,
    make_sync,
    matching,
    record_of,
    replace_abstract,
    revise,
    run,
)

pytestmark = pytest.mark.integration

N = 200
START, END = date(2024, 1, 1), date(2024, 6, 30)
NOW = datetime(2024, 7, 1, 12, tzinfo=UTC)
MESH = "Humans"
TERM = f"{MESH}[mh]"
KEY = "humans_v1"


@pytest.fixture
def sqlite_backend(tmp_path: Path) -> Iterator[BackendSpec]:
    with backend_spec("sqlite-embedded", tmp_path) as spec:
        yield spec


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    # Retry-After of 429 faults: 10 ms (the client caps its waits at 20 ms anyway).
    faults = FaultInjector(retry_after=0.01)
    with FakeEutilsServer(make_corpus(N, START, END, seed=23), faults=faults, warm=True) as s:
        yield s


def _disjoint(jobs: list[SyncJob]) -> None:
    """The jobs ran one after the other: each finished before the next started."""
    ordered = sorted(jobs, key=lambda j: j.started_at)
    for earlier, later in itertools.pairwise(ordered):
        assert earlier.finished_at is not None
        assert earlier.finished_at <= later.started_at, (
            f"jobs interleaved: {earlier.job_id} ran until {earlier.finished_at}, "
            f"{later.job_id} started at {later.started_at}"
        )


def _edats(fake: FakeEutilsServer, pmids: list[str]) -> datetime:
    return max(e for p in pmids if (e := record_of(fake.corpus, p).edat) is not None)


# --- a flaky NCBI ----------------------------------------------------------------------------


def test_random_429_5xx_and_truncated_answers_are_retried_until_every_record_is_stored(
    sqlite_backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    expected = matching(fake.corpus, MESH)
    kinds = ["429", "500", "503", "truncated"]
    fake.faults.random(0.35, kinds, seed=5)
    # One ESearch per window: make sure the enumeration meets faults too.
    fake.faults.sequence(["429", "truncated", "503"], endpoint="esearch")

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        counting = embedder()
        entrez = entrez_client(fake.base_url, fetch_batch_size=10)
        async with sqlite_backend.stores(clock) as (metadata, vectors):
            sync = make_sync(
                entrez,
                metadata,
                vectors,
                counting,
                clock,
                sqlite_backend.collection,
                batch_size=40,
            )
            report = await sync.run(KEY, TERM)
            assert report.warnings == ()
            assert report.inserted == len(expected)
            assert report.checkpoint == _edats(fake, expected)
            assert report.checkpoint_advanced
            assert set(await metadata.get_documents(expected)) == set(expected)
            assert await metadata.documents_to_index(expected) == []
            records = [record_of(fake.corpus, p) for p in expected]
            total = expected_chunk_total(records, sync.chunking)
            assert await vectors.count(sqlite_backend.collection) == total
            assert entrez.stats.retries == sum(1 for e in fake.log if e["fault"] is not None)
        await entrez.aclose()

    run(scenario())
    served = [e for e in fake.log if e["fault"] is not None]
    assert {e["fault"] for e in served} == set(kinds), "every fault kind was exercised"
    assert {e["endpoint"] for e in served} == {"esearch", "efetch"}


# --- the vector store goes away mid-sync ---------------------------------------------------


@pytest.mark.slow
def test_a_vector_store_failure_midway_keeps_the_checkpoint_and_the_next_run_completes(
    backend: BackendSpec, fake: FakeEutilsServer, tmp_path: Path
) -> None:
    corpus = fake.corpus

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        entrez = entrez_client(fake.base_url)
        async with backend.stores(clock) as (metadata, vectors):
            sync = make_sync(
                entrez, metadata, vectors, embedder(), clock, backend.collection, batch_size=25
            )
            first = await sync.run(KEY, TERM)
            checkpoint = first.checkpoint
            assert checkpoint is not None

            added = add_articles(
                corpus, 150, date(2024, 7, 2), date(2024, 7, 30), seed=41, pmid_start=32_000_000
            )
            new = [p for p in matching(corpus, MESH) if p in set(added)]
            clock.advance(timedelta(days=31))
            vectors.reset()
            # The 3rd batch's upsert: 2 batches indexed, the 3rd stored (and, as the stages
            # overlap, the batches after it stored too, or some of them).
            vectors.fail_on_upsert = 3
            with pytest.raises(VectorStoreUnavailableError, match="injected failure"):
                await sync.run(KEY, TERM)
            assert (await metadata.get_checkpoint(KEY)).last_edat == checkpoint
            jobs = await metadata.list_jobs(KEY)
            assert [j.status for j in jobs] == ["failed", "succeeded"]
            failed = jobs[0]
            assert failed.finished_at is not None
            assert failed.error is not None
            assert failed.error.startswith("VectorStoreUnavailableError")
            stored = await metadata.get_documents(new)
            behind = await metadata.documents_to_index(new)
            assert 0 < len(behind) < len(stored) <= len(new)  # a half-done sync, as intended

            vectors.fail_on_upsert = None
            again = await sync.run(KEY, TERM)
            assert again.warnings == ()
            assert again.updated == 0
            assert again.inserted == len(new) - len(stored)
            assert again.checkpoint == _edats(fake, new)
            assert again.checkpoint_advanced
            everything = matching(corpus, MESH)
            final = await metadata.get_documents(everything)
            assert set(final) == set(everything)
            assert {(d.version, d.indexed_version) for d in final.values()} == {(1, 1)}
            records = [record_of(corpus, p) for p in everything]
            uuids = set().union(*(chunk_uuids(r, sync.chunking) for r in records))
            assert await vectors.count(backend.collection) == len(uuids)
            assert await vectors.existing_uuids(backend.collection, uuids) == uuids
            jobs = await metadata.list_jobs(KEY)
            assert [j.status for j in jobs] == ["succeeded", "failed", "succeeded"]
            _disjoint(jobs)

        # A clean run of the same corpus in fresh stores indexes exactly as many chunks.
        with backend_spec("sqlite-embedded", tmp_path / "clean") as clean:
            clean_clock = SteppingClock(NOW + timedelta(days=31))
            async with clean.stores(clean_clock) as (metadata, vectors):
                reference = make_sync(
                    entrez, metadata, vectors, embedder(), clean_clock, clean.collection
                )
                report = await reference.run(KEY, TERM)
                assert report.inserted == len(everything)
                assert await vectors.count(clean.collection) == len(uuids)
        await entrez.aclose()

    run(scenario())


def test_a_lost_vectors_folder_is_refilled_by_the_next_sync_of_the_window(
    sqlite_backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    everything = matching(fake.corpus, MESH)
    records = [record_of(fake.corpus, p) for p in everything]

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        entrez = entrez_client(fake.base_url)
        counted = embedder()
        async with sqlite_backend.stores(clock) as (metadata, vectors):
            sync = make_sync(entrez, metadata, vectors, counted, clock, sqlite_backend.collection)
            await sync.run(KEY, TERM)
        assert sqlite_backend.vectors_dir is not None
        shutil.rmtree(sqlite_backend.vectors_dir)  # the vectors folder is lost

        async with sqlite_backend.stores(clock) as (metadata, vectors):
            sync = make_sync(entrez, metadata, vectors, counted, clock, sqlite_backend.collection)
            report = await sync.run(KEY, TERM, overlap_days=366)  # a window over every record
            assert report.skipped == len(everything)  # SQL had them all, unchanged
            assert any("missing from the vector store" in w for w in report.warnings)
            uuids = set().union(*(chunk_uuids(r, sync.chunking) for r in records))
            assert await vectors.count(sqlite_backend.collection) == len(uuids)
            assert await vectors.existing_uuids(sqlite_backend.collection, uuids) == uuids

            counted.reset()
            vectors.reset()
            again = await sync.run(KEY, TERM, overlap_days=366)  # nothing lost any more
            assert again.warnings == ()
            assert (counted.calls, vectors.writes) == (0, 0)
        await entrez.aclose()

    run(scenario())


# --- two syncs of one key at once ----------------------------------------------------------


def test_two_concurrent_syncs_of_one_key_in_one_process_never_interleave(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    expected = matching(fake.corpus, MESH)

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        entrez = entrez_client(fake.base_url)
        async with backend.stores(clock) as (metadata, vectors):
            # Two use-case instances (as two server replicas would hold), each with its own
            # metadata store on the same database, sharing the vector store.
            syncs = [
                make_sync(
                    entrez,
                    backend.metadata(clock),
                    vectors,
                    embedder(),
                    clock,
                    backend.collection,
                    batch_size=30,
                )
                for _ in range(2)
            ]
            reports = await asyncio.gather(*(s.run(KEY, TERM) for s in syncs))
            assert sum(r.inserted for r in reports) == len(expected)
            assert all(r.updated == 0 for r in reports)
            assert all(r.warnings == () for r in reports)
            jobs = await metadata.list_jobs(KEY)
            assert {j.job_id for j in jobs} == {r.job_id for r in reports}
            assert all(j.status == "succeeded" for j in jobs)
            _disjoint(jobs)

            assert await metadata.count_documents() == len(expected)
            assert (await metadata.get_checkpoint(KEY)).last_edat == _edats(fake, expected)
            records = [record_of(fake.corpus, p) for p in expected]
            total = expected_chunk_total(records, syncs[0].chunking)
            assert await vectors.count(backend.collection) == total
        await entrez.aclose()

    run(scenario())


_CHILD = """
import asyncio, json, sys, time
from datetime import UTC, datetime
from pathlib import Path

from biomcp.adapters.clock import SystemClock
from biomcp.adapters.embeddings import HashingEmbedder
from biomcp.adapters.entrez.client import EntrezSettings, HttpEntrezClient
from biomcp.adapters.entrez.ratelimit import RateLimiter
from biomcp.adapters.sql import SqlMetadataStore
from biomcp.adapters.vectors.weaviate_store import WeaviateVectorStore
from biomcp.usecases.sync import SyncConfig, SyncDelta

conf = json.loads(sys.argv[1])

async def main() -> None:
    metadata = SqlMetadataStore(conf["metadata_url"])
    vectors = WeaviateVectorStore(
        conf["weaviate_url"], grpc_port=conf["grpc_port"], corpus_collection=conf["collection"]
    )
    entrez = HttpEntrezClient(
        EntrezSettings(base_url=conf["base_url"]), limiter=RateLimiter(1000.0)
    )
    sync = SyncDelta(
        entrez, metadata, vectors, HashingEmbedder(max_tokens=256), clock=SystemClock(),
        config=SyncConfig(collection=conf["collection"], batch_size=20, lock_timeout_s=120),
    )
    await metadata.open()
    await vectors.collections()  # connected: what is left is the sync itself
    print("ready", flush=True)
    go = Path(conf["go"])
    while not go.exists():
        time.sleep(0.005)
    called_at = datetime.now(UTC).isoformat()
    report = await sync.run(conf["key"], conf["term"])
    print(json.dumps({"called_at": called_at, "job_id": report.job_id,
                      "inserted": report.inserted, "updated": report.updated}), flush=True)
    await entrez.aclose()
    await vectors.aclose()
    await metadata.aclose()

asyncio.run(main())
"""


@pytest.fixture
def shared_metadata_url() -> Iterator[str]:
    """A PostgreSQL schema two processes share (the SQLite flavour of the cross-process lock
    is covered by the metadata-store contract; the embedded vector store is one process's)."""
    with postgres_schema(postgres_url()) as url:
        upgrade(url)
        yield url


@pytest.mark.slow
def test_two_concurrent_syncs_of_one_key_from_two_processes_never_interleave(
    shared_metadata_url: str, tmp_path: Path
) -> None:
    """Two processes (as a cron sync next to a server) sync one key at the same moment. The
    vectors go to Weaviate: the embedded store belongs to one process by design."""
    from biomcp.adapters.vectors.weaviate_store import WeaviateVectorStore

    wv = weaviate_url()
    grpc_port = int(os.environ.get("BIOMCP_TEST_WEAVIATE_GRPC_PORT", "50051"))
    today = datetime.now(UTC).date()
    corpus = make_corpus(120, today - timedelta(days=60), today - timedelta(days=1), seed=77)
    expected = matching(corpus, MESH)
    collection = f"SyncP{os.urandom(6).hex()}"
    go = tmp_path / "go"
    conf = {
        "metadata_url": shared_metadata_url,
        "weaviate_url": wv,
        "grpc_port": grpc_port,
        "collection": collection,
        "key": KEY,
        "term": TERM,
        "go": str(go),
    }
    with FakeEutilsServer(corpus, warm=True) as server:
        conf["base_url"] = server.base_url
        children = [
            subprocess.Popen(  # noqa: S603 - our own interpreter and snippet
                [sys.executable, "-c", _CHILD, json.dumps(conf)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        try:
            for child in children:
                assert child.stdout is not None
                line = child.stdout.readline()
                assert line.strip() == "ready", line + (child.stderr.read() if child.stderr else "")
            go.touch()  # both start together
            outputs = [child.communicate(timeout=120) for child in children]
        finally:
            for child in children:
                if child.poll() is None:
                    child.kill()
                    child.wait()
    for child, (_, err) in zip(children, outputs, strict=True):
        assert child.returncode == 0, err
    reports = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert sum(r["inserted"] for r in reports) == len(expected)
    assert all(r["updated"] == 0 for r in reports)

    async def check() -> None:
        metadata = SqlMetadataStore(shared_metadata_url)
        vectors = WeaviateVectorStore(wv, grpc_port=grpc_port, corpus_collection=collection)
        try:
            jobs = await metadata.list_jobs(KEY)
            assert {j.job_id for j in jobs} == {r["job_id"] for r in reports}
            assert all(j.status == "succeeded" for j in jobs)
            _disjoint(jobs)
            # The second sync asked while the first held the key: the lock was contended.
            later = max(jobs, key=lambda j: j.started_at)
            earlier = min(jobs, key=lambda j: j.started_at)
            called = {r["job_id"]: datetime.fromisoformat(r["called_at"]) for r in reports}
            assert earlier.finished_at is not None
            assert called[later.job_id] < earlier.finished_at
            assert await metadata.count_documents() == len(expected)
            records = [record_of(corpus, p) for p in expected]
            chunking = make_sync(
                entrez_client(server.base_url),
                metadata,
                vectors,
                embedder(),
                SteppingClock(NOW),
                collection,
            ).chunking
            assert await vectors.count(collection) == expected_chunk_total(records, chunking)
        finally:
            await vectors.aclose()
            await metadata.aclose()

    try:
        run(check())
    finally:
        with httpx.Client(base_url=wv, timeout=30) as client:
            client.delete(f"/v1/schema/{collection}")


# --- answers that are incomplete -------------------------------------------------------------


def test_an_incomplete_enumeration_or_refused_chunks_hold_the_checkpoint(
    sqlite_backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    corpus = fake.corpus

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        entrez = entrez_client(fake.base_url, flaky=True)
        assert isinstance(entrez, FlakyEntrezClient)
        spec = sqlite_backend
        async with spec.stores(clock) as (metadata, vectors):
            sync = make_sync(entrez, metadata, vectors, embedder(), clock, spec.collection)
            checkpoint = (await sync.run(KEY, TERM)).checkpoint
            assert checkpoint is not None
            new = _add_july_articles(corpus)
            clock.advance(timedelta(days=21))

            # 1. The enumeration is incomplete: what was found is stored, the watermark stays.
            entrez.incomplete = True
            report = await sync.run(KEY, TERM)
            assert report.inserted == len(new)
            assert any("enumerated completely" in w for w in report.warnings)
            assert not report.checkpoint_advanced
            assert (await metadata.get_checkpoint(KEY)).last_edat == checkpoint
            assert (await metadata.list_jobs(KEY))[0].status == "succeeded"

            # 2. The vector store refuses the chunks of a revised document.
            entrez.incomplete = False
            refused = new[0]
            lr = record_of(corpus, refused).lr
            assert lr is not None
            revise(corpus, refused, lr.date() + timedelta(days=10))
            vectors.refuse_docs = {f"pmid:{refused}"}
            report = await sync.run(KEY, TERM)
            assert report.updated == 1
            assert any("refused" in w for w in report.warnings)
            assert not report.checkpoint_advanced
            assert (await metadata.get_checkpoint(KEY)).last_edat == checkpoint
            doc = await metadata.get_document(refused)
            assert doc is not None
            assert (doc.version, doc.indexed_version) == (2, 1)

            # 3. All is well again: everything indexed, the watermark moves to the newest.
            vectors.refuse_docs = set()
            report = await sync.run(KEY, TERM)
            assert report.warnings == ()
            assert (report.inserted, report.updated) == (0, 0)
            assert report.texts_embedded > 0  # the refused document, indexed at last
            assert report.checkpoint == _edats(fake, new)
            assert report.checkpoint_advanced
            everything = matching(corpus, MESH)
            assert await metadata.documents_to_index(everything) == []
            records = [record_of(corpus, p) for p in everything]
            total = expected_chunk_total(records, sync.chunking)
            assert await vectors.count(spec.collection) == total
        await entrez.aclose()

    run(scenario())


def _add_july_articles(corpus: FakeCorpus) -> list[str]:
    """40 articles added with Entrez dates in July 2024; the PMIDs of those TERM matches."""
    added = add_articles(
        corpus, 40, date(2024, 7, 2), date(2024, 7, 20), seed=5, pmid_start=33_000_000
    )
    return [p for p in matching(corpus, MESH) if p in set(added)]


@dataclass
class _July:
    """A store after KEY's first sync, with new July articles in the fake, 21 days later."""

    clock: SteppingClock
    metadata: Any
    vectors: Any
    sync: Any
    entrez: Any
    first: Any  # the first sync's report
    new: list[str]  # the new articles TERM matches


@asynccontextmanager
async def _july_after_a_first_sync(
    spec: BackendSpec, fake: FakeEutilsServer, **options: Any
) -> AsyncIterator[_July]:
    clock = SteppingClock(NOW)
    entrez = entrez_client(fake.base_url)
    try:
        async with spec.stores(clock) as (metadata, vectors):
            sync = make_sync(
                entrez, metadata, vectors, embedder(), clock, spec.collection, **options
            )
            first = await sync.run(KEY, TERM)
            new = _add_july_articles(fake.corpus)
            clock.advance(timedelta(days=21))
            yield _July(clock, metadata, vectors, sync, entrez, first, new)
    finally:
        fake.withhold([])
        await entrez.aclose()


def _fetched(fake: FakeEutilsServer) -> set[str]:
    """Every PMID the fake's EFetch was asked for since its log was last cleared."""
    asked: set[str] = set()
    for entry in fake.log:
        if entry["endpoint"] == "efetch":
            ids = entry["params"].get("id", "")
            for part in ids if isinstance(ids, list) else [ids]:
                asked.update(p for p in part.split(",") if p)
    return asked


def test_a_pmid_efetch_does_not_return_is_kept_pending_and_fetched_until_it_arrives(
    sqlite_backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    """PubMed now and then finds a PMID by ESearch that EFetch does not return yet. The sync
    keeps it pending and lets the checkpoint move on: holding the checkpoint for it made every
    later sync fetch a window that only grew."""
    corpus = fake.corpus
    spec = sqlite_backend

    async def scenario() -> None:
        async with _july_after_a_first_sync(spec, fake) as july:
            clock, metadata, vectors, sync = july.clock, july.metadata, july.vectors, july.sync
            new = july.new
            early, lost = new[0], new[-1]  # the oldest and the newest of the new ones
            received = [p for p in new if p not in (early, lost)]

            # 1. EFetch returns neither: the rest is stored, both are pending, the checkpoint
            #    moves to the newest record that arrived.
            fake.withhold({early, lost})
            report = await sync.run(KEY, TERM)
            assert report.inserted == len(new) - 2
            assert report.pending == tuple(sorted((early, lost)))
            [warning] = [w for w in report.warnings if "not returned by EFetch" in w]
            assert early in warning
            assert lost in warning
            assert "kept pending" in warning
            assert report.checkpoint_advanced
            assert report.checkpoint == _edats(fake, received)
            first = clock.now()
            pending = await metadata.pending_pmids(KEY)
            assert [(p.pmid, p.misses, p.first_missed_at) for p in pending] == [
                (early, 1, pending[0].first_missed_at),
                (lost, 1, pending[1].first_missed_at),
            ]
            assert all(p.first_missed_at <= first for p in pending)
            assert await metadata.get_document(early) is None

            # 2. A week later the oldest arrives. It lies before the new window (which starts
            #    5 days before the checkpoint): the sync asked for it because it was pending.
            clock.advance(timedelta(days=7))
            fake.withhold({lost})
            fake.clear_log()
            report = await sync.run(KEY, TERM)
            assert report.inserted == 1
            assert report.window_start is not None
            early_edat = record_of(corpus, early).edat
            assert early_edat is not None
            assert early_edat < report.window_start
            assert early in _fetched(fake)
            assert report.pending_arrived == (early,)
            assert report.pending == (lost,)
            [warning] = [w for w in report.warnings if "EFetch" in w]
            assert "1 pending PMIDs are still not returned" in warning
            assert lost in warning
            assert "missed by up to 2 syncs" in warning
            stored = await metadata.get_document(early)
            assert stored is not None
            assert stored.indexed_version == stored.version == 1
            [still] = await metadata.pending_pmids(KEY)
            assert (still.pmid, still.misses) == (lost, 2)

            # 3. The newest arrives too: nothing pending, no warning, the watermark catches up.
            fake.withhold([])
            report = await sync.run(KEY, TERM)
            assert report.inserted == 1
            assert report.warnings == ()
            assert (report.pending, report.pending_arrived) == ((), (lost,))
            assert await metadata.pending_pmids(KEY) == []
            assert report.checkpoint == _edats(fake, new)
            everything = matching(corpus, MESH)
            assert await metadata.documents_to_index(everything) == []
            records = [record_of(corpus, p) for p in everything]
            assert await vectors.count(spec.collection) == expected_chunk_total(
                records, sync.chunking
            )

            # 4. A replay fetches the window only: nothing pending is asked for.
            fake.clear_log()
            report = await sync.run(KEY, TERM)
            assert (report.inserted, report.updated, report.texts_embedded) == (0, 0, 0)
            assert early not in _fetched(fake)

    run(scenario())


def test_a_pending_pmid_pubmed_removes_is_pending_no_more(
    sqlite_backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    corpus = fake.corpus

    async def scenario() -> None:
        async with _july_after_a_first_sync(sqlite_backend, fake) as july:
            clock, metadata, sync, entrez = july.clock, july.metadata, july.sync, july.entrez
            kept, removed = july.new[0], july.new[1]
            fake.withhold({kept, removed})
            report = await sync.run(KEY, TERM)
            assert report.pending == (kept, removed)

            # PubMed deletes one: EFetch still returns neither, ESearch finds only the other.
            corpus.remove(removed)

            # While the ESearch that asks fails, nothing is taken for gone. The sync's first
            # ESearches (its window, the records revised since the last sync) are answered;
            # the next one, the lookup, fails every retry.
            retries = entrez.settings.max_retries
            answered = {"kind": "slow", "delay": 0}
            fake.faults.sequence([answered, answered, *["500"] * (retries + 1)], endpoint="esearch")
            clock.advance(timedelta(days=1))
            report = await sync.run(KEY, TERM)
            assert (report.pending, report.pending_gone) == ((kept, removed), ())
            assert any("could not ask PubMed whether the pending" in w for w in report.warnings)
            fake.faults.clear()

            clock.advance(timedelta(days=1))
            fake.clear_log()
            report = await sync.run(KEY, TERM)
            assert (report.pending, report.pending_gone) == ((kept,), (removed,))
            assert report.pending_arrived == ()
            [gone] = [w for w in report.warnings if "no longer in PubMed" in w]
            assert removed in gone
            [still] = [w for w in report.warnings if "still not returned" in w]
            assert kept in still
            assert removed not in still
            asked = [
                str(e["params"].get("term", "")) for e in fake.log if e["endpoint"] == "esearch"
            ]
            assert f"{kept}[uid] OR {removed}[uid]" in asked
            [left] = await metadata.pending_pmids(KEY)
            assert (left.pmid, left.misses) == (kept, 3)
            assert await metadata.get_document(removed) is None

    run(scenario())


def test_past_the_pending_limit_the_checkpoint_is_held_for_the_newly_missed(
    sqlite_backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    async def scenario() -> None:
        async with _july_after_a_first_sync(sqlite_backend, fake, max_pending=1) as july:
            metadata, sync, new = july.metadata, july.sync, july.new
            checkpoint = july.first.checkpoint

            fake.withhold(new[:2])
            report = await sync.run(KEY, TERM)
            assert report.inserted == len(new) - 2
            [warning] = [w for w in report.warnings if "EFetch" in w]
            assert "more than the 1 a query key keeps pending" in warning
            assert not report.checkpoint_advanced
            assert report.checkpoint == checkpoint
            assert await metadata.pending_pmids(KEY) == []

            fake.withhold([])
            report = await sync.run(KEY, TERM)
            assert report.inserted == 2
            assert report.warnings == ()
            assert report.checkpoint == _edats(fake, new)

    run(scenario())


# --- two keys sharing a document -------------------------------------------------------------


def test_syncs_of_two_keys_sharing_a_document_leave_the_newest_version_indexed(
    sqlite_backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    """Different keys may sync together (DESIGN.md); a PMID both queries match is revised
    twice while one key's sync is between reading the document and writing its chunks."""
    corpus = fake.corpus
    spec = sqlite_backend

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        entrez = entrez_client(fake.base_url)
        async with spec.stores(clock) as (metadata, vectors):
            sync_a = make_sync(entrez, metadata, vectors, embedder(), clock, spec.collection)
            other = CountingVectorStore(vectors.inner)  # same store, no hook
            sync_b = make_sync(
                entrez, spec.metadata(clock), other, embedder(), clock, spec.collection
            )
            await sync_a.run("key_a", TERM)
            shared = matching(corpus, MESH)[0]
            replace_abstract(corpus, shared, "Zorblaxin halved relapses in 300 adults.")

            started: list[asyncio.Task[Any]] = []

            async def meanwhile() -> None:
                # Key A is about to write the chunks of version 2: key B's sync stores version
                # 3 now, then waits for the index lock that key A holds.
                vectors.before_upsert = None
                replace_abstract(corpus, shared, "Quuxol halved relapses in 300 adults.")
                started.append(asyncio.create_task(sync_b.run("key_b", TERM)))
                for _ in range(400):
                    stored = await metadata.get_document(shared)
                    if stored is not None and stored.version == 3:
                        return
                    await asyncio.sleep(0.025)
                raise AssertionError("key B never stored version 3")

            vectors.before_upsert = meanwhile
            clock.advance(timedelta(days=1))
            await sync_a.run("key_a", TERM, (NOW.date() - START).days + 1)
            report = await started[0]
            assert report.updated == 1

            doc = await metadata.get_document(shared)
            assert doc is not None
            assert (doc.version, doc.indexed_version) == (3, 3)
            assert "Quuxol" in doc.record.abstract_text
            chunks = await hybrid_search(
                vectors,
                spec.collection,
                "halved relapses",
                None,
                limit=50,
                filters=SearchFilters(doc_ids=frozenset({f"pmid:{shared}"})),
            )
            texts = [hit.text or "" for hit in chunks]
            assert texts
            assert all("Zorblaxin" not in text for text in texts), texts
            assert any("Quuxol" in text for text in texts), texts
        await entrez.aclose()

    run(scenario())

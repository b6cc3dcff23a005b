"""The `VectorStore` contract run against `EmbeddedVectorStore`, plus the embedded adapter's own
edges: exact cosine for BM25-only hits, tokenization, the approximate path, repair at open of
missing or stale indexes, compaction, locking, and engine errors translated into the port's."""

from __future__ import annotations

import asyncio
import json
import math
import os
import shutil
import sqlite3
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest

from biomcp.adapters.vectors import EmbeddedVectorStore, StoreSettings, embedded_lexical
from biomcp.adapters.vectors.embedded_ann import AnnSettings, VectorIndex
from biomcp.adapters.vectors.embedded_lexical import LexicalIndex
from biomcp.adapters.vectors.embedded_rows import RowStore
from biomcp.ports.vectors import (
    ChunkRecord,
    CollectionNotFoundError,
    SearchFilters,
    VectorHit,
    VectorStore,
    VectorStoreError,
    VectorStoreUnavailableError,
)
from biomcp.usecases.ranking import hybrid_search
from tests.contract.vector_contract import StoreFactory, VectorStoreContract, chunk, unit_vector

pytestmark = pytest.mark.contract
T = TypeVar("T")


class TestEmbeddedVectorStoreContract(VectorStoreContract):
    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> StoreFactory:
        async def make() -> VectorStore:
            return EmbeddedVectorStore(tmp_path / "vectors")

        return make

    @pytest.fixture
    def dim(self) -> int:
        return 16


# --- the embedded adapter's own edges ------------------------------------------------------

DIM = 16
MODEL = "embedded-test-model"


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def _random_chunks(
    n: int, dim: int = DIM, *, seed: int = 0, prefix: str = "doc"
) -> list[ChunkRecord]:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, dim))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    words = ["metformin", "insulin", "statin", "aspirin", "stent", "sepsis", "il", "6", "2019"]
    return [
        chunk(
            f"{prefix}:{i // 3}",
            str(i % 3),
            " ".join(rng.choice(words, size=8)),
            vectors[i].tolist(),
            year=2000 + i % 20,
            quality_total=float(i % 10),
        )
        for i in range(n)
    ]


async def _store_with(
    path: Path, chunks: Sequence[ChunkRecord], **settings: Any
) -> EmbeddedVectorStore:
    store = EmbeddedVectorStore(path, StoreSettings(**settings) if settings else None)
    await store.ensure_schema("Chunks", dim=DIM, model_id=MODEL)
    report = await store.upsert_chunks("Chunks", chunks)
    assert report.errors == ()
    return store


def _consistent(counts: dict[str, int], rows: int) -> None:
    assert (counts["rows"], counts["lexical"], counts["vectors"]) == (rows, rows, rows)


def test_nothing_is_touched_before_the_first_call(tmp_path: Path) -> None:
    data_dir = tmp_path / "absent"
    store = EmbeddedVectorStore(data_dir)
    assert not data_dir.exists()
    assert run(store.collections()) == []
    assert not data_dir.exists()
    run(store.aclose())


def test_bm25_only_hits_carry_their_exact_cosine(tmp_path: Path) -> None:
    corpus = _random_chunks(60)
    by_uuid = {c.uuid: c for c in corpus}
    query = corpus[0].vector

    async def scenario() -> list[VectorHit]:
        store = await _store_with(tmp_path, corpus)
        try:
            return await hybrid_search(store, "Chunks", "metformin sepsis", query, alpha=0.0)
        finally:
            await store.aclose()

    hits = run(scenario())
    assert hits
    for hit in hits:
        assert hit.bm25 is not None
        assert hit.sim == pytest.approx(float(np.dot(query, by_uuid[hit.uuid].vector)), abs=1e-5)


def test_a_file_made_before_sentence_vectors_reads_none_and_gains_them(tmp_path: Path) -> None:
    corpus = _random_chunks(6)
    query = corpus[0].vector

    async def write_old() -> None:
        store = await _store_with(tmp_path, corpus)
        await store.aclose()

    run(write_old())
    rows = sqlite3.connect(tmp_path / "Chunks" / "rows.sqlite")
    rows.execute("DROP TABLE sentences")  # the layout before sentence vectors
    rows.commit()
    rows.close()

    async def scenario() -> tuple[dict[str, float], ChunkRecord, dict[str, float]]:
        store = EmbeddedVectorStore(tmp_path)
        try:
            before = await store.sentence_scores("Chunks", [c.uuid for c in corpus], query)
            (old,) = await store.fetch_chunks("Chunks", [corpus[1].uuid])
            with_sentences = replace(corpus[1], sentence_vectors=(query, corpus[2].vector))
            assert (await store.upsert_chunks("Chunks", [with_sentences])).errors == ()
            after = await store.sentence_scores("Chunks", [c.uuid for c in corpus], query)
            return before, old, after
        finally:
            await store.aclose()

    before, old, after = run(scenario())
    assert before == {}
    assert old.sentence_vectors == ()
    assert set(after) == {corpus[1].uuid}
    assert after[corpus[1].uuid] == pytest.approx(1.0, abs=2e-3)


def test_the_approximate_path_finds_the_exact_neighbours_and_honours_filters(
    tmp_path: Path,
) -> None:
    corpus = _random_chunks(3000)
    matrix = np.array([c.vector for c in corpus])
    years = np.array([c.year for c in corpus])
    queries = _random_chunks(20, seed=1)
    filters = SearchFilters(year_min=2010)

    async def scenario() -> tuple[list[list[VectorHit]], list[list[VectorHit]]]:
        # exact_max=0: every search goes through the HNSW graph.
        store = await _store_with(tmp_path, corpus, ann=AnnSettings(exact_max=0))
        try:
            plain = [
                await hybrid_search(store, "Chunks", "", q.vector, alpha=1.0, limit=10)
                for q in queries
            ]
            filtered = [
                await hybrid_search(
                    store, "Chunks", "", q.vector, alpha=1.0, limit=10, filters=filters
                )
                for q in queries
            ]
            return plain, filtered
        finally:
            await store.aclose()

    plain, filtered = run(scenario())
    found = total = 0
    for q, hits, hits_f in zip(queries, plain, filtered, strict=True):
        sims = matrix @ np.array(q.vector)
        exact = {corpus[i].uuid for i in np.argsort(-sims)[:10]}
        allowed = np.flatnonzero(years >= 2010)
        exact_f = {corpus[i].uuid for i in allowed[np.argsort(-sims[allowed])[:10]]}
        found += len(exact & {h.uuid for h in hits}) + len(exact_f & {h.uuid for h in hits_f})
        total += 20
        assert all((h.year or 0) >= 2010 for h in hits_f)
        for hit in hits:
            assert hit.sim == pytest.approx(float(sims[_index(corpus, hit.uuid)]), abs=1e-5)
    assert found / total >= 0.95


def _index(corpus: Sequence[ChunkRecord], uuid: str) -> int:
    return next(i for i, c in enumerate(corpus) if c.uuid == uuid)


def _searches(
    store: EmbeddedVectorStore, corpus: Sequence[ChunkRecord]
) -> Coroutine[Any, Any, list[object]]:
    """Vector orders, and the sets of BM25 matches (BM25 scores themselves depend on the
    index's history: deleted documents weigh in the statistics until segments merge)."""

    async def go() -> list[object]:
        out: list[object] = []
        for q in corpus[:5]:
            hits = await hybrid_search(store, "Chunks", "", q.vector, alpha=1.0)
            out.append([(h.uuid, round(h.score, 6)) for h in hits])
        for text in ("metformin", "stent sepsis", "2019"):
            hits = await hybrid_search(store, "Chunks", text, None, limit=400)
            out.append(sorted(h.uuid for h in hits))
        return out

    return go()


@pytest.mark.parametrize(
    "damage",
    [
        "lexical_missing",
        "lexical_generation_missing",
        "lexical_generation_garbage",
        "lexical_files_garbage",
        "vectors_missing",
        "vectors_garbage",
        "vectors_bytes_flipped",
        "both_stale",
    ],
)
def test_damaged_or_stale_indexes_are_repaired_at_open(tmp_path: Path, damage: str) -> None:
    corpus = _random_chunks(300)
    root = tmp_path / "Chunks"
    saved = tmp_path / "saved"

    async def build() -> list[object]:
        store = await _store_with(tmp_path, corpus[:200])
        await store.aclose()
        if damage == "both_stale":  # indexes as of the first write, rows as of the later ones
            shutil.copytree(root, saved, ignore=shutil.ignore_patterns("rows.sqlite*", "LOCK"))
        store = EmbeddedVectorStore(tmp_path)
        await store.upsert_chunks(
            "Chunks", [replace(c, text="stent " + c.text) for c in corpus[100:]]
        )
        await store.delete_chunks("Chunks", corpus[0].doc_id)
        try:
            return await _searches(store, corpus)
        finally:
            await store.aclose()

    before = run(build())
    if damage == "lexical_missing":
        shutil.rmtree(root / "lexical")
    elif damage == "lexical_generation_missing":
        (root / "lexical.json").unlink()
    elif damage == "lexical_generation_garbage":
        (root / "lexical.json").write_text("{not json")
    elif damage == "lexical_files_garbage":
        for path in (root / "lexical").iterdir():
            path.write_bytes(b"garbage")
    elif damage == "vectors_missing":
        for path in root.glob("vectors*"):
            path.unlink()
    elif damage == "vectors_garbage":
        for path in root.glob("vectors-*"):
            path.write_bytes(b"garbage")
    elif damage == "vectors_bytes_flipped":  # the header intact: faiss itself loads it
        snapshot = json.loads((root / "vectors.json").read_text())["index"]
        data = bytearray((root / snapshot).read_bytes())
        at = len(data) - 2048  # in the stored vectors, which faiss writes last
        data[at : at + 64] = bytes(b ^ 0xFF for b in data[at : at + 64])
        (root / snapshot).write_bytes(bytes(data))
    else:
        for name in ("lexical", "lexical.json", *[p.name for p in root.glob("vectors*")]):
            target = root / name
            shutil.rmtree(target) if target.is_dir() else target.unlink()
        for path in saved.iterdir():
            (shutil.copytree if path.is_dir() else shutil.copy)(path, root / path.name)

    async def reopen() -> tuple[list[object], dict[str, int]]:
        store = EmbeddedVectorStore(tmp_path)
        try:
            return await _searches(store, corpus), await store.index_counts("Chunks")
        finally:
            await store.aclose()

    after, counts = run(reopen())
    _consistent(counts, 297)
    assert after == before


def test_dead_slots_are_compacted_away(tmp_path: Path) -> None:
    corpus = _random_chunks(200)
    ann = AnnSettings(compact_min_dead=10, exact_max=0)
    moved = [replace(c, vector=unit_vector(DIM, seed=1000 + i)) for i, c in enumerate(corpus[:80])]

    async def scenario() -> tuple[dict[str, int], list[VectorHit], dict[str, int]]:
        store = await _store_with(tmp_path, corpus, ann=ann)
        await store.upsert_chunks("Chunks", moved)  # 80 dead slots: > a quarter of 280
        for doc in {c.doc_id for c in corpus[150:]}:
            await store.delete_chunks("Chunks", doc)
        counts = await store.index_counts("Chunks")
        hits = await hybrid_search(store, "Chunks", "", moved[5].vector, alpha=1.0, limit=3)
        await store.aclose()
        reopened = EmbeddedVectorStore(tmp_path, StoreSettings(ann=ann))
        try:
            return counts, hits, await reopened.index_counts("Chunks")
        finally:
            await reopened.aclose()

    counts, hits, reopened = run(scenario())
    alive = len(
        {c.uuid for c in corpus} - {c.uuid for c in corpus[150:] if c.doc_id != corpus[149].doc_id}
    )
    assert hits[0].uuid == moved[5].uuid
    assert hits[0].sim == pytest.approx(1.0, abs=1e-5)
    _consistent(counts, alive)
    _consistent(reopened, alive)


def test_two_stores_on_one_folder_both_read_and_see_each_others_writes(tmp_path: Path) -> None:
    corpus = _random_chunks(60)

    async def scenario() -> None:
        first = await _store_with(tmp_path, corpus[:20])
        second = EmbeddedVectorStore(tmp_path)
        try:
            assert await second.count("Chunks") == 20  # open while the first one is open
            await second.upsert_chunks("Chunks", corpus[20:40])
            # The first store follows on its next query: rows, BM25 and vectors alike.
            target = corpus[35]
            hits = await hybrid_search(first, "Chunks", target.text, target.vector, limit=1)
            assert [h.uuid for h in hits] == [target.uuid]
            _consistent(await first.index_counts("Chunks"), 40)
            await first.upsert_chunks("Chunks", corpus[40:])
            await second.delete_chunks("Chunks", corpus[0].doc_id)
            gone = {c.uuid for c in corpus if c.doc_id == corpus[0].doc_id}
            for store in (first, second):
                counts = await store.index_counts("Chunks")
                _consistent(counts, 60 - len(gone))
                found = await hybrid_search(
                    store, "Chunks", corpus[0].text, corpus[0].vector, limit=60
                )
                assert not {h.uuid for h in found} & gone
        finally:
            await first.aclose()
            await second.aclose()

    run(scenario())


def test_a_reader_buffers_what_others_write_then_adopts_their_snapshot_or_folds(
    tmp_path: Path,
) -> None:
    """Rows another store writes are searched exactly from the reader's fresh buffer (filters
    included) until the writer saves a newer snapshot, which the reader adopts; with no
    snapshot coming, a buffer past its bound is folded into the reader's graph."""
    corpus = _random_chunks(150)
    graph_only = AnnSettings(exact_max=10)  # the graph answers every unfiltered search

    async def found(store: EmbeddedVectorStore, target: ChunkRecord, **kw: Any) -> bool:
        hits = await hybrid_search(
            store, "Chunks", target.text, target.vector, limit=3, alpha=1.0, **kw
        )
        return target.uuid in [h.uuid for h in hits]

    async def scenario() -> None:
        writer = await _store_with(tmp_path, corpus[:60], snapshot_min_changes=40)
        reader = EmbeddedVectorStore(
            tmp_path, StoreSettings(ann=graph_only, snapshot_min_changes=10**6, fresh_max=30)
        )
        lazy = EmbeddedVectorStore(tmp_path, StoreSettings(snapshot_min_changes=10**6))
        try:
            first = await reader.index_counts("Chunks")
            assert first["vectors_fresh"] == 0
            snapshot = first["vectors_snapshot_generation"]
            assert snapshot == first["generation"]

            await writer.upsert_chunks("Chunks", corpus[60:80])  # 20 changes: no snapshot
            assert await found(reader, corpus[75])
            year = SearchFilters(year_min=corpus[75].year, year_max=corpus[75].year)
            assert await found(reader, corpus[75], filters=year)
            counts = await reader.index_counts("Chunks")
            assert (counts["vectors_fresh"], counts["vectors_snapshot_generation"]) == (
                20,
                snapshot,
            )
            _consistent(counts, 80)

            # A row of the reader's graph re-embedded by the writer: the old vector is gone.
            moved = replace(corpus[5], vector=corpus[140].vector)
            await writer.upsert_chunks("Chunks", [moved])
            assert not await found(reader, corpus[5])
            assert (await reader.index_counts("Chunks"))["vectors_fresh"] == 21

            await writer.upsert_chunks("Chunks", corpus[80:100])  # 41 changes: a snapshot
            counts = await reader.index_counts("Chunks")
            assert counts["vectors_fresh"] == 0
            assert counts["vectors_snapshot_generation"] == counts["generation"] > snapshot
            _consistent(counts, 100)
            assert await found(reader, corpus[95])
            assert await found(reader, corpus[75])
            assert not await found(reader, corpus[5])

            # Another writer that saves no snapshot: past 30 fresh rows, the reader folds them.
            adopted = counts["vectors_snapshot_generation"]
            await lazy.upsert_chunks("Chunks", corpus[100:135])
            counts = await reader.index_counts("Chunks")
            assert (counts["vectors_fresh"], counts["vectors_snapshot_generation"]) == (
                0,
                adopted,
            )
            _consistent(counts, 135)
            target = corpus[120]
            assert await found(reader, target)
            quality = SearchFilters(min_quality=target.quality_total, year_min=target.year)
            assert await found(reader, target, filters=quality)  # metadata survived the fold
        finally:
            for store in (writer, reader, lazy):
                await store.aclose()

    run(scenario())


def test_a_collection_dropped_by_another_store_is_gone_for_this_one_too(tmp_path: Path) -> None:
    corpus = _random_chunks(30)

    async def scenario() -> None:
        first = await _store_with(tmp_path, corpus[:20])
        second = EmbeddedVectorStore(tmp_path)
        try:
            assert await second.count("Chunks") == 20
            await first.drop_collection("Chunks")
            with pytest.raises(CollectionNotFoundError):
                await second.count("Chunks")
            await first.ensure_schema("Chunks", dim=DIM, model_id=MODEL)
            await first.upsert_chunks("Chunks", corpus[20:])
            assert await second.count("Chunks") == 10  # the new collection, not the old files
            hits = await hybrid_search(second, "Chunks", corpus[25].text, corpus[25].vector)
            assert {h.uuid for h in hits} <= {c.uuid for c in corpus[20:]}
        finally:
            await first.aclose()
            await second.aclose()

    run(scenario())


def test_a_writer_waits_its_turn_then_fails_naming_the_holder(tmp_path: Path) -> None:
    from biomcp.adapters.vectors.embedded_lock import WriterLock
    from biomcp.ports.vectors import VectorStoreBusyError

    corpus = _random_chunks(10)

    async def scenario() -> None:
        store = await _store_with(tmp_path, corpus[:5], write_wait_s=0.2)
        holder = WriterLock(tmp_path / "Chunks" / "LOCK", "Chunks", wait_s=0)
        assert holder.try_acquire()
        try:
            assert await store.count("Chunks") == 5  # reading needs no turn
            hits = await hybrid_search(store, "Chunks", corpus[0].text, corpus[0].vector)
            assert hits
            with pytest.raises(VectorStoreBusyError) as caught:
                await store.upsert_chunks("Chunks", corpus[5:])
            assert caught.value.holder is not None
            assert caught.value.holder["pid"] == os.getpid()
            assert str(tmp_path) not in str(caught.value)  # no path reaches a client
        finally:
            holder.release()
        await store.upsert_chunks("Chunks", corpus[5:])  # the turn is free again
        assert await store.count("Chunks") == 10
        await store.aclose()

    run(scenario())


def test_a_waiting_writer_gets_the_next_turn_from_a_writer_taking_turns_back_to_back(
    tmp_path: Path,
) -> None:
    """A writer taking turns one after another (a sync deleting document after document) must
    not starve a writer waiting for one: the waiter queues and gets in after a turn or two."""
    import threading
    import time

    from biomcp.adapters.vectors.embedded_lock import WriterLock

    path = tmp_path / "LOCK"
    busy, waiter = WriterLock(path, "c", wait_s=60), WriterLock(path, "c", wait_s=60)
    turns: list[str] = []
    started = threading.Event()

    def back_to_back() -> None:
        for _ in range(400):
            with busy.turn():
                turns.append("busy")
                started.set()
                time.sleep(0.002)  # holds the turn nearly all the time

    thread = threading.Thread(target=back_to_back)
    thread.start()
    try:
        started.wait()
        asked_at = len(turns)
        with waiter.turn():
            turns.append("waiter")
    finally:
        thread.join()
    got_at = turns.index("waiter")
    assert got_at - asked_at <= 40, f"waited {got_at - asked_at} of the other writer's turns"
    assert turns.count("busy") == 400


def test_a_closed_store_refuses_calls(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = await _store_with(tmp_path, _random_chunks(3))
        await store.aclose()
        await store.aclose()
        with pytest.raises(VectorStoreUnavailableError):
            await store.count("Chunks")
        with pytest.raises(VectorStoreUnavailableError):
            await store.collections()

    run(scenario())


def test_bad_arguments_raise_port_errors(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = await _store_with(tmp_path, _random_chunks(3))
        try:
            for name in ("", "../escape", "a/b", "x" * 200):
                with pytest.raises(VectorStoreError):
                    await store.ensure_schema(name, dim=DIM, model_id=MODEL)
                with pytest.raises(CollectionNotFoundError):
                    await store.count(name)
            with pytest.raises(VectorStoreError):
                await store.ensure_schema("Other", dim=0, model_id=MODEL)
            for alpha in (-0.1, 1.5, math.nan):
                with pytest.raises(VectorStoreError):
                    await hybrid_search(store, "Chunks", "x", unit_vector(DIM), alpha=alpha)
            assert await hybrid_search(store, "Chunks", "metformin", None, limit=0) == []
        finally:
            await store.aclose()

    run(scenario())


def test_engine_errors_never_escape(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = _random_chunks(30)

    async def scenario() -> None:
        store = await _store_with(tmp_path, corpus)
        try:
            with monkeypatch.context() as patch:
                patch.setattr(LexicalIndex, "search", _raise(ValueError("tantivy says no")))
                with pytest.raises(VectorStoreError) as info:
                    await hybrid_search(store, "Chunks", "metformin", None)
                assert isinstance(info.value.__cause__, ValueError)
            with monkeypatch.context() as patch:
                patch.setattr(VectorIndex, "search", _raise(RuntimeError("faiss says no")))
                with pytest.raises(VectorStoreError):
                    await hybrid_search(store, "Chunks", "metformin", unit_vector(DIM))
            with monkeypatch.context() as patch:
                patch.setattr(RowStore, "count", _raise(sqlite3.OperationalError("disk I/O error")))
                with pytest.raises(VectorStoreUnavailableError):
                    await store.count("Chunks")
            # A write that fails after the rows committed: reported, then repaired on next use.
            changed = [replace(c, text="sepsis " + c.text) for c in corpus[:10]]
            with monkeypatch.context() as patch:
                patch.setattr(
                    LexicalIndex, "commit", _raise(OSError(28, "No space left on device"))
                )
                with pytest.raises(VectorStoreUnavailableError):
                    await store.upsert_chunks("Chunks", changed)
            _consistent(await store.index_counts("Chunks"), 30)
            hits = await hybrid_search(store, "Chunks", "sepsis", None, limit=50)
            assert {c.uuid for c in changed} <= {h.uuid for h in hits}
            assert all("sepsis" in (h.text or "") for h in hits)
        finally:
            await store.aclose()

    run(scenario())


def test_unreadable_storage_is_unavailable(tmp_path: Path) -> None:
    async def scenario() -> None:
        blocked = tmp_path / "file"
        blocked.write_text("not a directory")
        store = EmbeddedVectorStore(blocked)
        with pytest.raises(VectorStoreUnavailableError):
            await store.ensure_schema("Chunks", dim=DIM, model_id=MODEL)
        await store.aclose()
        (tmp_path / "data" / "Chunks").mkdir(parents=True)
        (tmp_path / "data" / "Chunks" / "rows.sqlite").write_bytes(b"\x00garbage" * 512)
        store = EmbeddedVectorStore(tmp_path / "data")
        with pytest.raises(VectorStoreUnavailableError):
            await store.count("Chunks")
        assert await store.collections() == []
        await store.aclose()

    run(scenario())


def test_concurrent_searches_and_writes_stay_consistent(tmp_path: Path) -> None:
    corpus = _random_chunks(400)

    async def scenario() -> dict[str, int]:
        store = await _store_with(tmp_path, corpus[:100])
        try:
            writes = [
                store.upsert_chunks("Chunks", corpus[i : i + 50]) for i in range(100, 400, 50)
            ]
            reads = [
                hybrid_search(store, "Chunks", "metformin", c.vector, limit=5) for c in corpus[:30]
            ]
            results = await asyncio.gather(*writes, *reads)
            assert all(r for r in results[len(writes) :])
            return await store.index_counts("Chunks")
        finally:
            await store.aclose()

    _consistent(run(scenario()), 400)


def _raise(exc: Exception) -> Callable[..., Any]:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise exc

    return fail


def test_small_graph_inserts_take_one_thread_and_large_ones_take_all() -> None:
    """A sync's batch must not take both cores from the processes searching the folder."""
    import faiss

    from biomcp.adapters.vectors.embedded_ann import PARALLEL_ADD_MIN

    threads_seen: list[int] = []

    class Recording:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def add(self, vectors: np.ndarray) -> None:
            threads_seen.append(faiss.omp_get_max_threads())
            self.inner.add(vectors)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(2)  # per thread: as on any two-core machine
    try:
        index = VectorIndex(8, AnnSettings())
        index._index = Recording(index._index)
        rng = np.random.default_rng(3)
        for n in (10, PARALLEL_ADD_MIN):
            vectors = rng.standard_normal((n, 8)).astype(np.float32)
            start = index.alive_count
            index.upsert(
                list(range(start, start + n)), vectors, [("pmid:1", None, None, None, None)] * n
            )
        assert threads_seen == [1, 2]
        assert faiss.omp_get_max_threads() == 2  # restored after the small insert
    finally:
        faiss.omp_set_num_threads(before)


_FULLTEXT = (("source", frozenset({"fulltext"})),)


@pytest.mark.parametrize(
    ("term_set_max", "post_filter_max"),
    [(10**9, 10**9), (4, 10**9), (4, 1)],
    ids=["rids-in-the-query", "rids-checked-on-the-hits", "checked-then-asked-of-tantivy"],
)
@pytest.mark.parametrize(
    "filters",
    [
        SearchFilters(exclude_facets=_FULLTEXT),
        SearchFilters(facets=_FULLTEXT),
        SearchFilters(facets=_FULLTEXT, year_min=2018),
        SearchFilters(exclude_facets=_FULLTEXT, doc_ids=frozenset({"doc:1", "doc:40"})),
    ],
    ids=["abstract-only", "fulltext-only", "sparse-year", "two-docs"],
)
def test_keyword_hits_under_a_large_facet_filter_are_the_best_allowed_ones(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    term_set_max: int,
    post_filter_max: int,
    filters: SearchFilters,
) -> None:
    """However the lexical index applies a large row set, the keyword arm returns the top
    BM25 scores among the chunks the filters allow."""
    monkeypatch.setattr(embedded_lexical, "_TERM_SET_MAX", term_set_max)
    monkeypatch.setattr(embedded_lexical, "_POST_FILTER_MAX", post_filter_max)
    chunks = [
        replace(c, facets={"source": ("fulltext",)}) if i % 3 == 0 else c
        for i, c in enumerate(_random_chunks(300))
    ]
    text, k = "metformin sepsis", 10

    def allowed(c: ChunkRecord) -> bool:
        fulltext = "source" in c.facets
        wanted = not fulltext if filters.exclude_facets else fulltext
        year_ok = filters.year_min is None or (c.year or 0) >= filters.year_min
        return wanted and year_ok and (filters.doc_ids is None or c.doc_id in filters.doc_ids)

    async def scenario() -> None:
        store = await _store_with(tmp_path / "v", chunks)
        try:
            every = await store.search_arms(
                "Chunks", text, None, keyword_limit=1000, vector_limit=0
            )
            got = await store.search_arms(
                "Chunks", text, None, keyword_limit=k, vector_limit=0, filters=filters
            )
        finally:
            await store.aclose()
        by_uuid = {c.uuid: c for c in chunks}
        best = [h.score for h in every.keyword if allowed(by_uuid[h.uuid])][:k]
        assert best, "the corpus holds allowed matches"
        assert all(allowed(by_uuid[h.uuid]) for h in got.keyword)
        assert [h.score for h in got.keyword] == pytest.approx(best)

    run(scenario())

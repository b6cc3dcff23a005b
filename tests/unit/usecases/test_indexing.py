"""`ChunkIndexer` hands the embedder large calls: a sync batch's texts go in one."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import pytest

from biomcp.adapters.embeddings import HashingEmbedder
from biomcp.adapters.vectors import EmbeddedVectorStore
from biomcp.domain.chunking import sentence_units
from biomcp.ports.documents import StoredDocument
from biomcp.ports.vectors import ChunkRecord
from biomcp.usecases.indexing import EMBED_BATCH, ChunkIndexer
from biomcp.usecases.sync import SyncConfig
from tests.support.builders import make_record, stored_document
from tests.support.sync_harness import CountingEmbedder

pytestmark = pytest.mark.unit


def _docs(count: int) -> list[StoredDocument]:
    return [
        stored_document(
            make_record(pmid=str(10_000 + i), text=f"We studied {i + 20} patients."),
            indexed_version=0,
        )
        for i in range(count)
    ]


def _embedded(docs: list[StoredDocument], **batch: Any) -> tuple[CountingEmbedder, int, int]:
    """(the embedder, texts prepared, texts sent) for `docs` prepared and embedded."""
    counting = CountingEmbedder(HashingEmbedder(max_tokens=256))
    # prepare and embed_prepared never touch the vector store
    indexer = ChunkIndexer(cast(Any, None), counting, collection="C", **batch)
    prepared = indexer.prepare(docs)
    sent = asyncio.run(indexer.embed_prepared(prepared))
    assert set(prepared.vectors) == set(prepared.texts)
    return counting, len(prepared.texts), sent


def test_a_sync_batch_is_embedded_in_one_call() -> None:
    # a sync batch of 500 records has about 750 chunks and 2,300 sentences; each record here
    # has one chunk of two sentences: the shared title and its own
    assert SyncConfig().embed_batch_size == EMBED_BATCH >= 6 * SyncConfig().batch_size
    docs = _docs(600)
    counting, texts, sent = _embedded(docs)
    assert texts == sent == counting.texts == 600 + 600 + 1
    assert counting.calls == 1


def test_each_chunk_and_each_of_its_sentences_is_embedded_once() -> None:
    docs = _docs(3)
    counting = CountingEmbedder(HashingEmbedder(max_tokens=256))
    indexer = ChunkIndexer(cast(Any, None), counting, collection="C")
    prepared = indexer.prepare(docs)
    asyncio.run(indexer.embed_prepared(prepared))
    chunks = [c for doc in docs for c in prepared.chunks_of(doc) or ()]
    wanted = {text for c in chunks for text in (c.text, *sentence_units(c.text))}
    assert all(len(sentence_units(c.text)) == 2 for c in chunks)
    assert set(prepared.vectors) == wanted
    assert counting.texts == len(wanted) == 3 + 3 + 1


def test_calls_hold_at_most_the_embed_batch() -> None:
    counting, texts, sent = _embedded(_docs(250), embed_batch_size=100)
    assert texts == sent == counting.texts == 250 + 250 + 1
    assert counting.calls == 6


def test_without_sentence_vectors_only_the_chunks_are_embedded() -> None:
    counting, texts, sent = _embedded(_docs(40), sentence_vectors=False)
    assert texts == sent == counting.texts == 40


@pytest.mark.parametrize("sentences", [True, False])
def test_each_written_chunk_carries_its_sentences_vectors(tmp_path: Path, sentences: bool) -> None:
    docs = _docs(3)
    embedder = HashingEmbedder(max_tokens=256)

    async def scenario() -> list[ChunkRecord]:
        store = EmbeddedVectorStore(tmp_path)
        try:
            indexer = ChunkIndexer(store, embedder, collection="C", sentence_vectors=sentences)
            outcome = await indexer.index(docs)
            assert outcome.chunks_written == 3
            uuids = [c.uuid for c in indexer.prepare(docs).chunks_of(docs[0]) or ()]
            return await store.fetch_chunks("C", uuids)
        finally:
            await store.aclose()

    (written,) = asyncio.run(scenario())
    units = sentence_units(written.text)
    assert len(units) == 2
    if not sentences:
        assert written.sentence_vectors == ()
        return
    wanted = asyncio.run(embedder.embed(units))
    assert len(written.sentence_vectors) == 2
    for got, vector in zip(written.sentence_vectors, wanted, strict=True):
        assert list(got) == pytest.approx(vector, abs=2e-3)

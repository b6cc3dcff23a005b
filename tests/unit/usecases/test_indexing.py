"""`ChunkIndexer` hands the embedder large calls: a sync batch's texts go in one."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from biomcp.adapters.embeddings import HashingEmbedder
from biomcp.ports.documents import StoredDocument
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
    # a sync batch of 500 records has about 750 chunk texts; each record here has one
    assert SyncConfig().embed_batch_size == EMBED_BATCH >= 2 * SyncConfig().batch_size
    counting, texts, sent = _embedded(_docs(600))
    assert texts == sent == counting.texts == 600
    assert counting.calls == 1


def test_calls_hold_at_most_the_embed_batch() -> None:
    counting, texts, sent = _embedded(_docs(250), embed_batch_size=100)
    assert texts == sent == counting.texts == 250
    assert counting.calls == 3

"""The `VectorStore` contract run against a real Weaviate server (scripts/services.sh)."""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from typing import Any
from urllib.parse import urlsplit

import pytest
import weaviate

from biomcp.adapters.vectors import weaviate_store, weaviate_terms
from biomcp.adapters.vectors.lexical_analysis import index_terms
from biomcp.adapters.vectors.weaviate_objects import (
    TERMS,
    class_name,
    properties_of,
    schema_properties,
)
from biomcp.adapters.vectors.weaviate_store import WeaviateVectorStore
from biomcp.ports.vectors import ChunkRecord, VectorStore
from biomcp.testing.weaviate_older import make_older_collection
from biomcp.usecases.ranking import hybrid_search
from tests.contract.vector_contract import StoreFactory, VectorStoreContract, chunk, unit_vector
from tests.support.services import weaviate_url

pytestmark = [pytest.mark.contract, pytest.mark.integration]


def _grpc_port() -> int:
    return int(os.environ.get("BIOMCP_TEST_WEAVIATE_GRPC_PORT", "50051"))


class TestWeaviateVectorStoreContract(VectorStoreContract):
    @pytest.fixture
    def store_factory(self) -> StoreFactory:
        url = weaviate_url()

        async def make() -> VectorStore:
            return WeaviateVectorStore(url, grpc_port=_grpc_port())

        return make

    @pytest.fixture
    def dim(self) -> int:
        return 16


@pytest.mark.parametrize(
    ("name", "expected"),
    [("PubMedChunk", "PubMedChunk"), ("project:x-1", "Project_x_1"), ("9lives", "C9lives")],
)
def test_collection_names_become_valid_weaviate_class_names(name: str, expected: str) -> None:
    assert class_name(name) == expected


def _raw_client() -> Any:
    url = urlsplit(weaviate_url())
    return weaviate.connect_to_custom(
        http_host=url.hostname or "127.0.0.1", http_port=url.port or 8080, http_secure=False,
        grpc_host=url.hostname or "127.0.0.1", grpc_port=_grpc_port(), grpc_secure=False,
    )  # fmt: skip


def _older_class(name: str, corpus: list[ChunkRecord]) -> None:
    url = urlsplit(weaviate_url())
    host, port = url.hostname or "127.0.0.1", url.port or 8080
    make_older_collection(host, port, _grpc_port(), name, 8, corpus)


def test_a_collection_made_before_keyword_terms_gets_them_at_its_next_write(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An older class is searched by its words as written (and says so). The first write that
    opens it derives each chunk's terms from its stored text: nothing is re-embedded, and a
    later write finds nothing left to do. A process that read the older manifest searches the
    terms once it reads the manifest again (`_RECHECK_S` after)."""
    name = f"Older{uuid.uuid4().hex[:8]}"
    corpus = [
        chunk("tumor", "0", "Tumor growth slowed", unit_vector(8, seed=1)),
        chunk("other", "0", "Walking lowered blood pressure", unit_vector(8, seed=2)),
        chunk("third", "0", "Randomised tumours in mice", unit_vector(8, seed=3)),
    ]
    _older_class(name, corpus)

    async def found(store: WeaviateVectorStore, query: str) -> set[str]:
        return {h.doc_id for h in await hybrid_search(store, name, query, None, limit=10)}

    async def scenario() -> dict[str, Any]:
        older, writer, later = (
            WeaviateVectorStore(weaviate_url(), grpc_port=_grpc_port()) for _ in range(3)
        )
        try:
            seen: dict[str, Any] = {}
            seen["before"] = await found(older, "tumour"), await found(older, "Tumor")
            seen["problems_before"] = (await older.verify(name)).problems
            with caplog.at_level(logging.INFO, logger="biomcp.vectors"):
                await writer.ensure_schema(name, dim=8, model_id="m")
                seen["after"] = await found(writer, "tumour"), await found(writer, "randomized")
                seen["problems_after"] = (await writer.verify(name)).problems
                await later.ensure_schema(name, dim=8, model_id="m")
            monkeypatch.setattr(weaviate_store, "_RECHECK_S", 1e9)
            seen["older_unread"] = await found(older, "tumour")
            monkeypatch.setattr(weaviate_store, "_RECHECK_S", 0.0)
            seen["older_read_again"] = await found(older, "tumour")
            stored = await later.fetch_chunks(name, [c.uuid for c in corpus])
            seen["vectors"] = {r.uuid: r.vector for r in stored}
            return seen
        finally:
            await writer.drop_collection(name)
            for store in (older, writer, later):
                await store.aclose()

    seen = asyncio.run(scenario())
    assert seen["before"] == (set(), {"tumor"})
    (problem,) = seen["problems_before"]
    assert "before keyword terms" in problem
    assert seen["after"] == ({"tumor", "third"}, {"third"})
    assert seen["problems_after"] == ()
    assert (seen["older_unread"], seen["older_read_again"]) == (set(), {"tumor", "third"})
    for record in corpus:
        assert seen["vectors"][record.uuid] == pytest.approx(record.vector, abs=1e-6)
    derived = [r.getMessage() for r in caplog.records if "derived again" in r.getMessage()]
    assert len(derived) == 1  # the later writer found the manifest up to date
    assert "for 3 chunks" in derived[0]


def test_a_terms_walk_resumes_and_never_writes_back_a_chunk_deleted_meanwhile(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chunk that already has today's terms (a walk stopped after it) is not patched again.
    A chunk deleted after the walk read its page is not written back."""
    name = f"Older{uuid.uuid4().hex[:8]}"
    corpus = [
        chunk(f"doc{i}", "0", f"Tumour number {i} grew", unit_vector(8, seed=i)) for i in range(5)
    ]
    _older_class(name, corpus)
    client = _raw_client()
    handle = client.collections.use(name)
    handle.config.add_property(next(p for p in schema_properties() if p.name == TERMS))
    handle.data.update(uuid=corpus[0].uuid, properties=properties_of(corpus[0]))
    derive = index_terms
    calls: list[str] = []

    def deleting_on_first_call(text: str) -> list[str]:
        if not calls:  # the walk has read its page: another writer deletes a chunk now
            handle.data.delete_by_id(corpus[1].uuid)
        calls.append(text)
        return derive(text)

    monkeypatch.setattr(weaviate_terms, "index_terms", deleting_on_first_call)

    async def scenario() -> tuple[int, set[str]]:
        store = WeaviateVectorStore(weaviate_url(), grpc_port=_grpc_port())
        try:
            with caplog.at_level(logging.INFO, logger="biomcp.vectors"):
                await store.ensure_schema(name, dim=8, model_id="m")
            hits = await hybrid_search(store, name, "tumor", None, limit=10)
            return await store.count(name), {h.doc_id for h in hits}
        finally:
            await store.drop_collection(name)
            await store.aclose()

    try:
        count, found = asyncio.run(scenario())
    finally:
        client.close()
    assert len(calls) == 5  # the walk read every chunk, the deleted one included
    assert count == 4
    assert found == {"doc0", "doc2", "doc3", "doc4"}
    (derived,) = [r.getMessage() for r in caplog.records if "derived again" in r.getMessage()]
    assert "for 3 chunks" in derived  # not doc0 (already done), not doc1 (deleted)

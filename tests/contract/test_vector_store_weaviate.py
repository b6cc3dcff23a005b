"""The `VectorStore` contract run against a real Weaviate server (scripts/services.sh)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import uuid
from urllib.parse import urlsplit

import pytest
import weaviate
import weaviate.classes as wvc

from biomcp.adapters.vectors.weaviate_objects import VECTOR, class_name
from biomcp.adapters.vectors.weaviate_store import WeaviateVectorStore
from biomcp.ports.vectors import VectorStore
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


def test_a_collection_made_before_keyword_terms_is_searched_by_its_words_until_rebuilt(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An older bio-mcp made the class with `text` only and no analyzer in its manifest. Its
    keyword search keeps matching words as written (and says so) until the class is rebuilt."""
    name = f"Older{uuid.uuid4().hex[:8]}"
    url = urlsplit(weaviate_url())
    client = weaviate.connect_to_custom(
        http_host=url.hostname or "127.0.0.1", http_port=url.port or 8080, http_secure=False,
        grpc_host=url.hostname or "127.0.0.1", grpc_port=_grpc_port(), grpc_secure=False,
    )  # fmt: skip
    try:
        client.collections.create(
            name,
            description=json.dumps({"model_id": "m", "dim": 8, "collection": name}),
            vector_config=wvc.config.Configure.Vectors.self_provided(name=VECTOR),
            properties=[
                wvc.config.Property(
                    name="text",
                    data_type=wvc.config.DataType.TEXT,
                    tokenization=wvc.config.Tokenization.WORD,
                )
            ],
        )
    finally:
        client.close()
    corpus = [
        chunk("tumor", "0", "Tumor growth slowed", unit_vector(8, seed=1)),
        chunk("other", "0", "Walking lowered blood pressure", unit_vector(8, seed=2)),
    ]

    async def found(store: WeaviateVectorStore, query: str) -> set[str]:
        return {h.doc_id for h in await hybrid_search(store, name, query, None, limit=10)}

    async def scenario() -> tuple[set[str], set[str], set[str]]:
        store = WeaviateVectorStore(weaviate_url(), grpc_port=_grpc_port())
        try:
            with caplog.at_level(logging.WARNING, logger="biomcp.vectors"):
                await store.ensure_schema(name, dim=8, model_id="m")
                assert (await store.upsert_chunks(name, corpus)).errors == ()
                words = await found(store, "tumour"), await found(store, "Tumor")
            (problem,) = (await store.verify(name)).problems
            assert "before keyword terms" in problem
            await store.drop_collection(name)  # what `biomcp index rebuild --reset` does
            await store.ensure_schema(name, dim=8, model_id="m")
            assert (await store.upsert_chunks(name, corpus)).errors == ()
            assert (await store.verify(name)).problems == ()
            return *words, await found(store, "tumour")
        finally:
            await store.drop_collection(name)
            await store.aclose()

    british_before, as_written, british_after = asyncio.run(scenario())
    assert (british_before, as_written, british_after) == (set(), {"tumor"}, {"tumor"})
    warnings = [r.getMessage() for r in caplog.records if "before keyword terms" in r.getMessage()]
    assert len(warnings) == 1
    assert "rebuild" in warnings[0]

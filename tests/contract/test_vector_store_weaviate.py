"""The `VectorStore` contract run against a real Weaviate server (scripts/services.sh)."""

from __future__ import annotations

import os

import pytest

from biomcp.adapters.vectors.weaviate_objects import class_name
from biomcp.adapters.vectors.weaviate_store import WeaviateVectorStore
from biomcp.ports.vectors import VectorStore
from tests.contract.vector_contract import StoreFactory, VectorStoreContract
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

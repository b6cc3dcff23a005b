"""The Weaviate store against the test server: the schema asked once per process, a
collection dropped by another process seen again, and failover past a node that is down."""

from __future__ import annotations

import asyncio
import os
import socket
import uuid

import pytest

from biomcp.adapters.vectors.weaviate_cluster import ReplicationPolicy
from biomcp.adapters.vectors.weaviate_store import WeaviateVectorStore
from biomcp.ports.vectors import CollectionNotFoundError, VectorStoreError
from biomcp.usecases.ranking import hybrid_search
from tests.contract.vector_contract import chunk, unit_vector
from tests.support.services import weaviate_url

pytestmark = pytest.mark.integration

DIM = 8


def _grpc_port() -> int:
    return int(os.environ.get("BIOMCP_TEST_WEAVIATE_GRPC_PORT", "50051"))


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _store(url: str | None = None) -> WeaviateVectorStore:
    return WeaviateVectorStore(url or weaviate_url(), grpc_port=_grpc_port())


def _name() -> str:
    return f"Nodes{uuid.uuid4().hex[:10]}"


async def _filled(store: WeaviateVectorStore, name: str) -> None:
    await store.ensure_schema(name, dim=DIM, model_id="m")
    chunks = [
        chunk(f"d{i}", "c0", f"metformin trial {i}", unit_vector(DIM, seed=i)) for i in range(5)
    ]
    report = await store.upsert_chunks(name, chunks)
    assert report.errors == ()


def test_searches_read_the_schema_once_per_process() -> None:
    async def scenario() -> None:
        store, name = _store(), _name()
        try:
            await _filled(store, name)
            reads = store.schema_reads
            for seed in range(10):
                assert await hybrid_search(store, name, "metformin", unit_vector(DIM, seed=seed))
            assert store.schema_reads == reads
            fresh = _store()  # another process: asks once, then remembers
            await hybrid_search(fresh, name, "metformin", None)
            await hybrid_search(fresh, name, "metformin", None)
            assert fresh.schema_reads == 1
            await fresh.aclose()
        finally:
            await store.drop_collection(name)
            await store.aclose()

    asyncio.run(scenario())


def test_a_collection_dropped_by_another_process_is_not_found_then_found_again() -> None:
    async def scenario() -> None:
        mine, other, name = _store(), _store(), _name()
        try:
            await _filled(mine, name)
            assert await hybrid_search(mine, name, "metformin", None)
            await other.drop_collection(name)
            with pytest.raises(CollectionNotFoundError):
                await hybrid_search(mine, name, "metformin", None)
            await other.ensure_schema(name, dim=DIM, model_id="m")
            fresh = chunk("new", "c0", "dapagliflozin", unit_vector(DIM, seed=9))
            await other.upsert_chunks(name, [fresh])
            hits = await hybrid_search(mine, name, "dapagliflozin", None)
            assert [hit.doc_id for hit in hits] == ["new"]
        finally:
            await other.drop_collection(name)
            await mine.aclose()
            await other.aclose()

    asyncio.run(scenario())


def test_a_node_that_is_down_is_passed_over_for_the_next() -> None:
    async def scenario() -> None:
        down = f"http://127.0.0.1:{_closed_port()}?grpc_port={_closed_port()}"
        store, name = _store(f"{down},{weaviate_url()}?grpc_port={_grpc_port()}"), _name()
        try:
            await _filled(store, name)
            hits = await hybrid_search(store, name, "metformin", None)
            assert len(hits) == 5
        finally:
            await store.drop_collection(name)
            await store.aclose()

    asyncio.run(scenario())


def test_a_policy_above_the_node_count_is_a_clear_error() -> None:
    async def scenario() -> None:
        store = WeaviateVectorStore(
            weaviate_url(), grpc_port=_grpc_port(), replication=ReplicationPolicy(factor=3)
        )
        try:
            with pytest.raises(VectorStoreError, match=r"(?i)replica|node|factor"):
                await store.ensure_schema(_name(), dim=DIM, model_id="m")
        finally:
            await store.aclose()

    asyncio.run(scenario())

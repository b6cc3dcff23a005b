"""What the stack's stores hold, read by the test's own process: the records of a saved query
in PostgreSQL, the chunks their records make, and what the Weaviate nodes have of them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import httpx

from biomcp.adapters.vectors.weaviate_cluster import ReplicationPolicy
from biomcp.adapters.vectors.weaviate_store import WeaviateVectorStore
from biomcp.domain.chunking import chunk_record
from biomcp.entrypoints.services import build_services
from biomcp.entrypoints.settings import Settings
from tests.cluster.stack import Stack, node_url
from tests.support.weaviate_cluster import Node

__all__ = ["Stored", "lacking_on", "read_repair", "stored"]

COLLECTION = "PubMedChunk"


class Stored:
    """A saved query's PMIDs and, per doc id, the chunk uuids its record makes; with the
    chunks per doc id the cluster holds, across the whole collection."""

    def __init__(
        self, pmids: list[str], expected: dict[str, set[str]], held: Counter[str], total: int
    ) -> None:
        self.pmids = pmids
        self.expected = expected
        self.held = held
        self.total = total

    @property
    def uuids(self) -> set[str]:
        return set().union(*self.expected.values())

    def chunks_per_doc(self) -> tuple[dict[str, int], dict[str, int]]:
        """(the chunks each of the query's docs should have, those the cluster holds)."""
        wanted = {doc_id: len(uuids) for doc_id, uuids in self.expected.items()}
        return wanted, {doc_id: self.held[doc_id] for doc_id in wanted}


def _settings(stack: Stack) -> Settings:
    return Settings(
        _env_file=None,
        biomcp_data_dir=Path(stack.root / "checker"),
        biomcp_database_url=stack.database,
        biomcp_vector_backend="weaviate",
        weaviate_url=stack.weaviate_urls,
        weaviate_replication_factor=3,
        biomcp_embeddings="deterministic",
    )


async def stored(stack: Stack, query_key: str) -> Stored:
    """The records `query_key` holds, the chunks they make, and the chunks per doc id the
    cluster holds (every chunk of the collection read once, in uuid order)."""
    services = build_services(_settings(stack))
    try:
        pmids = await services.metadata.records_of(query_key)
        documents = await services.metadata.get_documents(pmids)
        chunking = services.sync.chunking
        expected: dict[str, set[str]] = {}
        for document in documents.values():
            chunks = chunk_record(document.record, chunking)
            expected[document.record.doc_id] = {chunk.uuid for chunk in chunks}
        held: Counter[str] = Counter()
        after: str | None = None
        while page := await services.vectors.page_chunks(COLLECTION, after=after, limit=500):
            held.update(chunk.doc_id for chunk in page)
            after = page[-1].uuid
        return Stored(sorted(pmids), expected, held, sum(held.values()))
    finally:
        await services.aclose()


async def lacking_on(node: Node, uuids: set[str]) -> set[str]:
    """Those of `uuids` `node` itself does not answer for (read consistency ONE)."""
    store = WeaviateVectorStore(
        node_url(node), replication=ReplicationPolicy(factor=3, read_consistency="ONE")
    )
    try:
        return uuids - await store.existing_uuids(COLLECTION, uuids)
    finally:
        await store.aclose()


async def read_repair(node: Node, uuids: set[str]) -> int:
    """Reads each of `uuids` through `node` at consistency ALL, one by one: Weaviate then
    repairs a replica that lacks the object from those that hold it. Returns how many were
    found (a uuid no replica holds stays missing)."""
    found = 0
    async with httpx.AsyncClient(base_url=node.url, timeout=30) as client:
        for uuid in sorted(uuids):
            response = await client.get(
                f"/v1/objects/{COLLECTION}/{uuid}", params={"consistency_level": "ALL"}
            )
            found += response.status_code == 200
    return found

"""`rag_search`'s filters by evidence tier, publication year and quality, and the year and
journal of every hit (contract v1.1, additive): the tool through an in-process MCP client, a
corpus synced from the fake E-utilities over HTTP (SQLite + the embedded store, the
deterministic embedder)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client

from biomcp.entrypoints.mcp.contract import V11_OUTPUTS
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.services import Services
from biomcp.testing.eutils import FakeEutilsServer
from tests.support.mcp_inprocess import call_json, serve, test_settings
from tests.support.sync_harness import make_corpus

pytestmark = pytest.mark.integration

TERM = "Journal Article[pt]"
QUERY = "randomized trial outcomes in adults"


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    corpus = make_corpus(80, date(2019, 1, 1), date(2024, 12, 31), seed=31)
    with FakeEutilsServer(corpus, warm=True) as server:
        yield server


def test_rag_search_filters_by_tier_year_and_quality_and_names_year_and_journal(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, report = await call_json(
            client, "pubmed_sync_delta", {"query_key": "all_v1", "term": TERM}
        )
        assert not error, report
        stored = await services.metadata.get_documents(await services.metadata.document_pmids())
        docs: dict[str, Any] = {}
        for pmid in stored:
            error, doc = await call_json(client, "rag_get", {"doc_id": f"pmid:{pmid}"})
            assert not error, doc
            docs[f"pmid:{pmid}"] = doc

        schema = {t.name: t for t in (await client.list_tools()).tools}["rag_search"].input_schema
        props = schema["properties"]
        assert props["evidence_type"]["items"]["enum"] == [
            "clinical",
            "preclinical",
            "basic",
            "other",
        ]
        assert {"year_min", "year_max", "min_quality"} <= props.keys()

        # every hit names its paper's year and journal, as rag_get has them
        error, everything = await call_json(client, "rag_search", {"query": QUERY, "top_k": 100})
        assert not error, everything
        jsonschema.validate(everything, V11_OUTPUTS["rag.search"])
        for hit in everything["results"]:
            doc = docs[hit["doc_id"]]
            assert hit["year"] == int(doc["pdat"][:4])
            assert hit["journal"] == doc["journal"]

        def passes(doc: dict[str, Any]) -> bool:
            return (
                doc["evidence_type"] == "clinical"
                and 2021 <= int(doc["pdat"][:4]) <= 2023
                and doc["quality"]["total"] >= 6
            )

        wanted = {doc_id for doc_id, doc in docs.items() if passes(doc)}
        unfiltered = {hit["doc_id"] for hit in everything["results"]}
        assert wanted
        assert unfiltered - wanted  # the filters leave something out

        arguments = {
            "query": QUERY,
            "top_k": 100,
            "evidence_type": ["clinical"],
            "year_min": 2021,
            "year_max": 2023,
            "min_quality": 6,
        }
        error, found = await call_json(client, "rag_search", arguments)
        assert not error, found
        jsonschema.validate(found, V11_OUTPUTS["rag.search"])
        got = {hit["doc_id"] for hit in found["results"]}
        assert got == wanted
        for hit in found["results"]:
            assert hit["evidence_type"] == "clinical"
            assert 2021 <= hit["year"] <= 2023
            assert hit["quality"] >= 6

        for bad in (
            {"year_min": 2024, "year_max": 2020},
            {"year_min": 1500},
            {"evidence_type": ["human"]},
            {"min_quality": 11},
        ):
            error, refused = await call_json(client, "rag_search", {"query": QUERY, **bad})
            assert error, bad
            assert refused["error"]["code"] == "VALIDATION", refused
        error, still = await call_json(client, "rag_search", {"query": QUERY, "top_k": 3})
        assert not error, still  # the server keeps serving

    serve(test_settings(tmp_path, fake.base_url), body)


def test_rag_search_within_a_saved_query_and_an_unknown_one_named(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    """`query_key`: only the records that saved query synced; a key holding none is a
    NOT_FOUND naming the keys that do, and the server keeps serving."""

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        for key, term in (("all_v1", TERM), ("rct_v1", "Randomized Controlled Trial[pt]")):
            error, report = await call_json(
                client, "pubmed_sync_delta", {"query_key": key, "term": term}
            )
            assert not error, report
        trials = {f"pmid:{p}" for p in await services.metadata.records_of("rct_v1")}
        everything = {f"pmid:{p}" for p in await services.metadata.records_of("all_v1")}
        assert trials
        assert everything - trials

        schema = {t.name: t for t in (await client.list_tools()).tools}["rag_search"].input_schema
        assert schema["properties"]["query_key"]["type"] == "string"
        error, found = await call_json(
            client, "rag_search", {"query": QUERY, "top_k": 100, "query_key": "rct_v1"}
        )
        assert not error, found
        jsonschema.validate(found, V11_OUTPUTS["rag.search"])
        assert found["results"]
        assert {hit["doc_id"] for hit in found["results"]} <= trials

        error, unknown = await call_json(
            client, "rag_search", {"query": QUERY, "query_key": "rct_v2"}
        )
        assert error
        assert unknown["error"]["code"] == "NOT_FOUND", unknown
        assert "all_v1, rct_v1" in unknown["error"]["message"]
        error, still = await call_json(client, "rag_search", {"query": QUERY, "top_k": 3})
        assert not error, still

    serve(test_settings(tmp_path, fake.base_url), body)

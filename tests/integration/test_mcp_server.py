"""The corpus tools and resources through an in-process MCP client (`mcp.Client(server)`).

The server is built by the same factory `biomcp serve` uses, on real adapters (SQLite, the
embedded vector store, the deterministic embedder) and the fake E-utilities over HTTP. Input
schemas are checked against the JSON Schemas printed in spec 01 itself (read from
../shared/spec; skipped when that folder is absent); every answer is checked against the
declared output schema, and against the spec's v1.0 schema with additive fields allowed.
"""

from __future__ import annotations

import copy
import json
import re
import socket
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.shared.exceptions import MCPError

from biomcp.entrypoints.mcp.contract import SPEC_INPUTS, SPEC_OUTPUTS, V10_OUTPUTS, V11_OUTPUTS
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.mcp.tools.corpus.schemas import TOOL_INPUTS
from biomcp.entrypoints.services import Services
from biomcp.entrypoints.settings import Settings
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from tests.support.mcp_inprocess import assert_envelope, serve, test_settings
from tests.support.mcp_inprocess import call_structured as call
from tests.support.spec01 import PORTABLE, spec_schemas

pytestmark = pytest.mark.integration

#: Tools of wave 2 outside the specs, portable name -> dotted name.
WAVE2 = {"corpus_sync_status": "corpus.sync_status", "corpus_overview": "corpus.overview"}
#: The project tools of spec 02 (one name: spec 02's names are already portable).
PROJECT = {"store_chunks", "find_chunks", "query_hybrid", "inspect_collection", "list_projects"}
#: the `search` / `fetch` pair for ChatGPT-style clients (same names in every mode)
PAIR = {"search", "fetch"}
#: The live PubMed tools, portable name -> spec-mode name: spec 04's, then the later lookups
#: (outside spec 04; their spec-mode names follow its camelCase).
LIVE = {
    "pubmed_search_articles": "searchPubMedArticles",
    "pubmed_fetch_article_details": "fetchArticleDetails",
    "pubmed_article_relationships": "getArticleRelationships",
    "pubmed_fetch_fulltext": "fetchFullText",
    "pubmed_convert_ids": "convertArticleIds",
    "pubmed_lookup_citation": "lookupCitations",
    "pubmed_lookup_mesh": "lookupMesh",
    "pubmed_format_citations": "formatCitations",
}
SPEC_ERROR_CODES = {
    "RATE_LIMIT",
    "UPSTREAM",
    "VALIDATION",
    "NOT_FOUND",
    "INVARIANT_FAILURE",
    "STORE",
    "EMBEDDINGS",
    "WEAVIATE",
    "ENTREZ",
    "UNKNOWN",
}


# --- the spec's own schemas ------------------------------------------------------------------


def _open(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with every `additionalProperties: false` lifted (v1.0 read by a v1.1 server)."""
    relaxed = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("additionalProperties") is False:
                del node["additionalProperties"]
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(relaxed)
    return relaxed


# --- fixtures --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    today = date.today()
    xml = generate_articles(150, start=today - timedelta(days=60), end=today, seed=7)
    with FakeEutilsServer(FakeCorpus.from_xml_bytes(xml)) as server:
        yield server


def _settings(tmp_path: Path, fake: FakeEutilsServer, **overrides: Any) -> Settings:
    # every toolset, so that every tool is listed (the default toolsets: test_tool_catalogue)
    values = {"biomcp_toolsets": "all", **overrides}
    return test_settings(tmp_path / "data", fake.base_url, **values)


# --- schemas ---------------------------------------------------------------------------------


def test_the_servers_input_schemas_are_the_specs_verbatim() -> None:
    spec = spec_schemas()
    for name in SPEC_INPUTS:
        assert SPEC_INPUTS[name] == spec[name]["request"], name
        assert SPEC_OUTPUTS[name] == spec[name]["response"], name


def test_v11_outputs_only_add_fields_to_the_spec() -> None:
    def properties_of(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        yield "", schema
        for key, value in schema.get("properties", {}).items():
            for path, node in properties_of(value):
                yield f"{key}.{path}", node
        if "items" in schema:
            for path, node in properties_of(schema["items"]):
                yield f"[].{path}", node

    def kind(node: dict[str, Any]) -> Any:
        return node.get("type", node.get("anyOf"))  # nullable values are `anyOf` branches

    # V10_OUTPUTS is spec 01's outputs respelled portably (test_tool_catalogue holds it so).
    for name, v10 in V10_OUTPUTS.items():
        v11 = dict(properties_of(V11_OUTPUTS[name]))
        for path, node in properties_of(v10):
            assert path in v11, (name, path)
            assert kind(v11[path]) == kind(node), (name, path)
            assert set(node.get("required", ())) <= set(v11[path].get("required", ()))


def test_tools_are_listed_with_the_spec_schemas_annotations_and_output_schemas(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    spec = spec_schemas()

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(listed) == set(PORTABLE.values()) | set(LIVE) | set(WAVE2) | PROJECT | PAIR
        for spec_name, portable in PORTABLE.items():
            tool = listed[portable]
            assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", tool.name)
            # spec 01's request with bounds added (test_tool_catalogue compares the two)
            assert tool.input_schema == TOOL_INPUTS[spec_name]
            assert tool.input_schema["required"] == spec[spec_name]["request"]["required"]
            assert tool.output_schema == V11_OUTPUTS[spec_name]
            Draft202012Validator.check_schema(tool.output_schema)
            assert tool.description
            assert tool.annotations is not None
        assert listed["rag_search"].annotations.read_only_hint is True  # type: ignore[union-attr]
        assert listed["rag_get"].annotations.read_only_hint is True  # type: ignore[union-attr]
        sync = listed["pubmed_sync_delta"].annotations
        assert sync is not None
        assert sync.idempotent_hint is True
        assert not sync.read_only_hint

    serve(_settings(tmp_path, fake), body)


def test_the_spec_names_setting_exposes_the_dotted_names(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == set(PORTABLE) | set(LIVE.values()) | set(WAVE2.values()) | PROJECT | PAIR
        error, answer = await call(client, "corpus.checkpoint.get", {"query_key": "k"})
        assert not error
        assert answer == {"query_key": "k", "last_edat": None}

    serve(_settings(tmp_path, fake, biomcp_tool_names="spec"), body)


def test_read_only_mode_hides_the_writing_tools(tmp_path: Path, fake: FakeEutilsServer) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        names = {tool.name for tool in (await client.list_tools()).tools}
        readers = {"rag_search", "rag_get", "corpus_checkpoint_get"} | set(LIVE) | set(WAVE2)
        assert names == readers | (PROJECT - {"store_chunks"}) | PAIR
        with pytest.raises(MCPError) as raised:  # an unknown tool: a protocol error
            await client.call_tool("pubmed_sync_delta", {"query_key": "k", "term": "x"})
        assert raised.value.code == -32602
        assert "Unknown tool: 'pubmed_sync_delta'" in raised.value.message

    serve(_settings(tmp_path, fake, biomcp_read_only=True), body)


# --- calls -----------------------------------------------------------------------------------


def test_every_tool_answers_in_its_schema_and_the_resource_matches_rag_get(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    spec = spec_schemas()
    expected = len(fake.corpus)

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        def check(name: str, answer: Any) -> None:
            Draft202012Validator(V11_OUTPUTS[name]).validate(answer)
            Draft202012Validator(_open(spec[name]["response"])).validate(answer)

        error, report = await call(
            client, "pubmed_sync_delta", {"query_key": "all", "term": "humans[mh] OR animals[mh]"}
        )
        assert not error, report
        check("pubmed.sync_delta", report)
        Draft202012Validator(spec["pubmed.sync_delta"]["response"]).validate(report)
        assert report["inserted"] == expected
        assert report["pmids_processed"] == expected
        assert report["job_id"].startswith("sync_")

        error, again = await call(
            client, "pubmed_sync_delta", {"query_key": "all", "term": "humans[mh] OR animals[mh]"}
        )
        assert not error
        assert again["inserted"] == 0
        assert again["updated"] == 0

        error, found = await call(client, "rag_search", {"query": "randomized trial", "top_k": 5})
        assert not error, found
        check("rag.search", found)
        results = found["results"]
        assert 1 <= len(results) <= 5
        assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)
        assert all(
            r["evidence_type"] in {"clinical", "preclinical", "basic", "other"} for r in results
        )

        error, unbiased = await call(
            client, "rag_search", {"query": "randomized trial", "top_k": 5, "quality_bias": False}
        )
        assert not error
        assert all(r["score"] <= 1.0 + 1e-9 for r in unbiased["results"])  # fused, not reranked

        doc_id = results[0]["doc_id"]
        error, document = await call(client, "rag_get", {"doc_id": doc_id})
        assert not error
        check("rag.get", document)
        assert document["doc_id"] == doc_id
        assert document["version"] == 1

        pmid = doc_id.removeprefix("pmid:")
        read = await client.read_resource(f"resource://pubmed/paper/{pmid}")
        contents = read.contents[0]
        assert contents.mime_type == "application/json"
        assert json.loads(contents.text) == document  # type: ignore[union-attr]

        error, checkpoint = await call(client, "corpus_checkpoint_get", {"query_key": "all"})
        assert not error
        check("corpus.checkpoint.get", checkpoint)
        assert checkpoint["last_edat"] is not None

        error, moved = await call(
            client,
            "corpus_checkpoint_set",
            {"query_key": "all", "last_edat": "2020-01-02T03:04:05Z"},
        )
        assert not error
        check("corpus.checkpoint.set", moved)
        assert moved["ok"] is True
        assert moved["previous_edat"] == checkpoint["last_edat"]
        error, checkpoint = await call(client, "corpus_checkpoint_get", {"query_key": "all"})
        assert checkpoint["last_edat"] == "2020-01-02T03:04:05Z"
        audit = await services.saved_queries.audit("all")
        assert audit[-1].moved_backward
        assert audit[-1].actor == "mcp"

    serve(_settings(tmp_path, fake), body)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("rag_search", {}),
        ("rag_search", {"query": ""}),
        ("rag_search", {"query": "x", "top_k": 0}),
        ("rag_search", {"query": "x", "top_k": 101}),
        ("rag_search", {"query": "x", "quality_bias": "yes"}),
        ("rag_search", {"query": "x", "extra": 1}),
        ("rag_get", {"doc_id": "12345"}),
        ("rag_get", {"doc_id": "pmid:12a"}),
        ("pubmed_sync_delta", {"query_key": "k"}),
        ("pubmed_sync_delta", {"query_key": "k", "term": "x", "overlap_days": -1}),
        ("pubmed_sync_delta", {"query_key": "", "term": "x"}),
        ("corpus_checkpoint_get", {"query_key": 3.5}),  # 3 would be read as "3"
        ("corpus_checkpoint_set", {"query_key": "k", "last_edat": "yesterday"}),
        ("corpus_checkpoint_set", {"query_key": "k", "last_edat": "2999-01-01T00:00:00Z"}),
        ("corpus_checkpoint_set", {"query_key": "k"}),
    ],
)
def test_bad_arguments_give_the_validation_envelope_and_the_server_keeps_serving(
    tmp_path: Path, fake: FakeEutilsServer, tool: str, arguments: dict[str, Any]
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, answer = await call(client, tool, arguments)
        assert error
        assert_envelope(answer, "VALIDATION")
        assert answer["error"]["code"] in SPEC_ERROR_CODES
        error, fine = await call(client, "corpus_checkpoint_get", {"query_key": "k"})
        assert not error
        assert fine["query_key"] == "k"

    serve(_settings(tmp_path, fake), body)


def test_unknown_documents_are_not_found_for_the_tool_and_the_resource(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, answer = await call(client, "rag_get", {"doc_id": "pmid:1"})
        assert error
        assert_envelope(answer, "NOT_FOUND")
        with pytest.raises(MCPError) as raised:
            await client.read_resource("resource://pubmed/paper/1")
        assert "Unknown resource" in raised.value.message
        assert raised.value.data["error"]["code"] == "NOT_FOUND"
        assert raised.value.code == -32002  # MCP's resource-not-found
        with pytest.raises(MCPError) as raised:
            await client.read_resource("resource://nothing/here")
        assert raised.value.code == -32002
        error, answer = await call(client, "rag_search", {"query": "anything"})
        assert error
        assert_envelope(answer, "NOT_FOUND")  # nothing synced yet
        assert "pubmed_sync_delta" in answer["error"]["message"]
        listed = await client.list_resources()
        assert any(str(r.uri) == "biomcp://help" for r in listed.resources)

    serve(_settings(tmp_path, fake), body)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_upstream_and_store_failures_use_their_codes(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    settings = _settings(
        tmp_path,
        fake,
        biomcp_vector_backend="weaviate",
        weaviate_url=f"http://127.0.0.1:{_closed_port()}",
        weaviate_grpc_port=_closed_port(),
        ncbi_max_retries=0,
    )

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, answer = await call(client, "rag_search", {"query": "aspirin"})
        assert error
        assert_envelope(answer, "WEAVIATE")
        fake.faults.sequence(["500"] * 4)
        try:
            error, answer = await call(client, "pubmed_sync_delta", {"query_key": "k", "term": "x"})
        finally:
            fake.faults.clear()
        assert error
        assert_envelope(answer, "UPSTREAM")
        error, fine = await call(client, "corpus_checkpoint_get", {"query_key": "k"})
        assert not error
        assert fine["last_edat"] is None

    serve(settings, body)


def test_a_sync_reports_progress_to_a_client_that_asks(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        result = await client.call_tool(
            "pubmed_sync_delta",
            {"query_key": "p", "term": "humans[mh] OR animals[mh]"},
            progress_callback=on_progress,
        )
        assert not result.is_error
        assert seen, "no progress notification arrived"
        assert seen[-1] == (len(fake.corpus), len(fake.corpus))
        assert [p for p, _ in seen] == sorted(p for p, _ in seen)

    serve(_settings(tmp_path, fake, biomcp_sync_batch_size=40), body)

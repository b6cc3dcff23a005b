"""A saved query that keeps full text, on every surface: MCP over stdio and Streamable HTTP
(real clients, real server processes, both backend pairs), the CLI and the library.

The fake E-utilities serve synthetic records that all name a PMC id, and their synthetic JATS
(restricted when the PMID ends in 1, withdrawn when it ends in 7, open access otherwise).
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

import biomcp
from biomcp.adapters.sql import upgrade
from biomcp.adapters.vectors.weaviate_store import WeaviateVectorStore
from biomcp.entrypoints.mcp.contract import V11_OUTPUTS
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from tests.support.mcp_inprocess import call_structured as call
from tests.support.servers import mcp_http, mcp_stdio, run_biomcp, serve_http, server_env
from tests.support.services import postgres_url, weaviate_url
from tests.support.sql_databases import postgres_schema

pytestmark = [pytest.mark.e2e]

TERM = "Journal Article[pt]"
QUERY = "synthetic results of the trial"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(
            24, start=date(2025, 1, 1), end=date(2025, 2, 28), seed=3,
            pmid_start=35_000_000, pmc_share=1.0,
        )
    )  # fmt: skip
    with FakeEutilsServer(corpus, warm=True) as server:
        yield server


async def exercise(client: Client) -> None:
    """Sync with full text, then read it back through every corpus tool."""

    async def ok(name: str, arguments: dict[str, Any]) -> Any:
        error, answer = await call(client, name, arguments)
        assert not error, answer
        if name in ("rag_search", "rag_get"):
            Draft202012Validator(V11_OUTPUTS[name.replace("_", ".")]).validate(answer)
        return answer

    synced = await ok("pubmed_sync_delta", {"query_key": "ft", "term": TERM, "fulltext": True})
    assert synced["inserted"] == 24
    overview = await ok("corpus_overview", {})
    assert overview["fulltext"]["available"] > 0
    assert sum(overview["fulltext"].values()) == 24
    assert overview["queries"][0]["fulltext"] is True

    full = await ok("rag_search", {"query": QUERY, "top_k": 8, "source": "fulltext"})
    assert full["results"]
    assert all(r["source"] == "fulltext" and r["anchor"] for r in full["results"])
    plain = await ok("rag_search", {"query": QUERY, "top_k": 8, "source": "abstract"})
    assert plain["results"]
    assert all(r["source"] == "abstract" for r in plain["results"])

    doc_id = full["results"][0]["doc_id"]
    outline = await ok("rag_get", {"doc_id": doc_id, "fulltext": []})
    assert outline["fulltext"]["status"] == "available"
    assert outline["fulltext"]["mode"] == "outline"
    results = await ok("rag_get", {"doc_id": doc_id, "fulltext": ["results"]})
    shown = results["fulltext"]["sections"]
    assert any(s["title"] == "Results" and s.get("text") for s in shown)
    assert not any(s["title"] == "Methods" for s in shown)  # the others are left out
    error, answer = await call(client, "rag_search", {"query": QUERY, "source": "pdf"})
    assert error
    assert answer["error"]["code"] == "VALIDATION"


@pytest.fixture
def weaviate_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Settings of a server on PostgreSQL (a schema of its own) + Weaviate (a collection of
    its own, dropped afterwards)."""
    collection = f"FullTextE2e{uuid.uuid4().hex[:10]}"
    with postgres_schema(postgres_url()) as url:
        upgrade(url)
        env = {
            "BIOMCP_DATABASE_URL": url,
            "BIOMCP_VECTOR_BACKEND": "weaviate",
            "WEAVIATE_URL": weaviate_url(),
            "WEAVIATE_GRPC_PORT": os.environ.get("BIOMCP_TEST_WEAVIATE_GRPC_PORT", "50051"),
            "BIOMCP_COLLECTION": collection,
        }
        try:
            yield env
        finally:
            asyncio.run(_drop(env))


async def _drop(env: dict[str, str]) -> None:
    store = WeaviateVectorStore(env["WEAVIATE_URL"], grpc_port=int(env["WEAVIATE_GRPC_PORT"]))
    try:
        if env["BIOMCP_COLLECTION"] in await store.collections():
            await store.drop_collection(env["BIOMCP_COLLECTION"])
    finally:
        await store.aclose()


def _env(tmp_path: Path, fake: FakeEutilsServer, extra: dict[str, str]) -> dict[str, str]:
    return server_env(tmp_path / "data", fake.base_url, BIOMCP_SYNC_WAIT_S="600", **extra)


@pytest.mark.parametrize("backend", ["embedded", "weaviate"])
def test_over_streamable_http(
    tmp_path: Path, fake: FakeEutilsServer, backend: str, request: pytest.FixtureRequest
) -> None:
    extra = request.getfixturevalue("weaviate_env") if backend == "weaviate" else {}
    with serve_http(["--port", "0"], env=_env(tmp_path, fake, extra), cwd=tmp_path) as server:

        async def scenario() -> None:
            async with mcp_http(server.url) as client:
                await exercise(client)

        asyncio.run(scenario())


@pytest.mark.parametrize("backend", ["embedded", "weaviate"])
def test_over_stdio(
    tmp_path: Path, fake: FakeEutilsServer, backend: str, request: pytest.FixtureRequest
) -> None:
    extra = request.getfixturevalue("weaviate_env") if backend == "weaviate" else {}
    env = _env(tmp_path, fake, extra)

    async def scenario() -> None:
        with (tmp_path / "server.log").open("w") as errlog:
            async with mcp_stdio(env, tmp_path, errlog) as client:
                await exercise(client)

    asyncio.run(scenario())


def test_the_cli_keeps_full_text_shows_its_status_and_searches_one_source(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    env = _env(tmp_path, fake, {})
    synced = run_biomcp(
        ["sync", "-k", "ft", "-t", TERM, "--fulltext", "--json", "-q"], env=env, cwd=tmp_path
    )
    assert synced.returncode == 0, synced.stderr
    report = json.loads(synced.stdout)
    assert report["fulltext"]["indexed"] > 0
    assert sum(report["fulltext"]["statuses"].values()) == 24

    words = run_biomcp(["sync", "-k", "ft", "-q"], env=env, cwd=tmp_path)
    assert words.returncode == 0, words.stderr
    assert "full text" in words.stdout  # the key remembers its choice

    found = run_biomcp(["search", QUERY, "--source", "fulltext", "--json"], env=env, cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["results"]
    assert hits
    assert all(h["source"] == "fulltext" for h in hits)
    pmid = hits[0]["doc_id"].removeprefix("pmid:")
    shown = run_biomcp(["get", pmid], env=env, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "Full text:" in shown.stdout
    assert "available" in shown.stdout

    wrong = run_biomcp(["search", QUERY, "--source", "pdf"], env=env, cwd=tmp_path)
    assert wrong.returncode != 0
    assert "source must be one of abstract, fulltext" in wrong.stderr


def test_the_library_keeps_full_text_and_searches_one_source(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    options: dict[str, Any] = {
        "biomcp_data_dir": tmp_path / "data",
        "biomcp_embeddings": "deterministic",
        "ncbi_eutils_base_url": fake.base_url,
    }
    with biomcp.open_corpus(**options) as corpus:
        report = corpus.sync("ft", TERM, fulltext=True)
        assert report.fulltext is not None
        assert report.fulltext.indexed > 0
        hits = corpus.search(QUERY, 5, source="fulltext")
        assert hits
        assert all(h.source == "fulltext" for h in hits)
        document = corpus.get(hits[0].doc_id)
        fulltext = document["fulltext"]
        assert fulltext is not None
        assert fulltext["status"] == "available"
        assert fulltext["chunks"] > 0
        assert corpus.overview()["fulltext"]["available"] == report.fulltext.indexed

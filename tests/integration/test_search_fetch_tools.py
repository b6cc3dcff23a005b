"""The `search` / `fetch` pair (ChatGPT connectors, deep research) through an in-process client.

The server is the one `biomcp serve` builds, on the fake E-utilities over real HTTP serving
synthetic articles. With an empty corpus both tools answer from PubMed (live); once a query is
synced they answer from the corpus and call no E-utility. Every answer is checked against the
tool's declared output schema, and the text content mirrors the structured one (ChatGPT reads
the JSON text).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from biomcp.entrypoints.mcp.contract import ERROR_ENVELOPE
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.mcp.tools.search_fetch import (
    FETCH_INPUT,
    FETCH_OUTPUT,
    SEARCH_INPUT,
    SEARCH_OUTPUT,
)
from biomcp.entrypoints.services import Services
from biomcp.entrypoints.settings import Settings
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from tests.support.mcp_inprocess import serve, test_settings
from tests.support.servers import clean_fake  # noqa: F401 - autouse: no faults, empty log

pytestmark = pytest.mark.integration

OUTPUTS = {"search": SEARCH_OUTPUT, "fetch": FETCH_OUTPUT}
QUERY = "asthma"
SYNCED = "asthma[mh]"
PUBMED = "https://pubmed.ncbi.nlm.nih.gov/"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    today = date.today()
    xml = generate_articles(40, start=today - timedelta(days=60), end=today, seed=3)
    with FakeEutilsServer(FakeCorpus.from_xml_bytes(xml)) as server:
        yield server


def _settings(tmp_path: Path, fake: FakeEutilsServer, **overrides: Any) -> Settings:
    # the pair is the `chatgpt` toolset, off by default
    values = {"biomcp_toolsets": "default,chatgpt", **overrides}
    return test_settings(tmp_path / "data", fake.base_url, **values)


async def call(client: Client, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    """(is_error, answer): one text content holding the JSON, checked against the schema."""
    result = await client.call_tool(name, arguments)
    assert len(result.content) == 1
    assert result.content[0].type == "text"
    answer = json.loads(result.content[0].text)
    if result.is_error:
        Draft202012Validator(ERROR_ENVELOPE).validate(answer)
    else:
        assert result.structured_content == answer
        if name in OUTPUTS:
            Draft202012Validator(OUTPUTS[name]).validate(answer)
    return bool(result.is_error), answer


async def ok(client: Client, name: str, arguments: dict[str, Any]) -> Any:
    error, answer = await call(client, name, arguments)
    assert not error, answer
    return answer


async def fails(client: Client, name: str, arguments: dict[str, Any], code: str) -> Any:
    error, answer = await call(client, name, arguments)
    assert error, answer
    assert answer["error"]["code"] == code, answer
    return answer


def endpoints(fake: FakeEutilsServer) -> list[str]:
    return [entry["endpoint"] for entry in fake.log]


def portability_problems(schema: Any, where: str = "") -> list[str]:
    """What makes a schema unportable: type arrays, $defs / $ref / $schema, top-level anyOf."""
    problems = []
    if where == "" and isinstance(schema, dict):
        problems += [f"top-level {k}" for k in ("anyOf", "oneOf", "allOf") if k in schema]
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in ("$defs", "$ref", "$schema", "definitions"):
                problems.append(f"{where}/{key}")
            if key == "type" and isinstance(value, list):
                problems.append(f"{where}/type is an array")
            problems += portability_problems(value, f"{where}/{key}")
    elif isinstance(schema, list):
        for i, item in enumerate(schema):
            problems += portability_problems(item, f"{where}/{i}")
    return problems


# --- listing ---------------------------------------------------------------------------------


def test_the_pair_is_listed_read_only_with_portable_schemas(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert listed["search"].input_schema == SEARCH_INPUT
        assert listed["fetch"].input_schema == FETCH_INPUT
        for name in ("search", "fetch"):
            tool = listed[name]
            assert tool.output_schema == OUTPUTS[name]
            Draft202012Validator.check_schema(tool.input_schema)
            Draft202012Validator.check_schema(tool.output_schema)
            assert portability_problems(tool.input_schema) == []
            assert portability_problems(tool.output_schema) == []
            assert tool.annotations is not None
            assert tool.annotations.read_only_hint is True
            assert tool.description
            assert tool.title

    serve(_settings(tmp_path, fake), body)


@pytest.mark.parametrize(
    ("overrides", "listed"),
    [
        ({"biomcp_read_only": True}, True),
        ({"biomcp_tool_names": "spec"}, True),
        ({"biomcp_search_fetch_tools": False}, False),
        ({"biomcp_toolsets": "default"}, False),
        ({"biomcp_toolsets": "corpus", "biomcp_search_fetch_tools": True}, True),
    ],
)
def test_modes_keep_the_names_and_the_toolset_offers_the_pair(
    tmp_path: Path, fake: FakeEutilsServer, overrides: dict[str, Any], listed: bool
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert len({"search", "fetch"} & names) == (2 if listed else 0)
        assert ("fetch" in server.tool_specs) is listed

    serve(_settings(tmp_path, fake, **overrides), body)


# --- live: the corpus is empty ---------------------------------------------------------------


def test_with_an_empty_corpus_search_and_fetch_answer_from_pubmed(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        found = await ok(client, "search", {"query": QUERY})
        assert found["source"] == "pubmed"
        results = found["results"]
        assert 1 <= len(results) <= 10
        live = await ok(
            client,
            "pubmed_search_articles",
            {"queryTerm": QUERY, "maxResults": 10, "fetchBriefSummaries": 10},
        )
        assert [r["id"] for r in results] == [f"pmid:{p}" for p in live["pmids"]]
        titles = {b["pmid"]: b["title"] for b in live["briefSummaries"]}
        for result in results:
            pmid = result["id"].removeprefix("pmid:")
            assert result["url"] == f"{PUBMED}{pmid}/"
            assert result["title"] == titles[pmid]

        pmid = results[0]["id"].removeprefix("pmid:")
        document = await ok(client, "fetch", {"id": results[0]["id"]})
        details = await ok(client, "pubmed_fetch_article_details", {"pmids": [pmid]})
        article = details["articles"][0]
        assert document["id"] == f"pmid:{pmid}"
        assert document["url"] == f"{PUBMED}{pmid}/"
        assert document["title"] == article["title"]
        assert document["text"] == f"{article['title']}\n\n{article['abstractText']}"
        metadata = document["metadata"]
        assert metadata["source"] == "pubmed"
        assert metadata["pmid"] == pmid
        assert metadata["journal"] == article["journalInfo"]["title"]
        assert metadata["pub_types"] == article["publicationTypes"]
        assert metadata["mesh_terms"] == [t["descriptorName"] for t in article["meshTerms"]]
        assert len(metadata["authors"]) == len(article["authors"])

        for spelling in (pmid, f"{PUBMED}{pmid}/", f"  PMID:{pmid} "):
            assert await ok(client, "fetch", {"id": spelling}) == document

    serve(_settings(tmp_path, fake), body)


def test_bad_and_unknown_ids_get_the_error_envelope(tmp_path: Path, fake: FakeEutilsServer) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        missing = await fails(client, "fetch", {"id": "pmid:99999999"}, "NOT_FOUND")
        assert "99999999" in missing["error"]["message"]
        for bad in ("hello", "pmid:0", "https://example.org/123/", "pmid:12a"):
            await fails(client, "fetch", {"id": bad}, "VALIDATION")
        long = "(" * 5000
        answer = await fails(client, "fetch", {"id": long}, "VALIDATION")
        assert long not in json.dumps(answer)  # the value is not echoed whole
        await fails(client, "search", {"query": ""}, "VALIDATION")
        await fails(client, "search", {"query": QUERY, "top_k": 3}, "VALIDATION")
        assert (await ok(client, "search", {"query": QUERY}))["results"]  # still serving

    serve(_settings(tmp_path, fake), body)


# --- the corpus ------------------------------------------------------------------------------


def test_once_synced_search_and_fetch_answer_from_the_corpus(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        report = await client.call_tool("pubmed_sync_delta", {"query_key": "q", "term": SYNCED})
        assert not report.is_error, report
        assert report.structured_content is not None
        assert 0 < report.structured_content["inserted"] < len(fake.corpus)  # a partial corpus
        fake.clear_log()

        found = await ok(client, "search", {"query": f"{QUERY} randomized trial"})
        assert found["source"] == "corpus"
        results = found["results"]
        assert 1 <= len(results) <= 10
        assert len({r["id"] for r in results}) == len(results)  # one result per document
        chunks = await ok(client, "rag_search", {"query": f"{QUERY} randomized trial", "top_k": 30})
        ranked = list(dict.fromkeys(hit["doc_id"] for hit in chunks["results"]))
        assert [r["id"] for r in results] == ranked[:10]  # the corpus's order

        for result in results[:3]:
            stored = await ok(client, "rag_get", {"doc_id": result["id"]})
            assert result["title"] == stored["title"]
            assert result["url"] == f"{PUBMED}{result['id'].removeprefix('pmid:')}/"
            document = await ok(client, "fetch", {"id": result["id"]})
            assert document["title"] == stored["title"]
            assert document["text"] == f"{stored['title']}\n\n{stored['abstract']}"
            metadata = document["metadata"]
            assert metadata["source"] == "corpus"
            assert metadata["quality"] == stored["quality"]["total"]
            assert metadata["evidence_type"] == stored["evidence_type"]
            assert metadata["journal"] == stored["journal"]
        assert endpoints(fake) == []  # the corpus answered: no E-utility was called

        # An article PubMed has and the corpus does not is read live.
        stored_pmids = {p async for p in _stored(services, fake.corpus.pmids())}
        outside = next(p for p in fake.corpus.pmids() if p not in stored_pmids)
        document = await ok(client, "fetch", {"id": f"pmid:{outside}"})
        assert document["metadata"]["source"] == "pubmed"
        assert "efetch" in endpoints(fake)

    serve(_settings(tmp_path, fake), body)


async def _stored(services: Services, pmids: list[str]) -> Any:
    for pmid in pmids:
        if await services.metadata.get_document(pmid) is not None:
            yield pmid

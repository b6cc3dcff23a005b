"""`BIOMCP_CONTRACT`: spec 01's v1.0 contract exactly on request, v1.1 by default.

Each of spec 01's five tools is called through an in-process MCP client on real adapters
(SQLite, the embedded vector store, the deterministic embedder, the fake E-utilities over
HTTP). Under `1.0` every answer validates against the response schema printed in spec 01
itself (`additionalProperties: false` and all) and the declared output schemas are spec 01's;
by default the answers carry the v1.1 fields, which is exactly what spec 01's schemas reject.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from pydantic import ValidationError

from biomcp.entrypoints.mcp.contract import (
    ERROR_CODES,
    SPEC_ERROR_CODES,
    V10_OUTPUTS,
    V11_OUTPUTS,
    contract_error_code,
    contract_payload,
)
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.services import Services
from biomcp.entrypoints.settings import Settings, format_settings_error
from biomcp.testing.eutils import FakeEutilsServer
from tests.support.mcp_inprocess import call_structured as call
from tests.support.mcp_inprocess import serve, test_settings
from tests.support.servers import recent_fake
from tests.support.spec01 import PORTABLE, respelled, spec_schemas

pytestmark = pytest.mark.integration

TERM = "humans[mh] OR animals[mh]"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    with recent_fake(40, seed=11) as server:
        yield server


async def _answers(client: Client) -> dict[str, dict[str, Any]]:
    """One answer of each of spec 01's tools, in the order a client would make them."""
    answers: dict[str, dict[str, Any]] = {}

    async def ok(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        error, answer = await call(client, PORTABLE[name], arguments)
        assert not error, answer
        answers[name] = dict(answer)
        return answers[name]

    report = await ok("pubmed.sync_delta", {"query_key": "all", "term": TERM})
    assert report["inserted"] > 0
    found = await ok("rag.search", {"query": "randomized trial", "top_k": 5})
    assert found["results"]
    await ok("rag.get", {"doc_id": found["results"][0]["doc_id"]})
    await ok("corpus.checkpoint.get", {"query_key": "all"})
    await ok("corpus.checkpoint.set", {"query_key": "all", "last_edat": "2020-01-02T03:04:05Z"})
    return answers


def test_under_1_0_every_answer_is_spec_01s_exactly(tmp_path: Path, fake: FakeEutilsServer) -> None:
    spec = spec_schemas()

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        for name, portable in PORTABLE.items():
            assert listed[portable].output_schema == V10_OUTPUTS[name]
            assert listed[portable].output_schema == respelled(spec[name]["response"])
        answers = await _answers(client)
        assert set(answers) == set(PORTABLE)
        for name, answer in answers.items():
            Draft202012Validator(spec[name]["response"]).validate(answer)
        assert answers["corpus.checkpoint.set"] == {"ok": True}
        document = answers["rag.get"]
        assert set(document["quality"]) <= {"design", "recency", "journal", "human", "total"}
        assert document["title"]  # spec 01's fields keep their values
        hit = answers["rag.search"]["results"][0]
        assert set(hit) == {"doc_id", "uuid", "sim", "bm25", "quality", "score"}
        # The paper resource is the same JSON as rag.get, so it is v1.0 too.
        pmid = document["doc_id"].removeprefix("pmid:")
        read = await client.read_resource(f"resource://pubmed/paper/{pmid}")
        paper = json.loads(read.contents[0].text)  # type: ignore[union-attr]
        Draft202012Validator(spec["rag.get"]["response"]).validate(paper)
        assert paper == document
        # The spec's closed objects are what a strict client checks: one extra field fails.
        leaked = {**document, "evidence_type": "clinical"}
        assert not Draft202012Validator(spec["rag.get"]["response"]).is_valid(leaked)
        # Failures too are spec 01's envelope exactly.
        error, missing = await call(client, "rag_get", {"doc_id": "pmid:1"})
        assert error
        Draft202012Validator(spec["error"]["response"]).validate(missing)
        assert missing["error"]["code"] == "NOT_FOUND"

    serve(test_settings(tmp_path / "data", fake.base_url, biomcp_contract="1.0"), body)


def test_the_default_stays_v1_1(tmp_path: Path, fake: FakeEutilsServer) -> None:
    spec = spec_schemas()

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        for name, portable in PORTABLE.items():
            assert listed[portable].output_schema == V11_OUTPUTS[name]
        answers = await _answers(client)
        for name, answer in answers.items():
            Draft202012Validator(V11_OUTPUTS[name]).validate(answer)
        assert {"evidence_type", "chunk_id", "section", "text"} <= set(
            answers["rag.search"]["results"][0]
        )
        assert "quality_breakdown" in answers["rag.get"]
        assert answers["corpus.checkpoint.set"]["previous_edat"] is not None
        strict = {
            name
            for name, answer in answers.items()
            if not Draft202012Validator(spec[name]["response"]).is_valid(answer)
        }
        # The reason for the 1.0 mode: a strict v1.0 client rejects these v1.1 answers.
        assert strict == {"rag.search", "rag.get", "corpus.checkpoint.set"}
        # ...and the one cut (`contract_payload`) turns each into a valid v1.0 answer.
        for name, answer in answers.items():
            Draft202012Validator(spec[name]["response"]).validate(
                contract_payload(name, answer, "1.0")
            )
            assert contract_payload(name, answer, "1.1") is answer

    serve(test_settings(tmp_path / "data", fake.base_url), body)


def test_spec_names_and_read_only_keep_the_1_0_contract(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    spec = spec_schemas()

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "rag.search" in listed
        assert "corpus.checkpoint.set" not in listed
        for name in ("rag.search", "rag.get", "corpus.checkpoint.get"):
            assert listed[name].output_schema == V10_OUTPUTS[name]
        error, answer = await call(client, "corpus.checkpoint.get", {"query_key": "k"})
        assert not error, answer
        Draft202012Validator(spec["corpus.checkpoint.get"]["response"]).validate(answer)

    settings = test_settings(
        tmp_path / "data",
        fake.base_url,
        biomcp_contract="1.0",
        biomcp_tool_names="spec",
        biomcp_read_only=True,
    )
    serve(settings, body)


def test_under_1_0_every_error_code_is_one_of_spec_01s() -> None:
    spec = spec_schemas()["error"]["response"]
    assert list(SPEC_ERROR_CODES) == spec["properties"]["error"]["properties"]["code"]["enum"]
    for code in ERROR_CODES:
        assert contract_error_code(code, "1.0") in SPEC_ERROR_CODES
        assert contract_error_code(code, "1.1") == code
    assert contract_error_code("TIMEOUT", "1.0") == "UPSTREAM"
    assert contract_error_code("NOT_FOUND", "1.0") == "NOT_FOUND"


def test_the_setting_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIOMCP_CONTRACT", "1.0")
    assert Settings(_env_file=None).biomcp_contract == "1.0"
    monkeypatch.delenv("BIOMCP_CONTRACT")
    assert Settings(_env_file=None).biomcp_contract == "1.1"
    monkeypatch.setenv("BIOMCP_CONTRACT", "2.0")
    with pytest.raises(ValidationError) as caught:
        Settings(_env_file=None)
    assert "BIOMCP_CONTRACT" in format_settings_error(caught.value)

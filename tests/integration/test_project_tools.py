"""The project tools of spec 02 through a real MCP client (in-process), on the embedded
default: schemas against the spec 02 contract, every answer in its output schema, every error
in the envelope with spec 02's codes, declared projects from the projects file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.mcp.tools.projects import PROJECT_OUTPUTS
from biomcp.entrypoints.services import Services
from tests.support.mcp_inprocess import assert_envelope, serve, test_settings
from tests.support.mcp_inprocess import call_structured as call

pytestmark = pytest.mark.integration

CONTRACT = Path(__file__).parents[1] / "fixtures" / "contracts" / "spec02_inputs.json"
TOOLS = ("store_chunks", "find_chunks", "query_hybrid", "inspect_collection", "list_projects")
PROJECTS_TOML = """
[projects."citeloom/clean-arch"]

[projects."citeloom/ddd"]
hybrid = false
"""


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _settings(tmp_path: Path, **overrides: Any) -> Any:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    (data / "projects.toml").write_text(PROJECTS_TOML)
    # No PubMed call is made here: the E-utilities URL is never used.
    return test_settings(data, "http://127.0.0.1:9", **overrides)


NOTE = {
    "id": "evans-1",
    "text": "Entities have identity; value objects are defined by their attributes.",
    "metadata": {
        "zotero": {"citekey": "evans2003", "tags": ["architecture"]},
        "doc": {"section": "Entities", "page_span": [45, 46], "section_path": ["Part I"]},
    },
}


def test_input_schemas_equal_the_spec_02_contract(tmp_path: Path) -> None:
    contract = json.loads(CONTRACT.read_text())["tools"]

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        for name in TOOLS:
            assert _strip(listed[name].input_schema) == contract[name], name
            assert listed[name].output_schema == PROJECT_OUTPUTS[name]
            Draft202012Validator.check_schema(PROJECT_OUTPUTS[name])
        assert listed["store_chunks"].annotations.read_only_hint is False  # type: ignore[union-attr]
        assert listed["find_chunks"].annotations.read_only_hint is True  # type: ignore[union-attr]

    serve(_settings(tmp_path), body)


def test_the_five_tools_answer_in_their_schemas(tmp_path: Path) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answers: dict[str, Any] = {}

        async def ok(name: str, arguments: dict[str, Any]) -> Any:
            error, answer = await call(client, name, arguments)
            assert not error, answer
            Draft202012Validator(PROJECT_OUTPUTS[name]).validate(answer)
            answers[name] = answer
            return answer

        listed = await ok("list_projects", {})
        assert [p["id"] for p in listed["projects"]] == ["citeloom/clean-arch", "citeloom/ddd"]
        project = "citeloom/clean-arch"
        written = await ok("store_chunks", {"project": project, "items": [NOTE]})
        assert written["chunks_written"] == 1
        found = await ok("find_chunks", {"project": project, "query": "entities identity"})
        assert found["items"][0]["citekey"] == "evans2003"
        assert found["items"][0]["page_span"] == [45, 46]
        hybrid = await ok(
            "query_hybrid",
            {"project": project, "query": "value objects", "filters": {"tags": "architecture"}},
        )
        assert hybrid["hybrid_enabled"] is True
        assert [i["id"] for i in hybrid["items"]] == ["evans-1"]
        shown = await ok("inspect_collection", {"project": project, "sample": 1})
        assert shown["size"] == 1
        assert shown["sample"][0]["zotero"]["citekey"] == "evans2003"

    serve(_settings(tmp_path), body)


def test_errors_carry_spec_02_codes_and_the_server_keeps_serving(tmp_path: Path) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, answer = await call(client, "find_chunks", {"project": "nope", "query": "x"})
        assert error
        assert_envelope(answer, "INVALID_PROJECT")
        assert answer["error"]["details"]["available_projects"] == [
            "citeloom/clean-arch",
            "citeloom/ddd",
        ]
        error, answer = await call(
            client, "query_hybrid", {"project": "citeloom/ddd", "query": "x"}
        )
        assert error
        assert_envelope(answer, "HYBRID_NOT_SUPPORTED")
        too_many = [{"id": f"i{n}", "text": "t"} for n in range(501)]
        error, answer = await call(
            client, "store_chunks", {"project": "citeloom/ddd", "items": too_many}
        )
        assert error
        assert_envelope(answer, "VALIDATION")
        alien = {**NOTE, "embedding": [0.5] * 7, "metadata": {"embed_model": "other"}}
        error, answer = await call(
            client, "store_chunks", {"project": "citeloom/ddd", "items": [alien]}
        )
        assert error
        assert_envelope(answer, "EMBEDDING_MISMATCH")
        error, answer = await call(
            client, "find_chunks", {"project": "citeloom/ddd", "query": "x", "top_k": 7}
        )
        assert error
        assert_envelope(answer, "VALIDATION")  # 6 is this server's bound
        error, answer = await call(client, "list_projects", {})
        assert not error

    serve(_settings(tmp_path), body)


def test_a_raised_top_k_bound_is_in_the_schema_and_honoured(tmp_path: Path) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert listed["find_chunks"].input_schema["properties"]["top_k"]["maximum"] == 20
        items = [{"id": f"n{i}", "text": f"note {i} about outcomes"} for i in range(12)]
        error, _ = await call(client, "store_chunks", {"project": "citeloom/ddd", "items": items})
        assert not error
        error, answer = await call(
            client, "find_chunks", {"project": "citeloom/ddd", "query": "outcomes", "top_k": 10}
        )
        assert not error
        assert answer["count"] == 10

    serve(_settings(tmp_path, biomcp_project_top_k_max=20), body)

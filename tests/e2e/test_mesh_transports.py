"""`pubmed_lookup_mesh` over both transports, through real MCP clients against real server
processes (`biomcp serve` on stdio, `biomcp serve-http` on Streamable HTTP), on the fake
E-utilities over real HTTP. The fake's MeSH vocabulary is SYNTHETIC (testing/eutils/mesh.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from biomcp.entrypoints.mcp.tools.mesh import MESH_OUTPUT
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer
from tests.support.mcp_inprocess import assert_envelope
from tests.support.mcp_inprocess import call_structured as call
from tests.support.servers import exercise_over_http, exercise_over_stdio, server_env

pytestmark = [pytest.mark.e2e]

FIXTURE = Path(__file__).parents[1] / "fixtures" / "eutils" / "synthetic_mixed_set.xml"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    with FakeEutilsServer(FakeCorpus.from_paths([FIXTURE])) as server:
        yield server


async def exercise(client: Client, fake: FakeEutilsServer) -> None:
    """A synonym, a MeSH UI and a miss, answers checked against the output schema."""
    fake.clear_log()
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert listed["pubmed_lookup_mesh"].output_schema == MESH_OUTPUT

    error, answer = await call(client, "pubmed_lookup_mesh", {"term": "high blood pressure"})
    assert not error, answer
    Draft202012Validator(MESH_OUTPUT).validate(answer)
    [record] = answer["descriptors"]
    assert (record["ui"], record["name"]) == ("D006973", "Hypertension")
    assert record["suggestedQuery"] == "(Hypertension[mh] OR Hypertension[tiab])"

    error, answer = await call(client, "pubmed_lookup_mesh", {"term": "D003924"})
    assert not error, answer
    Draft202012Validator(MESH_OUTPUT).validate(answer)
    assert answer["descriptors"][0]["name"] == "Diabetes Mellitus, Type 2"
    assert answer["descriptors"][0]["suggestedQuery"] == (
        '("Diabetes Mellitus, Type 2"[mh] OR "Type 2 Diabetes"[tiab])'
    )

    error, answer = await call(client, "pubmed_lookup_mesh", {"term": "no such heading"})
    assert error
    assert_envelope(answer, "NOT_FOUND")
    endpoints = [(entry["endpoint"], entry["params"]["db"]) for entry in fake.log]
    assert endpoints == [
        ("esearch", "mesh"),
        ("esummary", "mesh"),
        ("esummary", "mesh"),
        ("esearch", "mesh"),
    ]


def test_over_stdio(tmp_path: Path, fake: FakeEutilsServer) -> None:
    env = server_env(tmp_path / "data", fake.base_url)
    exercise_over_stdio(env, tmp_path, lambda client: exercise(client, fake))


def test_over_streamable_http(tmp_path: Path, fake: FakeEutilsServer) -> None:
    env = server_env(tmp_path / "data", fake.base_url)
    exercise_over_http(env, tmp_path, lambda client: exercise(client, fake))

"""`pubmed_fetch_fulltext` over both transports, through real MCP clients against real server
processes (`biomcp serve` on stdio, `biomcp serve-http` on Streamable HTTP), on the fake
E-utilities over real HTTP. The fake's PMC articles here are SYNTHETIC (testing/eutils/pmc.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from biomcp.entrypoints.mcp.tools.fulltext import FULLTEXT_OUTPUT
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer
from biomcp.testing.eutils.pmc import pmc_store
from tests.support.mcp_inprocess import assert_envelope
from tests.support.mcp_inprocess import call_structured as call
from tests.support.servers import exercise_over_http, exercise_over_stdio, server_env

pytestmark = [pytest.mark.e2e]

FIXTURE = Path(__file__).parents[1] / "fixtures" / "eutils" / "synthetic_mixed_set.xml"
TOOL = "pubmed_fetch_fulltext"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    with FakeEutilsServer(FakeCorpus.from_paths([FIXTURE])) as server:
        store = pmc_store(server.state)
        store.add_synthetic("31000001", "PMC8100001", paragraph_chars=2_000)
        store.add_synthetic("31000002", "PMC8100002", kind="restricted")
        yield server


async def exercise(client: Client, fake: FakeEutilsServer) -> None:
    """An outline over the budget, the sections asked for, the statuses, a bad id."""
    fake.clear_log()
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert listed[TOOL].output_schema == FULLTEXT_OUTPUT

    arguments = {"ids": ["31000001", "PMC8100002", "31000009"], "maxChars": 4_000}
    error, answer = await call(client, TOOL, arguments)
    assert not error, answer
    Draft202012Validator(FULLTEXT_OUTPUT).validate(answer)
    statuses = [(a["id"], a["status"]) for a in answer["articles"]]
    assert statuses == [
        ("31000001", "available"),
        ("PMC8100002", "not_open_access"),
        ("31000009", "not_in_pmc"),
    ]
    first = answer["articles"][0]
    assert (first["pmcid"], first["mode"], first["outlineReason"]) == (
        "PMC8100001",
        "outline",
        "budget",
    )
    assert [s["title"] for s in first["sections"] if s["level"] == 1][:3] == [
        "Introduction",
        "Methods",
        "Results",
    ]

    error, answer = await call(
        client, TOOL, {"ids": ["PMC8100001"], "sections": ["discussion"], "maxChars": 4_000}
    )
    assert not error, answer
    [article] = answer["articles"]
    assert article["mode"] == "full"
    assert [s["title"] for s in article["sections"]] == ["Discussion"]
    assert article["sections"][0]["text"].startswith("Discussion: This synthetic paragraph")

    error, answer = await call(client, TOOL, {"ids": ["not-an-id"]})
    assert error
    assert_envelope(answer, "VALIDATION")
    assert [(e["endpoint"], e["params"]["db"]) for e in fake.log] == [
        ("elink", "pmc"),
        ("efetch", "pmc"),
        ("efetch", "pmc"),
    ]


def test_over_stdio(tmp_path: Path, fake: FakeEutilsServer) -> None:
    env = server_env(tmp_path / "data", fake.base_url)
    exercise_over_stdio(env, tmp_path, lambda client: exercise(client, fake))


def test_over_streamable_http(tmp_path: Path, fake: FakeEutilsServer) -> None:
    env = server_env(tmp_path / "data", fake.base_url)
    exercise_over_http(env, tmp_path, lambda client: exercise(client, fake))

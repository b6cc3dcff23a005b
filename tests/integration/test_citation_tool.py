"""`pubmed_format_citations` through an in-process MCP client, on the fake E-utilities over real
HTTP serving real PubMed records from ../shared/data/eutils (skipped when that folder is
absent). Expected strings come from `biomcp.domain.citations` on the same records, and agree
with the single-PMID `citation_formats` of `pubmed_article_relationships`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from biomcp.domain.citations import format_citation
from biomcp.entrypoints.mcp.contract import ERROR_ENVELOPE
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.mcp.tools.citations import CITATION_INPUT, CITATION_OUTPUT
from biomcp.entrypoints.services import Services
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer
from biomcp.usecases.live.citations import STYLE_KEYS
from tests.conftest import shared_data_path
from tests.support.live_tools import FILES, ok, requests
from tests.support.mcp_inprocess import serve, test_settings
from tests.support.servers import clean_fake  # noqa: F401 - autouse: no faults, empty log

pytestmark = pytest.mark.integration

TOOL = "pubmed_format_citations"
PMIDS = ["34843274", "29768149", "37167981", "27797938", "23657305", "24084238"]
UNKNOWN = "99999999"
STYLES = list(STYLE_KEYS)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    folder = shared_data_path("eutils")
    with FakeEutilsServer(FakeCorpus.from_paths([folder / name for name in FILES])) as server:
        yield server


def _run(tmp_path: Path, fake: FakeEutilsServer, body: Any, **overrides: Any) -> None:
    async def run(client: Client, server: BioMcpServer, services: Services) -> None:
        await body(client)

    serve(test_settings(tmp_path / "data", fake.base_url, **overrides), run)


async def cite(client: Client, arguments: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(TOOL, arguments)
    answer = json.loads(result.content[0].text)  # type: ignore[union-attr]
    schema = ERROR_ENVELOPE if result.is_error else CITATION_OUTPUT
    Draft202012Validator(schema).validate(answer)
    return bool(result.is_error), answer


def test_the_tool_is_listed_read_only_with_its_schemas(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client) -> None:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        tool = listed[TOOL]
        assert tool.input_schema == CITATION_INPUT
        assert tool.output_schema == CITATION_OUTPUT
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True

    _run(tmp_path, fake, body)


def test_many_pmids_are_cited_in_every_style_from_one_efetch(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    wanted = [*PMIDS, UNKNOWN, PMIDS[0]]

    async def body(client: Client) -> None:
        error, answer = await cite(client, {"pmids": wanted, "citationStyles": STYLES})
        assert not error, answer
        assert answer["requestedPmids"] == [*PMIDS, UNKNOWN]
        assert [a["pmid"] for a in answer["articles"]] == PMIDS
        assert answer["notFoundPmids"] == [UNKNOWN]
        for article in answer["articles"]:
            record = fake.corpus.record(article["pmid"])
            assert record is not None
            expected = {s: format_citation(record, STYLE_KEYS[s]) for s in STYLES}
            assert article["citations"] == expected
        single = await ok(
            client,
            "pubmed_article_relationships",
            {
                "sourcePmid": PMIDS[1],
                "relationshipType": "citation_formats",
                "citationStyles": STYLES,
            },
        )
        assert single["citations"] == answer["articles"][1]["citations"]

    _run(tmp_path, fake, body)
    fetches = requests(fake, "efetch")
    # One EFetch for all of them; the single-PMID call was served by the response cache.
    assert [f["params"]["id"] for f in fetches] == [",".join([*PMIDS, UNKNOWN])]


def test_the_default_style_is_ris(tmp_path: Path, fake: FakeEutilsServer) -> None:
    async def body(client: Client) -> None:
        error, answer = await cite(client, {"pmids": [PMIDS[2]]})
        assert not error, answer
        assert answer["citationStyles"] == ["ris"]
        assert list(answer["articles"][0]["citations"]) == ["ris"]
        assert answer["articles"][0]["citations"]["ris"].startswith("TY  - JOUR")

    _run(tmp_path, fake, body)


def test_no_citable_pmid_is_not_found_never_an_empty_success(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client) -> None:
        error, answer = await cite(client, {"pmids": [UNKNOWN, "99999998"]})
        assert error
        assert answer["error"]["code"] == "NOT_FOUND"
        assert UNKNOWN in answer["error"]["message"]

    _run(tmp_path, fake, body)


@pytest.mark.parametrize(
    "arguments",
    [
        {"pmids": []},
        {"pmids": [str(30_000_000 + i) for i in range(51)]},
        {"pmids": ["12a"]},
        {"pmids": ["007"]},
        {"pmids": [PMIDS[0]], "citationStyles": ["chicago"]},
        {"pmids": [PMIDS[0]], "extra": 1},
    ],
    ids=["none", "51", "letters", "leading-zero", "style", "unknown-field"],
)
def test_bad_arguments_are_validation_errors_before_ncbi_is_asked(
    tmp_path: Path, fake: FakeEutilsServer, arguments: dict[str, Any]
) -> None:
    async def body(client: Client) -> None:
        error, answer = await cite(client, arguments)
        assert error
        assert answer["error"]["code"] == "VALIDATION", answer

    _run(tmp_path, fake, body)
    assert requests(fake, "efetch") == []


def test_ncbi_failures_come_back_in_the_envelope(tmp_path: Path, fake: FakeEutilsServer) -> None:
    fake.faults.sequence(["503"] * 3, endpoint="efetch")

    async def body(client: Client) -> None:
        error, answer = await cite(client, {"pmids": PMIDS[:2]})
        assert error
        assert answer["error"]["code"] == "UPSTREAM"
        fake.faults.clear()
        error, answer = await cite(client, {"pmids": PMIDS[:2]})  # and the next call works
        assert not error, answer

    _run(tmp_path, fake, body, ncbi_max_retries=2)


def test_spec_names_call_it_format_citations(tmp_path: Path, fake: FakeEutilsServer) -> None:
    async def body(client: Client) -> None:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "formatCitations" in names
        assert TOOL not in names
        result = await client.call_tool("formatCitations", {"pmids": [PMIDS[0]]})
        assert not result.is_error
        assert result.structured_content is not None
        assert [a["pmid"] for a in result.structured_content["articles"]] == [PMIDS[0]]

    _run(tmp_path, fake, body, biomcp_tool_names="spec")

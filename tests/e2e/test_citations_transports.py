"""`pubmed_format_citations`, and the paging and spelling of `pubmed_search_articles`, through
real MCP clients against real `biomcp` processes: stdio (`biomcp serve`) and Streamable HTTP
(`biomcp serve-http`), on the fake E-utilities serving synthetic articles
(`generate_articles`, labelled synthetic) and the fake's synthetic spelling suggestions."""

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
from biomcp.entrypoints.mcp.tools.citations import CITATION_OUTPUT
from biomcp.entrypoints.mcp.tools.live.schemas import LIVE_OUTPUTS
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from tests.support.servers import exercise_over_http, exercise_over_stdio, server_env

pytestmark = [pytest.mark.e2e]

COUNT = 120
FIRST = 30_000_000  # generate_articles' first PMID
UNKNOWN = "99999999"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    today = date.today()
    xml = generate_articles(COUNT, start=today - timedelta(days=40), end=today, seed=18)
    with FakeEutilsServer(FakeCorpus.from_xml_bytes(xml)) as server:
        yield server


async def call(client: Client, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(name, arguments)
    answer = json.loads(result.content[0].text)  # type: ignore[union-attr]
    if result.is_error:
        Draft202012Validator(ERROR_ENVELOPE).validate(answer)
    else:
        assert answer == result.structured_content
    return bool(result.is_error), answer


async def exercise(client: Client) -> None:
    """The citations tool, a misspelled search and a paged one, answers checked against the
    tools' output schemas."""
    pmids = [str(FIRST), str(FIRST + 7), UNKNOWN]
    error, cited = await call(
        client, "pubmed_format_citations", {"pmids": pmids, "citationStyles": ["apa_string", "ris"]}
    )
    assert not error, cited
    Draft202012Validator(CITATION_OUTPUT).validate(cited)
    assert [a["pmid"] for a in cited["articles"]] == pmids[:2]
    assert cited["notFoundPmids"] == [UNKNOWN]
    for article in cited["articles"]:
        assert article["citations"]["ris"].startswith("TY  - JOUR")
        assert "(20" in article["citations"]["apa_string"]
    error, missing = await call(client, "pubmed_format_citations", {"pmids": [UNKNOWN]})
    assert error
    assert missing["error"]["code"] == "NOT_FOUND"

    search_schema = LIVE_OUTPUTS["searchPubMedArticles"]
    error, spelled = await call(client, "pubmed_search_articles", {"queryTerm": "asthmaa"})
    assert not error, spelled
    Draft202012Validator(search_schema).validate(spelled)
    assert spelled["spelling"]["corrected"] == "asthma"
    assert spelled["spelling"]["searchedWith"] == "corrected"
    assert spelled["totalFound"] > 0

    seen: list[str] = []
    arguments: dict[str, Any] = {"queryTerm": "journal article[pt]", "maxResults": 50}
    while True:
        error, page = await call(client, "pubmed_search_articles", arguments)
        assert not error, page
        Draft202012Validator(search_schema).validate(page)
        seen += page["pmids"]
        if page["nextCursor"] is None:
            break
        arguments = {**arguments, "cursor": page["nextCursor"]}
    assert sorted(seen) == [str(FIRST + i) for i in range(COUNT)]
    error, bad = await call(
        client, "pubmed_search_articles", {"queryTerm": "asthma", "cursor": "bogus"}
    )
    assert error
    assert bad["error"]["code"] == "VALIDATION"


def test_over_stdio(tmp_path: Path, fake: FakeEutilsServer) -> None:
    exercise_over_stdio(server_env(tmp_path / "data", fake.base_url), tmp_path, exercise)


def test_over_streamable_http(tmp_path: Path, fake: FakeEutilsServer) -> None:
    exercise_over_http(server_env(tmp_path / "data", fake.base_url), tmp_path, exercise)

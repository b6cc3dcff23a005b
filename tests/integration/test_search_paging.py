"""Paging and spelling of `pubmed_search_articles` through an in-process MCP client, on the
fake E-utilities over real HTTP.

The corpus is synthetic (`generate_articles`, labelled synthetic): 11,000 articles, 10,300 of
them entered on one day (more than ESearch's 9,999-id window holds, so the date-slice walk must
split that day by PMID range) and 700 spread over the 30 days before. The misspellings are the
fake's synthetic ones (`testing/eutils/spell.py`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.services import Services
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from tests.support.live_tools import fails, ok, requests
from tests.support.mcp_inprocess import serve, test_settings
from tests.support.servers import clean_fake  # noqa: F401 - autouse: no faults, empty log

pytestmark = pytest.mark.integration

TOTAL = 11_000
BULK_DAY_COUNT = 10_300
ALL = "journal article[pt]"  # every synthetic article is a Journal Article
CAP = 9_999


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    today = date.today()
    bulk_day = today - timedelta(days=3)
    bulk = generate_articles(BULK_DAY_COUNT, start=bulk_day, end=bulk_day, seed=18)
    spread = generate_articles(
        TOTAL - BULK_DAY_COUNT,
        start=today - timedelta(days=33),
        end=today - timedelta(days=4),
        seed=19,
        pmid_start=31_000_000,
    )
    with FakeEutilsServer(FakeCorpus.from_xml_bytes(bulk, spread)) as server:
        yield server


def _run(tmp_path: Path, fake: FakeEutilsServer, body: Any) -> None:
    async def run(client: Client, server: BioMcpServer, services: Services) -> None:
        await body(client)

    serve(test_settings(tmp_path / "data", fake.base_url), run)


def _window_respected(fake: FakeEutilsServer) -> None:
    for entry in requests(fake, "esearch"):
        params = entry["params"]
        start, size = int(params.get("retstart", "0")), int(params.get("retmax", "20"))
        assert start + size <= CAP, params


# --- paging ----------------------------------------------------------------------------------


@pytest.mark.parametrize("sort", ["relevance", "pub_date"])
def test_every_result_past_the_9999_window_is_reached_exactly_once(
    tmp_path: Path, fake: FakeEutilsServer, sort: str
) -> None:
    # With pub_date the first 9,999 (by publication date) are scattered over the Entrez-date
    # windows the walk reads after them: it must skip exactly those.
    async def body(client: Client) -> None:
        seen: list[str] = []
        offsets: list[int | None] = []
        base: dict[str, Any] = {"queryTerm": ALL, "maxResults": 1000, "sortBy": sort}
        arguments = dict(base)
        for _ in range(40):
            page = await ok(client, "pubmed_search_articles", arguments)
            assert page["totalFound"] == TOTAL
            assert page["retrievedPmidCount"] == len(page["pmids"])
            seen += page["pmids"]
            offsets.append(page["offset"])
            if page["nextCursor"] is None:
                break
            arguments = {**base, "cursor": page["nextCursor"]}
        else:
            pytest.fail("the cursor never ended")
        assert len(seen) == len(set(seen)), "a PMID came twice"
        assert set(seen) == set(fake.corpus.pmids())
        # Ten offset pages (the last clipped at 9,999), then date-slice pages.
        assert offsets[:10] == list(range(0, 10_000, 1000))
        assert all(o is None for o in offsets[10:])
        assert len(offsets) > 10

    _run(tmp_path, fake, body)
    _window_respected(fake)
    terms = [e["params"]["term"] for e in requests(fake, "esearch")]
    assert any("[uid]" in t for t in terms), "the over-full day was not split by PMID"


def test_offset_is_esearch_retstart_and_is_clipped_at_the_window(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client) -> None:
        first = await ok(client, "pubmed_search_articles", {"queryTerm": ALL, "maxResults": 30})
        later = await ok(
            client, "pubmed_search_articles", {"queryTerm": ALL, "maxResults": 20, "offset": 10}
        )
        assert later["pmids"] == first["pmids"][10:30]
        assert later["offset"] == 10
        assert later["searchParameters"]["offset"] == 10
        assert "retstart=10" in later["eSearchUrl"]
        edge = await ok(
            client, "pubmed_search_articles", {"queryTerm": ALL, "maxResults": 20, "offset": 9990}
        )
        assert edge["retrievedPmidCount"] == 9  # results 9,991 to 9,999
        assert edge["nextCursor"] is not None  # and on by date slices

    _run(tmp_path, fake, body)
    _window_respected(fake)


def test_a_small_result_pages_to_its_end_with_no_cursor_left(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    query = "asthma[mh] AND metformin[mh]"

    async def body(client: Client) -> None:
        first = await ok(client, "pubmed_search_articles", {"queryTerm": query, "maxResults": 50})
        total = first["totalFound"]
        assert 50 < total < 1000
        seen = list(first["pmids"])
        cursor = first["nextCursor"]
        while cursor is not None:
            page = await ok(
                client,
                "pubmed_search_articles",
                {"queryTerm": query, "maxResults": 50, "cursor": cursor},
            )
            seen += page["pmids"]
            cursor = page["nextCursor"]
        assert len(seen) == total == len(set(seen))

    _run(tmp_path, fake, body)


def test_bad_cursors_and_arguments_are_validation_errors(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client) -> None:
        page = await ok(client, "pubmed_search_articles", {"queryTerm": ALL, "maxResults": 5})
        cursor = page["nextCursor"]
        fake.clear_log()
        search = "pubmed_search_articles"
        await fails(client, search, {"queryTerm": ALL, "cursor": "not a cursor!"}, "VALIDATION")
        forged = base64.urlsafe_b64encode(json.dumps({"v": 1, "q": "0" * 16, "o": 5}).encode())
        answer = await fails(
            client, search, {"queryTerm": ALL, "cursor": forged.decode()}, "VALIDATION"
        )
        assert "another search" in answer["error"]["message"]
        overflow = base64.urlsafe_b64encode(
            json.dumps({"v": 1, "q": "0" * 16, "o": 10**6}).encode()
        )
        await fails(client, search, {"queryTerm": ALL, "cursor": overflow.decode()}, "VALIDATION")
        # The same cursor with another query, or with an offset too.
        await fails(client, search, {"queryTerm": "asthma", "cursor": cursor}, "VALIDATION")
        await fails(client, search, {"queryTerm": ALL, "cursor": cursor, "offset": 5}, "VALIDATION")
        await fails(client, search, {"queryTerm": ALL, "offset": 9999}, "VALIDATION")
        await fails(client, search, {"queryTerm": ALL, "cursor": "x" * 513}, "VALIDATION")
        assert requests(fake, "esearch") == []  # refused before NCBI was asked

    _run(tmp_path, fake, body)


# --- spelling --------------------------------------------------------------------------------


def test_a_misspelling_that_finds_nothing_is_searched_corrected_and_said(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client) -> None:
        page = await ok(
            client, "pubmed_search_articles", {"queryTerm": "asthmaa", "maxResults": 200}
        )
        assert page["spelling"] == {
            "original": "asthmaa",
            "corrected": "asthma",
            "searchedWith": "corrected",
        }
        assert page["effectiveESearchTerm"] == "asthma"
        assert page["totalFound"] > 200
        assert page["searchParameters"]["queryTerm"] == "asthmaa"
        seen = list(page["pmids"])
        cursor = page["nextCursor"]
        while cursor is not None:  # the pages after it follow the correction
            nxt = await ok(
                client,
                "pubmed_search_articles",
                {"queryTerm": "asthmaa", "maxResults": 200, "cursor": cursor},
            )
            assert nxt["effectiveESearchTerm"] == "asthma"
            assert "spelling" not in nxt
            seen += nxt["pmids"]
            cursor = nxt["nextCursor"]
        assert len(seen) == page["totalFound"] == len(set(seen))

    _run(tmp_path, fake, body)
    assert len(requests(fake, "espell")) == 1  # asked once, on the first page


def test_a_misspelling_beside_found_words_is_reported_and_searched_as_written(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client) -> None:
        page = await ok(client, "pubmed_search_articles", {"queryTerm": "metformin hypertensoin"})
        assert page["spelling"] == {
            "original": "metformin hypertensoin",
            "corrected": "metformin hypertension",
            "searchedWith": "original",
        }
        assert page["effectiveESearchTerm"] == "metformin hypertensoin"
        assert any("PhraseNotFound" in w for w in page["warnings"])

    _run(tmp_path, fake, body)


def test_espell_is_not_asked_when_it_cannot_help(tmp_path: Path, fake: FakeEutilsServer) -> None:
    async def body(client: Client) -> None:
        # Field-tagged only; a well-spelled query finding many records; a later page.
        tagged = await ok(client, "pubmed_search_articles", {"queryTerm": "asthma[mh]"})
        many = await ok(client, "pubmed_search_articles", {"queryTerm": "asthma metformin"})
        assert many["totalFound"] >= 100
        for answer in (tagged, many):
            assert "spelling" not in answer
        # A page after the first is not checked again (here: nothing found, PubMed's error).
        await fails(
            client, "pubmed_search_articles", {"queryTerm": "asthmaa", "offset": 5}, "ENTREZ"
        )

    _run(tmp_path, fake, body)
    assert requests(fake, "espell") == []


def test_a_failing_espell_never_fails_the_search(tmp_path: Path, fake: FakeEutilsServer) -> None:
    fake.faults.sequence(["503"] * 10, endpoint="espell")

    async def body(client: Client) -> None:
        page = await ok(client, "pubmed_search_articles", {"queryTerm": "metformin hypertensoin"})
        assert "spelling" not in page
        assert any("ESpell" in w for w in page["warnings"])
        assert page["totalFound"] > 0

    _run(tmp_path, fake, body)
    assert {e["fault"] for e in requests(fake, "espell")} == {"503"}

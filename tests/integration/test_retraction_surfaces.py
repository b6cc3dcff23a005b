"""A retracted article is flagged on every live surface that shows it: the fake E-utilities over
real HTTP (one SYNTHETIC article retracted with a notice), the server `biomcp serve` builds,
an in-process MCP client. Every answer is checked against the schema the tool declares.

Surfaces: live search summaries, fetch, related articles, citation formats (one and many),
citation-match candidates, and the `search` / `fetch` pair on its live path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.services import Services
from biomcp.testing.eutils import FakeEutilsServer
from tests.support.mcp_inprocess import serve, test_settings
from tests.support.sync_harness import make_corpus, record_of

pytestmark = pytest.mark.integration

NOTICE = "39000001"
NOTICE_SOURCE = "J Fake Res. 2024 Aug;12(8):e1. doi: 10.0000/fake.retraction"
SAID = f"Retraction in: {NOTICE_SOURCE}. PMID: {NOTICE}."
STYLES = ["ris", "bibtex", "apa_string", "mla_string", "vancouver_string"]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    corpus = make_corpus(8, date(2024, 1, 1), date(2024, 3, 31), seed=41)
    pmids = sorted(corpus.pmids(), key=int)
    corpus.retract(pmids[2], NOTICE, source=NOTICE_SOURCE)
    relations = {"pubmed_pubmed": {pmids[0]: [[pmids[2], 50], [pmids[3], 40]]}}
    with FakeEutilsServer(corpus, relations=relations) as server:
        yield server


def _pmids(fake: FakeEutilsServer) -> tuple[str, str, str]:
    """The source of the related list, the retracted article, a plain neighbour."""
    pmids = sorted(fake.corpus.pmids(), key=int)
    return pmids[0], pmids[2], pmids[3]


async def _ok(client: Client, name: str, arguments: dict[str, Any]) -> Any:
    """The tool's answer, checked against its declared output schema."""
    schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
    result = await client.call_tool(name, arguments)
    answer = json.loads(result.content[0].text)  # type: ignore[union-attr]
    assert not result.is_error, answer
    schema = schemas[name]
    assert schema is not None
    Draft202012Validator(schema).validate(answer)
    return answer


def _serve(tmp_path: Path, fake: FakeEutilsServer, body: Any) -> None:
    serve(test_settings(tmp_path / "data", fake.base_url), body)


def test_live_search_summaries_and_related_articles_flag_the_retracted_one(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    source, retracted, plain = _pmids(fake)

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        term = f"{retracted}[uid] OR {plain}[uid]"
        found = await _ok(
            client, "pubmed_search_articles", {"queryTerm": term, "fetchBriefSummaries": 2}
        )
        flags = {s["pmid"]: s["retracted"] for s in found["briefSummaries"]}
        assert flags == {retracted: True, plain: False}
        notices = {s["pmid"]: s.get("retractionNotice") for s in found["briefSummaries"]}
        assert notices == {retracted: {"noticePmid": NOTICE, "source": NOTICE_SOURCE}, plain: None}

        related = await _ok(client, "pubmed_article_relationships", {"sourcePmid": source})
        shown = [(a["pmid"], a["retracted"]) for a in related["relatedArticles"]]
        assert shown == [(retracted, True), (plain, False)]  # ELink's order kept
        notice = related["relatedArticles"][0]["retractionNotice"]
        assert notice == {"noticePmid": NOTICE, "source": NOTICE_SOURCE}  # from ESummary

    _serve(tmp_path, fake, body)


def test_fetch_gives_the_notice_pmid_and_citation_at_every_parsed_level(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    _, retracted, plain = _pmids(fake)

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        for level in ("abstract_plus", "citation_data"):
            answer = await _ok(
                client,
                "pubmed_fetch_article_details",
                {"pmids": [retracted, plain], "detailLevel": level},
            )
            first, second = answer["articles"]
            assert first["retracted"] is True
            assert first["retractionNotice"] == {"noticePmid": NOTICE, "source": NOTICE_SOURCE}
            assert second.get("retracted", False) is False
            assert second.get("retractionNotice") is None

    _serve(tmp_path, fake, body)


def test_every_citation_style_of_a_retracted_paper_says_retraction_in(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    _, retracted, plain = _pmids(fake)

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        one = await _ok(
            client,
            "pubmed_article_relationships",
            {
                "sourcePmid": retracted,
                "relationshipType": "citation_formats",
                "citationStyles": STYLES,
            },
        )
        citations = one["citations"]
        assert f"N1  - {SAID}\nER  - " in citations["ris"]
        assert f"note = {{{SAID}}}" in citations["bibtex"] or SAID in citations["bibtex"]
        for style in ("apa_string", "mla_string", "vancouver_string"):
            assert citations[style].endswith(f" {SAID}"), style

        many = await _ok(
            client,
            "pubmed_format_citations",
            {"pmids": [retracted, plain], "citationStyles": STYLES},
        )
        by_pmid = {a["pmid"]: a for a in many["articles"]}
        assert by_pmid[retracted]["retracted"] is True
        assert by_pmid[retracted]["citations"] == citations  # one rule for both tools
        assert by_pmid[plain]["retracted"] is False
        assert not any("Retraction" in text for text in by_pmid[plain]["citations"].values())

    _serve(tmp_path, fake, body)


def test_a_citation_match_candidate_that_is_retracted_is_flagged(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    _, retracted, _ = _pmids(fake)
    record = record_of(fake.corpus, retracted)
    assert record.pdat is not None
    reference = {
        "journal": record.journal.iso_abbreviation or record.journal.title,
        "year": str(record.pdat.year),
        "title": record.title,
    }

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await _ok(client, "pubmed_lookup_citation", {"references": [reference]})
        [result] = answer["results"]
        flagged = {c["pmid"]: c["retracted"] for c in result["candidates"]}
        assert flagged.get(retracted) is True
        [candidate] = [c for c in result["candidates"] if c["pmid"] == retracted]
        assert candidate["retractionNotice"] == {"noticePmid": NOTICE, "source": NOTICE_SOURCE}
        assert not any(flag for pmid, flag in flagged.items() if pmid != retracted)

    _serve(tmp_path, fake, body)


def test_search_and_fetch_on_pubmed_say_retracted_in_results_metadata_and_text(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    _, retracted, plain = _pmids(fake)

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        found = await _ok(client, "search", {"query": f"{retracted}[uid] OR {plain}[uid]"})
        assert found["source"] == "pubmed"  # nothing synced: the live path
        flags = {r["id"]: r.get("retracted", False) for r in found["results"]}
        assert flags == {f"pmid:{retracted}": True, f"pmid:{plain}": False}

        document = await _ok(client, "fetch", {"id": f"pmid:{retracted}"})
        assert document["metadata"]["retracted"] is True
        assert document["metadata"]["retraction_notice"] == SAID
        title, notice = document["text"].split("\n\n")[:2]
        assert title == document["title"]
        assert notice == f"RETRACTED. {SAID}"

        fine = await _ok(client, "fetch", {"id": f"pmid:{plain}"})
        assert fine["metadata"].get("retracted", False) is False
        assert "retraction_notice" not in fine["metadata"]
        assert "RETRACTED" not in fine["text"]

    _serve(tmp_path, fake, body)

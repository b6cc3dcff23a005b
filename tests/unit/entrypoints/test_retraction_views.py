"""The CLI's pages and the `fetch` tool's metadata name a retracted paper's notice; the export
summary counts what `--new` carried. SYNTHETIC records and answers."""

from __future__ import annotations

import pytest

from biomcp.domain.records import Notice, NoticeKind
from biomcp.entrypoints.cli.commands.corpus import _document_view
from biomcp.entrypoints.cli.commands.export import _summary_line
from biomcp.entrypoints.cli.commands.pubmed.articles import (
    _article_view,
    _related_view,
    _search_view,
)
from biomcp.entrypoints.cli.commands.pubmed.lookups import _match_view
from biomcp.entrypoints.mcp.tools.search_fetch import notice_text
from biomcp.usecases.export import ExportSummary
from biomcp.usecases.payloads import document_payload
from tests.support.builders import make_record, stored_document

pytestmark = pytest.mark.unit

SOURCE = "J Fake Res. 2024 Aug;12(8):e1"
SAID = f"Retraction in: {SOURCE}. PMID: 39000001."
NOTICED = make_record(notices=(Notice(NoticeKind.RETRACTION_IN, "39000001", SOURCE),))
TYPED_ONLY = make_record(publication_types=("Journal Article", "Retracted Publication"))
ERRATUM = make_record(notices=(Notice(NoticeKind.ERRATUM_IN, "39000002", SOURCE),))


def test_biomcp_get_shows_the_notice_pmid_and_citation() -> None:
    page = _document_view(document_payload(stored_document(NOTICED)), [])
    assert f"*** RETRACTED *** Retraction in: {SOURCE} (PMID 39000001)" in page.splitlines()
    bare = _document_view(document_payload(stored_document(TYPED_ONLY)), [])
    assert "*** RETRACTED *** no notice given" in bare.splitlines()
    assert "RETRACTED" not in _document_view(document_payload(stored_document(ERRATUM)), [])


def test_fetch_metadata_words_the_notice_as_the_citations_do() -> None:
    assert notice_text({"notice_pmid": "39000001", "source": SOURCE}) == SAID
    assert notice_text({"notice_pmid": None, "source": None}) == "Retracted publication."
    assert notice_text(None) is None


def test_pubmed_pages_mark_retracted_summaries_related_articles_and_candidates() -> None:
    briefs = [
        {"pmid": "1", "title": "Kept", "retracted": False},
        {"pmid": "2", "title": "Gone", "retracted": True},
    ]
    search = {
        "retrievedPmidCount": 2,
        "totalFound": 2,
        "effectiveESearchTerm": "x",
        "pmids": ["1", "2"],
        "briefSummaries": briefs,
    }
    lines = _search_view(search).splitlines()
    assert [line for line in lines if "RETRACTED" in line] == ["  2. 2  RETRACTED"]
    related = {
        "relationshipType": "pubmed_similar_articles",
        "sourcePmid": "9",
        "relatedArticles": [{**b, "score": None} for b in briefs],
    }
    assert [line for line in _related_view(related).splitlines() if "RETRACTED" in line] == [
        "  2. 2  RETRACTED"
    ]
    candidates = [
        {"pmid": pmid, "matchedFields": ["year"], "unmatchedFields": [], "retracted": gone}
        for pmid, gone in (("1", False), ("2", True))
    ]
    matches = {"results": [{"status": "ambiguous", "pmid": None, "candidates": candidates}]}
    assert _match_view(matches).splitlines()[1:] == [
        "  1 (matched: year)",
        "  2 RETRACTED (matched: year)",
    ]


def test_a_fetched_article_page_names_the_notice() -> None:
    article = {
        "pmid": "2",
        "title": "Gone",
        "journalInfo": {},
        "retracted": True,
        "retractionNotice": {"noticePmid": "39000001", "source": SOURCE},
    }
    assert f"RETRACTED:  Retraction in: {SOURCE} (PMID 39000001)" in _article_view(article)
    assert "RETRACTED" not in _article_view({**article, "retracted": False})


def test_the_export_summary_counts_the_carried_retractions() -> None:
    summary = ExportSummary(
        format="ris", query_key="k", added_since=None, considered=3, exported=2,
        filtered_out=1, retracted_left_out=0, new=True, retracted_carried=1,
    )  # fmt: skip
    assert "1 exported before and retracted since, carried flagged" in _summary_line(summary, None)
    assert summary.as_payload()["retracted_carried"] == 1
    assert "retracted_carried" not in ExportSummary("ris", None, None, 0, 0, 0, 0).as_payload()

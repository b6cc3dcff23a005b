"""Every surface shows the publication date the record gives, never an invented month.

The XML here is synthetic (written for these tests); the real-data tests read NLM files from
../shared/data and skip when it is absent.
"""

from __future__ import annotations

import gzip
from collections import Counter

import pytest
from lxml import etree

from biomcp.adapters.entrez import parse_pubmed_articles
from biomcp.adapters.entrez.pubmed_fields import pub_date
from biomcp.adapters.sql.serialize import record_from_json, record_to_json
from biomcp.domain.citations import format_citation
from biomcp.domain.design import classify_design
from biomcp.domain.export import ExportedRecord, csv_header, csv_row
from biomcp.domain.records import PubDate, PubMedRecord
from biomcp.usecases.live.shapes import abstract_plus, citation_data
from biomcp.usecases.payloads import document_payload
from tests.conftest import shared_data_path
from tests.support.builders import make_record, stored_document

pytestmark = pytest.mark.unit

_SEASON = "<Year>1990</Year><Season>Spring</Season>"
_RANGE = "<MedlineDate>1979 Jul-Sep</MedlineDate>"
_ACROSS = "<MedlineDate>1998 Dec-1999 Jan</MedlineDate>"
_PLAIN = "<Year>2019</Year><Month>Mar</Month><Day>05</Day>"


def _synthetic_article(pmid: str, pub_date_xml: str, version: int = 1, title: str = "T.") -> str:
    return (
        f'<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM">'
        f'<PMID Version="{version}">{pmid}</PMID><Article PubModel="Print"><Journal>'
        f"<JournalIssue><Volume>17</Volume><Issue>1</Issue><PubDate>{pub_date_xml}</PubDate>"
        f"</JournalIssue><Title>Journal of synthetic dates</Title>"
        f"<ISOAbbreviation>J Synth Dates</ISOAbbreviation></Journal>"
        f"<ArticleTitle>{title}</ArticleTitle></Article></MedlineCitation></PubmedArticle>"
    )


def _parse(*articles: str) -> tuple[PubMedRecord, ...]:
    xml = f"<PubmedArticleSet>{''.join(articles)}</PubmedArticleSet>".encode()
    parsed = parse_pubmed_articles(xml)
    assert not parsed.problems
    return parsed.records


def _record(pub_date_xml: str) -> PubMedRecord:
    (record,) = _parse(_synthetic_article("10000001", pub_date_xml))
    return record


#: (PubDate XML, pdat as ISO, the record's own text, RIS DA)
CASES = [
    pytest.param(_SEASON, "1990", "1990 Spring", "1990///Spring", id="season"),
    pytest.param(_RANGE, "1979", "1979 Jul-Sep", "1979///Jul-Sep", id="range"),
    pytest.param(_ACROSS, "1998", "1998 Dec-1999 Jan", "1998///Dec-1999 Jan", id="across-years"),
    pytest.param(_PLAIN, "2019-03-05", None, "2019/03/05/", id="year-month-day"),
]


@pytest.mark.parametrize(("xml", "iso", "text", "da"), CASES)
def test_the_parser_keeps_a_month_only_when_the_record_names_one(
    xml: str, iso: str, text: str | None, da: str
) -> None:
    pdat = _record(xml).pdat

    assert pdat is not None
    assert pdat.iso() == iso
    assert pdat.raw == text
    assert (pdat.month is None) == (text is not None)


@pytest.mark.parametrize(("xml", "iso", "text", "da"), CASES)
def test_rag_get_shows_the_iso_date_and_the_records_text(
    xml: str, iso: str, text: str | None, da: str
) -> None:
    payload = document_payload(stored_document(_record(xml)))

    assert payload["pdat"] == iso
    assert payload["pdat_text"] == text


@pytest.mark.parametrize(("xml", "iso", "text", "da"), CASES)
def test_live_tools_show_no_month_the_record_lacks(
    xml: str, iso: str, text: str | None, da: str
) -> None:
    record = _record(xml)
    for article in (
        abstract_plus(record, include_mesh=False, include_grants=False),
        citation_data(record, include_mesh=False, include_grants=False),
    ):
        date = article["journalInfo"]["publicationDate"]
        assert date["isoDate"] == iso
        assert date["month"] == ("Mar" if text is None else None)
        assert date["medlineDate"] == (text or "2019 Mar 5")


@pytest.mark.parametrize(("xml", "iso", "text", "da"), CASES)
def test_exports_keep_the_year_and_the_records_text(
    xml: str, iso: str, text: str | None, da: str
) -> None:
    record = _record(xml)
    doc = stored_document(record)
    item = ExportedRecord(record, doc.evidence, doc.quality, str(classify_design(record).design))
    ris = format_citation(record, "ris").splitlines()
    bibtex = format_citation(record, "bibtex")

    assert f"PY  - {iso[:4]}" in ris
    assert f"DA  - {da}" in ris
    assert f"year = {{{iso[:4]}}}" in bibtex
    if text is None:
        assert "month = {mar}" in bibtex
    else:  # never a month BibTeX would read as a calendar month
        assert not any(f"month = {{{m}}}" in bibtex for m in ("jan", "mar", "jul", "dec"))
    row = dict(zip(csv_header().strip().split(","), csv_row(item).strip().split(","), strict=False))
    assert row["year"] == iso[:4]


@pytest.mark.parametrize(("xml", "iso", "text", "da"), CASES)
def test_citations_print_the_records_date_text(
    xml: str, iso: str, text: str | None, da: str
) -> None:
    vancouver = format_citation(_record(xml), "vancouver")

    assert f"{text or '2019 Mar 5'};17(1)" in vancouver


def test_a_stored_date_with_a_month_derived_from_its_season_reads_back_without_it() -> None:
    stored = record_to_json(PubMedRecord("7", pdat=PubDate(1990, raw="1990 Spring")))
    stored["pdat"] = {"year": 1990, "month": 3, "day": None, "raw": "1990 Spring"}  # old parser

    assert record_from_json(stored).pdat == PubDate(1990, raw="1990 Spring")


def test_the_year_stays_known_for_the_year_filter() -> None:
    assert [_record(xml).year for xml in (_SEASON, _RANGE, _ACROSS, _PLAIN)] == [
        1990,
        1979,
        1998,
        2019,
    ]


# --------------------------------------------------------------------------- versioned PMIDs


def test_a_versioned_pmid_gives_one_record_the_latest_version_with_its_number() -> None:
    records = _parse(
        _synthetic_article("10000002", _PLAIN, version=1, title="First."),
        _synthetic_article("10000003", _PLAIN, title="Other."),
        _synthetic_article("10000002", _PLAIN, version=3, title="Third."),
        _synthetic_article("10000002", _PLAIN, version=2, title="Second."),
    )

    assert [(r.pmid, r.pmid_version, r.title) for r in records] == [
        ("10000002", 3, "Third."),
        ("10000003", 1, "Other."),
    ]


def test_the_pmid_version_survives_storage_and_old_rows_read_as_version_one() -> None:
    stored = record_to_json(make_record(pmid_version=2))
    assert record_from_json(stored).pmid_version == 2
    del stored["pmid_version"]
    assert record_from_json(stored).pmid_version == 1


# --------------------------------------------------------------------------- real NLM files


def test_the_real_season_record_has_no_month_on_any_surface() -> None:
    xml = shared_data_path("eutils", "biopython", "pubmed1.xml").read_bytes()
    (record,) = [r for r in parse_pubmed_articles(xml).records if r.pmid == "12091962"]

    assert document_payload(stored_document(record))["pdat"] == "1990"
    shaped = abstract_plus(record, include_mesh=False, include_grants=False)
    assert shaped["journalInfo"]["publicationDate"]["month"] is None
    assert "DA  - 1990///Spring" in format_citation(record, "ris").splitlines()


def test_no_medline_date_range_of_the_1979_baseline_file_gets_a_month() -> None:
    path = shared_data_path("ncbi_files", "pubmed20n0014.xml.gz")
    seen: Counter[str] = Counter()
    with gzip.open(path) as stream:
        for _, node in etree.iterparse(stream, tag="PubDate"):
            medline = node.findtext("MedlineDate")
            if medline is not None:
                pdat = pub_date(node)
                assert pdat is not None
                assert pdat.raw == medline
                single = len({w[:3] for w in medline.split() if w[:3].isalpha()}) == 1
                seen["month" if pdat.month else "none"] += 1
                assert pdat.month is None or ("-" in medline and single), medline
            node.clear()
    assert seen["none"] > 2000  # the month ranges (`1979 Jul-Sep`) and year spans
    assert 0 < seen["month"] < 100  # day ranges inside one month (`1979 Apr 12-18`)


def test_the_2021_update_files_versioned_pmids_give_one_record_each() -> None:
    path = shared_data_path("ncbi_files", "pubmed21n1298.xml.gz")
    wanted = {"30271887", "33728380", "34017925"}
    copies: list[bytes] = []
    with gzip.open(path) as stream:
        for _, node in etree.iterparse(stream, tag="PubmedArticle"):
            if node.findtext("MedlineCitation/PMID") in wanted:
                copies.append(etree.tostring(node))
            node.clear()
    parsed = parse_pubmed_articles(
        b"<PubmedArticleSet>" + b"".join(copies) + b"</PubmedArticleSet>"
    )

    assert len(copies) > len(wanted)
    assert sorted(r.pmid for r in parsed.records) == sorted(wanted)
    assert {r.pmid: r.pmid_version for r in parsed.records}["30271887"] == 4

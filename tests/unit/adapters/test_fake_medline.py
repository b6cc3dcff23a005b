"""MEDLINE text from records, and corpus rules of the fake E-utilities."""

from __future__ import annotations

from datetime import date

import pytest

from biomcp.domain.records import (
    AbstractSection,
    Author,
    Journal,
    MeshHeading,
    MeshQualifier,
    PubDate,
    utc,
)
from biomcp.testing.eutils.corpus import FakeCorpus
from biomcp.testing.eutils.index import SearchIndex
from biomcp.testing.eutils.medline import ArticleExtras, to_medline
from biomcp.testing.eutils.synthetic import generate_articles
from tests.support.builders import make_record

pytestmark = pytest.mark.unit


def test_to_medline_tags_and_wrapping() -> None:
    record = make_record(
        pmid="123",
        title="A " + "very " * 30 + "long title.",
        abstract=(
            AbstractSection("Why we did it.", label="BACKGROUND"),
            AbstractSection("What we found.", label="RESULTS"),
        ),
        journal=Journal(
            title="Journal of examples", iso_abbreviation="J Ex", issn="1234-5679", volume="7",
            issue="2",
        ),
        authors=(
            Author("Doe", "Jane A", "JA", affiliations=("Dept A.",), orcid="0000-0001-2345-6789"),
            Author(collective_name="The Study Group"),
        ),
        mesh=(
            MeshHeading("Asthma", major=True),
            MeshHeading("Lung", qualifiers=(MeshQualifier("drug effects", major=True),)),
        ),
        keywords=("wheeze",),
        pdat=PubDate(2021, 3, 5),
        edat=utc(2021, 3, 6, 7, 8),
        lr=utc(2022, 1, 2),
        doi="10.1/x",
        pmcid="PMC42",
        pages="1-9",
        languages=("eng",),
    )  # fmt: skip
    text = to_medline(record)
    lines = text.splitlines()
    assert text.endswith("\n")
    assert lines[:3] == ["PMID- 123", "OWN - NLM", "STAT- MEDLINE"]
    for expected in (
        "LR  - 20220102",
        "IS  - 1234-5679 (Print)",
        "VI  - 7",
        "IP  - 2",
        "DP  - 2021 Mar 5",
        "PG  - 1-9",
        "LID - 10.1/x [doi]",
        "AB  - BACKGROUND: Why we did it. RESULTS: What we found.",
        "FAU - Doe, Jane A",
        "AU  - Doe JA",
        "AUID- ORCID: 0000-0001-2345-6789",
        "AD  - Dept A.",
        "CN  - The Study Group",
        "LA  - eng",
        "PT  - Journal Article",
        "TA  - J Ex",
        "JT  - Journal of examples",
        "MH  - *Asthma",
        "MH  - Lung/*drug effects",
        "PMC - PMC42",
        "OT  - wheeze",
        "EDAT- 2021/03/06 07:08",
        "AID - 10.1/x [doi]",
        "SO  - J Ex. 2021 Mar 5;7(2):1-9. doi: 10.1/x.",
    ):
        assert expected in lines, expected
    start = next(i for i, line in enumerate(lines) if line.startswith("TI  - "))
    assert lines[start + 1].startswith(" " * 6)  # a continuation line
    assert not lines[start + 1].startswith(" " * 7)
    assert all(len(line) <= 80 for line in lines)


def test_extras_fill_what_the_record_lacks() -> None:
    record = make_record(pmid="5", mesh=())
    extras = ArticleExtras(
        owner="KIE", status="In-Data-Review", completed="20200101", epub="20191231",
        issns=(("1111-2222", "Electronic"), ("3333-4444", "Linking")),
        history=(("pubmed", "2020/01/02 00:00"), ("entrez", "2020/01/01 12:00")),
    )  # fmt: skip
    lines = to_medline(record, extras).splitlines()
    assert lines[1:4] == ["OWN - KIE", "STAT- In-Data-Review", "DCOM- 20200101"]
    assert "IS  - 3333-4444 (Linking)" in lines
    assert "DEP - 20191231" in lines
    assert "EDAT- 2020/01/02 00:00" in lines  # MEDLINE's EDAT is the "pubmed" history date
    assert "CRDT- 2020/01/01 12:00" in lines
    assert "STAT- PubMed-not-MEDLINE" in to_medline(record).splitlines()


def test_records_without_an_entrez_date_never_match_an_edat_window() -> None:
    dated = generate_articles(3, start=date(2020, 1, 1), end=date(2020, 1, 3))
    undated = (
        b"<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>7</PMID><Article>"
        b"<ArticleTitle>No dates</ArticleTitle></Article></MedlineCitation></PubmedArticle>"
        b"</PubmedArticleSet>"
    )
    corpus = FakeCorpus.from_xml_bytes(dated, undated)
    index = SearchIndex(corpus.entries())
    assert corpus.get("7") is not None
    assert corpus.get("7").fields.edat is None  # type: ignore[union-attr]
    window = index.date_range("edat", date(1000, 1, 1), date(9999, 12, 31))
    assert sorted(index.entries[d].pmid for d in window) == ["30000000", "30000001", "30000002"]
    # sorted last by the default order
    assert index.entries[index.sort(range(4), None)[-1]].pmid == "7"

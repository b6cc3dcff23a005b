"""Citations of a retracted paper say so, as NLM's Citing Medicine does ("Retraction
in:" and the notice), and a paper that is not retracted is cited exactly as before.
SYNTHETIC records."""

from __future__ import annotations

import pytest
import rispy
from bibtexparser.entrypoint import parse_string

from biomcp.domain.citations import CitationStyle, format_citation
from biomcp.domain.records import Notice, NoticeKind
from biomcp.domain.retracted_citations import cite, retraction_sentence
from tests.support.builders import make_record

pytestmark = pytest.mark.unit

SOURCE = "J Fake Res. 2024 Aug;12(8):e1"
SAID = f"Retraction in: {SOURCE}. PMID: 39000001."
NOTICED = make_record(notices=(Notice(NoticeKind.RETRACTION_IN, "39000001", SOURCE),))
TYPED_ONLY = make_record(publication_types=("Journal Article", "Retracted Publication"))
ERRATUM = make_record(notices=(Notice(NoticeKind.ERRATUM_IN, "39000002", SOURCE),))


def test_the_sentence_names_the_notice_or_says_retracted_without_one() -> None:
    assert retraction_sentence(NOTICED) == SAID
    assert retraction_sentence(TYPED_ONLY) == "Retracted publication."
    assert retraction_sentence(ERRATUM) is None  # an erratum is no retraction
    only_pmid = make_record(notices=(Notice(NoticeKind.RETRACTION_IN, "39000001"),))
    assert retraction_sentence(only_pmid) == "Retraction in: PMID: 39000001."


@pytest.mark.parametrize("style", list(CitationStyle))
def test_a_paper_that_is_not_retracted_is_cited_as_before(style: CitationStyle) -> None:
    assert cite(ERRATUM, style) == format_citation(ERRATUM, style)


@pytest.mark.parametrize("style", [CitationStyle.APA, CitationStyle.MLA, CitationStyle.VANCOUVER])
def test_prose_styles_end_with_the_retraction_notice(style: CitationStyle) -> None:
    assert cite(NOTICED, style) == f"{format_citation(NOTICED, style)} {SAID}"


def test_ris_carries_the_notice_as_a_note_that_a_reader_parses() -> None:
    (entry,) = rispy.loads(cite(NOTICED, "ris"))
    assert entry["notes"] == [SAID]
    assert cite(NOTICED, "ris").endswith(f"N1  - {SAID}\nER  - ")


def test_bibtex_joins_an_existing_note_or_adds_one_and_stays_parseable() -> None:
    for record in (NOTICED, TYPED_ONLY):
        plain = parse_string(format_citation(record, "bibtex")).entries[0]
        (entry,) = parse_string(cite(record, "bibtex")).entries
        before = {f.key: f.value for f in plain.fields}.get("note")
        note = {f.key: f.value for f in entry.fields}["note"]
        said = retraction_sentence(record)
        assert said is not None
        assert note == (f"{before.rstrip('. ')}. {said}" if before else said)
        assert {f.key for f in entry.fields} == {f.key for f in plain.fields} | {"note"}

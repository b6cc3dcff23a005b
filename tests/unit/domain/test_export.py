"""`domain.export`: each format read back by an independent reader (rispy for RIS, bibtexparser
for BibTeX, the csv module for CSV), as a reference manager or a spreadsheet would read it."""

from __future__ import annotations

import csv
import io
from dataclasses import replace

import pytest
import rispy
from bibtexparser.entrypoint import parse_string

from biomcp.domain.design import classify_design
from biomcp.domain.export import (
    CSV_COLUMNS,
    ExportedRecord,
    bibtex_entry,
    csv_header,
    csv_row,
    derived_note,
    ris_entry,
)
from biomcp.domain.records import (
    Author,
    Journal,
    MeshHeading,
    MeshQualifier,
    Notice,
    NoticeKind,
    PubDate,
)
from tests.support.builders import make_record, stored_document


def exported(**overrides: object) -> ExportedRecord:
    doc = stored_document(make_record(**overrides))
    design = doc.evidence.design or classify_design(doc.record)
    return ExportedRecord(
        record=doc.record, evidence=doc.evidence, quality=doc.quality, design=str(design.design)
    )


TRIAL = {
    "pmid": "31000001",
    "title": "Salt_reduction & 100% {braced} blood pressure: a randomized controlled trial.",
    "publication_types": ("Journal Article", "Randomized Controlled Trial"),
    "authors": (
        Author(last_name="Okafor", fore_name="Grace", initials="G"),
        Author(collective_name="SALT Trial Group"),
    ),
    "journal": Journal(title="The Lancet", iso_abbreviation="Lancet", volume="390", issue="2"),
    "pages": "101-9",
    "doi": "10.1000/salt.1",
    "pdat": PubDate(2021, 3),
    "text": "In 1,200 adults, blood pressure fell by 5 mmHg (95% CI 3 to 7).",
    "mesh": (
        MeshHeading(descriptor="Hypertension", major=True),
        MeshHeading(
            descriptor="Sodium Chloride, Dietary",
            qualifiers=(MeshQualifier(name="administration & dosage", major=True),),
        ),
        MeshHeading(descriptor="Humans"),
    ),
}


def test_the_note_says_tier_design_and_score_and_flags_a_retraction() -> None:
    item = exported(**TRIAL)
    note = derived_note(item)
    assert note == (
        f"bio-mcp: evidence {item.evidence.evidence_type} (rct); quality {item.quality.total}/10"
    )
    retracted = exported(**TRIAL, notices=(Notice(kind=NoticeKind.RETRACTION_IN, pmid="39000001"),))
    assert retracted.retracted
    assert derived_note(retracted) == (
        f"bio-mcp: evidence {retracted.evidence.evidence_type} (rct); "
        f"quality {retracted.quality.total}/10; RETRACTED"
    )
    assert retracted.quality.total < item.quality.total  # what it reports is withdrawn


def test_ris_reads_back_with_keywords_and_the_note() -> None:
    item = exported(**TRIAL)
    text = ris_entry(item) + "\n\n" + ris_entry(exported(**{**TRIAL, "pmid": "31000002"}))
    entries = rispy.loads(text)
    assert len(entries) == 2
    first = entries[0]
    assert first["type_of_reference"] == "JOUR"
    assert first["accession_number"] == "31000001"
    assert first["authors"] == ["Okafor, Grace", "SALT Trial Group"]
    assert first["doi"] == "10.1000/salt.1"
    assert (first["start_page"], first["end_page"]) == ("101", "109")
    # A major topic keeps its star, whether the descriptor or a qualifier is starred.
    assert first["keywords"] == ["Hypertension*", "Sodium Chloride, Dietary*", "Humans"]
    assert first["notes"] == [derived_note(item)]
    assert entries[1]["accession_number"] == "31000002"


def test_ris_of_a_record_without_mesh_has_no_keywords() -> None:
    entry = rispy.loads(ris_entry(exported(pmid="31000003")))[0]
    assert "keywords" not in entry
    assert entry["notes"][0].startswith("bio-mcp: evidence ")


def test_bibtex_reads_back_with_escaped_keywords_and_note() -> None:
    item = exported(**TRIAL)
    library = parse_string(bibtex_entry(item))
    assert not library.failed_blocks
    (entry,) = library.entries
    assert entry.entry_type == "article"
    fields = {f.key: f.value for f in entry.fields}
    assert fields["pmid"] == "31000001"
    assert fields["keywords"] == "Hypertension*, Sodium Chloride, Dietary*, Humans"
    assert fields["annote"] == derived_note(item)
    # The title's special characters stay escaped and its braces balanced.
    assert fields["title"] == (
        r"{Salt\_reduction \& 100\% \{braced\} blood pressure: a randomized controlled trial}"
    )


def test_bibtex_note_with_underscores_is_escaped() -> None:
    item = exported(pmid="31000004", publication_types=("Journal Article", "Case Reports"))
    assert item.design == "case_report"
    (entry,) = parse_string(bibtex_entry(item)).entries
    annote = {f.key: f.value for f in entry.fields}["annote"]
    assert "(case\\_report)" in annote


def test_csv_rows_read_back_to_the_columns() -> None:
    item = replace(exported(**TRIAL), queries=("htn_v1", "salt_v2"))
    text = csv_header() + csv_row(item)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == list(CSV_COLUMNS)
    row = rows[0]
    assert row["pmid"] == "31000001"
    assert row["title"] == TRIAL["title"]  # commas, braces and ampersands kept as text
    assert row["authors"] == "Okafor G; SALT Trial Group"
    assert row["journal"] == "The Lancet"
    assert row["year"] == "2021"
    assert row["publication_types"] == "Journal Article; Randomized Controlled Trial"
    assert row["study_design"] == "rct"
    assert row["evidence_type"] == str(item.evidence.evidence_type)
    assert row["quality_total"] == str(item.quality.total)
    assert row["retracted"] == "no"
    assert row["mesh"] == "Hypertension*; Sodium Chloride, Dietary*; Humans"
    assert row["saved_queries"] == "htn_v1; salt_v2"
    assert row["url"] == "https://pubmed.ncbi.nlm.nih.gov/31000001/"


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_a_csv_cell_a_spreadsheet_would_run_is_quoted_as_text(start: str) -> None:
    title = f'{start}HYPERLINK("http://example.invalid","x")'
    row = next(csv.DictReader(io.StringIO(csv_header() + csv_row(exported(title=title)))))
    assert row["title"] == f"'{title}"


def test_a_csv_title_with_a_newline_stays_one_record() -> None:
    title = 'Line one\nline "two", with a comma'
    rows = list(csv.DictReader(io.StringIO(csv_header() + csv_row(exported(title=title)) * 2)))
    assert len(rows) == 2
    assert rows[0]["title"] == title

"""Stored records written out for reference managers and screening tools.

A systematic search ends in Zotero, EndNote, Covidence, Rayyan or a spreadsheet. Each format
here carries the citation (`domain.citations`) and what bio-mcp derived for the record, so a
screener sees the evidence tier, study design and quality score beside it:

* **RIS** (`ris`): the citation's tags, the MeSH descriptors as `KW` (reference managers
  import them as tags; a major topic keeps its `*`), and one `N1` note: `bio-mcp: evidence
  clinical (rct); quality 7/10` and, for a retracted record, `RETRACTED`. A record naming
  trials gets a second `N1`, `Trial registry: NCT01234567`: every reference manager keeps
  notes, while the custom tags `C1`-`C8` are EndNote's alone and others drop or rename them.
* **BibTeX** (`bibtex`): the citation, `keywords` with the MeSH descriptors and the same
  texts in `annote` (BibTeX's free-text field; Zotero and JabRef keep it as a note, and
  citation styles do not print it, as they would `note`).
* **CSV** (`csv`): one row per record, the columns of `CSV_COLUMNS` (with the saved queries
  that brought it, so one spreadsheet can hold several topics). A cell that a spreadsheet
  would read as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return) gets
  a leading `'`, as OWASP's guidance on CSV injection has it: a title is text, never code.
* **PMIDs** (`pmids`): one per line, for PubMed's own search box or another tool.

The formats are pure: a record in, text out, the same text for the same record.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from biomcp.domain.citations import bibtex, bibtex_escape, format_citation, one_line
from biomcp.domain.evidence import EvidenceClassification
from biomcp.domain.records import PubMedRecord, QualityBreakdown

__all__ = [
    "CSV_COLUMNS",
    "ExportFormat",
    "ExportedRecord",
    "bibtex_entry",
    "csv_header",
    "csv_row",
    "derived_note",
    "registry_note",
    "ris_entry",
]


class ExportFormat(StrEnum):
    RIS = "ris"
    BIBTEX = "bibtex"
    CSV = "csv"
    JSONL = "jsonl"
    PMIDS = "pmids"


#: The CSV's columns, in order.
CSV_COLUMNS = (
    "pmid",
    "doi",
    "pmcid",
    "fulltext",
    "title",
    "authors",
    "journal",
    "year",
    "publication_types",
    "evidence_type",
    "study_design",
    "quality_total",
    "retracted",
    "trial_ids",
    "mesh",
    "saved_queries",
    "url",
)

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True, slots=True)
class ExportedRecord:
    """A stored record with what bio-mcp derived for it."""

    record: PubMedRecord
    evidence: EvidenceClassification
    quality: QualityBreakdown
    #: The study design (`evidence.design`, or derived again for a record stored before
    #: designs were kept).
    design: str
    #: The saved queries that brought it (for the CSV; empty when not looked up).
    queries: tuple[str, ...] = ()
    #: Its full-text status (`fulltext_policy`; empty when never checked or not looked up).
    fulltext: str = ""

    @property
    def retracted(self) -> bool:
        return self.record.is_retracted


def derived_note(item: ExportedRecord) -> str:
    """`bio-mcp: evidence clinical (rct); quality 7/10`, with `; RETRACTED` when it is."""
    note = (
        f"bio-mcp: evidence {item.evidence.evidence_type} ({item.design}); "
        f"quality {item.quality.total}/10"
    )
    return f"{note}; RETRACTED" if item.retracted else note


def registry_note(record: PubMedRecord) -> str | None:
    """`Trial registry: NCT01234567, 2004-001234-56`, or None when the record names none."""
    return f"Trial registry: {', '.join(record.trial_ids)}" if record.trial_ids else None


def _mesh_terms(record: PubMedRecord) -> list[str]:
    return [f"{h.descriptor}*" if h.is_major else h.descriptor for h in record.mesh]


def ris_entry(item: ExportedRecord) -> str:
    """The record's RIS citation with its MeSH descriptors (`KW`), `derived_note` (`N1`) and
    `registry_note` (a second `N1`, when there is one)."""
    lines = format_citation(item.record, "ris").split("\n")
    end = lines.pop()  # "ER  - "
    lines += [f"KW  - {one_line(term)}" for term in _mesh_terms(item.record)]
    lines.append(f"N1  - {derived_note(item)}")
    if trials := registry_note(item.record):
        lines.append(f"N1  - {trials}")
    lines.append(end)
    return "\n".join(lines)


def bibtex_entry(item: ExportedRecord) -> str:
    """The record's BibTeX entry with `keywords` (MeSH) and `annote` (`derived_note`, then
    `registry_note` when there is one)."""
    entry = bibtex(item.record)
    extra = []
    terms = _mesh_terms(item.record)
    if terms:
        extra.append(("keywords", ", ".join(bibtex_escape(t) for t in terms)))
    notes = (derived_note(item), registry_note(item.record))
    extra.append(("annote", bibtex_escape(". ".join(n for n in notes if n))))
    body = "".join(f",\n  {name} = {{{value}}}" for name, value in extra)
    head, closing = entry[: entry.rindex("\n}")], entry[entry.rindex("\n}") :]
    return f"{head}{body}{closing}"


def _cell(value: str) -> str:
    return f"'{value}" if value.startswith(_FORMULA_START) else value


def _csv_line(cells: Sequence[str]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow([_cell(c) for c in cells])
    return buffer.getvalue()


def csv_header() -> str:
    """The CSV's first line."""
    return _csv_line(CSV_COLUMNS)


def csv_row(item: ExportedRecord) -> str:
    """One CSV line (ending in a newline) with the columns of `CSV_COLUMNS`."""
    record = item.record
    authors = "; ".join(a.display_name for a in record.authors)
    year = record.year
    cells = {
        "pmid": record.pmid,
        "doi": record.doi or "",
        "pmcid": record.pmcid or "",
        "fulltext": item.fulltext,
        "title": record.title or "",
        "authors": authors,
        "journal": record.journal.title or record.journal.iso_abbreviation or "",
        "year": str(year) if year is not None else "",
        "publication_types": "; ".join(record.publication_types),
        "evidence_type": str(item.evidence.evidence_type),
        "study_design": item.design,
        "quality_total": str(item.quality.total),
        "retracted": "yes" if item.retracted else "no",
        "trial_ids": "; ".join(record.trial_ids),
        "mesh": "; ".join(_mesh_terms(record)),
        "saved_queries": "; ".join(item.queries),
        "url": f"https://pubmed.ncbi.nlm.nih.gov/{record.pmid}/",
    }
    return _csv_line([cells[c] for c in CSV_COLUMNS])

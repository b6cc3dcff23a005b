"""The record's values as text a citation prints.

Records come from upstream, so no value is trusted: every style reads the record with each of
its strings on one line (`one_line`: control characters and line breaks become a space, runs of
spaces one). A value cannot end an RIS record or add a tag, nor close a BibTeX field or entry.

Journal names (APA, MLA, BibTeX, RIS `T2`) come from `journals.journal_name`: NLM's catalogue
title without its place qualifier, in title case. APA 7 and MLA 9 print a periodical's name as
the journal does (`periodical_of`). NLM's catalogue copies a leading "The" from old title pages
(`The American psychologist`), so it is dropped unless the journal's own name keeps it. Vancouver
prints NLM's abbreviation (`nlm_abbreviation`); RIS `J2` keeps the ISO abbreviation as given.
"""

from __future__ import annotations

import re
from dataclasses import fields, is_dataclass, replace
from typing import Any

from biomcp.domain.journals import journal_name
from biomcp.domain.records import PubMedRecord

__all__ = [
    "clean_record",
    "doi_url",
    "end",
    "journal_of",
    "nlm_abbreviation",
    "one_line",
    "periodical_of",
    "title_of",
    "year_of",
]

# Control characters (tab, line feed, carriage return, NEL, escape...) and Unicode's line and
# paragraph separators: any of them can end a line for some reader.
_BREAKS = re.compile(r"[ \x00-\x1f\x7f-\x9f\u2028\u2029]+")


def one_line(text: str) -> str:
    """`text` on one line: each run of spaces, control characters and line or paragraph
    separators becomes one space, and the ends are stripped of whitespace."""
    return _BREAKS.sub(" ", text).strip()


def _one_line_value(value: object) -> object:
    if type(value) is str:
        return one_line(value)
    if isinstance(value, tuple):
        return tuple(_one_line_value(v) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        return _one_line_fields(value)
    return value


def _one_line_fields(value: Any) -> Any:
    """`value` (a record dataclass) with every string in it, nested ones too, on one line."""
    changes = {}
    for f in fields(value):
        old = getattr(value, f.name)
        new = _one_line_value(old)
        if new != old:
            changes[f.name] = new
    return replace(value, **changes) if changes else value


def clean_record(record: PubMedRecord) -> PubMedRecord:
    """The record every style formats: no value can break a line or carry a control
    character into a citation."""
    cleaned: PubMedRecord = _one_line_fields(record)
    return cleaned


def title_of(record: PubMedRecord) -> str:
    """The article title without its final period; a translated title loses PubMed's
    brackets."""
    text = (record.title or "").strip()
    # PubMed brackets translated titles: "[Title in English]." -> keep the words.
    if text.startswith("[") and text.rstrip(".").endswith("]"):
        text = text.rstrip(".")[1:-1]
    return text.rstrip(". ")


def end(text: str) -> str:
    """`text` ending with one terminal punctuation mark."""
    text = text.rstrip()
    return text if text.endswith((".", "?", "!")) else f"{text}."


def journal_of(record: PubMedRecord) -> str:
    """The journal's name in title case without NLM's place qualifier (APA, MLA, BibTeX)."""
    return journal_name(record.journal.title, record.journal.iso_abbreviation)


# Journals whose own name begins with "The" (their masthead), case-folded, after the "The".
_THE_IN_OWN_NAME = frozenset(
    {
        "new england journal of medicine",
        "journal of clinical investigation",
        "journal of neuroscience",
        "journal of physiology",
    }
)


def periodical_of(record: PubMedRecord) -> str:
    """The journal's name as APA 7 and MLA 9 print it: `journal_of` without the leading "The"
    NLM's catalogue adds (`The American Psychologist` -> `American Psychologist`)."""
    name = journal_of(record)
    rest = name[4:] if name.startswith("The ") else None
    if not rest or rest.casefold() in _THE_IN_OWN_NAME:
        return name
    return rest


def nlm_abbreviation(abbreviation: str) -> str:
    """The journal abbreviation as NLM prints it (MedlineTA, Citing Medicine): without periods.
    Older records give ISO 4 with periods: `Proc. Natl. Acad. Sci. U.S.A.` -> `Proc Natl Acad
    Sci U S A`, `Biochim. Biophys. Acta` -> `Biochim Biophys Acta`."""
    spaced = re.sub(r"\.(?=\w)", " ", abbreviation)
    return re.sub(r"\s+", " ", spaced.replace(".", " ")).strip()


def year_of(record: PubMedRecord) -> str | None:
    return str(record.pdat.year) if record.pdat is not None else None


def doi_url(record: PubMedRecord) -> str | None:
    return f"https://doi.org/{record.doi}" if record.doi else None

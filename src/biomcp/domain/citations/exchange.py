"""The formats a reference manager imports: BibTeX and RIS.

* **BibTeX**: `@article{Key, ...}` with authors joined by `and`, page ranges with `--`, every
  value escaped by `bibtex_escape` (the DOI percent-encoded instead, as in its URL).
* **RIS**: `TY  - JOUR` ... `ER  - `, one `AU` per author, `SP` / `EP` for pages.
"""

from __future__ import annotations

import re

from biomcp.domain.citations.dates import MONTHS, date_tail, date_text
from biomcp.domain.citations.names import Name, cited_names, first_names
from biomcp.domain.citations.pages import expand_pages, page_bounds
from biomcp.domain.citations.text import clean_record, journal_of, one_line, title_of, year_of
from biomcp.domain.records import PubDate, PubMedRecord

__all__ = ["bibtex", "bibtex_escape", "ris"]

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    **{ch: f"\\{ch}" for ch in "%&$#_"},
}
_UNPAIRED_BRACE = {"{": r"\textbraceleft{}", "}": r"\textbraceright{}"}


def bibtex_escape(text: str) -> str:
    r"""`text` as the body of a braced BibTeX field, on one line (`one_line`).

    LaTeX's specials `%&$#_` get a backslash and a backslash becomes `\textbackslash{}`.
    Braces that pair up within `text` become `\{` and `\}`; a brace without its partner becomes
    `\textbraceleft{}` or `\textbraceright{}`. So the braces of the result balance both for
    readers that skip `\{` and for BibTeX, which counts it: no value can close its field or
    its entry. With no line break in it, no value can start an `@` entry either.
    """
    text = one_line(text)
    paired = _paired_braces(text)
    out = []
    for i, ch in enumerate(text):
        if ch in "{}":
            out.append(f"\\{ch}" if i in paired else _UNPAIRED_BRACE[ch])
        else:
            out.append(_LATEX_SPECIAL.get(ch, ch))
    return "".join(out)


def _paired_braces(text: str) -> set[int]:
    """The positions of the braces in `text` that close or are closed by another."""
    paired: set[int] = set()
    opened: list[int] = []
    for i, ch in enumerate(text):
        if ch == "{":
            opened.append(i)
        elif ch == "}" and opened:
            paired.update((opened.pop(), i))
    return paired


# BibTeX splits an author list on a free-standing `and` and a name on its commas.
_NAME_SEPARATOR = re.compile(r",|(?:^|\s)and(?:\s|$)", re.IGNORECASE)


def _bibtex_name_part(text: str) -> str:
    """A last or first name, braced when it holds a comma, the word `and` or an escape.

    bibtexparser 2 drops the first two characters of a name that starts with an escape, after
    `and`, and the last escape of a name that ends with one, before `and`."""
    escaped = bibtex_escape(text)
    if _NAME_SEPARATOR.search(text) or "\\" in escaped:
        return f"{{{escaped}}}"
    return escaped


def _bibtex_name(name: Name) -> str:
    if name.group:
        return f"{{{bibtex_escape(name.group)}}}"
    first = first_names(name.author)
    last = _bibtex_name_part(name.last)
    return f"{last}, {_bibtex_name_part(first)}" if first else last


# `doi` is a verbatim field for biblatex: a LaTeX escape would be printed, so the characters
# that could unbalance the field (and `%` itself, and spaces) are percent-encoded as in the
# DOI's URL, which resolves the same.
_DOI_ENCODED = re.compile(r"[%{}\\ ]")


def _bibtex_doi(doi: str) -> str:
    return _DOI_ENCODED.sub(lambda m: f"%{ord(m.group()):02X}", one_line(doi))


def _bibtex_date(pdat: PubDate) -> list[tuple[str, str]]:
    """The `note` or `month` field of a date: NLM's text after the year as the month, a range
    across years as a note, else the structured month."""
    text = date_text(pdat)
    tail = date_tail(pdat)
    if text and tail and re.search(r"\d{4}", tail):
        return [("note", f"Published {bibtex_escape(text)}")]
    if tail:
        return [("month", bibtex_escape(tail))]
    if pdat.month:
        return [("month", MONTHS[pdat.month - 1].lower())]
    return []


def bibtex(record: PubMedRecord) -> str:
    """The record as one `@article` entry. Every value is braced and escaped by
    `bibtex_escape` (the DOI percent-encoded instead); the key keeps ASCII letters, digits and
    `_` only."""
    record = clean_record(record)
    names = cited_names(record)
    first = re.sub(r"[^A-Za-z]", "", names[0].last) if names else "pmid"
    key = f"{first or 'pmid'}{year_of(record) or ''}_{record.pmid}"
    fields: list[tuple[str, str]] = []
    if names:
        fields.append(("author", " and ".join(_bibtex_name(n) for n in names)))
    fields.append(("title", f"{{{bibtex_escape(title_of(record))}}}"))
    if journal_of(record):
        fields.append(("journal", bibtex_escape(journal_of(record))))
    if year_of(record):
        fields.append(("year", str(year_of(record))))
    if record.pdat is not None:
        fields += _bibtex_date(record.pdat)
    if record.journal.volume:
        fields.append(("volume", bibtex_escape(record.journal.volume)))
    if record.journal.issue:
        fields.append(("number", bibtex_escape(record.journal.issue)))
    pages = expand_pages(record.pages)
    if pages:
        fields.append(("pages", bibtex_escape(pages.replace("-", "--"))))
    if record.doi:
        fields.append(("doi", _bibtex_doi(record.doi)))
    fields.append(("pmid", record.pmid))
    if record.pmcid:
        fields.append(("pmcid", bibtex_escape(record.pmcid)))
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@article{{{key},\n{body}\n}}"


def _ris_date(pdat: PubDate) -> str:
    """`YYYY/MM/DD/other`: a Season / MedlineDate keeps month and day empty and its text in
    the free fourth field (`1990///Spring`)."""
    tail = date_tail(pdat)
    if date_text(pdat):
        return f"{pdat.year:04d}///{tail or ''}"
    month = f"{pdat.month:02d}" if pdat.month else ""
    day = f"{pdat.day:02d}" if pdat.day else ""
    return f"{pdat.year:04d}/{month}/{day}/"


def ris(record: PubMedRecord) -> str:
    """The record as one RIS reference, a tag per line, every value on one line."""
    record = clean_record(record)
    lines = ["TY  - JOUR"]
    lines += [f"AU  - {n.inverted()}" for n in cited_names(record)]
    lines.append(f"TI  - {title_of(record)}")
    if journal_of(record):
        lines.append(f"T2  - {journal_of(record)}")
    if record.journal.iso_abbreviation:
        lines.append(f"J2  - {record.journal.iso_abbreviation}")
    if record.pdat is not None:
        lines.append(f"PY  - {record.pdat.year}")
        lines.append(f"DA  - {_ris_date(record.pdat)}")
    if record.journal.volume:
        lines.append(f"VL  - {record.journal.volume}")
    if record.journal.issue:
        lines.append(f"IS  - {record.journal.issue}")
    start, end = page_bounds(record.pages)
    if start:
        lines.append(f"SP  - {start}")
    if end:
        lines.append(f"EP  - {end}")
    if record.journal.issn or record.journal.eissn:
        lines.append(f"SN  - {record.journal.issn or record.journal.eissn}")
    if record.doi:
        lines.append(f"DO  - {record.doi}")
    lines.append(f"AN  - {record.pmid}")
    lines.append(f"UR  - https://pubmed.ncbi.nlm.nih.gov/{record.pmid}/")
    if record.abstract_text:
        lines.append(f"AB  - {one_line(record.abstract_text)}")
    lines.append("ER  - ")
    return "\n".join(lines)

"""Citation strings generated from a parsed record: RIS, BibTeX, APA 7, MLA 9 and Vancouver.

Each style follows its published rules where a PubMed record carries the information:

* **APA 7**: up to 20 authors as `Last, F. M.`, the last after `&`; 21 or more give the first
  19, an ellipsis, then the final author. `(Year).` Title. *Journal*, *volume*(issue), pages.
  `https://doi.org/...`.
* **MLA 9**: one author `Last, First.`; two `Last, First, and First Last.`; three or more
  `Last, First, et al.` "Title." *Journal*, vol. V, no. N, Year, pp. P. DOI as a URL.
* **Vancouver** (NLM): up to 6 authors as `Last FM`, then `et al.`; Title. Journal ISO
  abbreviation. Year Mon Day;Volume(Issue):pages (abbreviated, `100-10`). doi. PMID.
* **BibTeX**: `@article{Key, ...}` with authors joined by `and`, page ranges with `--`, braces
  escaped.
* **RIS**: `TY  - JOUR` ... `ER  - `, one `AU` per author, `SP` / `EP` for pages.

Italics are marked with `*asterisks*` (Markdown), the only markup an agent can pass on. Page
ranges arrive in MEDLINE's abbreviated form (`100-10`) and are expanded for the styles that
print them in full (`100-110`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from biomcp.domain.records import Author, PubMedRecord

__all__ = [
    "CitationStyle",
    "abbreviate_pages",
    "all_citations",
    "expand_pages",
    "format_citation",
]

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MLA_MONTHS = (
    "Jan.",
    "Feb.",
    "Mar.",
    "Apr.",
    "May",
    "June",
    "July",
    "Aug.",
    "Sept.",
    "Oct.",
    "Nov.",
    "Dec.",
)


class CitationStyle(StrEnum):
    RIS = "ris"
    BIBTEX = "bibtex"
    APA = "apa"
    MLA = "mla"
    VANCOUVER = "vancouver"


# --- pages ---------------------------------------------------------------------------------

_RANGE = re.compile(r"^\s*([A-Za-z]*)(\d+)\s*[-–]\s*([A-Za-z]*)(\d+)\s*$")


def expand_pages(pages: str | None) -> str | None:
    """`100-10` -> `100-110`, `e123-e130` unchanged, `1234-5` -> `1234-1235`; anything else as
    given. The first range of a list (`100-10, 120`) is expanded the same way."""
    if not pages:
        return None
    first, sep, rest = pages.partition(",")
    match = _RANGE.match(first)
    if match is None:
        return pages.strip()
    prefix, start, prefix2, end = match.groups()
    if len(end) < len(start):
        end = start[: len(start) - len(end)] + end
    expanded = f"{prefix}{start}-{prefix2 or prefix}{end}"
    return expanded + (sep + rest if sep else "")


def abbreviate_pages(pages: str | None) -> str | None:
    """NLM style: the end page drops the leading digits it shares with the start (`100-110` ->
    `100-10`)."""
    full = expand_pages(pages)
    if full is None:
        return None
    match = _RANGE.match(full.partition(",")[0])
    if match is None:
        return full
    prefix, start, prefix2, end = match.groups()
    if prefix != (prefix2 or prefix) or len(start) != len(end):
        return full
    shared = 0
    while shared < len(start) - 1 and start[shared] == end[shared]:
        shared += 1
    return f"{prefix}{start}-{end[shared:]}"


def _page_bounds(pages: str | None) -> tuple[str | None, str | None]:
    full = expand_pages(pages)
    if full is None:
        return None, None
    match = _RANGE.match(full.partition(",")[0])
    if match is None:
        return full, None
    prefix, start, prefix2, end = match.groups()
    return f"{prefix}{start}", f"{prefix2 or prefix}{end}"


# --- names ---------------------------------------------------------------------------------


def _initials(author: Author) -> str:
    """`JA` from initials, else from the fore name (`Jean-Anne` -> `JA`)."""
    if author.initials:
        return re.sub(r"[^A-Za-z]", "", author.initials)
    if author.fore_name:
        return "".join(part[0] for part in re.split(r"[\s\-]+", author.fore_name) if part)
    return ""


def _dotted(initials: str) -> str:
    return " ".join(f"{letter}." for letter in initials)


@dataclass(frozen=True, slots=True)
class _Name:
    author: Author

    @property
    def group(self) -> str | None:
        return self.author.collective_name

    @property
    def last(self) -> str:
        return self.author.last_name or self.author.collective_name or ""

    def apa(self) -> str:
        if self.group:
            return self.group
        initials = _dotted(_initials(self.author))
        return f"{self.last}, {initials}" if initials else self.last

    def vancouver(self) -> str:
        if self.group:
            return self.group
        initials = _initials(self.author)
        return f"{self.last} {initials}" if initials else self.last

    def inverted(self) -> str:
        """`Last, First` (MLA first author, BibTeX, RIS)."""
        if self.group:
            return self.group
        first = self.author.fore_name or _dotted(_initials(self.author))
        return f"{self.last}, {first}" if first else self.last

    def natural(self) -> str:
        """`First Last` (MLA second author)."""
        if self.group:
            return self.group
        first = self.author.fore_name or _dotted(_initials(self.author))
        return f"{first} {self.last}" if first else self.last


def _names(record: PubMedRecord) -> list[_Name]:
    return [_Name(a) for a in record.authors if a.last_name or a.collective_name]


# --- pieces --------------------------------------------------------------------------------


def _title(record: PubMedRecord) -> str:
    title = (record.title or "").strip()
    # PubMed brackets translated titles: "[Title in English]." -> keep the words.
    if title.startswith("[") and title.rstrip(".").endswith("]"):
        title = title.rstrip(".")[1:-1]
    return title.rstrip(". ")


def _end(text: str) -> str:
    """`text` ending with one terminal punctuation mark."""
    text = text.rstrip()
    return text if text.endswith((".", "?", "!")) else f"{text}."


def _journal(record: PubMedRecord) -> str:
    return record.journal.title or record.journal.iso_abbreviation or ""


def _year(record: PubMedRecord) -> str | None:
    return str(record.pdat.year) if record.pdat is not None else None


def _doi_url(record: PubMedRecord) -> str | None:
    return f"https://doi.org/{record.doi}" if record.doi else None


# --- styles --------------------------------------------------------------------------------


def apa(record: PubMedRecord) -> str:
    names = [n.apa() for n in _names(record)]
    if len(names) >= 21:
        authors = ", ".join(names[:19]) + ", . . . " + names[-1]
    elif len(names) >= 2:
        authors = ", ".join(names[:-1]) + ", & " + names[-1]
    else:
        authors = names[0] if names else ""
    year = _year(record) or "n.d."
    parts = [f"{_end(authors) if authors else ''} ({year}).".strip(), _end(_title(record))]
    source = f"*{_journal(record)}*" if _journal(record) else ""
    volume, issue = record.journal.volume, record.journal.issue
    if volume:
        source += f", *{volume}*"
        if issue:
            source += f"({issue})"
    pages = expand_pages(record.pages)
    if pages:
        source += f", {pages.replace('-', '–')}"
    if source:
        parts.append(_end(source))
    doi = _doi_url(record)
    if doi:
        parts.append(doi)
    return " ".join(p for p in parts if p)


def mla(record: PubMedRecord) -> str:
    names = _names(record)
    if len(names) == 1:
        authors = names[0].inverted()
    elif len(names) == 2:
        authors = f"{names[0].inverted()}, and {names[1].natural()}"
    elif names:
        authors = f"{names[0].inverted()}, et al"
    else:
        authors = ""
    parts = []
    if authors:
        parts.append(_end(authors))
    parts.append(f"“{_end(_title(record))}”")
    container = [f"*{_journal(record)}*"] if _journal(record) else []
    if record.journal.volume:
        container.append(f"vol. {record.journal.volume}")
    if record.journal.issue:
        container.append(f"no. {record.journal.issue}")
    if record.pdat is not None:
        date = str(record.pdat.year)
        if record.pdat.month:
            date = f"{_MLA_MONTHS[record.pdat.month - 1]} {date}"
            if record.pdat.day:
                date = f"{record.pdat.day} {date}"
        container.append(date)
    pages = expand_pages(record.pages)
    if pages:
        container.append(f"{'pp.' if '-' in pages else 'p.'} {pages.replace('-', '–')}")
    doi = _doi_url(record)
    if doi:
        container.append(doi)
    if container:
        parts.append(_end(", ".join(container)))
    return " ".join(parts)


def vancouver(record: PubMedRecord) -> str:
    names = [n.vancouver() for n in _names(record)]
    authors = ", ".join(names[:6]) + (", et al" if len(names) > 6 else "")
    parts = []
    if authors:
        parts.append(_end(authors))
    parts.append(_end(_title(record)))
    source = record.journal.iso_abbreviation or record.journal.title or ""
    if source:
        parts.append(_end(source))
    date = ""
    if record.pdat is not None:
        date = str(record.pdat.year)
        if record.pdat.month:
            date += f" {_MONTHS[record.pdat.month - 1]}"
            if record.pdat.day:
                date += f" {record.pdat.day}"
    volume = record.journal.volume or ""
    if record.journal.issue:
        volume += f"({record.journal.issue})"
    pages = abbreviate_pages(record.pages)
    locator = date
    if volume:
        locator += f";{volume}"
    if pages:
        locator += f":{pages}"
    if locator:
        parts.append(_end(locator))
    if record.doi:
        parts.append(f"doi: {record.doi}.")
    parts.append(f"PMID: {record.pmid}.")
    return " ".join(parts)


def _bibtex_escape(text: str) -> str:
    return re.sub(r"([{}%&$#_])", r"\\\1", text)


def bibtex(record: PubMedRecord) -> str:
    names = _names(record)
    first = re.sub(r"[^A-Za-z]", "", names[0].last) if names else "pmid"
    key = f"{first or 'pmid'}{_year(record) or ''}_{record.pmid}"
    fields: list[tuple[str, str]] = []
    if names:
        fields.append(
            (
                "author",
                " and ".join(
                    f"{{{_bibtex_escape(n.group)}}}" if n.group else _bibtex_escape(n.inverted())
                    for n in names
                ),
            )
        )
    fields.append(("title", f"{{{_bibtex_escape(_title(record))}}}"))
    if _journal(record):
        fields.append(("journal", _bibtex_escape(_journal(record))))
    if _year(record):
        fields.append(("year", str(_year(record))))
    if record.pdat is not None and record.pdat.month:
        fields.append(("month", _MONTHS[record.pdat.month - 1].lower()))
    if record.journal.volume:
        fields.append(("volume", record.journal.volume))
    if record.journal.issue:
        fields.append(("number", record.journal.issue))
    pages = expand_pages(record.pages)
    if pages:
        fields.append(("pages", pages.replace("-", "--")))
    if record.doi:
        fields.append(("doi", record.doi))
    fields.append(("pmid", record.pmid))
    if record.pmcid:
        fields.append(("pmcid", record.pmcid))
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@article{{{key},\n{body}\n}}"


def ris(record: PubMedRecord) -> str:
    lines = ["TY  - JOUR"]
    lines += [f"AU  - {n.inverted()}" for n in _names(record)]
    lines.append(f"TI  - {_title(record)}")
    if record.journal.title:
        lines.append(f"T2  - {record.journal.title}")
    if record.journal.iso_abbreviation:
        lines.append(f"J2  - {record.journal.iso_abbreviation}")
    if record.pdat is not None:
        lines.append(f"PY  - {record.pdat.year}")
        lines.append(
            "DA  - "
            + "/".join(
                [
                    f"{record.pdat.year:04d}",
                    f"{record.pdat.month:02d}" if record.pdat.month else "",
                    f"{record.pdat.day:02d}" if record.pdat.day else "",
                    "",
                ]
            )
        )
    if record.journal.volume:
        lines.append(f"VL  - {record.journal.volume}")
    if record.journal.issue:
        lines.append(f"IS  - {record.journal.issue}")
    start, end = _page_bounds(record.pages)
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
        lines.append(f"AB  - {record.abstract_text.replace(chr(10), ' ')}")
    lines.append("ER  - ")
    return "\n".join(lines)


_FORMATTERS = {
    CitationStyle.RIS: ris,
    CitationStyle.BIBTEX: bibtex,
    CitationStyle.APA: apa,
    CitationStyle.MLA: mla,
    CitationStyle.VANCOUVER: vancouver,
}


def format_citation(record: PubMedRecord, style: CitationStyle | str) -> str:
    """The citation of `record` in `style` (`ris`, `bibtex`, `apa`, `mla`, `vancouver`).

    Raises:
        ValueError: for an unknown style.
    """
    return _FORMATTERS[CitationStyle(str(style).lower())](record)


def all_citations(record: PubMedRecord) -> dict[str, str]:
    return {style.value: fn(record) for style, fn in _FORMATTERS.items()}

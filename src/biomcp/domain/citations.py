"""Citation strings generated from a parsed record: RIS, BibTeX, APA 7, MLA 9 and Vancouver.

Each style follows its published rules where a PubMed record carries the information:

* **APA 7**: up to 20 authors as `Last, F. M.` (hyphenated initials keep the hyphen:
  `K.-H.`), the last after `&`; 21 or more give the first 19, an ellipsis, then the final
  author. `(Year).` Title. *Journal*, *volume*(issue), pages or `Article e123`.
  `https://doi.org/...`. A work without authors moves its title to the author position
  (`Title. (Year). *Journal*...`, APA 7 section 9.12).
* **MLA 9**: one author `Last, First.`; two `Last, First, and First Last.`; three or more
  `Last, First, et al.` "Title in Title Case." *Journal*, vol. V, no. N, Date, pp. 113–25
  (MLA's number ranges: the second number keeps its last two digits, or more when needed).
  DOI as a URL. Titles of records in another language keep their sentence case (MLA 1.2.2);
  the epithet of a binomial species name stays lower case (`Eimeria tenella`).
* **Vancouver** (NLM *Citing Medicine*): up to 6 authors as `Last FM`, then `et al.`; Title.
  Journal ISO abbreviation. Year Mon Day;Volume(Issue):pages (abbreviated, `100-10`). doi.
  `PMID: 1; PMCID: PMC2.` as PubMed's own citations print them.
* **BibTeX**: `@article{Key, ...}` with authors joined by `and`, page ranges with `--`, every
  value escaped by `bibtex_escape` (the DOI percent-encoded instead, as in its URL).
* **RIS**: `TY  - JOUR` ... `ER  - `, one `AU` per author, `SP` / `EP` for pages.

Records come from upstream, so no value is trusted: every style reads the record with each of
its strings on one line (`one_line`: control characters and line breaks become a space, runs of
spaces one). A value cannot end an RIS record or add a tag, nor close a BibTeX field or entry.

Journal names (APA, MLA, BibTeX, RIS `T2`) come from `journals.journal_name`: NLM's catalogue
title without its place qualifier, in title case. Vancouver and RIS `J2` keep the ISO
abbreviation.

Dates: PubMed writes seasons and ranges as text (`1990 Spring`, `2013 Jan-Mar`, MedlineDate
`1998 Dec-1999 Jan`); `PubDate` keeps that text in `raw` and its `month` is only the first
month the text can mean. No style invents a month from it: Vancouver prints the text as NLM
does (`1990 Spring;17(1)`), MLA prints it in its own order and month forms (`Spring 1990`,
`Jan.-Mar. 2013`, `Dec. 1998-Jan. 1999`), APA prints the year only (as it does for every
journal article), BibTeX puts the text after the year in `month = {Spring}` (BibTeX prints a
braced month verbatim; a range across years goes to `note` instead), and RIS keeps `PY` the
year and writes the text in `DA`'s fourth, free-text field (`DA  - 1990///Spring`).

Initials keep their script (`Ø.`, `Á.`): they are letters, not only ASCII letters.

Italics are marked with `*asterisks*` (Markdown), the only markup an agent can pass on. Page
ranges arrive in MEDLINE's abbreviated form (`100-10`) and are expanded for the styles that
print them in full (`100-110`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, is_dataclass, replace
from enum import StrEnum
from typing import Any

from biomcp.domain.journals import MLA_MINOR_WORDS, journal_name, title_case
from biomcp.domain.records import Author, PubDate, PubMedRecord

__all__ = [
    "CitationStyle",
    "abbreviate_pages",
    "all_citations",
    "bibtex_escape",
    "expand_pages",
    "format_citation",
    "mla_pages",
    "one_line",
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


# --- text ----------------------------------------------------------------------------------

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


def _one_line_record(record: PubMedRecord) -> PubMedRecord:
    """The record every style formats: no value can break a line or carry a control
    character into a citation."""
    cleaned: PubMedRecord = _one_line_fields(record)
    return cleaned


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


def mla_pages(pages: str | None) -> str | None:
    """MLA 9 number ranges, en dash: `113-125` -> `113–25`, `103-104` -> `103–04`,
    `1608-1774` -> `1608–774`, `96-101` unchanged; ranges with letters are printed in full."""
    full = expand_pages(pages)
    if full is None:
        return None
    first, sep, rest = full.partition(",")
    match = _RANGE.match(first)
    if match is None:
        return full
    prefix, start, prefix2, end = match.groups()
    if prefix or prefix2 or len(start) < 3 or len(start) != len(end):
        return full.replace("-", "–", 1)
    differ = next((i for i, (a, b) in enumerate(zip(start, end, strict=True)) if a != b), 0)
    short = end[min(differ, len(end) - 2) :]
    return f"{start}–{short}" + (sep + rest if sep else "")


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


def _letters(text: str) -> str:
    """The letters of `text`, whatever their script (`Ø`, `Á`, `Ж` are kept)."""
    return "".join(ch for ch in text if ch.isalpha())


def _initial_groups(author: Author) -> list[str]:
    """The author's initials from the fore name, one entry per given name; a hyphenated given
    name gives one hyphenated entry (`King-Hwa` -> `K-H`). Without a fore name, each letter
    of NLM's `Initials` stands alone."""
    groups: list[str] = []
    for name in (author.fore_name or "").split():
        parts = [p for p in name.split("-") if _letters(p)]
        if parts:
            groups.append("-".join(_letters(p)[0] for p in parts))
    return groups or list(_letters(author.initials or ""))


def _initials(author: Author) -> str:
    """`JA` (Vancouver): NLM's `Initials` as PubMed prints them (letters of any script), else
    the fore name's initials without dots, spaces or hyphens."""
    return _letters(author.initials or "") or "".join(_initial_groups(author)).replace("-", "")


def _dotted(author: Author) -> str:
    """`J. A.`, `K.-H.` (APA)."""
    return " ".join(".-".join(g.split("-")) + "." for g in _initial_groups(author))


def _first_names(author: Author) -> str:
    """The fore name with a period after each lone initial (`J Michael` -> `J. Michael`,
    `T C` -> `T. C.`); the dotted initials when there is no fore name."""
    if not author.fore_name:
        return _dotted(author)
    return " ".join(f"{w}." if len(w) == 1 and w.isalpha() else w for w in author.fore_name.split())


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
        initials = _dotted(self.author)
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
        first = _first_names(self.author)
        return f"{self.last}, {first}" if first else self.last

    def natural(self) -> str:
        """`First Last` (MLA second author)."""
        if self.group:
            return self.group
        first = _first_names(self.author)
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
    """The journal's name in title case without NLM's place qualifier (APA, MLA, BibTeX)."""
    return journal_name(record.journal.title, record.journal.iso_abbreviation)


def _year(record: PubMedRecord) -> str | None:
    return str(record.pdat.year) if record.pdat is not None else None


def _date_text(pdat: PubDate) -> str | None:
    """NLM's own text for a Season or MedlineDate (`1990 Spring`, `1998 Dec-1999 Jan`), or
    None when the structured year / month / day say everything."""
    return " ".join(pdat.raw.split()) if pdat.raw else None


def _date_tail(pdat: PubDate) -> str | None:
    """The date text after its leading year (`Spring`, `Jan-Mar`, `Dec-1999 Jan`)."""
    text = _date_text(pdat)
    if text is None:
        return None
    tail = re.sub(rf"^{pdat.year}\b\s*", "", text)
    return tail or None


_MONTH_WORD = re.compile(r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?")
_YEAR_FIRST = re.compile(r"^(\d{4})\s+([^\d]+?)(?:\s*([-–/])\s*(\d{4})\s+([^\d]+))?$")


def _mla_date_text(pdat: PubDate) -> str:
    """A Season / MedlineDate in MLA's order and month forms: `1990 Spring` -> `Spring 1990`,
    `2013 Jan-Mar` -> `Jan.-Mar. 2013`, `1998 Dec-1999 Jan` -> `Dec. 1998-Jan. 1999`; any other
    text as NLM wrote it."""
    text = _date_text(pdat) or str(pdat.year)
    match = _YEAR_FIRST.match(text)
    if match is None:
        return text

    def months(words: str) -> str:
        return _MONTH_WORD.sub(lambda m: _MLA_MONTHS[_MONTHS.index(m.group(1))], words.strip())

    year, words, sep, year2, words2 = match.groups()
    if year2 is None:
        return f"{months(words)} {year}"
    return f"{months(words)} {year}{sep}{months(words2)} {year2}"


# A Latin species epithet after its genus (`Eimeria tenella`, `Escherichia coli`): scientific
# names keep their case in a title-cased title.
_GENUS = re.compile(r"^[A-Z][a-z]{2,}$")
_EPITHET = re.compile(r"^[a-z]{3,}(?:a|us|um|ae|is|ii|i|ensis|oides|es)[,;:.?]?$")


def _mla_title(title: str) -> str:
    """The article title in MLA title case (`journals.title_case` with MLA's minor words),
    leaving the epithet of a binomial species name in lower case."""
    words = title.split()
    cased = title_case(title, MLA_MINOR_WORDS).split()
    if len(cased) != len(words):
        return " ".join(cased)
    for i in range(1, len(words)):
        if i > 1 and _GENUS.match(words[i - 1]) and _EPITHET.match(words[i]):
            cased[i] = words[i]
    return " ".join(cased)


def _is_article_number(record: PubMedRecord) -> bool:
    """A single locator that is an electronic article number, not a printed page: it has a
    letter (`e0021622`), a leading zero (`026002`), five or more digits (`119767`), or the DOI
    ends with it (`1034` in `10.3389/fphys.2018.01034`)."""
    pages = (record.pages or "").strip()
    if not pages or _RANGE.match(pages) or not re.fullmatch(r"[A-Za-z]*\d+", pages):
        return False
    if not pages.isdigit() or pages.startswith("0") or len(pages) >= 5:
        return True
    return bool(record.doi and re.search(rf"\D0*{pages}$", record.doi))


def _doi_url(record: PubMedRecord) -> str | None:
    return f"https://doi.org/{record.doi}" if record.doi else None


# --- styles --------------------------------------------------------------------------------


def apa(record: PubMedRecord) -> str:
    record = _one_line_record(record)
    names = [n.apa() for n in _names(record)]
    if len(names) >= 21:
        authors = ", ".join(names[:19]) + ", . . . " + names[-1]
    elif len(names) >= 2:
        authors = ", ".join(names[:-1]) + ", & " + names[-1]
    else:
        authors = names[0] if names else ""
    year = _year(record) or "n.d."
    title = _end(_title(record)) if _title(record) else ""
    # APA 7, 9.12: without authors the title moves to the author position
    parts = [f"{_end(authors)} ({year}).", title] if authors else [title, f"({year})."]
    source = f"*{_journal(record)}*" if _journal(record) else ""
    volume, issue = record.journal.volume, record.journal.issue
    if volume:
        source += f", *{volume}*"
        if issue:
            source += f"({issue})"
    pages = expand_pages(record.pages)
    if pages and _is_article_number(record):
        source += f", Article {pages}"
    elif pages:
        source += f", {pages.replace('-', '–')}"
    if source:
        parts.append(_end(source))
    doi = _doi_url(record)
    if doi:
        parts.append(doi)
    return " ".join(p for p in parts if p)


def mla(record: PubMedRecord) -> str:
    record = _one_line_record(record)
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
    title = _title(record)
    if not record.languages or "eng" in record.languages:
        title = _mla_title(title)
    parts.append(f"“{_end(title)}”")
    container = [f"*{_journal(record)}*"] if _journal(record) else []
    if record.journal.volume:
        container.append(f"vol. {record.journal.volume}")
    if record.journal.issue:
        container.append(f"no. {record.journal.issue}")
    if record.pdat is not None and _date_text(record.pdat):
        container.append(_mla_date_text(record.pdat))
    elif record.pdat is not None:
        date = str(record.pdat.year)
        if record.pdat.month:
            date = f"{_MLA_MONTHS[record.pdat.month - 1]} {date}"
            if record.pdat.day:
                date = f"{record.pdat.day} {date}"
        container.append(date)
    pages = mla_pages(record.pages)
    if pages:
        container.append(f"{'pp.' if '–' in pages else 'p.'} {pages}")
    doi = _doi_url(record)
    if doi:
        container.append(doi)
    if container:
        parts.append(_end(", ".join(container)))
    return " ".join(parts)


def vancouver(record: PubMedRecord) -> str:
    record = _one_line_record(record)
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
    if record.pdat is not None and _date_text(record.pdat):
        date = _date_text(record.pdat) or ""
    elif record.pdat is not None:
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
    ids = f"PMID: {record.pmid}"
    if record.pmcid:
        ids += f"; PMCID: {record.pmcid}"
    parts.append(f"{ids}.")
    return " ".join(parts)


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
    """A last or first name, braced when it holds a comma or the word `and`, or starts with an
    escape (bibtexparser 2 drops the first two characters of such a name after `and`)."""
    escaped = bibtex_escape(text)
    if _NAME_SEPARATOR.search(text) or escaped.startswith("\\"):
        return f"{{{escaped}}}"
    return escaped


def _bibtex_name(name: _Name) -> str:
    if name.group:
        return f"{{{bibtex_escape(name.group)}}}"
    first = _first_names(name.author)
    last = _bibtex_name_part(name.last)
    return f"{last}, {_bibtex_name_part(first)}" if first else last


# `doi` is a verbatim field for biblatex: a LaTeX escape would be printed, so the characters
# that could unbalance the field (and `%` itself, and spaces) are percent-encoded as in the
# DOI's URL, which resolves the same.
_DOI_ENCODED = re.compile(r"[%{}\\ ]")


def _bibtex_doi(doi: str) -> str:
    return _DOI_ENCODED.sub(lambda m: f"%{ord(m.group()):02X}", one_line(doi))


def bibtex(record: PubMedRecord) -> str:
    """The record as one `@article` entry. Every value is braced and escaped by
    `bibtex_escape` (the DOI percent-encoded instead); the key keeps ASCII letters, digits and
    `_` only."""
    record = _one_line_record(record)
    names = _names(record)
    first = re.sub(r"[^A-Za-z]", "", names[0].last) if names else "pmid"
    key = f"{first or 'pmid'}{_year(record) or ''}_{record.pmid}"
    fields: list[tuple[str, str]] = []
    if names:
        fields.append(("author", " and ".join(_bibtex_name(n) for n in names)))
    fields.append(("title", f"{{{bibtex_escape(_title(record))}}}"))
    if _journal(record):
        fields.append(("journal", bibtex_escape(_journal(record))))
    if _year(record):
        fields.append(("year", str(_year(record))))
    text = _date_text(record.pdat) if record.pdat is not None else None
    tail = _date_tail(record.pdat) if record.pdat is not None else None
    if text and tail and re.search(r"\d{4}", tail):
        fields.append(("note", f"Published {bibtex_escape(text)}"))
    elif tail:
        fields.append(("month", bibtex_escape(tail)))
    elif record.pdat is not None and record.pdat.month:
        fields.append(("month", _MONTHS[record.pdat.month - 1].lower()))
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
    tail = _date_tail(pdat)
    if _date_text(pdat):
        return f"{pdat.year:04d}///{tail or ''}"
    month = f"{pdat.month:02d}" if pdat.month else ""
    day = f"{pdat.day:02d}" if pdat.day else ""
    return f"{pdat.year:04d}/{month}/{day}/"


def ris(record: PubMedRecord) -> str:
    """The record as one RIS reference, a tag per line, every value on one line."""
    record = _one_line_record(record)
    lines = ["TY  - JOUR"]
    lines += [f"AU  - {n.inverted()}" for n in _names(record)]
    lines.append(f"TI  - {_title(record)}")
    if _journal(record):
        lines.append(f"T2  - {_journal(record)}")
    if record.journal.iso_abbreviation:
        lines.append(f"J2  - {record.journal.iso_abbreviation}")
    if record.pdat is not None:
        lines.append(f"PY  - {record.pdat.year}")
        lines.append(f"DA  - {_ris_date(record.pdat)}")
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
        lines.append(f"AB  - {one_line(record.abstract_text)}")
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

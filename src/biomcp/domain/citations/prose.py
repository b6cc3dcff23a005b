"""The styles a reader reads in a reference list: APA 7, MLA 9 and Vancouver.

Each style follows its published rules where a PubMed record carries the information:

* **APA 7**: up to 20 authors as `Last, F. M.` (hyphenated initials keep the hyphen:
  `K.-H.`), the last after `&`; 21 or more give the first 19, an ellipsis, then the final
  author. `(Year).` Title. *Journal*, *volume*(issue), pages or `Article e123`.
  `https://doi.org/...`. A work without authors moves its title to the author position
  (`Title. (Year). *Journal*...`, APA 7 section 9.12). The journal's name is the journal's own,
  without the "The" NLM's catalogue adds (`text.periodical_of`; MLA too).
* **MLA 9**: one author `Last, First.`; two `Last, First, and First Last.`; three or more
  `Last, First, et al.` "Title in Title Case." *Journal*, vol. V, no. N, Date, pp. 113–25
  (MLA's number ranges: the second number keeps its last two digits, or more when needed).
  DOI as a URL. Titles of records in another language keep their sentence case (MLA 1.2.2);
  the epithet of a binomial species name stays lower case (`Eimeria tenella`, `Diplodus
  puntazzo`), and a minor word hyphenated to a gene name stays as written (`OXA-48-Like`).
* **Vancouver** (NLM *Citing Medicine*): up to 6 authors as `Last FM`, then `et al.`; Title.
  Journal abbreviation as NLM prints it, without periods (`text.nlm_abbreviation`). Year Mon
  Day;Volume(Issue):pages (abbreviated, `100-10`). doi.
  `PMID: 1; PMCID: PMC2.` as PubMed's own citations print them.

Italics are marked with `*asterisks*` (Markdown), the only markup an agent can pass on.
"""

from __future__ import annotations

import re

from biomcp.domain.citations.dates import MLA_MONTHS, MONTHS, date_text, mla_date_text
from biomcp.domain.citations.names import cited_names
from biomcp.domain.citations.pages import (
    abbreviate_pages,
    expand_pages,
    is_article_number,
    mla_pages,
)
from biomcp.domain.citations.text import (
    clean_record,
    doi_url,
    end,
    nlm_abbreviation,
    periodical_of,
    title_of,
    year_of,
)
from biomcp.domain.journals import MLA_MINOR_WORDS, title_case
from biomcp.domain.records import PubMedRecord

__all__ = ["apa", "mla", "mla_title", "vancouver"]


def apa(record: PubMedRecord) -> str:
    record = clean_record(record)
    names = [n.apa() for n in cited_names(record)]
    if len(names) >= 21:
        authors = ", ".join(names[:19]) + ", . . . " + names[-1]
    elif len(names) >= 2:
        authors = ", ".join(names[:-1]) + ", & " + names[-1]
    else:
        authors = names[0] if names else ""
    year = year_of(record) or "n.d."
    title = end(title_of(record)) if title_of(record) else ""
    # APA 7, 9.12: without authors the title moves to the author position
    parts = [f"{end(authors)} ({year}).", title] if authors else [title, f"({year})."]
    source = f"*{periodical_of(record)}*" if periodical_of(record) else ""
    volume, issue = record.journal.volume, record.journal.issue
    if volume:
        source += f", *{volume}*"
        if issue:
            source += f"({issue})"
    pages = expand_pages(record.pages)
    if pages and is_article_number(record):
        source += f", Article {pages}"
    elif pages:
        source += f", {pages.replace('-', '–')}"
    if source:
        parts.append(end(source))
    doi = doi_url(record)
    if doi:
        parts.append(doi)
    return " ".join(p for p in parts if p)


# A Latin species epithet after its genus (`Eimeria tenella`, `Escherichia coli`): scientific
# names keep their case in a title-cased title.
_GENUS = re.compile(r"^[A-Z][a-z]{2,}$")
_EPITHET = re.compile(r"^[a-z]{3,}(?:a|us|um|ae|is|ii|i|ensis|oides|es)[,;:.?]?$")
_LOWER_WORD = re.compile(r"^[a-z]{3,}[,;:.?]?$")
# The authority after a species name: `Diplodus puntazzo (Cetti)`, `(Linnaeus, 1758)`.
_AUTHORITY = re.compile(r"^\([A-Z][\w.'-]*(?:,? \d{4})?\)")
# A capital or a digit: part of an acronym or gene name (`OXA`, `48`, `IL`).
_NAME_PART = re.compile(r"[A-Z0-9]")


def _name_suffixes(word: str, cased: str) -> str:
    """`cased` with a minor word hyphenated after a name part as written: `OXA-48-Like` is a
    name, its `Like` no preposition."""
    parts, cased_parts = word.split("-"), cased.split("-")
    if len(parts) != len(cased_parts):
        return cased
    for j in range(1, len(parts)):
        if _NAME_PART.search(parts[j - 1]) and parts[j].casefold() in MLA_MINOR_WORDS:
            cased_parts[j] = parts[j]
    return "-".join(cased_parts)


def _is_epithet(words: list[str], i: int, context: str) -> bool:
    """True when words[i] is the epithet of the binomial words[i - 1] words[i]: it has a
    Latin ending, an authority follows it, or `context` abbreviates its genus (`D. puntazzo`)."""
    genus, word = words[i - 1], words[i]
    if i < 2 or not _GENUS.match(genus) or not _LOWER_WORD.match(word):
        return False
    if _EPITHET.match(word):
        return True
    bare = word.rstrip(",;:.?")
    rest = " ".join(words[i + 1 : i + 3])
    return bool(_AUTHORITY.match(rest)) or f"{genus[0]}. {bare}" in context


def mla_title(title: str, context: str = "") -> str:
    """The article title in MLA title case (`journals.title_case` with MLA's minor words). The
    epithet of a binomial species name stays lower case; `context` (the abstract) may show it
    abbreviated. A minor word hyphenated to a name stays as written (`OXA-48-Like`)."""
    words = title.split()
    cased = title_case(title, MLA_MINOR_WORDS).split()
    if len(cased) != len(words):
        return " ".join(cased)
    for i, word in enumerate(words):
        cased[i] = words[i] if _is_epithet(words, i, context) else _name_suffixes(word, cased[i])
    return " ".join(cased)


def mla(record: PubMedRecord) -> str:
    record = clean_record(record)
    names = cited_names(record)
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
        parts.append(end(authors))
    title = title_of(record)
    if not record.languages or "eng" in record.languages:
        title = mla_title(title, record.abstract_text)
    parts.append(f"“{end(title)}”")
    container = [f"*{periodical_of(record)}*"] if periodical_of(record) else []
    if record.journal.volume:
        container.append(f"vol. {record.journal.volume}")
    if record.journal.issue:
        container.append(f"no. {record.journal.issue}")
    if record.pdat is not None and date_text(record.pdat):
        container.append(mla_date_text(record.pdat))
    elif record.pdat is not None:
        date = str(record.pdat.year)
        if record.pdat.month:
            date = f"{MLA_MONTHS[record.pdat.month - 1]} {date}"
            if record.pdat.day:
                date = f"{record.pdat.day} {date}"
        container.append(date)
    pages = mla_pages(record.pages)
    if pages:
        container.append(f"{'pp.' if '–' in pages else 'p.'} {pages}")
    doi = doi_url(record)
    if doi:
        container.append(doi)
    if container:
        parts.append(end(", ".join(container)))
    return " ".join(parts)


def vancouver(record: PubMedRecord) -> str:
    record = clean_record(record)
    names = [n.vancouver() for n in cited_names(record)]
    authors = ", ".join(names[:6]) + (", et al" if len(names) > 6 else "")
    parts = []
    if authors:
        parts.append(end(authors))
    parts.append(end(title_of(record)))
    abbreviation = record.journal.iso_abbreviation
    source = nlm_abbreviation(abbreviation) if abbreviation else record.journal.title or ""
    if source:
        parts.append(end(source))
    date = ""
    if record.pdat is not None and date_text(record.pdat):
        date = date_text(record.pdat) or ""
    elif record.pdat is not None:
        date = str(record.pdat.year)
        if record.pdat.month:
            date += f" {MONTHS[record.pdat.month - 1]}"
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
        parts.append(end(locator))
    if record.doi:
        parts.append(f"doi: {record.doi}.")
    ids = f"PMID: {record.pmid}"
    if record.pmcid:
        ids += f"; PMCID: {record.pmcid}"
    parts.append(f"{ids}.")
    return " ".join(parts)

"""The styles a reader reads in a reference list: APA 7, MLA 9 and Vancouver.

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
from biomcp.domain.citations.text import clean_record, doi_url, end, journal_of, title_of, year_of
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
    source = f"*{journal_of(record)}*" if journal_of(record) else ""
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


def mla_title(title: str) -> str:
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
        title = mla_title(title)
    parts.append(f"“{end(title)}”")
    container = [f"*{journal_of(record)}*"] if journal_of(record) else []
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
    source = record.journal.iso_abbreviation or record.journal.title or ""
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

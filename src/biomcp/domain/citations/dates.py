"""Publication dates in each style's form.

PubMed writes seasons and ranges as text (`1990 Spring`, `2013 Jan-Mar`, MedlineDate
`1998 Dec-1999 Jan`); `PubDate` keeps that text in `raw` and has no month unless the text
names exactly one. No style invents a month from it: Vancouver prints the text as NLM
does (`1990 Spring;17(1)`), MLA prints it in its own order and month forms (`Spring 1990`,
`Jan.-Mar. 2013`, `Dec. 1998-Jan. 1999`), APA prints the year only (as it does for every
journal article), BibTeX puts the text after the year in `month = {Spring}` (BibTeX prints a
braced month verbatim; a range across years goes to `note` instead), and RIS keeps `PY` the
year and writes the text in `DA`'s fourth, free-text field (`DA  - 1990///Spring`).
"""

from __future__ import annotations

import re

from biomcp.domain.records import PubDate

__all__ = ["MLA_MONTHS", "MONTHS", "date_tail", "date_text", "mla_date_text"]

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
MLA_MONTHS = (
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


def date_text(pdat: PubDate) -> str | None:
    """NLM's own text for a Season or MedlineDate (`1990 Spring`, `1998 Dec-1999 Jan`), or
    None when the structured year / month / day say everything."""
    return " ".join(pdat.raw.split()) if pdat.raw else None


def date_tail(pdat: PubDate) -> str | None:
    """The date text after its leading year (`Spring`, `Jan-Mar`, `Dec-1999 Jan`)."""
    text = date_text(pdat)
    if text is None:
        return None
    tail = re.sub(rf"^{pdat.year}\b\s*", "", text)
    return tail or None


_MONTH_WORD = re.compile(r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?")
_YEAR_FIRST = re.compile(r"^(\d{4})\s+([^\d]+?)(?:\s*([-–/])\s*(\d{4})\s+([^\d]+))?$")


def mla_date_text(pdat: PubDate) -> str:
    """A Season / MedlineDate in MLA's order and month forms: `1990 Spring` -> `Spring 1990`,
    `2013 Jan-Mar` -> `Jan.-Mar. 2013`, `1998 Dec-1999 Jan` -> `Dec. 1998-Jan. 1999`; any other
    text as NLM wrote it."""
    text = date_text(pdat) or str(pdat.year)
    match = _YEAR_FIRST.match(text)
    if match is None:
        return text

    def months(words: str) -> str:
        return _MONTH_WORD.sub(lambda m: MLA_MONTHS[MONTHS.index(m.group(1))], words.strip())

    year, words, sep, year2, words2 = match.groups()
    if year2 is None:
        return f"{months(words)} {year}"
    return f"{months(words)} {year}{sep}{months(words2)} {year2}"

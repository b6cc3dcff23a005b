"""Citation strings generated from a parsed record: RIS, BibTeX, APA 7, MLA 9 and Vancouver.

`format_citation` gives one style, `all_citations` every style. The rules of each style are
in its module: `prose` (APA, MLA, Vancouver) and `exchange` (BibTeX, RIS). What they share is
beside them: the record's values as text (`text`, which also says why no value is trusted),
author names (`names`), dates (`dates`) and page ranges (`pages`).
"""

from __future__ import annotations

from enum import StrEnum

from biomcp.domain.citations.exchange import bibtex, bibtex_escape, ris
from biomcp.domain.citations.pages import abbreviate_pages, expand_pages, mla_pages
from biomcp.domain.citations.prose import apa, mla, vancouver
from biomcp.domain.citations.text import one_line
from biomcp.domain.records import PubMedRecord

__all__ = [
    "CitationStyle",
    "abbreviate_pages",
    "all_citations",
    "apa",
    "bibtex",
    "bibtex_escape",
    "expand_pages",
    "format_citation",
    "mla",
    "mla_pages",
    "one_line",
    "ris",
    "vancouver",
]


class CitationStyle(StrEnum):
    RIS = "ris"
    BIBTEX = "bibtex"
    APA = "apa"
    MLA = "mla"
    VANCOUVER = "vancouver"


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

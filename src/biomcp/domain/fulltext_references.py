"""A full-text article's references as citations: their parts, and one readable line.

A `Reference` keeps the parts JATS gives (authors, title, journal, year, volume, issue, pages,
publisher), the PMID and DOI as their own fields, and `text`: a Vancouver-like line built from
the parts, or the reference's own text when JATS gave no parts.

The line (`citation_text`):

* journal articles: `Authors. Title. Journal. Year;Volume(Issue):Pages.`;
* books and other works: `Authors. Title. Publisher; Year. p. Pages.`, a chapter adds
  `In: Editors, editors. Book.` after its own title; a work of no stated kind with a journal
  and no publisher or editors reads as a journal article;
* at most six authors, then `et al.` (also when the source lists more than it names);
* the PMID and DOI are never part of the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from biomcp.domain.citations.pages import abbreviate_pages
from biomcp.domain.citations.text import end

__all__ = [
    "MAX_CITED_AUTHORS",
    "Reference",
    "citation_text",
    "reference_chars",
    "tidy",
    "vancouver_name",
]

#: Authors named in the line before `et al.`.
MAX_CITED_AUTHORS = 6
_JOURNAL_KINDS = frozenset({"journal", "article", "journal-article"})
_BOOK_KINDS = frozenset({"book", "chapter", "book-chapter", "report", "thesis", "confproc"})
_SPACE_BEFORE = re.compile(r"\s+([,.;:)\]])")
_SPACE_AFTER = re.compile(r"([(\[])\s+")
_DOUBLE_STOP = re.compile(r"(?<!\.)\.\.(?!\.)")
_NAME_PARTS = re.compile(r"[\s.\-‐]+")


@dataclass(frozen=True, slots=True)
class Reference:
    """One `<ref>`: `label` its number as printed, `text` its one-line citation."""

    label: str | None
    text: str
    pmid: str | None = None
    doi: str | None = None
    authors: tuple[str, ...] = ()
    et_al: bool = False
    editors: tuple[str, ...] = ()
    title: str | None = None
    journal: str | None = None
    year: str | None = None
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    publisher: str | None = None
    url: str | None = None
    kind: str | None = None


def tidy(text: str) -> str:
    """Whitespace collapsed, no space before closing punctuation or after an opening bracket."""
    text = " ".join(text.split())
    text = _SPACE_BEFORE.sub(r"\1", text)
    text = _SPACE_AFTER.sub(r"\1", text)
    return _DOUBLE_STOP.sub(".", text)


def vancouver_name(surname: str, given: str = "", suffix: str = "") -> str:
    """`Garton NJ`: the surname, the initials of the given names, the suffix."""
    initials = ""
    for part in _NAME_PARTS.split(given):
        if not part:
            continue
        upper = "".join(c for c in part if c.isupper())
        initials += part if part.isupper() else (upper or part[0].upper())
    return " ".join(p for p in (surname.strip(), initials, suffix.strip()) if p)


def _names(names: tuple[str, ...], more: bool) -> str:
    shown = names[:MAX_CITED_AUTHORS]
    text = ", ".join(shown)
    if more or len(names) > len(shown):
        text += ", et al" if text else "et al"
    return text


def _locator(ref: Reference) -> str:
    locator = ref.year or ""
    volume = ref.volume or ""
    if ref.issue:
        volume += f"({ref.issue})"
    if volume:
        locator += f";{volume}"
    pages = abbreviate_pages(ref.pages)
    if pages:
        locator += f":{pages}"
    return locator.lstrip(";")


def _book_parts(ref: Reference) -> list[str]:
    parts: list[str] = []
    if ref.title and ref.journal:  # a chapter: its book, then the book's editors
        editors = f"{_names(ref.editors, False)}, editors. " if ref.editors else ""
        parts.append(end(f"In: {editors}{ref.journal}"))
    issued = "; ".join(p for p in (ref.publisher, ref.year) if p)
    if issued:
        parts.append(end(issued))
    if ref.pages:
        parts.append(end(f"p. {abbreviate_pages(ref.pages)}"))
    return parts


def citation_text(ref: Reference) -> str:
    """The reference's parts as one Vancouver-like line (see the module docstring)."""
    parts: list[str] = []
    if ref.authors or ref.et_al:
        parts.append(end(_names(ref.authors, ref.et_al)))
    elif ref.editors and not ref.journal:
        parts.append(end(f"{_names(ref.editors, False)}, editors"))
    if ref.title:
        parts.append(end(ref.title))
    kind = (ref.kind or "").casefold()
    journal_like = kind in _JOURNAL_KINDS or (
        kind not in _BOOK_KINDS and bool(ref.journal) and not (ref.publisher or ref.editors)
    )
    if journal_like:
        if ref.journal:
            parts.append(end(ref.journal))
        if locator := _locator(ref):
            parts.append(end(locator))
    else:
        if ref.journal and not ref.title:
            parts.append(end(ref.journal))
        parts.extend(_book_parts(ref))
    if ref.url:
        parts.append(f"Available from: {ref.url}")
    return tidy(" ".join(parts))


def reference_chars(ref: Reference) -> int:
    """What a reference costs an answer: its line and the parts shown beside it."""
    parts = (ref.title, ref.journal, ref.publisher, ref.url, *ref.authors, *ref.editors)
    return len(ref.text) + sum(len(p) for p in parts if p)

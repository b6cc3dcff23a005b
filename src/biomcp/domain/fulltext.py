"""Full-text articles from PubMed Central (JATS), and how much of one an answer may carry.

Values: a `FullTextArticle` is what the JATS parser reads from one `<article>` (its sections
nested as in the article, the captions of its figures and tables, its references, its licence
and how PMC lets it be read); a `PmcArticleSet` is one EFetch `db=pmc` answer.

Status (`article_status`), the rule this project applies to PMC's answer:

* `withdrawn`: the article's `<?properties ...?>` processing instruction lists `withdrawn`, or
  its front matter carries `<notes notes-type="withdrawal">`;
* `not_open_access`: PMC sent the front matter only: no `<body>` and no `open_access` mark
  (PMC's answer for articles whose publisher does not allow the full text to be downloaded,
  where NCBI puts a comment in place of the body);
* `available` otherwise. `access` tells how: `open_access` (the `open_access` property, PMC's
  open-access subset), `author_manuscript` (the `manuscript` property), or `free_to_read` (a
  body without either mark: readable, reuse per the licence).

The budget (`render_article`), pure functions over those values:

* every section's own text is cut to `max_section_chars` (at a word boundary, marked
  `truncated`, its full size kept in `chars`);
* an article whose selected text (abstract, sections, captions with their footnotes,
  supplementary material) fits in what is left of the call's `max_chars` comes whole
  (`mode="full"`); otherwise, or when an outline is asked for, it comes as an outline
  (`mode="outline"`): every section's path, title, type and size, so the caller can ask for
  the sections it wants;
* references, when asked for, come after the rest of a whole article, in order, while they fit
  what is left and up to `MAX_SHOWN_REFERENCES`; how many were left out is counted;
* a section filter keeps the sections whose title contains one of the given words or whose
  `sec-type` equals one (case-insensitive), with their subsections; a filtered answer leaves
  the captions and supplementary material out (they belong to the whole article). A filter
  matching nothing gives the outline of every section (`no_section_matched`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from biomcp.domain.fulltext_references import Reference, reference_chars

__all__ = [
    "FULLTEXT_STATUSES",
    "MAX_SHOWN_REFERENCES",
    "Access",
    "Caption",
    "FullTextArticle",
    "FullTextStatus",
    "License",
    "OutlineReason",
    "PmcArticleSet",
    "Reference",
    "RenderedArticle",
    "RenderedSection",
    "Section",
    "article_status",
    "cut",
    "flatten",
    "matches_filter",
    "render_article",
]

FullTextStatus = Literal[
    "available", "not_in_pmc", "not_open_access", "withdrawn", "upstream_error"
]
FULLTEXT_STATUSES: tuple[str, ...] = (
    "available",
    "not_in_pmc",
    "not_open_access",
    "withdrawn",
    "upstream_error",
)
Access = Literal["open_access", "author_manuscript", "free_to_read", "restricted"]
OutlineReason = Literal["budget", "requested", "no_section_matched"]

#: Sections deeper than this are folded into their ancestor at this depth.
MAX_SECTION_DEPTH = 6
#: At most this many sections of one article are listed (outline or full).
MAX_SECTIONS = 300
#: At most this many references of one article are shown.
MAX_SHOWN_REFERENCES = 300
_ELLIPSIS = " …"


@dataclass(frozen=True, slots=True)
class Section:
    """One `<sec>` (or a body's untitled leading text, or a back-matter part): its own text
    (paragraphs joined by blank lines, figures and tables left out) and its subsections."""

    title: str
    kind: str | None = None
    text: str = ""
    children: tuple[Section, ...] = ()


@dataclass(frozen=True, slots=True)
class Caption:
    """A figure's, table's or supplementary file's label and caption. A table keeps its
    footnotes, its column `header` (several header rows joined per column with " / ") and its
    body `rows` (one text per column, lined up with `header`; empty for a table given only as
    an image). Supplementary material keeps its file names."""

    kind: Literal["figure", "table", "supplement"]
    label: str | None
    caption: str
    footnotes: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class License:
    url: str | None = None
    type: str | None = None
    text: str | None = None


@dataclass(frozen=True, slots=True)
class FullTextArticle:
    """One PMC article as JATS describes it. `pmcid` is `PMC` + digits."""

    pmcid: str
    pmid: str | None = None
    doi: str | None = None
    title: str | None = None
    journal: str | None = None
    year: str | None = None
    article_type: str | None = None
    abstract: str = ""
    sections: tuple[Section, ...] = ()
    figures: tuple[Caption, ...] = ()
    tables: tuple[Caption, ...] = ()
    references: tuple[Reference, ...] = ()
    supplements: tuple[Caption, ...] = ()
    license: License | None = None
    access: Access = "restricted"
    withdrawn: bool = False
    has_body: bool = False


@dataclass(frozen=True, slots=True)
class PmcArticleSet:
    """One EFetch `db=pmc` answer: the articles read, and for each `<article>` that could not
    be read, why (keyed by its PMCID, or by its position as `#n` when it has none)."""

    articles: tuple[FullTextArticle, ...] = ()
    problems: Mapping[str, str] = field(default_factory=dict)


def article_status(article: FullTextArticle) -> FullTextStatus:
    """`withdrawn`, `not_open_access` or `available` (see the module docstring)."""
    if article.withdrawn:
        return "withdrawn"
    if article.access == "restricted":
        return "not_open_access"
    return "available"


# --- budget --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RenderedSection:
    """A section as an answer shows it: its place (`path` "2.1", `level` 1 for top-level),
    its size (`chars`, before any cut) and, in full mode, its text."""

    path: str
    level: int
    title: str
    kind: str | None
    chars: int
    text: str | None = None
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class RenderedArticle:
    """What of an article fits: `mode` full or outline, the sections, the abstract (None when
    it did not fit an outline), captions, supplements and references (full mode only), `used`
    characters, and how many asked-for references did not fit (`references_omitted`)."""

    mode: Literal["full", "outline"]
    reason: OutlineReason | None
    abstract: str | None
    sections: tuple[RenderedSection, ...]
    figures: tuple[Caption, ...]
    tables: tuple[Caption, ...]
    references: tuple[Reference, ...]
    used: int
    matched: int
    supplements: tuple[Caption, ...] = ()
    references_omitted: int = 0


def cut(text: str, limit: int) -> tuple[str, bool]:
    """`text` within `limit` characters (cut at a word boundary when one is near, ending in
    an ellipsis), and whether it was cut."""
    if len(text) <= limit:
        return text, False
    room = max(0, limit - len(_ELLIPSIS))
    head = text[:room]
    space = head.rfind(" ")
    if space >= room * 0.8:
        head = head[:space]
    return head.rstrip() + _ELLIPSIS, True


def flatten(
    sections: Sequence[Section], prefix: str = "", level: int = 1
) -> Iterator[tuple[str, int, Section]]:
    """(path, level, section) of every section, depth first, in document order."""
    for number, section in enumerate(sections, start=1):
        path = f"{prefix}{number}"
        yield path, level, section
        yield from flatten(section.children, f"{path}.", level + 1)


def matches_filter(section: Section, wanted: Sequence[str]) -> bool:
    """True when the section's title contains one of `wanted` or its type equals one
    (case-insensitive; `wanted` already lower-cased and stripped)."""
    title = section.title.casefold()
    kind = (section.kind or "").casefold()
    return any(w in title or (kind and w == kind) for w in wanted)


def _selected(sections: Sequence[Section], wanted: Sequence[str]) -> list[tuple[str, int, Section]]:
    """The sections to show: all, or those matching the filter with their subsections."""
    if not wanted:
        return list(flatten(sections))[:MAX_SECTIONS]
    chosen: list[tuple[str, int, Section]] = []
    inside: str | None = None
    for path, level, section in flatten(sections):
        if len(chosen) >= MAX_SECTIONS:
            break
        if inside is not None and path.startswith(inside):
            chosen.append((path, level, section))
            continue
        inside = None
        if matches_filter(section, wanted):
            inside = f"{path}."
            chosen.append((path, level, section))
    return chosen


def _caption_chars(captions: Iterable[Caption]) -> int:
    return sum(
        len(c.caption) + len(c.label or "") + sum(map(len, c.footnotes)) + sum(map(len, c.files))
        for c in captions
    )


def _fitting_references(
    references: Sequence[Reference], room: int
) -> tuple[tuple[Reference, ...], int]:
    """The leading references that fit `room` characters (at most `MAX_SHOWN_REFERENCES`),
    and their cost."""
    shown: list[Reference] = []
    used = 0
    for reference in references[:MAX_SHOWN_REFERENCES]:
        cost = reference_chars(reference)
        if used + cost > room:
            break
        shown.append(reference)
        used += cost
    return tuple(shown), used


def render_article(
    article: FullTextArticle,
    *,
    remaining: int,
    max_section_chars: int,
    section_filter: Sequence[str] = (),
    outline: bool = False,
    include_references: bool = False,
    include_captions: bool = True,
) -> RenderedArticle:
    """What of `article` an answer carries within `remaining` characters (see the module
    docstring). The outline never exceeds `remaining` either: its abstract is left out (None)
    when it would not fit."""
    wanted = [w.strip().casefold() for w in section_filter if w.strip()]
    chosen = _selected(article.sections, wanted)
    abstract, _ = cut(article.abstract, max_section_chars)
    pieces: list[RenderedSection] = []
    total = len(abstract)
    for path, level, section in chosen:
        text, truncated = cut(section.text, max_section_chars)
        total += len(text)
        pieces.append(
            RenderedSection(
                path, level, section.title, section.kind, len(section.text), text, truncated
            )
        )
    whole = include_captions and not wanted
    figures = article.figures if whole else ()
    tables = article.tables if whole else ()
    supplements = article.supplements if whole else ()
    total += _caption_chars(figures) + _caption_chars(tables) + _caption_chars(supplements)
    reason: OutlineReason | None = None
    if wanted and not chosen and article.sections:
        reason = "no_section_matched"
    elif outline:
        reason = "requested"
    elif total > remaining:
        reason = "budget"
    if reason is None:
        wanted_refs = article.references if include_references else ()
        references, cost = _fitting_references(wanted_refs, remaining - total)
        return RenderedArticle(
            "full", None, abstract, tuple(pieces), figures, tables, references,
            total + cost, len(chosen), supplements, len(wanted_refs) - len(references),
        )  # fmt: skip
    every = chosen if reason != "no_section_matched" else list(flatten(article.sections))
    shown = tuple(
        RenderedSection(path, level, section.title, section.kind, len(section.text))
        for path, level, section in every[:MAX_SECTIONS]
    )
    kept = abstract if len(abstract) <= remaining else None
    used = len(kept or "")
    return RenderedArticle("outline", reason, kept, shown, (), (), (), used, len(chosen))

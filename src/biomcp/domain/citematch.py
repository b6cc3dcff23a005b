"""Citation matching: a reference given in pieces, the queries that look it up in PubMed, and
how well a PubMed article fits it.

* `Reference` holds the pieces (journal, year, volume, first page, first author, title words);
* `citmatch_line` writes NCBI ECitMatch's `bdata` line
  (`journal|year|volume|first_page|author|key|`), `read_citmatch_line` reads its answer line
  (the same fields followed by a PMID, `NOT_FOUND...` or `AMBIGUOUS...`);
* `fielded_queries` are the ESearch terms tried when ECitMatch finds nothing, most specific
  first;
* `Candidate` is what PubMed says of an article, `compare` names the pieces it matches, and
  `rank` / `verdict` order the candidates and decide `matched`, `ambiguous` or `not_found`.

Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "MAX_PIECE_CHARS",
    "PIECES",
    "Candidate",
    "CitMatchAnswer",
    "Comparison",
    "MatchStatus",
    "Reference",
    "Verdict",
    "citmatch_line",
    "compare",
    "fielded_queries",
    "first_page",
    "rank",
    "read_citmatch_line",
    "verdict",
]

MatchStatus = Literal["matched", "ambiguous", "not_found"]
#: The pieces of a reference, in the order answers name them.
PIECES = ("journal", "year", "volume", "firstPage", "firstAuthor", "title")
MAX_PIECE_CHARS = 500
#: A title matches when this share of its significant words is in the candidate's title.
TITLE_OVERLAP = 0.8
_MAX_TITLE_WORDS = 8
_YEAR = re.compile(r"(1[6-9]|20|21)[0-9]{2}")
_WORD = re.compile(r"[^\W_]+")
_UNSAFE = re.compile(r'["\[\]()|\r\n\t]+')
_STOPWORDS = frozenset(
    ("a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it",
     "its", "of", "on", "or", "the", "to", "with", "without", "not", "nor", "via", "vs")
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Reference:
    """One reference to look up. Every piece is optional; `key` names it in answers."""

    key: str
    journal: str | None = None
    year: str | None = None
    volume: str | None = None
    first_page: str | None = None
    first_author: str | None = None
    title: str | None = None

    def given(self) -> tuple[str, ...]:
        """The names (from `PIECES`) of the pieces given."""
        values = (
            self.journal, self.year, self.volume, self.first_page, self.first_author, self.title,
        )  # fmt: skip
        return tuple(name for name, value in zip(PIECES, values, strict=True) if value)

    @property
    def citmatch_usable(self) -> bool:
        """Whether ECitMatch can use it: at least two of its five pieces (it ignores titles)."""
        return len([p for p in self.given() if p != "title"]) >= 2


@dataclass(frozen=True, slots=True)
class CitMatchAnswer:
    """ECitMatch's answer for one `bdata` line: the PMIDs it gave (one when found; the
    candidates it listed when ambiguous, possibly none) and its own words when it found none."""

    key: str
    status: Literal["found", "ambiguous", "not_found"]
    pmids: tuple[str, ...] = ()
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class Candidate:
    """What PubMed says of a candidate article (from its ESummary)."""

    pmid: str
    title: str | None = None
    journal: str | None = None
    journal_names: tuple[str, ...] = ()
    year: str | None = None
    volume: str | None = None
    pages: str | None = None
    first_author: str | None = None


@dataclass(frozen=True, slots=True)
class Comparison:
    """A candidate against a reference: the pieces it matches and the ones it contradicts
    (pieces the candidate has no value for are in neither), and where it was found."""

    candidate: Candidate
    matched: tuple[str, ...]
    unmatched: tuple[str, ...]
    via: str = "ecitmatch"
    order: int = 0

    @property
    def score(self) -> int:
        return len(self.matched)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The status of a reference and its candidates, best first."""

    status: MatchStatus
    ranked: tuple[Comparison, ...] = field(default_factory=tuple)


# --- text ----------------------------------------------------------------------------------


def _fold(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in folded if not unicodedata.combining(c))


def _words(text: str | None) -> list[str]:
    return _WORD.findall(_fold(text or ""))


def _clean(text: str | None) -> str:
    """A piece safe inside a query or a `bdata` field: no quotes, brackets, parentheses,
    pipes or line breaks; spaces collapsed."""
    return " ".join(_UNSAFE.sub(" ", text or "").split())


def first_page(pages: str | None) -> str | None:
    """The first page of a page range (`1904-14` -> `1904`, `e123` -> `e123`)."""
    if not pages:
        return None
    head = re.split(r"[-\u2010-\u2015,;\s]", pages.strip(), maxsplit=1)[0]
    return head or None


def _year(text: str | None) -> str | None:
    match = _YEAR.search(text or "")
    return match.group(0) if match else None


# --- ECitMatch -----------------------------------------------------------------------------


def citmatch_line(reference: Reference) -> str:
    """The `bdata` line of `reference`: `journal|year|volume|first_page|author|key|`."""
    pieces = (
        reference.journal,
        _year(reference.year),
        reference.volume,
        first_page(reference.first_page),
        reference.first_author,
    )
    fields = "".join(f"{_clean(p).lower() if p else ''}|" for p in pieces)
    return f"{fields}{_clean(reference.key)}|"


def read_citmatch_line(line: str) -> CitMatchAnswer | None:
    """One answer line of ECitMatch (the six input fields, then a PMID, `NOT_FOUND` with
    optional reasons, or `AMBIGUOUS` with optional candidate PMIDs); None for a line that is
    not one."""
    parts = line.strip().split("|")
    if len(parts) < 7:
        return None
    key, result = parts[5].strip(), "|".join(parts[6:]).strip()
    if result.isdigit():
        return CitMatchAnswer(key, "found", (result,))
    upper = result.upper()
    if upper.startswith("AMBIGUOUS"):
        pmids = tuple(dict.fromkeys(re.findall(r"\b[1-9][0-9]{0,9}\b", result)))
        return CitMatchAnswer(key, "ambiguous", pmids, result or None)
    return CitMatchAnswer(key, "not_found", (), result or "NOT_FOUND")


# --- ESearch fallback ----------------------------------------------------------------------


def _title_words(title: str | None) -> list[str]:
    words = [w for w in _words(title) if len(w) > 2 and w not in _STOPWORDS]
    return list(dict.fromkeys(words))[:_MAX_TITLE_WORDS]


def fielded_queries(reference: Reference) -> list[str]:
    """ESearch terms for `reference`, most specific first, each using at least two of its
    pieces, at most three: every bibliographic piece (`"journal"[ta] AND year[dp] AND
    volume[vi] AND page[pg] AND "author"[au]`), then journal, year and author only, then the
    title words with author and year, then the title words with the journal."""
    journal = f'"{_clean(reference.journal)}"[ta]' if _clean(reference.journal) else None
    year = f"{_year(reference.year)}[dp]" if _year(reference.year) else None
    volume = f"{_clean(reference.volume)}[vi]" if _clean(reference.volume) else None
    page = first_page(_clean(reference.first_page))
    paged = f"{page}[pg]" if page else None
    author = f'"{_clean(reference.first_author)}"[au]' if _clean(reference.first_author) else None
    words = _title_words(reference.title)
    title = " AND ".join(f"{w}[ti]" for w in words) if words else None
    tiers = [
        [journal, year, volume, paged, author],
        [journal, year, author],
        [title, author, year],
        [title, journal],
    ]
    queries: list[str] = []
    for tier in tiers:
        parts = [p for p in tier if p]
        if len(parts) >= 2:
            query = " AND ".join(parts)
            if query not in queries:
                queries.append(query)
    return queries[:3]


# --- comparing and ranking -----------------------------------------------------------------


def _same_journal(given: str, candidate: Candidate) -> bool:
    wanted = " ".join(_words(given))
    names = (candidate.journal, *candidate.journal_names)
    return any(wanted and wanted == " ".join(_words(name)) for name in names if name)


def _same_author(given: str, candidate: Candidate) -> bool:
    words = _words(candidate.first_author)
    if not words:
        return False
    surname = words[:-1] if len(words) > 1 else words  # "Kans JA": the initials go last
    wanted = _words(given.split(",")[0] if "," in given else given)
    size = len(surname)
    return any(wanted[i : i + size] == surname for i in range(len(wanted) - size + 1))


def _same_title(given: str, candidate: Candidate) -> bool:
    wanted = _title_words(given) or _words(given)
    have = set(_words(candidate.title))
    if not wanted or not have:
        return False
    return sum(w in have for w in wanted) / len(wanted) >= TITLE_OVERLAP


def compare(
    reference: Reference, candidate: Candidate, *, via: str = "ecitmatch", order: int = 0
) -> Comparison:
    """Which given pieces of `reference` `candidate` matches, and which it contradicts
    (`via` and `order`: where and how early it was found, for ranking ties)."""
    matched: list[str] = []
    unmatched: list[str] = []

    def check(name: str, value: str | None, has: object, same: bool) -> None:
        if not value:
            return
        if not has:
            return
        (matched if same else unmatched).append(name)

    if reference.journal:
        check("journal", reference.journal, candidate.journal or candidate.journal_names,
              _same_journal(reference.journal, candidate))  # fmt: skip
    check("year", reference.year, candidate.year, _year(reference.year) == candidate.year)
    check("volume", reference.volume, candidate.volume,
          _fold(_clean(reference.volume)) == _fold(candidate.volume or ""))  # fmt: skip
    check("firstPage", reference.first_page, first_page(candidate.pages),
          _fold(first_page(_clean(reference.first_page)) or "")
          == _fold(first_page(candidate.pages) or ""))  # fmt: skip
    if reference.first_author:
        check("firstAuthor", reference.first_author, candidate.first_author,
              _same_author(reference.first_author, candidate))  # fmt: skip
    if reference.title:
        check("title", reference.title, candidate.title, _same_title(reference.title, candidate))
    return Comparison(candidate, tuple(matched), tuple(unmatched), via, order)


def rank(comparisons: Sequence[Comparison]) -> tuple[Comparison, ...]:
    """Best first: most pieces matched, fewest contradicted, ECitMatch before ESearch, then
    the order they were found in. Each PMID once (its best comparison)."""
    ordered = sorted(
        comparisons,
        key=lambda c: (-c.score, len(c.unmatched), c.via != "ecitmatch", c.order),
    )
    seen: set[str] = set()
    unique: list[Comparison] = []
    for comparison in ordered:
        if comparison.candidate.pmid not in seen:
            seen.add(comparison.candidate.pmid)
            unique.append(comparison)
    return tuple(unique)


def verdict(comparisons: Sequence[Comparison]) -> Verdict:
    """`matched` when one candidate is best (most pieces matched, then fewest contradicted)
    with at least two pieces matched; `ambiguous` when several share that place; `not_found`
    when no candidate matches two pieces."""
    ranked = rank(comparisons)
    if not ranked or ranked[0].score < 2:
        return Verdict("not_found", ranked)
    best = ranked[0]
    ties = [c for c in ranked if (c.score, len(c.unmatched)) == (best.score, len(best.unmatched))]
    return Verdict("ambiguous" if len(ties) > 1 else "matched", ranked)

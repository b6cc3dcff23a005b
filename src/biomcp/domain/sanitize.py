"""Checking what callers send before it becomes an E-utilities request.

A query term is the caller's own PubMed query: field tags (`asthma[mh]`), quoted phrases,
boolean operators, parentheses, wildcards (`child*`) and ranges (`2020:2023[dp]`) all pass
through unchanged. What is refused, with `InvalidQueryError` (a `VALIDATION` error the caller
can fix):

* control characters (tab, newline and carriage return excepted: they are whitespace and
  collapse), bidirectional-override characters (they make a query read differently from what is
  sent) and lone surrogates;
* a term longer than `MAX_QUERY_LENGTH` characters after whitespace is collapsed;
* an unbalanced double quote, parenthesis or field-tag bracket. The live search appends its own
  clauses (`AND (2020:2023[pdat])`), and an unclosed `(` or `"` would swallow them and change
  what is searched; PubMed would not say so.

Filters the server adds itself (publication types, a date window) are built here too, so the
effective term is one pure function of the request.
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from biomcp.domain.errors import InvalidQueryError, InvalidRecordError

__all__ = [
    "MAX_PMIDS",
    "MAX_QUERY_LENGTH",
    "MAX_TYPE_LENGTH",
    "DateWindow",
    "effective_term",
    "parse_pmid",
    "parse_pmids",
    "publication_type_clause",
    "sanitize_query",
]

MAX_QUERY_LENGTH = 4000
MAX_TYPE_LENGTH = 200
#: fetchArticleDetails takes at most this many PMIDs per call (spec 04 section 3.2).
MAX_PMIDS = 200

#: The far bounds PubMed users write for an open-ended date range.
_OPEN_LOW = "1000"
_OPEN_HIGH = "3000"

_WHITESPACE_CONTROLS = frozenset("\t\n\r")
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_PMID = re.compile(r"[0-9]+")
_DATE = re.compile(r"([0-9]{4})(?:/([0-9]{2})(?:/([0-9]{2}))?)?")

DateTag = Literal["pdat", "mdat", "edat"]


def _check_characters(text: str, what: str) -> None:
    for position, char in enumerate(text):
        if char in _WHITESPACE_CONTROLS:
            continue
        category = unicodedata.category(char)
        if category == "Cc" or category == "Cs" or char in _BIDI_CONTROLS:
            raise InvalidQueryError(
                f"{what} contains a control character (U+{ord(char):04X} at position "
                f"{position}); remove it and send plain text"
            )


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _check_balanced(term: str) -> None:
    if term.count('"') % 2:
        raise InvalidQueryError(
            'the query has an unbalanced double quote ("): close the quoted phrase'
        )
    depth = 0
    in_quotes = False
    in_tag = False
    for char in term:
        if char == '"' and not in_tag:
            in_quotes = not in_quotes
        elif in_quotes:
            continue
        elif char == "[":
            if in_tag:
                raise InvalidQueryError("the query nests '[' inside a field tag: write term[tag]")
            in_tag = True
        elif char == "]":
            if not in_tag:
                raise InvalidQueryError("the query has a ']' without its '['")
            in_tag = False
        elif in_tag:
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise InvalidQueryError("the query has a ')' without its '('")
    if in_tag:
        raise InvalidQueryError("the query has a '[' without its ']': close the field tag")
    if depth:
        raise InvalidQueryError(f"the query has {depth} unclosed '(': balance the parentheses")


def sanitize_query(term: str, *, max_length: int = MAX_QUERY_LENGTH) -> str:
    """`term` with whitespace collapsed, PubMed syntax untouched.

    Raises:
        InvalidQueryError: not a str, empty, a control character, longer than `max_length`
            characters, or an unbalanced quote, parenthesis or bracket.
    """
    if not isinstance(term, str):
        raise InvalidQueryError(f"the query must be a string, got {type(term).__name__}")
    _check_characters(term, "the query")
    cleaned = _collapse(term)
    if not cleaned:
        raise InvalidQueryError("the query is empty: give PubMed search terms")
    if len(cleaned) > max_length:
        raise InvalidQueryError(
            f"the query is {len(cleaned)} characters long, more than the {max_length} allowed: "
            "shorten it or split it into several searches"
        )
    _check_balanced(cleaned)
    return cleaned


def publication_type_clause(types: Iterable[str]) -> str | None:
    """`"Review"[Publication Type]`, or several OR-ed (`"A"[Publication Type] OR
    "B"[Publication Type]`); None for no types.

    Case-insensitive duplicates are dropped (first spelling wins).

    Raises:
        InvalidQueryError: a type that is empty, longer than MAX_TYPE_LENGTH, or holds a
            control character, `"`, `[` or `]` (a publication type is a plain name).
    """
    seen: dict[str, str] = {}
    for raw in types:
        if not isinstance(raw, str):
            raise InvalidQueryError("publication types must be strings")
        _check_characters(raw, "a publication type")
        name = _collapse(raw)
        if not name:
            raise InvalidQueryError("a publication type is empty")
        if len(name) > MAX_TYPE_LENGTH:
            raise InvalidQueryError(
                f"a publication type is longer than {MAX_TYPE_LENGTH} characters"
            )
        if any(char in name for char in '"[]'):
            raise InvalidQueryError(
                f"publication type {name!r} holds '\"', '[' or ']': give the plain name, "
                "e.g. Review or Clinical Trial"
            )
        seen.setdefault(name.casefold(), name)
    atoms = [f'"{name}"[Publication Type]' for name in seen.values()]
    return " OR ".join(atoms) if atoms else None


@dataclass(frozen=True, slots=True)
class DateWindow:
    """A date filter as the search tool takes it: NCBI's `YYYY`, `YYYY/MM` or `YYYY/MM/DD`
    bounds (either may be open) on the publication (`pdat`), modification (`mdat`) or Entrez
    (`edat`) date.

    Raises:
        InvalidQueryError: a malformed or impossible date, an unknown date type, or a minimum
            after the maximum.
    """

    min_date: str | None = None
    max_date: str | None = None
    date_type: DateTag = "pdat"

    def __post_init__(self) -> None:
        if self.date_type not in ("pdat", "mdat", "edat"):
            raise InvalidQueryError(f"dateType must be pdat, mdat or edat, got {self.date_type!r}")
        low = _bounds(self.min_date, "minDate")
        high = _bounds(self.max_date, "maxDate")
        if low is not None and high is not None and low[0] > high[1]:
            raise InvalidQueryError(
                f"minDate {self.min_date} is after maxDate {self.max_date}: swap them"
            )

    def clause(self) -> str | None:
        """`2020/01:2023[pdat]`, `2023[pdat]` when both bounds are equal, an open bound as
        PubMed users write it (`2020:3000[pdat]`); None when neither bound is set."""
        if self.min_date is None and self.max_date is None:
            return None
        if self.min_date == self.max_date:
            return f"{self.min_date}[{self.date_type}]"
        low = self.min_date or _OPEN_LOW
        high = self.max_date or _OPEN_HIGH
        return f"{low}:{high}[{self.date_type}]"


def _bounds(
    text: str | None, name: str
) -> tuple[tuple[int, int, int], tuple[int, int, int]] | None:
    """The first and last day `text` can mean, as (year, month, day) tuples."""
    if text is None:
        return None
    match = _DATE.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise InvalidQueryError(f"{name} must be YYYY, YYYY/MM or YYYY/MM/DD, got {text!r}")
    year, month_text, day_text = match.groups()
    y = int(year)
    if month_text is None:
        return (y, 1, 1), (y, 12, 31)
    m = int(month_text)
    if not 1 <= m <= 12:
        raise InvalidQueryError(f"{name} {text!r} has no month {m}")
    last = calendar.monthrange(y, m)[1]
    if day_text is None:
        return (y, m, 1), (y, m, last)
    d = int(day_text)
    if not 1 <= d <= last:
        raise InvalidQueryError(f"{name} {text!r} is not a calendar day")
    return (y, m, d), (y, m, d)


def effective_term(
    query: str, *, window: DateWindow | None = None, publication_types: Sequence[str] = ()
) -> str:
    """The ESearch term for a search request: the sanitized query, then `AND (date range)`,
    then `AND (publication types)`, as spec 04 shows
    (`precision oncology AND (2023[pdat]) AND ("Review"[Publication Type])`). PubMed reads
    boolean operators left to right, so each appended clause filters the whole query before it.

    Raises:
        InvalidQueryError: see `sanitize_query`, `publication_type_clause` and `DateWindow`.
    """
    term = sanitize_query(query)
    clauses = [window.clause() if window is not None else None]
    clauses.append(publication_type_clause(publication_types))
    for clause in clauses:
        if clause:
            term += f" AND ({clause})"
    return term


def parse_pmid(text: str) -> str:
    """A PMID as PubMed writes it: 1 to 10 digits without a leading zero (surrounding
    whitespace is ignored).

    Raises:
        InvalidRecordError: anything else.
    """
    if not isinstance(text, str):
        raise InvalidRecordError(f"a PMID must be a string of digits, got {type(text).__name__}")
    pmid = text.strip()
    if not _PMID.fullmatch(pmid):
        raise InvalidRecordError(f"{text!r} is not a PMID: a PMID is digits only, e.g. 29768149")
    if pmid.startswith("0"):
        raise InvalidRecordError(
            f"{text!r} is not a PMID: PMIDs have no leading zero (write {pmid.lstrip('0') or '?'})"
        )
    if len(pmid) > 10:
        raise InvalidRecordError(f"{text!r} is not a PMID: PMIDs have at most 10 digits")
    return pmid


def parse_pmids(texts: Iterable[str], *, limit: int = MAX_PMIDS) -> tuple[str, ...]:
    """Every PMID of `texts` checked with `parse_pmid`, duplicates dropped, order kept.

    Raises:
        InvalidRecordError: none given, more than `limit` distinct PMIDs, or a malformed one
            (the message names it).
    """
    pmids = tuple(dict.fromkeys(parse_pmid(t) for t in texts))
    if not pmids:
        raise InvalidRecordError("no PMID given: pass at least one")
    if len(pmids) > limit:
        raise InvalidRecordError(
            f"{len(pmids)} PMIDs given, at most {limit} per call: split the list"
        )
    return pmids

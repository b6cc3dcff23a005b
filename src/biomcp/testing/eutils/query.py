"""A useful subset of PubMed's query language: lexing, parsing and the normalized translation.

Supported: AND / OR / NOT, parentheses, quoted phrases, implicit AND between adjacent terms, a
trailing `*` wildcard, and field tags (see `FIELDS`). Boolean operators are evaluated strictly
left to right, as PubMed does ("PubMed processes Boolean connectors in a left-to-right
sequence"): `a OR b AND c` means `(a OR b) AND c`; use parentheses to group otherwise. Operators
must be upper case; a lower-case `and` is an ordinary word, as in PubMed.

A run of bare words followed by a tag (`smith j[au]`, `heart attack[tiab]`) is one tagged term
(a name, a phrase); bare words without a tag are separate terms ANDed together. Date fields take
`YYYY`, `YYYY/MM`, `YYYY/MM/DD`, a range `A:B[dp]`, or PubMed's own `A[dp] : B[dp]`;
`[uid]` takes a PMID or a PMID range `A:B[uid]`.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date
from typing import Literal

from biomcp.testing.eutils.fields import tokenize

__all__ = [
    "FIELDS",
    "BinOp",
    "DateRange",
    "Field",
    "Node",
    "QuerySyntaxError",
    "Term",
    "UidRange",
    "parse_date_bound",
    "parse_query",
    "translate",
]

Kind = Literal["text", "value", "author", "uid", "date"]


class QuerySyntaxError(ValueError):
    """The query cannot be parsed (unbalanced parentheses, a dangling operator...)."""


@dataclass(frozen=True, slots=True)
class Field:
    """A searchable field: `key` as used internally, `name` as NCBI prints it in translations,
    `kind` how terms match, `parts` the indexed parts it searches."""

    key: str
    name: str
    kind: Kind
    parts: tuple[str, ...] = ()
    description: str = ""


FIELDS: dict[str, Field] = {
    f.key: f
    for f in (
        Field("all", "All Fields", "text", ("ti", "ab", "ot", "mh", "ta", "au"),
              "All terms from all searchable fields"),
        Field("tiab", "Title/Abstract", "text", ("ti", "ab", "ot"),
              "Free text associated with Abstract/Title"),
        Field("ti", "Title", "text", ("ti",), "Words in title of publication"),
        Field("ab", "Abstract", "text", ("ab",), "Words in abstract of publication"),
        Field("ot", "Other Term", "text", ("ot",), "Other terms (author keywords)"),
        Field("mh", "MeSH Terms", "value", ("mh",),
              "Medical Subject Headings assigned to publication"),
        Field("majr", "MeSH Major Topic", "value", ("majr",),
              "MeSH terms of major importance to publication"),
        Field("pt", "Publication Type", "value", ("pt",), "Type of publication (e.g., review)"),
        Field("au", "Author", "author", ("au",), "Author(s) of publication"),
        Field("ta", "Journal", "value", ("ta",), "Journal abbreviation of publication"),
        Field("la", "Language", "value", ("la",), "Language of publication"),
        Field("uid", "UID", "uid", (), "Unique number assigned to publication"),
        Field("dp", "Date - Publication", "date", ("pdat",), "Date of publication"),
        Field("edat", "Date - Entry", "date", ("edat",),
              "Date publication first accessible through Entrez"),
        Field("mdat", "Date - Modification", "date", ("mdat",),
              "Date of last modification"),
    )
}  # fmt: skip

_ALIASES = {
    "all": "all", "all fields": "all", "word": "all", "text word": "all", "tw": "all",
    "tiab": "tiab", "title/abstract": "tiab",
    "ti": "ti", "title": "ti", "titl": "ti",
    "ab": "ab", "abstract": "ab",
    "ot": "ot", "other term": "ot", "kw": "ot", "keyword": "ot",
    "mh": "mh", "mesh": "mh", "mesh terms": "mh", "mesh term": "mh",
    "majr": "majr", "mesh major topic": "majr",
    "pt": "pt", "ptyp": "pt", "publication type": "pt",
    "au": "au", "auth": "au", "author": "au",
    "ta": "ta", "jour": "ta", "journal": "ta",
    "la": "la", "lang": "la", "language": "la",
    "uid": "uid", "pmid": "uid",
    "dp": "dp", "pdat": "dp", "publication date": "dp", "date - publication": "dp",
    "edat": "edat", "crdt": "edat", "entrez date": "edat", "date - entry": "edat",
    "date - create": "edat",
    "mdat": "mdat", "lr": "mdat", "date - modification": "mdat", "modification date": "mdat",
}  # fmt: skip
_OPERATORS = frozenset({"AND", "OR", "NOT"})
_DATE = re.compile(r"^\s*(\d{4})(?:[/.-](\d{1,2})(?:[/.-](\d{1,2}))?)?\s*$")
_LEXEME = re.compile(r'\s+|\(|\)|"[^"]*"?|\[[^\]]*\]?|[^\s()"\[]+')


@dataclass(frozen=True, slots=True)
class Term:
    """A search term. `field` is None for an untagged term (searched in all fields);
    `unknown_tag` keeps a tag the fake does not know (the term is then searched in all fields
    and the answer carries FieldNotFound)."""

    text: str
    tokens: tuple[str, ...]
    field: str | None = None
    quoted: bool = False
    wildcard: bool = False
    unknown_tag: str | None = None

    @property
    def search_field(self) -> Field:
        return FIELDS[self.field or "all"]

    def label(self) -> str:
        """How NCBI names the term in PhraseNotFound: the text, with its tag when it had one."""
        shown = f'"{self.text}"' if self.quoted else self.text
        return f"{shown}[{self.search_field.name}]" if self.field else shown


@dataclass(frozen=True, slots=True)
class DateRange:
    """Whole days [start, end] of a date field ("pdat", "edat" or "mdat")."""

    field: str
    start: date
    end: date


@dataclass(frozen=True, slots=True)
class UidRange:
    """PMIDs from `start` to `end` inclusive (`30000000:30004999[uid]`)."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class BinOp:
    op: Literal["AND", "OR", "NOT"]
    left: Node
    right: Node


Node = Term | DateRange | UidRange | BinOp


# --------------------------------------------------------------------------- lexing


@dataclass(frozen=True, slots=True)
class _Lexeme:
    kind: Literal["(", ")", "op", "phrase", "word", "tag", ":"]
    text: str


def _lex(query: str) -> list[_Lexeme]:
    found: list[_Lexeme] = []
    for match in _LEXEME.finditer(query):
        text = match.group()
        if text.isspace():
            continue
        if text in ("(", ")"):
            found.append(_Lexeme(text, text))  # type: ignore[arg-type]
        elif text.startswith('"'):
            if len(text) < 2 or not text.endswith('"'):
                raise QuerySyntaxError("Invalid query: unbalanced quotation marks")
            found.append(_Lexeme("phrase", text[1:-1]))
        elif text.startswith("["):
            if not text.endswith("]"):
                raise QuerySyntaxError("Invalid query: unbalanced square brackets")
            found.append(_Lexeme("tag", text[1:-1].strip()))
        elif text in _OPERATORS:
            found.append(_Lexeme("op", text))
        elif text == ":":
            found.append(_Lexeme(":", text))
        else:
            found.append(_Lexeme("word", text))
    return found


# --------------------------------------------------------------------------- parsing


def parse_query(query: str) -> Node:
    """Parse a PubMed query into a tree of `Term`, `DateRange` and left-associative `BinOp`.

    Raises:
        QuerySyntaxError: on an empty query, unbalanced parentheses, quotes or brackets, an
            operator without a term on either side, a field tag without a term, or an
            unreadable date in a date field.
    """
    parser = _Parser(_lex(query))
    if not parser.lexemes:
        raise QuerySyntaxError("Empty term and query_key - nothing todo")
    node = parser.expression()
    if parser.peek() is not None:  # only a stray ")" stops an expression early
        raise QuerySyntaxError("Invalid query: unbalanced parentheses (unexpected ')')")
    return node


class _Parser:
    def __init__(self, lexemes: list[_Lexeme]) -> None:
        self.lexemes = lexemes
        self.position = 0

    def peek(self, offset: int = 0) -> _Lexeme | None:
        index = self.position + offset
        return self.lexemes[index] if index < len(self.lexemes) else None

    def take(self) -> _Lexeme:
        lexeme = self.lexemes[self.position]
        self.position += 1
        return lexeme

    def expression(self) -> Node:
        node = self.unit()
        while (ahead := self.peek()) is not None and ahead.kind != ")":
            op: Literal["AND", "OR", "NOT"] = "AND"
            if ahead.kind == "op":
                op = self.take().text  # type: ignore[assignment]
                if self.peek() is None or self.peek().kind == ")":  # type: ignore[union-attr]
                    raise QuerySyntaxError(f"Invalid query: {op} without a term after it")
            node = BinOp(op, node, self.unit())
        return node

    def unit(self) -> Node:
        ahead = self.peek()
        if ahead is None:
            raise QuerySyntaxError("Invalid query: missing term")
        if ahead.kind == "(":
            self.take()
            if self.peek() is None:
                raise QuerySyntaxError("Invalid query: unbalanced parentheses (missing ')')")
            if self.peek().kind == ")":  # type: ignore[union-attr]
                raise QuerySyntaxError("Invalid query: empty parentheses")
            node = self.expression()
            if self.peek() is None:
                raise QuerySyntaxError("Invalid query: unbalanced parentheses (missing ')')")
            self.take()
            return node
        if ahead.kind == ")":
            raise QuerySyntaxError("Invalid query: unbalanced parentheses (unexpected ')')")
        if ahead.kind == "op":
            raise QuerySyntaxError(f"Invalid query: {ahead.text} without a term before it")
        if ahead.kind == "tag":
            raise QuerySyntaxError(f"Invalid query: field tag [{ahead.text}] without a term")
        if ahead.kind == ":":
            raise QuerySyntaxError("Invalid query: ':' without a date before it")
        if ahead.kind == "phrase":
            text = self.take().text
            return self._tagged(text, self._tag(), quoted=True)
        words = [self.take().text]
        while (nxt := self.peek()) is not None and nxt.kind == "word":
            words.append(self.take().text)
        tag = self._tag()
        if tag is not None:
            return self._tagged(" ".join(words), tag, quoted=False)
        chain: Node = _term(words[0], None, quoted=False)
        for word in words[1:]:
            chain = BinOp("AND", chain, _term(word, None, quoted=False))
        return chain

    def _tag(self) -> str | None:
        ahead = self.peek()
        return self.take().text if ahead is not None and ahead.kind == "tag" else None

    def _tagged(self, text: str, tag: str | None, *, quoted: bool) -> Node:
        key = _field_key(tag)
        kind = FIELDS[key].kind if key is not None else None
        if kind == "uid" and ":" not in text and self._peek_kind() != ":":
            return _term(text, tag, quoted=quoted)
        if kind not in ("date", "uid"):
            return _term(text, tag, quoted=quoted)
        if ":" in text:
            low, _, high = text.partition(":")
        elif self._peek_kind() == ":":  # PubMed's own spelling: 2019/01/01[dp] : 2020/12/31[dp]
            upper = self.peek(1)
            if upper is None or upper.kind not in ("word", "phrase"):
                raise QuerySyntaxError("Invalid query: ':' without a value after it")
            self.take()
            low, high = text, self.take().text
            if _field_key(self._tag() or tag) != key:
                raise QuerySyntaxError("Invalid query: a range spans two different fields")
        else:
            low = high = text
        if kind == "uid":
            return _uid_range(low, high)
        return _range(FIELDS[key or "dp"].parts[0], low, high)

    def _peek_kind(self) -> str | None:
        ahead = self.peek()
        return ahead.kind if ahead is not None else None


def _field_key(tag: str | None) -> str | None:
    if tag is None:
        return None
    name = tag.split(":", 1)[0].strip().casefold()  # [mh:noexp], [tiab:~2] -> mh, tiab
    return _ALIASES.get(name)


def _term(text: str, tag: str | None, *, quoted: bool) -> Term:
    key = _field_key(tag)
    unknown = tag if tag is not None and key is None else None
    wildcard = text.rstrip().endswith("*")
    return Term(
        text=text,
        tokens=tokenize(text),
        field=key,
        quoted=quoted,
        wildcard=wildcard,
        unknown_tag=unknown,
    )


def _uid_range(low: str, high: str) -> UidRange:
    try:
        return UidRange(int(low.strip().strip('"')), int(high.strip().strip('"')))
    except ValueError:
        raise QuerySyntaxError(f"Invalid UID range: {low.strip()}:{high.strip()}") from None


def _range(field: str, low: str, high: str) -> DateRange:
    start = parse_date_bound(low, upper=False)
    end = parse_date_bound(high, upper=True)
    return DateRange(field, start, end)


def parse_date_bound(text: str, *, upper: bool) -> date:
    """`YYYY`, `YYYY/MM` or `YYYY/MM/DD` as the first (or, `upper`, the last) day it covers.

    Raises:
        QuerySyntaxError: when `text` is not such a date.
    """
    match = _DATE.match(text.strip().strip('"'))
    if match is None:
        raise QuerySyntaxError(f"Invalid date: {text.strip()!r} (expected YYYY, YYYY/MM or "
                               "YYYY/MM/DD)")  # fmt: skip
    year, month, day = (int(g) if g else None for g in match.groups())
    assert year is not None  # noqa: S101 - the pattern makes the year mandatory
    try:
        if month is None:
            return date(year, 12, 31) if upper else date(year, 1, 1)
        if day is None:
            last = calendar.monthrange(year, month)[1]
            return date(year, month, last if upper else 1)
        return date(year, month, day)
    except ValueError as exc:
        raise QuerySyntaxError(f"Invalid date: {text.strip()!r}: {exc}") from exc


# --------------------------------------------------------------------------- translation


def translate(node: Node) -> str:
    """The normalized query, NCBI style: `"asthma"[MeSH Terms] AND (a OR b)`; grouping that
    left-to-right evaluation implies is written out with parentheses."""
    if isinstance(node, Term):
        field = node.search_field.name
        words = " ".join(node.tokens) + ("*" if node.wildcard else "")
        return f"{words}[{field}]" if node.wildcard else f'"{words}"[{field}]'
    if isinstance(node, UidRange):
        return f"{node.start}:{node.end}[UID]"
    if isinstance(node, DateRange):
        name = {"pdat": "Date - Publication", "edat": "Date - Entry", "mdat": "Date - Modification"}
        field = name[node.field]
        low, high = node.start.strftime("%Y/%m/%d"), node.end.strftime("%Y/%m/%d")
        return f'"{low}"[{field}] : "{high}"[{field}]'
    left = translate(node.left)
    if isinstance(node.left, BinOp) and node.left.op != node.op:
        left = f"({left})"
    right = translate(node.right)
    if isinstance(node.right, BinOp):
        right = f"({right})"
    return f"{left} {node.op} {right}"

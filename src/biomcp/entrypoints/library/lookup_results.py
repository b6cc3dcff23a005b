"""What `corpus.pubmed`'s lookups answer: full text, MeSH, identifiers, citation matches.

Frozen dataclasses over the tools' JSON, like `live_results`: the common fields in snake_case,
the whole answer in `as_payload()`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from biomcp.entrypoints.library.live_results import Payload, raw, strings

__all__ = [
    "CitationMatch",
    "CitationMatches",
    "ConvertedId",
    "ConvertedIds",
    "FullTextArticle",
    "FullTextSection",
    "FullTexts",
    "MatchCandidate",
    "MeshDescriptor",
    "MeshLookup",
]


# --- full text ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FullTextSection:
    """One section: its path (`2.1`), depth, title, size and, unless outlined, its text."""

    path: str
    level: int
    title: str
    chars: int
    type: str | None
    text: str | None
    truncated: bool


@dataclass(frozen=True, slots=True)
class FullTextArticle(Payload):
    """One asked id's full text, with its `status`: `available`, `not_in_pmc`,
    `not_open_access`, `withdrawn` or `upstream_error`. `mode` is `full` or `outline` (the
    article did not fit the budget: ask again with `sections`). `payload` has the captions,
    references, licence and counts."""

    id: str
    status: str
    message: str | None
    pmid: str | None
    pmcid: str | None
    title: str | None
    mode: str | None
    abstract: str | None
    sections: tuple[FullTextSection, ...]
    payload: Mapping[str, Any] = raw()

    @property
    def text(self) -> str:
        """The abstract and the sections' text, in order, as one string."""
        parts = [self.abstract or "", *(s.text or "" for s in self.sections)]
        return "\n\n".join(part for part in parts if part)


def _section(found: Mapping[str, Any]) -> FullTextSection:
    return FullTextSection(
        found["path"],
        found["level"],
        found["title"],
        found["chars"],
        found.get("type"),
        found.get("text"),
        bool(found.get("truncated")),
    )


@dataclass(frozen=True, slots=True)
class FullTexts(Payload):
    """Full text of the asked ids, in order, within `max_chars` (`used_chars` spent)."""

    articles: tuple[FullTextArticle, ...]
    max_chars: int
    used_chars: int
    payload: Mapping[str, Any] = raw()

    @classmethod
    def of(cls, answer: Mapping[str, Any]) -> FullTexts:
        articles = tuple(
            FullTextArticle(
                a["id"],
                a["status"],
                a.get("message"),
                a.get("pmid"),
                a.get("pmcid"),
                a.get("title"),
                a.get("mode"),
                a.get("abstract"),
                tuple(_section(s) for s in a.get("sections") or ()),
                payload=a,
            )
            for a in answer["articles"]
        )
        return cls(articles, answer["maxChars"], answer["usedChars"], payload=answer)


# --- MeSH ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MeshDescriptor(Payload):
    """A MeSH record: its UI and name, tree numbers, entry terms, scope note, and the
    PubMed query it suggests (`"X"[mh] OR X[tiab]`)."""

    ui: str
    name: str
    record_type: str | None
    tree_numbers: tuple[str, ...]
    entry_terms: tuple[str, ...]
    scope_note: str | None
    suggested_query: str
    url: str | None
    payload: Mapping[str, Any] = raw()


@dataclass(frozen=True, slots=True)
class MeshLookup(Payload):
    """The MeSH records matching `term`, best first."""

    term: str
    total_found: int | None
    descriptors: tuple[MeshDescriptor, ...]
    payload: Mapping[str, Any] = raw()

    @classmethod
    def of(cls, answer: Mapping[str, Any]) -> MeshLookup:
        descriptors = tuple(
            MeshDescriptor(
                d["ui"],
                d["name"],
                d.get("recordType"),
                strings(d.get("treeNumbers")),
                strings(d.get("entryTerms")),
                d.get("scopeNote"),
                d["suggestedQuery"],
                d.get("url"),
                payload=d,
            )
            for d in answer["descriptors"]
        )
        return cls(answer["term"], answer.get("totalFound"), descriptors, payload=answer)


# --- identifiers --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConvertedId:
    """One given id (`id_type` `pmid`, `pmcid` or `doi`) and what it converts to, or
    `status` `not_found` with NCBI's `reason`."""

    requested_id: str
    id_type: str
    status: str
    pmid: str | None
    pmcid: str | None
    doi: str | None
    reason: str | None


@dataclass(frozen=True, slots=True)
class ConvertedIds(Payload):
    """Every given id, in order, with how many converted."""

    records: tuple[ConvertedId, ...]
    found: int
    not_found: int
    payload: Mapping[str, Any] = raw()

    @classmethod
    def of(cls, answer: Mapping[str, Any]) -> ConvertedIds:
        records = tuple(
            ConvertedId(
                r["requestedId"],
                r["idType"],
                r["status"],
                r.get("pmid"),
                r.get("pmcid"),
                r.get("doi"),
                r.get("reason"),
            )
            for r in answer["records"]
        )
        return cls(records, answer["found"], answer["notFound"], payload=answer)


# --- citation matching --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MatchCandidate:
    """An article a reference may be: which given fields it matched, and how it was found
    (`ecitmatch` or `esearch`)."""

    pmid: str
    title: str | None
    matched_fields: tuple[str, ...]
    unmatched_fields: tuple[str, ...]
    via: str
    retracted: bool


@dataclass(frozen=True, slots=True)
class CitationMatch(Payload):
    """One reference, by its position (`index`) and echoed `key`: `matched` (with `pmid`),
    `ambiguous` or `not_found`, with ranked candidates."""

    index: int
    key: str | None
    status: str
    pmid: str | None
    candidates: tuple[MatchCandidate, ...]
    note: str | None
    payload: Mapping[str, Any] = raw()


def _candidate(found: Mapping[str, Any]) -> MatchCandidate:
    return MatchCandidate(
        found["pmid"],
        found.get("title"),
        strings(found.get("matchedFields")),
        strings(found.get("unmatchedFields")),
        found["via"],
        bool(found.get("retracted")),
    )


@dataclass(frozen=True, slots=True)
class CitationMatches(Payload):
    """Every reference's match, in order, and how many were matched, ambiguous, not found."""

    results: tuple[CitationMatch, ...]
    matched: int
    ambiguous: int
    not_found: int
    payload: Mapping[str, Any] = raw()

    @classmethod
    def of(cls, answer: Mapping[str, Any]) -> CitationMatches:
        results = tuple(
            CitationMatch(
                r["index"],
                r.get("key"),
                r["status"],
                r.get("pmid"),
                tuple(_candidate(c) for c in r["candidates"]),
                r.get("note"),
                payload=r,
            )
            for r in answer["results"]
        )
        counts = answer["counts"]
        return cls(
            results, counts["matched"], counts["ambiguous"], counts["notFound"], payload=answer
        )

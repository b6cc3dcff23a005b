"""What `corpus.pubmed` answers: frozen dataclasses over the live tools' JSON.

Each result names the fields most code reads, in snake_case. Its `as_payload()` is the tool's
whole JSON answer (camelCase, as spec 04 prints it), for what the fields leave out.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Article",
    "Articles",
    "BriefSummary",
    "Citations",
    "CitedArticle",
    "PubMedSearch",
    "RelatedArticle",
    "Relationships",
    "RetractionNotice",
]


class Payload:
    """`as_payload()`: a copy of the JSON the result was read from."""

    __slots__ = ()
    payload: Mapping[str, Any]

    def as_payload(self) -> dict[str, Any]:
        """The tool's JSON, as a new dict."""
        return copy.deepcopy(dict(self.payload))


def raw() -> Any:
    """The `payload` field: kept out of `repr` and equality."""
    return field(repr=False, compare=False, kw_only=True)


def strings(values: Any) -> tuple[str, ...]:
    return tuple(str(value) for value in values or ())


@dataclass(frozen=True, slots=True)
class RetractionNotice:
    """Where PubMed says an article was retracted: the notice's PMID and citation."""

    notice_pmid: str | None
    source: str | None


def _notice(found: Mapping[str, Any] | None) -> RetractionNotice | None:
    if not found:
        return None
    return RetractionNotice(found.get("noticePmid"), found.get("source"))


# --- search -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BriefSummary(Payload):
    """One search result's summary (ESummary): title, authors, journal, dates, retraction."""

    pmid: str
    title: str | None
    authors: str | None
    source: str | None
    pub_date: str | None
    retracted: bool
    retraction_notice: RetractionNotice | None
    payload: Mapping[str, Any] = raw()


@dataclass(frozen=True, slots=True)
class PubMedSearch(Payload):
    """A live PubMed search: the term PubMed ran, how many it found, the PMIDs of this page
    and the summaries asked for. `next_cursor` pages on past the offset limit; `spelling` is
    ESpell's suggestion when it made one."""

    effective_term: str
    total_found: int
    pmids: tuple[str, ...]
    summaries: tuple[BriefSummary, ...]
    query_translation: str | None
    offset: int | None
    next_cursor: str | None
    spelling: Mapping[str, str] | None
    warnings: tuple[str, ...]
    esearch_url: str
    payload: Mapping[str, Any] = raw()

    @classmethod
    def of(cls, answer: Mapping[str, Any]) -> PubMedSearch:
        return cls(
            answer["effectiveESearchTerm"],
            answer["totalFound"],
            strings(answer["pmids"]),
            tuple(_summary(s) for s in answer["briefSummaries"]),
            answer.get("queryTranslation"),
            answer.get("offset"),
            answer.get("nextCursor"),
            answer.get("spelling"),
            strings(answer.get("warnings")),
            answer["eSearchUrl"],
            payload=answer,
        )


def _summary(found: Mapping[str, Any]) -> BriefSummary:
    return BriefSummary(
        found["pmid"],
        found.get("title"),
        found.get("authors"),
        found.get("source"),
        found.get("pubDate"),
        bool(found.get("retracted")),
        _notice(found.get("retractionNotice")),
        payload=found,
    )


# --- fetch --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Article(Payload):
    """One fetched article. The parsed levels fill the bibliographic fields; `full_xml` and
    `medline_text` hold the record as NCBI sent it at those levels. `payload` has the rest:
    authors with affiliations, MeSH qualifiers, grants, abstract sections."""

    pmid: str
    title: str | None
    abstract: str | None
    authors: tuple[str, ...]
    journal: str | None
    pub_date: str | None
    publication_types: tuple[str, ...]
    mesh_terms: tuple[str, ...]
    doi: str | None
    pmcid: str | None
    retracted: bool
    retraction_notice: RetractionNotice | None
    full_xml: str | None
    medline_text: str | None
    payload: Mapping[str, Any] = raw()


def _author(found: Mapping[str, Any]) -> str | None:
    if found.get("collectiveName"):
        return str(found["collectiveName"])
    parts = [found.get("lastName"), found.get("initials")]
    return " ".join(p for p in parts if p) or None


def _article(found: Mapping[str, Any]) -> Article:
    journal = found.get("journalInfo") or {}
    published = journal.get("publicationDate") or {}
    return Article(
        found["pmid"],
        found.get("title"),
        found.get("abstractText"),
        tuple(name for a in found.get("authors") or () if (name := _author(a))),
        journal.get("title"),
        published.get("isoDate") or published.get("medlineDate"),
        strings(found.get("publicationTypes")),
        tuple(t["descriptorName"] for t in found.get("meshTerms") or ()),
        found.get("doi"),
        found.get("pmcid"),
        bool(found.get("retracted")),
        _notice(found.get("retractionNotice")),
        found.get("fullXml"),
        found.get("medlineText"),
        payload=found,
    )


@dataclass(frozen=True, slots=True)
class Articles(Payload):
    """Fetched articles in the order asked, and the PMIDs PubMed did not return."""

    articles: tuple[Article, ...]
    not_found_pmids: tuple[str, ...]
    detail_level: str
    warnings: tuple[str, ...]
    payload: Mapping[str, Any] = raw()

    @classmethod
    def of(cls, answer: Mapping[str, Any]) -> Articles:
        return cls(
            tuple(_article(a) for a in answer["articles"]),
            strings(answer["notFoundPmids"]),
            answer["detailLevel"],
            strings(answer.get("warnings")),
            payload=answer,
        )


# --- related and cite ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RelatedArticle(Payload):
    """A linked article. A similar article's `score` is in [0, 1], relative to the most
    similar one; `raw_score` is NCBI's integer. Citing and cited articles have neither."""

    pmid: str
    title: str | None
    authors: str | None
    score: float | None
    raw_score: int | None
    retracted: bool
    link_url: str
    payload: Mapping[str, Any] = raw()


@dataclass(frozen=True, slots=True)
class Relationships(Payload):
    """The articles linked to `source_pmid` (`related`), or its citation strings by style
    (`citations`, for `citation_formats`). `total_linked` counts links before truncation."""

    source_pmid: str
    relationship_type: str
    related: tuple[RelatedArticle, ...]
    citations: Mapping[str, str]
    total_linked: int | None
    elink_url: str | None
    payload: Mapping[str, Any] = raw()

    @classmethod
    def of(cls, answer: Mapping[str, Any]) -> Relationships:
        related = tuple(
            RelatedArticle(
                r["pmid"],
                r.get("title"),
                r.get("authors"),
                r.get("score"),
                r.get("rawScore"),
                bool(r.get("retracted")),
                r["linkUrl"],
                payload=r,
            )
            for r in answer["relatedArticles"]
        )
        return cls(
            answer["sourcePmid"],
            answer["relationshipType"],
            related,
            dict(answer["citations"]),
            answer.get("totalLinked"),
            answer.get("eLinkUrl"),
            payload=answer,
        )


@dataclass(frozen=True, slots=True)
class CitedArticle:
    """One article's citation strings, by style (`ris`, `bibtex`, `apa_string`...)."""

    pmid: str
    citations: Mapping[str, str]
    retracted: bool


@dataclass(frozen=True, slots=True)
class Citations(Payload):
    """Citation strings of many articles; PMIDs PubMed lacks, and book records, apart."""

    styles: tuple[str, ...]
    articles: tuple[CitedArticle, ...]
    not_found_pmids: tuple[str, ...]
    book_pmids: tuple[str, ...]
    warnings: tuple[str, ...]
    payload: Mapping[str, Any] = raw()

    @classmethod
    def of(cls, answer: Mapping[str, Any]) -> Citations:
        return cls(
            strings(answer["citationStyles"]),
            tuple(
                CitedArticle(a["pmid"], dict(a["citations"]), bool(a.get("retracted")))
                for a in answer["articles"]
            ),
            strings(answer["notFoundPmids"]),
            strings(answer.get("bookPmids")),
            strings(answer.get("warnings")),
            payload=answer,
        )

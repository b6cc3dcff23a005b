"""The EntrezClient port: what bio-mcp needs from NCBI's E-utilities, and how it fails.

Values here are plain frozen dataclasses; PubMed records are the domain's `PubMedRecord`.
Every failure an adapter can meet is raised as one of the `EntrezError` subclasses below, so use
cases and tools map errors by kind (rate limit, upstream down, bad request, unreadable answer)
without knowing the transport.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Literal, Protocol

from biomcp.domain.citematch import CitMatchAnswer
from biomcp.domain.fulltext import PmcArticleSet
from biomcp.domain.identifiers import IdConversion, IdKind
from biomcp.domain.mesh import MeshDescriptor
from biomcp.domain.records import PubMedRecord

__all__ = [
    "DatabaseInfo",
    "DateType",
    "DocSummary",
    "EntrezApiKeyError",
    "EntrezClient",
    "EntrezError",
    "EntrezRateLimitError",
    "EntrezRequestError",
    "EntrezResponseError",
    "EntrezTimeoutError",
    "EntrezUnavailableError",
    "EntrezWarning",
    "FetchResult",
    "FieldInfo",
    "Link",
    "LinkInfo",
    "LinkSet",
    "SearchResult",
    "SummaryReference",
    "WindowEnumeration",
]

DateType = Literal["edat", "pdat", "mdat"]

#: PubMed's ESearch returns at most this many ids for one query, whatever retstart says.
ESEARCH_ID_CAP = 9999


# --- errors --------------------------------------------------------------------------------


class EntrezError(Exception):
    """Base of every error an EntrezClient raises. Messages never contain the API key."""


class EntrezRequestError(EntrezError):
    """NCBI refused the request itself: an `<ERROR>` payload, an invalid database or parameter,
    a retstart beyond the cap. Retrying the same request will not help."""


class EntrezApiKeyError(EntrezRequestError):
    """NCBI refused the configured API key ("API key invalid"): every request will fail until
    the key is corrected or removed."""


class EntrezRateLimitError(EntrezError):
    """NCBI kept answering 429 after every allowed retry. `retry_after` is NCBI's last hint, in
    seconds, when it gave one."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class EntrezUnavailableError(EntrezError):
    """NCBI answered 5xx, or the connection failed, after every allowed retry."""


class EntrezTimeoutError(EntrezUnavailableError):
    """A request, or the whole retry budget (the deadline), ran out of time."""


class EntrezResponseError(EntrezError):
    """NCBI answered 200 with something that is not the expected XML: an HTML error page,
    a truncated or malformed document, an unexpected root element."""


# --- values --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EntrezWarning:
    """A message NCBI attached to an answer (ErrorList / WarningList entries such as
    PhraseNotFound, FieldNotFound, QuotedPhraseNotFound, OutputMessage), or one the client adds
    itself (`source="client"`, e.g. a day whose ids exceed the ESearch cap)."""

    kind: str
    message: str
    source: Literal["ErrorList", "WarningList", "client"] = "WarningList"

    @property
    def dropped(self) -> str | None:
        """The part of the term PubMed found nowhere and searched without (`PhraseNotFound`,
        `QuotedPhraseNotFound`), without its quotes and field tag, case-folded
        (`"Retracted Publication"[pt]` -> `retracted publication`); None for other messages."""
        if self.kind not in ("PhraseNotFound", "QuotedPhraseNotFound"):
            return None
        text = self.message.strip()
        if text.endswith("]") and "[" in text:
            text = text[: text.rindex("[")]
        return " ".join(text.strip().strip('"').split()).casefold()

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One ESearch answer. `count` is the full match count; `pmids` the page returned (never
    more than the ESearch cap); `webenv` / `query_key` are set when the history server was used."""

    count: int
    retstart: int
    retmax: int
    pmids: tuple[str, ...]
    query_translation: str | None = None
    webenv: str | None = None
    query_key: str | None = None
    warnings: tuple[EntrezWarning, ...] = ()


@dataclass(frozen=True, slots=True)
class WindowEnumeration:
    """Every PMID matching a term in a date window, found by splitting the window until each
    part fits under the ESearch cap. `complete` is False only when a single day still held more
    than the cap (then `warnings` says which day and how many ids were left out). `warnings`
    also holds what NCBI said of the term (each message once), such as a part of it PubMed
    found nowhere and searched without (`PhraseNotFound`, `QuotedPhraseNotFound`)."""

    pmids: tuple[str, ...]
    count: int
    requests: int
    complete: bool = True
    warnings: tuple[EntrezWarning, ...] = ()


@dataclass(frozen=True, slots=True)
class FetchResult:
    """EFetch parsed into records. `missing` lists requested PMIDs PubMed did not return;
    `book_pmids` / `deleted_pmids` and `problems` report what could not become a record."""

    records: tuple[PubMedRecord, ...]
    missing: tuple[str, ...] = ()
    book_pmids: tuple[str, ...] = ()
    deleted_pmids: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SummaryReference:
    """A linked notice an ESummary lists under `References`: its type as PubMed spells it
    ("Retraction in", "Erratum in"...), the notice's citation and its PMID."""

    kind: str
    source: str | None = None
    pmid: str | None = None


@dataclass(frozen=True, slots=True)
class DocSummary:
    """An ESummary v2.0 DocumentSummary, reduced to what tools show."""

    pmid: str
    title: str | None = None
    journal: str | None = None
    source: str | None = None
    pub_types: tuple[str, ...] = ()
    pdat: str | None = None
    epubdate: str | None = None
    edat: str | None = None
    authors: tuple[str, ...] = ()
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    languages: tuple[str, ...] = ()
    doi: str | None = None
    pmcid: str | None = None
    issn: str | None = None
    eissn: str | None = None
    references: tuple[SummaryReference, ...] = ()
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Link:
    pmid: str
    score: int | None = None


@dataclass(frozen=True, slots=True)
class LinkSet:
    """ELink's answer for one source PMID: the linked PMIDs by link name
    (`pubmed_pubmed`, `pubmed_pubmed_citedin`, `pubmed_pubmed_refs`...), scores when asked for."""

    source_pmids: tuple[str, ...]
    links: Mapping[str, tuple[Link, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FieldInfo:
    name: str
    full_name: str | None = None
    description: str | None = None
    term_count: int | None = None
    is_date: bool = False
    is_numerical: bool = False


@dataclass(frozen=True, slots=True)
class LinkInfo:
    name: str
    menu: str | None = None
    description: str | None = None
    db_to: str | None = None


@dataclass(frozen=True, slots=True)
class DatabaseInfo:
    """EInfo for one database."""

    db_name: str
    count: int | None = None
    last_update: str | None = None
    menu_name: str | None = None
    description: str | None = None
    build: str | None = None
    fields: tuple[FieldInfo, ...] = ()
    links: tuple[LinkInfo, ...] = ()


# --- the port ------------------------------------------------------------------------------


class EntrezClient(Protocol):
    """NCBI E-utilities for PubMed.

    Every call sends NCBI's `tool` / `email` (and `api_key` when configured), waits its turn in
    the process-wide rate limit, retries transient failures, and raises only `EntrezError`
    subclasses.
    """

    async def esearch(
        self,
        term: str,
        *,
        datetype: DateType | None = None,
        mindate: str | None = None,
        maxdate: str | None = None,
        retstart: int = 0,
        retmax: int = 20,
        sort: str | None = None,
        usehistory: bool = False,
    ) -> SearchResult:
        """One ESearch page. Dates are NCBI's `YYYY`, `YYYY/MM` or `YYYY/MM/DD` strings.

        Raises:
            EntrezRequestError: NCBI rejected the term or parameters.
            EntrezRateLimitError, EntrezUnavailableError, EntrezResponseError: see the classes.
        """
        ...

    async def esearch_delta(
        self, term: str, mindate: date, maxdate: date, datetype: DateType = "edat"
    ) -> WindowEnumeration:
        """Every PMID matching `term` with `datetype` in [mindate, maxdate] (whole days,
        inclusive), past the ESearch cap, each exactly once.

        Raises:
            the same errors as `esearch`.
        """
        ...

    async def efetch(self, pmids: Sequence[str]) -> FetchResult:
        """PubMed XML for `pmids`, in batches (POST for large ones), parsed into records.

        Raises:
            the same errors as `esearch`.
        """
        ...

    async def efetch_history(
        self, webenv: str, query_key: str, retstart: int = 0, retmax: int = 500
    ) -> FetchResult:
        """Records of a history-server result set, one page."""
        ...

    async def efetch_xml(self, pmids: Sequence[str]) -> bytes:
        """The raw PubmedArticleSet XML for `pmids` (as NCBI sent it, checked to parse)."""
        ...

    async def efetch_xml_articles(self, pmids: Sequence[str]) -> dict[str, str]:
        """{PMID: its `<PubmedArticle>` or `<PubmedBookArticle>` XML} for `pmids`, each element
        as the answer wrote it; PMIDs PubMed did not return are absent.

        Raises:
            the same errors as `esearch`; `EntrezResponseError` for a set declaring entities.
        """
        ...

    async def efetch_medline(self, pmids: Sequence[str]) -> str:
        """MEDLINE-format text for `pmids`."""
        ...

    async def esummary(
        self,
        pmids: Sequence[str] = (),
        *,
        webenv: str | None = None,
        query_key: str | None = None,
        retstart: int = 0,
        retmax: int = 20,
    ) -> tuple[DocSummary, ...]:
        """ESummary v2.0 for `pmids`, or for a page of a history-server result set."""
        ...

    async def elink(
        self,
        pmids: Sequence[str],
        *,
        linkname: str = "pubmed_pubmed",
        with_scores: bool = True,
    ) -> tuple[LinkSet, ...]:
        """ELink within PubMed, one LinkSet per source PMID (similar articles with scores,
        `pubmed_pubmed_citedin`, `pubmed_pubmed_refs`)."""
        ...

    async def einfo(self, db: str = "pubmed") -> DatabaseInfo:
        """EInfo for `db`: record count, last update, search fields and link names."""
        ...

    async def aclose(self) -> None:
        """Release connections. The client is unusable afterwards."""
        ...

    async def espell(self, term: str) -> str | None:
        """ESpell for `term` in PubMed: the corrected query NCBI suggests, or None when it
        suggests nothing (an empty `<CorrectedQuery>`).

        Raises:
            the same errors as `esearch`.
        """
        ...

    async def mesh_search(self, term: str, *, retmax: int = 20) -> SearchResult:
        """ESearch in `db=mesh`: the numeric MeSH UIDs matching `term`, in NCBI's order (they
        are in `pmids`); NCBI maps entry terms to their descriptors.

        Raises:
            the same errors as `esearch`.
        """
        ...

    async def mesh_summaries(self, uids: Sequence[str]) -> tuple[MeshDescriptor, ...]:
        """ESummary v2.0 in `db=mesh` for numeric MeSH UIDs; unknown UIDs are left out.

        Raises:
            the same errors as `esearch`.
        """
        ...

    async def idconv(self, ids: Sequence[str], *, idtype: IdKind) -> tuple[IdConversion, ...]:
        """NCBI's PMC ID converter (JSON) for up to 200 `ids`, all of one `idtype`: one record
        per id it answers for, with its error message for ids it has no match for.

        Raises:
            the same errors as `esearch`.
        """
        ...

    async def ecitmatch(self, lines: Sequence[str]) -> tuple[CitMatchAnswer, ...]:
        """ECitMatch for `bdata` lines (`journal|year|volume|first_page|author|key|`): one
        answer per line it echoes, by key.

        Raises:
            the same errors as `esearch`.
        """
        ...

    async def elink_pmc(self, pmids: Sequence[str]) -> tuple[LinkSet, ...]:
        """ELink from PubMed to PMC (`linkname=pubmed_pmc`), one LinkSet per PMID: the numeric
        PMC ids of its PMC article (none when PMC does not have it).

        Raises:
            the same errors as `esearch`.
        """
        ...

    async def efetch_pmc(self, pmcids: Sequence[str]) -> PmcArticleSet:
        """EFetch `db=pmc` (JATS XML) for PMC ids (`PMC123` or `123`), parsed; ids PMC does
        not return are simply absent from the set.

        Raises:
            the same errors as `esearch`.
        """
        ...

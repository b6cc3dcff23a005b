"""LivePubMed: PubMed itself, asked now (spec 04): search, article details, relationships and
citations, server information and database statistics.

Every method answers a JSON-ready dict in the shape of spec 04's outputs (camelCase keys;
fields the spec does not print are additive). Failures are never disguised as empty answers:

* a request that cannot be served as asked raises `InvalidRequestError`, or the domain's
  `InvalidQueryError` / `InvalidRecordError` (all `VALIDATION`);
* a PMID PubMed does not have raises `NotFoundError` where one PMID is the whole request
  (relationships, citations); `fetch` lists such PMIDs in `notFoundPmids` instead;
* NCBI failures pass through as the port's `EntrezError`s (`RATE_LIMIT`, `UPSTREAM`, `ENTREZ`,
  `TIMEOUT`), and so does a search whose terms PubMed could not read at all (an ESearch
  ErrorList with nothing found), which is not "no results".
* Each call has one overall deadline (`LiveConfig.deadline_s`, NCBI_TOTAL_DEADLINE_MS), however
  many E-utility requests and retries it makes: past it, `EntrezTimeoutError` (`TIMEOUT`).

The E-utility URLs in answers are rebuilt from the configuration, never from the client, so
the API key cannot appear in them.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar, get_args
from urllib.parse import urlencode
from xml.parsers import expat

from biomcp.domain.citations import CitationStyle, expand_pages, format_citation
from biomcp.domain.errors import InvalidRecordError
from biomcp.domain.records import Author, MeshHeading, PubDate, PubMedRecord
from biomcp.domain.sanitize import DateWindow, effective_term, parse_pmid, parse_pmids
from biomcp.ports.entrez import (
    DocSummary,
    EntrezClient,
    EntrezError,
    EntrezRequestError,
    EntrezResponseError,
    EntrezTimeoutError,
    EntrezWarning,
    Link,
    SearchResult,
)
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.vectors import VectorStore
from biomcp.usecases.errors import InvalidRequestError, NotFoundError
from biomcp.usecases.maintenance import IndexStatus
from biomcp.usecases.payloads import iso_utc
from biomcp.usecases.retractions import retraction_notice

__all__ = [
    "CITATION_STYLES",
    "DETAIL_LEVELS",
    "RELATIONSHIP_TYPES",
    "SORT_ORDERS",
    "ClientStatus",
    "LiveConfig",
    "LivePubMed",
]

SortBy = Literal["relevance", "pub_date", "author", "journal_name"]
DetailLevel = Literal["abstract_plus", "full_xml", "medline_text", "citation_data"]
RelationshipType = Literal[
    "pubmed_similar_articles", "pubmed_citedin", "pubmed_references", "citation_formats"
]
CitationKey = Literal["ris", "bibtex", "apa_string", "mla_string", "vancouver_string"]

SORT_ORDERS: tuple[str, ...] = get_args(SortBy)
DETAIL_LEVELS: tuple[str, ...] = get_args(DetailLevel)
RELATIONSHIP_TYPES: tuple[str, ...] = get_args(RelationshipType)
CITATION_STYLES: tuple[str, ...] = get_args(CitationKey)

#: The tool's sort names -> ESearch's (NCBI's documented values for PubMed).
_NCBI_SORT = {
    "relevance": "relevance",
    "pub_date": "pub_date",
    "author": "Author",
    "journal_name": "JournalName",
}
_LINK_NAMES = {
    "pubmed_similar_articles": "pubmed_pubmed",
    "pubmed_citedin": "pubmed_pubmed_citedin",
    "pubmed_references": "pubmed_pubmed_refs",
}
_CITATION_STYLES = {
    "ris": CitationStyle.RIS,
    "bibtex": CitationStyle.BIBTEX,
    "apa_string": CitationStyle.APA,
    "mla_string": CitationStyle.MLA,
    "vancouver_string": CitationStyle.VANCOUVER,
}
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_ARTICLE_TAGS = ("PubmedArticle", "PubmedBookArticle")
_PMID_PATHS = (
    ("PubmedArticleSet", "PubmedArticle", "MedlineCitation", "PMID"),
    ("PubmedArticleSet", "PubmedBookArticle", "BookDocument", "PMID"),
)
_USAGE_POLICY = "https://www.ncbi.nlm.nih.gov/books/NBK25497/"
_EUTILITIES = ("ESearch", "EFetch", "ESummary", "ELink", "EInfo")
_MIN_QUERY = 3
_MAX_RESULTS = 1000
_MAX_SUMMARIES = 100
_MAX_RELATED = 50
_AUTHORS_SHOWN = 3

_T = TypeVar("_T")
_P = ParamSpec("_P")


def _within_deadline(
    method: Callable[Concatenate[LivePubMed, _P], Coroutine[Any, Any, _T]],
) -> Callable[Concatenate[LivePubMed, _P], Coroutine[Any, Any, _T]]:
    """Run `method` under the overall deadline of one live call (`LiveConfig.deadline_s`)."""

    @functools.wraps(method)
    async def bounded(self: LivePubMed, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        limit = self.config.deadline_s
        try:
            async with asyncio.timeout(limit):
                return await method(self, *args, **kwargs)
        except TimeoutError:
            self._last_call = (datetime.now(UTC), "overall deadline exceeded")
            raise EntrezTimeoutError(
                f"PubMed gave no complete answer within the overall deadline of {limit:g} s "
                "(NCBI_TOTAL_DEADLINE_MS), retries included"
            ) from None

    return bounded


@dataclass(frozen=True, slots=True)
class LiveConfig:
    """What the live tools tell about themselves and how they build E-utility URLs."""

    base_url: str = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
    tool: str = "bio-mcp"
    email: str | None = None
    api_key_in_use: bool = False
    request_delay_ms: int = 0
    post_threshold: int = 200
    server_name: str = "bio-mcp"
    server_version: str = "0.0.0"
    description: str = "MCP server for PubMed evidence: a synced corpus and live E-utilities."
    documentation_url: str = "biomcp://help"
    collection: str = "PubMedChunk"
    cache_ttl_s: int = 0
    cache_max_mb: int = 0
    #: One overall deadline per call, in seconds (NCBI_TOTAL_DEADLINE_MS / 1000).
    deadline_s: float = 45.0

    @property
    def target_rate(self) -> float:
        """Requests per second aimed at: NCBI's 10 with a key, 3 without, or slower when a
        request delay is configured."""
        rate = 10.0 if self.api_key_in_use else 3.0
        if self.request_delay_ms > 0:
            rate = min(rate, 1000.0 / self.request_delay_ms)
        return rate


@dataclass(frozen=True, slots=True)
class ClientStatus:
    """The E-utilities client's operational figures (the adapter's statistics, if it has any)."""

    requests: int = 0
    retries: int = 0
    last_success_at: datetime | None = None
    last_error: str | None = None
    queue_length: int = 0


class LivePubMed:
    """The live PubMed tools over an `EntrezClient`.

    `metadata` and `vectors` are only read for the corpus summary of `server_info` (leave them
    None outside a server); `status` reports the client's figures.
    """

    def __init__(
        self,
        entrez: EntrezClient,
        *,
        config: LiveConfig | None = None,
        metadata: MetadataStore | None = None,
        vectors: VectorStore | None = None,
        status: Callable[[], ClientStatus] | None = None,
    ) -> None:
        self._entrez = entrez
        self.config = config or LiveConfig()
        self._metadata = metadata
        self._vectors = vectors
        self._status = status or ClientStatus
        self._last_call: tuple[datetime, str | None] | None = None

    # --- searchPubMedArticles --------------------------------------------------------------

    @_within_deadline
    async def search(
        self,
        query_term: str,
        *,
        max_results: int = 20,
        sort_by: str = "relevance",
        date_range: Mapping[str, Any] | None = None,
        publication_types: Sequence[str] | None = None,
        brief_summaries: int = 0,
    ) -> dict[str, Any]:
        """ESearch `query_term` (with the date window and publication types folded into the
        term), then ESummary v2.0 of the first `brief_summaries` PMIDs via the history server.

        Raises:
            InvalidRequestError, InvalidQueryError: a bad argument.
            EntrezRequestError: PubMed found nothing because it could read none of the terms
                (its ErrorList says which).
            EntrezError: NCBI failed.
        """
        _bounded("maxResults", max_results, 1, _MAX_RESULTS)
        _bounded("fetchBriefSummaries", brief_summaries, 0, _MAX_SUMMARIES)
        sort = _choice("sortBy", sort_by, SORT_ORDERS)
        window = _window(date_range)
        types = list(publication_types or [])
        term = effective_term(query_term, window=window, publication_types=types)
        if len(" ".join(query_term.split())) < _MIN_QUERY:
            raise InvalidRequestError("queryTerm must be at least 3 characters")
        history = brief_summaries > 0
        result = await self._call(
            self._entrez.esearch(
                term, retmax=max_results, sort=_NCBI_SORT[sort], usehistory=history
            )
        )
        errors = [w for w in result.warnings if w.source == "ErrorList"]
        if result.count == 0 and errors:
            raise EntrezRequestError(
                f"PubMed could not use the query {term!r}: {_warning_text(errors)}. Check the "
                "spelling and field tags, or search with other words"
            )
        search_params = [
            ("term", term),
            ("retstart", "0"),
            ("retmax", str(max_results)),
            ("sort", _NCBI_SORT[sort]),
        ]
        if history:
            search_params.append(("usehistory", "y"))
        summaries, summary_url = await self._briefs(result, min(brief_summaries, len(result.pmids)))
        parameters: dict[str, Any] = {
            "queryTerm": query_term,
            "maxResults": max_results,
            "sortBy": sort,
            "fetchBriefSummaries": brief_summaries,
        }
        if window is not None:
            echoed = (
                ("minDate", window.min_date),
                ("maxDate", window.max_date),
                ("dateType", window.date_type),
            )
            parameters["dateRange"] = {k: v for k, v in echoed if v is not None}
        if publication_types is not None:
            parameters["filterByPublicationTypes"] = types
        return {
            "searchParameters": parameters,
            "effectiveESearchTerm": term,
            "totalFound": result.count,
            "retrievedPmidCount": len(result.pmids),
            "pmids": list(result.pmids),
            "briefSummaries": summaries,
            "eSearchUrl": self._url("esearch", search_params),
            "eSummaryUrl": summary_url,
            "queryTranslation": result.query_translation,
            "warnings": [str(w) for w in result.warnings],
        }

    async def _briefs(
        self, result: SearchResult, wanted: int
    ) -> tuple[list[dict[str, Any]], str | None]:
        """ESummary v2.0 of the first `wanted` PMIDs of `result` (through the history server
        when the search used it), and the URL of that call; nothing when `wanted` is 0."""
        if wanted <= 0:
            return [], None
        if result.webenv and result.query_key:
            docs = await self._call(
                self._entrez.esummary(
                    webenv=result.webenv, query_key=result.query_key, retmax=wanted
                )
            )
            params = [
                ("version", "2.0"),
                ("WebEnv", result.webenv),
                ("query_key", result.query_key),
                ("retstart", "0"),
                ("retmax", str(wanted)),
            ]
        else:  # a client without the history server: ask by id
            ids = list(result.pmids[:wanted])
            docs = await self._call(self._entrez.esummary(ids))
            params = [("version", "2.0"), ("id", ",".join(ids))]
        return [_brief(doc) for doc in docs[:wanted]], self._url("esummary", params)

    # --- fetchArticleDetails ---------------------------------------------------------------

    @_within_deadline
    async def fetch(
        self,
        pmids: Sequence[str],
        *,
        detail_level: str = "abstract_plus",
        include_mesh: bool = True,
        include_grants: bool = False,
    ) -> dict[str, Any]:
        """EFetch `pmids` (at most 200) at `detail_level`: parsed (`abstract_plus`,
        `citation_data`), the raw PubmedArticle XML (`full_xml`) or MEDLINE text
        (`medline_text`). PMIDs PubMed does not return are listed in `notFoundPmids`.

        Raises:
            InvalidRecordError, InvalidRequestError: a malformed PMID, none or more than 200,
                an unknown detail level.
            EntrezError: NCBI failed.
        """
        level = _choice("detailLevel", detail_level, DETAIL_LEVELS)
        wanted = parse_pmids(pmids)
        params: list[tuple[str, str]] = [("id", ",".join(wanted))]
        warnings: list[str] = []
        articles: list[dict[str, Any]]
        if level in ("abstract_plus", "citation_data"):
            params.append(("retmode", "xml"))
            fetched = await self._call(self._entrez.efetch(wanted))
            by_pmid = {r.pmid: r for r in fetched.records}
            shape = _abstract_plus if level == "abstract_plus" else _citation_data
            articles = [
                shape(by_pmid[p], include_mesh=include_mesh, include_grants=include_grants)
                for p in wanted
                if p in by_pmid
            ]
            found = set(by_pmid)
            warnings += [
                f"PMID {p} is a book record (PubmedBookArticle), which is not parsed: ask for "
                "detailLevel full_xml or medline_text to read it"
                for p in fetched.book_pmids
            ]
            warnings += [f"PMID {p} was deleted from PubMed" for p in fetched.deleted_pmids]
            warnings += list(fetched.problems)
        elif level == "full_xml":
            params.append(("retmode", "xml"))
            xml = await self._call(self._entrez.efetch_xml(wanted))
            pieces = _split_article_xml(xml)
            articles = [{"pmid": p, "fullXml": pieces[p]} for p in wanted if p in pieces]
            found = set(pieces)
        else:
            params += [("rettype", "medline"), ("retmode", "text")]
            text = await self._call(self._entrez.efetch_medline(wanted))
            records = _split_medline(text)
            articles = [{"pmid": p, "medlineText": records[p]} for p in wanted if p in records]
            found = set(records)
        return {
            "requestedPmids": list(wanted),
            "articles": articles,
            "notFoundPmids": [p for p in wanted if p not in found],
            "eFetchDetails": {
                "urls": [self._url("efetch", params)],
                "requestMethod": "POST" if len(wanted) > self.config.post_threshold else "GET",
            },
            "detailLevel": level,
            "warnings": warnings,
        }

    # --- getArticleRelationships -----------------------------------------------------------

    @_within_deadline
    async def relationships(
        self,
        source_pmid: str,
        *,
        relationship_type: str = "pubmed_similar_articles",
        max_results: int = 5,
        citation_styles: Sequence[str] = ("ris",),
    ) -> dict[str, Any]:
        """Articles linked to `source_pmid` (similar, citing, cited: ELink, then ESummary for
        titles and authors), or its citation in `citation_styles` (EFetch).

        An article without links gives an empty `relatedArticles`; an unknown PMID raises.

        Raises:
            InvalidRecordError, InvalidRequestError: a malformed PMID or argument.
            NotFoundError: PubMed has no article `source_pmid`.
            EntrezError: NCBI failed.
        """
        kind = _choice("relationshipType", relationship_type, RELATIONSHIP_TYPES)
        _bounded("maxRelatedResults", max_results, 1, _MAX_RELATED)
        source = parse_pmid(source_pmid)
        if kind == "citation_formats":
            styles = [_choice("citationStyles", s, CITATION_STYLES) for s in citation_styles]
            return await self._citations(source, list(dict.fromkeys(styles)) or ["ris"])
        linkname = _LINK_NAMES[kind]
        scored = kind == "pubmed_similar_articles"
        try:
            linksets = await self._call(
                self._entrez.elink([source], linkname=linkname, with_scores=scored)
            )
        except EntrezRequestError:
            await self._require(source)  # PubMed's error may mean "no such PMID"
            raise
        links = _links(linksets, source, linkname)
        top = links[:max_results]
        docs = await self._call(self._entrez.esummary([source, *(link.pmid for link in top)]))
        by_pmid = {doc.pmid: doc for doc in docs}
        if _missing(by_pmid.get(source)):
            raise _not_found(source)
        related = []
        for link in top:
            doc = by_pmid.get(link.pmid)
            summary = None if _missing(doc) else doc  # linked, but without a summary
            related.append(
                {
                    "pmid": link.pmid,
                    "title": summary.title if summary else None,
                    "authors": _author_string(summary.authors) if summary else None,
                    "score": link.score,
                    "linkUrl": _pubmed_url(link.pmid),
                }
            )
        cmd = "neighbor_score" if scored else "neighbor"
        return {
            "sourcePmid": source,
            "relationshipType": kind,
            "relatedArticles": related,
            "citations": {},
            "retrievedCount": len(related),
            "eLinkUrl": self._url(
                "elink",
                [("dbfrom", "pubmed"), ("cmd", cmd), ("linkname", linkname), ("id", source)],
            ),
            "totalLinked": len(links),
            "eSummaryUrl": self._url(
                "esummary",
                [("version", "2.0"), ("id", ",".join([source, *(x.pmid for x in top)]))],
            ),
        }

    async def _citations(self, source: str, styles: list[str]) -> dict[str, Any]:
        fetched = await self._call(self._entrez.efetch([source]))
        record = next((r for r in fetched.records if r.pmid == source), None)
        if record is None:
            if source in fetched.book_pmids:
                raise InvalidRequestError(
                    f"PMID {source} is a book record; citations are generated for journal "
                    "articles only",
                    details={"pmid": source},
                )
            raise _not_found(source)
        return {
            "sourcePmid": source,
            "relationshipType": "citation_formats",
            "relatedArticles": [],
            "citations": {s: format_citation(record, _CITATION_STYLES[s]) for s in styles},
            "retrievedCount": 0,
            "eLinkUrl": None,
            "eFetchUrl": self._url("efetch", [("id", source), ("retmode", "xml")]),
        }

    async def _require(self, pmid: str) -> None:
        docs = await self._call(self._entrez.esummary([pmid]))
        if _missing(next((d for d in docs if d.pmid == pmid), None)):
            raise _not_found(pmid)

    @_within_deadline
    async def cite(self, pmid: str, styles: Sequence[str] = CITATION_STYLES) -> dict[str, str]:
        """The citation strings of `pmid` in `styles` (every style by default).

        Raises:
            as `relationships` with `citation_formats`.
        """
        answer = await self.relationships(
            pmid, relationship_type="citation_formats", citation_styles=styles
        )
        return dict(answer["citations"])

    # --- resources -------------------------------------------------------------------------

    async def server_info(self, *, mcp_spec_version: str) -> dict[str, Any]:
        """`pubmed-connect://info`: identity, NCBI compliance, operational status, the corpus
        summary and the response cache. Never raises for a store that cannot answer: its
        section says why instead."""
        config = self.config
        status = self._status()
        rate = config.target_rate
        last_success = status.last_success_at
        if self._last_call is not None and self._last_call[1] is None:
            own = self._last_call[0]
            last_success = own if last_success is None or own > last_success else last_success
        if self._last_call is not None and self._last_call[1] is not None:
            ncbi_status = f"Degraded: the last live call failed ({self._last_call[1]})"
        elif last_success is not None:
            ncbi_status = "Nominal"
        elif status.requests:
            ncbi_status = f"Degraded: no request has succeeded yet ({status.last_error})"
        else:
            ncbi_status = "Unknown: no NCBI request yet"
        key_text = "with API key" if config.api_key_in_use else "without an API key"
        return {
            "serverName": config.server_name,
            "serverVersion": config.server_version,
            "description": config.description,
            "contactEmail": config.email,
            "mcpSpecVersion": mcp_spec_version,
            "ncbiCompliance": {
                "apiUsageStatus": "NCBI API Key in use"
                if config.api_key_in_use
                else "No NCBI API key: limited to 3 requests/sec (set NCBI_API_KEY for 10)",
                "apiKeyInUse": config.api_key_in_use,
                "toolIdentifier": config.tool,
                "ncbiUsagePolicyUrl": _USAGE_POLICY,
                "currentRateLimitAdherence": (
                    f"Targeting <{rate:g} requests/sec ({key_text}) via request queuing."
                ),
                "targetRequestsPerSecond": rate,
                "requestDelayMs": config.request_delay_ms,
            },
            "supportedEutilities": list(_EUTILITIES),
            "operationalStatus": {
                "lastNcbiConnectivityCheck": iso_utc(last_success),
                "ncbiStatus": ncbi_status,
                "internalQueueLength": status.queue_length,
                "requestsSent": status.requests,
                "retries": status.retries,
                "lastError": status.last_error,
            },
            "documentationUrl": config.documentation_url,
            "corpus": await self._corpus_summary(),
            "responseCache": {
                "enabled": config.cache_ttl_s > 0 and config.cache_max_mb > 0,
                "ttlSeconds": config.cache_ttl_s,
                "maxMb": config.cache_max_mb,
                "covers": ["EFetch", "EInfo"],
            },
        }

    async def _corpus_summary(self) -> dict[str, Any]:
        summary: dict[str, Any] = {"records": None, "chunks": None, "queries": []}
        problems: list[str] = []
        if self._metadata is not None:
            try:
                summary["records"] = await self._metadata.count_documents()
                checkpoints = await self._metadata.list_checkpoints()
                jobs = await self._metadata.list_jobs(limit=500)
            except Exception as exc:  # a status page reports a broken store, it does not fail
                problems.append(f"metadata: {type(exc).__name__}: {exc}")
            else:
                latest: dict[str, Any] = {}
                for job in sorted(jobs, key=lambda j: j.started_at):
                    latest[job.query_key] = job
                keys = sorted({c.query_key for c in checkpoints} | set(latest))
                by_key = {c.query_key: c for c in checkpoints}
                summary["queries"] = [_query_summary(k, by_key.get(k), latest.get(k)) for k in keys]
        if self._vectors is not None:
            try:
                names = await self._vectors.collections()
                collection = self.config.collection
                summary["chunks"] = (
                    await self._vectors.count(collection) if collection in names else 0
                )
                stored = (
                    (await self._vectors.stats(collection)).documents if summary["chunks"] else 0
                )
                if self._metadata is not None:
                    indexed = await self._metadata.count_documents(indexed=True)
                    summary["index"] = IndexStatus(indexed, stored, collection in names).describe()
            except Exception as exc:
                problems.append(f"vectors: {type(exc).__name__}: {exc}")
        if problems:
            summary["problems"] = problems
        return summary

    @_within_deadline
    async def database_stats(self, db: str = "pubmed") -> dict[str, Any]:
        """`pubmed-connect://stats/pubmed`: EInfo for `db` (record count, last update, search
        fields, link names).

        Raises:
            EntrezError: NCBI failed.
        """
        info = await self._call(self._entrez.einfo(db))
        return {
            "databaseName": info.menu_name or info.db_name,
            "menuName": info.menu_name,
            "description": info.description,
            "totalRecordCount": info.count,
            "lastUpdate": _ncbi_timestamp(info.last_update),
            "dbBuild": info.build,
            "availableSearchFields": [
                {
                    "name": f.name,
                    "fullName": f.full_name,
                    "description": f.description,
                    "isDate": f.is_date,
                    "isNumerical": f.is_numerical,
                    "termCount": str(f.term_count) if f.term_count is not None else None,
                }
                for f in info.fields
            ],
            "availableLinkNames": [
                {
                    "name": link.name,
                    "menu": link.menu,
                    "description": link.description,
                    "dbTo": link.db_to,
                }
                for link in info.links
            ],
            "eInfoUrl": self._url("einfo", [], db=db),
        }

    # --- plumbing --------------------------------------------------------------------------

    async def _call(self, pending: Awaitable[_T]) -> _T:
        """Await one E-utility call, remembering when it last succeeded or failed."""
        try:
            value = await pending
        except EntrezError as exc:
            self._last_call = (datetime.now(UTC), f"{type(exc).__name__}: {exc}")
            raise
        self._last_call = (datetime.now(UTC), None)
        return value

    def _url(self, endpoint: str, params: Iterable[tuple[str, str]], *, db: str = "pubmed") -> str:
        """The E-utility URL of a call, as the client sends it minus the API key."""
        query = [("db", db), *params, ("tool", self.config.tool)]
        if self.config.email:
            query.append(("email", self.config.email))
        base = self.config.base_url.rstrip("/")
        return f"{base}/{endpoint}.fcgi?{urlencode(query)}"


# --- arguments -----------------------------------------------------------------------------


def _bounded(name: str, value: int, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidRequestError(
            f"{name} must be an integer from {low} to {high}, got {value!r}",
            details={"field": name, "value": value},
        )


def _choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise InvalidRequestError(
            f"{name} {value!r} is not one of {', '.join(allowed)}",
            details={"field": name, "allowed": list(allowed)},
        )
    return value


def _window(date_range: Mapping[str, Any] | None) -> DateWindow | None:
    if not date_range:
        return None
    unknown = set(date_range) - {"minDate", "maxDate", "dateType"}
    if unknown:
        raise InvalidRequestError(f"dateRange has unknown fields: {', '.join(sorted(unknown))}")
    return DateWindow(
        date_range.get("minDate"), date_range.get("maxDate"), date_range.get("dateType") or "pdat"
    )


def _warning_text(warnings: Iterable[EntrezWarning]) -> str:
    return "; ".join(f"{w.kind} {w.message}" for w in warnings)


# --- shapes --------------------------------------------------------------------------------


def _pubmed_url(pmid: str) -> str:
    return f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/"


def _not_found(pmid: str) -> NotFoundError:
    return NotFoundError(
        f"PMID {pmid} is not in PubMed: check the number (a PubMed search finds PMIDs)",
        details={"pmid": pmid},
    )


def _missing(doc: DocSummary | None) -> bool:
    return doc is None or doc.error is not None


def _author_string(names: Sequence[str]) -> str | None:
    """`Doe J, Smith A, Roe B`, or the first three and `et al.`."""
    if not names:
        return None
    shown = ", ".join(names[:_AUTHORS_SHOWN])
    return shown + (", et al." if len(names) > _AUTHORS_SHOWN else "")


def _standard_date(text: str | None) -> str | None:
    """`2023 Mar 15` -> `2023-03-15` (as precise as given); unreadable text as given."""
    if not text or not text.strip():
        return None
    try:
        return PubDate.parse(text).iso()
    except (InvalidRecordError, ValueError):
        return text.strip()


def _brief(doc: DocSummary) -> dict[str, Any]:
    source = doc.source
    if source and doc.pdat:
        source = f"{source}. {doc.pdat}"
    return {
        "pmid": doc.pmid,
        "title": doc.title,
        "authors": _author_string(doc.authors),
        "source": source,
        "pubDate": _standard_date(doc.pdat),
        "epubDate": _standard_date(doc.epubdate),
    }


def _links(linksets: Sequence[Any], source: str, linkname: str) -> list[Link]:
    """The links of `source` under `linkname`, each PMID once, the source itself left out."""
    seen: dict[str, Link] = {}
    for linkset in linksets:
        if len(linksets) > 1 and source not in linkset.source_pmids:
            continue
        for link in linkset.links.get(linkname, ()):
            if link.pmid != source and link.pmid not in seen:
                seen[link.pmid] = link
    return list(seen.values())


def _publication_date(pdat: PubDate | None) -> dict[str, Any] | None:
    if pdat is None:
        return None
    month = _MONTHS[pdat.month - 1] if pdat.month else None
    display = " ".join(str(p) for p in (pdat.year, month, pdat.day) if p is not None)
    return {
        "year": pdat.year,
        "month": month,
        "day": pdat.day,
        "medlineDate": pdat.raw or display,
        "isoDate": pdat.iso(),
    }


def _journal_info(record: PubMedRecord) -> dict[str, Any]:
    journal = record.journal
    return {
        "title": journal.title,
        "isoAbbreviation": journal.iso_abbreviation,
        "volume": journal.volume,
        "issue": journal.issue,
        "pages": expand_pages(record.pages),
        "publicationDate": _publication_date(record.pdat),
    }


def _author(author: Author, *, affiliation: bool) -> dict[str, Any]:
    shaped: dict[str, Any] = {
        "lastName": author.last_name,
        "firstName": author.fore_name,
        "initials": author.initials,
    }
    if affiliation:
        shaped["affiliation"] = "; ".join(author.affiliations) or None
    if author.collective_name:
        shaped["collectiveName"] = author.collective_name
    if author.orcid:
        shaped["orcid"] = author.orcid
    return shaped


def _mesh_terms(headings: Iterable[MeshHeading]) -> list[dict[str, Any]]:
    terms = []
    for heading in headings:
        term: dict[str, Any] = {
            "descriptorName": heading.descriptor,
            "qualifierName": ", ".join(q.name for q in heading.qualifiers) or None,
            "isMajorTopic": heading.is_major,
            "ui": heading.ui,
        }
        if heading.qualifiers:
            term["qualifiers"] = [
                {"qualifierName": q.name, "ui": q.ui, "isMajorTopic": q.major}
                for q in heading.qualifiers
            ]
        terms.append(term)
    return terms


def _abstract_plus(
    record: PubMedRecord, *, include_mesh: bool, include_grants: bool
) -> dict[str, Any]:
    article: dict[str, Any] = {
        "pmid": record.pmid,
        "title": record.title,
        "abstractText": record.abstract_text or None,
        "authors": [_author(a, affiliation=True) for a in record.authors],
        "journalInfo": _journal_info(record),
        "publicationTypes": list(record.publication_types),
        "keywords": list(record.keywords),
    }
    if record.is_structured:
        article["abstractSections"] = [
            {"label": s.label, "nlmCategory": s.category, "text": s.text} for s in record.abstract
        ]
    if include_mesh:
        article["meshTerms"] = _mesh_terms(record.mesh)
    if include_grants:
        article["grantList"] = [
            {"grantId": g.grant_id, "agency": g.agency, "country": g.country, "acronym": g.acronym}
            for g in record.grants
        ]
    article["doi"] = record.doi
    article["pmcid"] = record.pmcid
    article.update(_retraction(record))
    return article


def _citation_data(
    record: PubMedRecord, *, include_mesh: bool, include_grants: bool
) -> dict[str, Any]:
    article: dict[str, Any] = {
        "pmid": record.pmid,
        "title": record.title,
        "authors": [_author(a, affiliation=False) for a in record.authors],
        "journalInfo": _journal_info(record),
        "publicationTypes": list(record.publication_types),
        "doi": record.doi,
        "pmcid": record.pmcid,
        "pubmedUrl": _pubmed_url(record.pmid),
    }
    if include_mesh:
        article["meshTerms"] = _mesh_terms(record.mesh)
    if record.is_retracted:  # minimal otherwise; a retracted paper is cited as retracted
        article.update(_retraction(record))
    return article


def _retraction(record: PubMedRecord) -> dict[str, Any]:
    """`retracted` and the retraction notice (the PMID and citation of the RetractionIn
    comment; null when the record is not retracted)."""
    notice = retraction_notice(record)
    return {
        "retracted": notice is not None,
        "retractionNotice": (
            None
            if notice is None
            else {"noticePmid": notice["notice_pmid"], "source": notice["source"]}
        ),
    }


def _query_summary(key: str, checkpoint: Any, job: Any) -> dict[str, Any]:
    last_sync = None
    if job is not None:
        last_sync = {
            "jobId": job.job_id,
            "status": job.status,
            "startedAt": iso_utc(job.started_at),
            "finishedAt": iso_utc(job.finished_at),
            "inserted": job.inserted,
            "updated": job.updated,
            "skipped": job.skipped,
        }
    return {
        "queryKey": key,
        "lastEdat": iso_utc(checkpoint.last_edat) if checkpoint is not None else None,
        "lastScanAt": iso_utc(checkpoint.last_scan_at) if checkpoint is not None else None,
        "lastSync": last_sync,
    }


def _ncbi_timestamp(text: str | None) -> str | None:
    """EInfo's `2025/05/23 10:00` as `2025-05-23T10:00:00` (NCBI's local time, as given)."""
    if not text:
        return None
    for pattern in ("%Y/%m/%d %H:%M", "%Y/%m/%d %H:%M:%S", "%Y/%m/%d"):
        try:
            return datetime.strptime(text.strip(), pattern).isoformat()
        except ValueError:
            continue
    return text


# --- documents -----------------------------------------------------------------------------


def _split_article_xml(xml: bytes) -> dict[str, str]:
    """{PMID: the `<PubmedArticle>` (or `<PubmedBookArticle>`) element exactly as NCBI wrote
    it} of a PubmedArticleSet the client already checked (expat: no DTD is loaded, nothing is
    fetched, a document declaring entities is refused)."""
    parser = expat.ParserCreate()
    path: list[str] = []
    pieces: dict[str, str] = {}
    state: dict[str, Any] = {"start": None, "pmid": None, "text": None}

    def start(name: str, attrs: dict[str, str]) -> None:
        path.append(name)
        if len(path) == 2 and name in _ARTICLE_TAGS:
            state.update(start=parser.CurrentByteIndex, pmid=None)
        elif tuple(path) in _PMID_PATHS and state["pmid"] is None:
            state["text"] = []

    def end(name: str) -> None:
        if state["text"] is not None and tuple(path) in _PMID_PATHS:
            state["pmid"] = "".join(state["text"]).strip()
            state["text"] = None
        if len(path) == 2 and name in _ARTICLE_TAGS and state["start"] is not None:
            close = xml.index(b">", parser.CurrentByteIndex) + 1
            if state["pmid"]:
                pieces[state["pmid"]] = xml[state["start"] : close].decode("utf-8", "replace")
            state["start"] = None
        path.pop()

    def text(data: str) -> None:
        if state["text"] is not None:
            state["text"].append(data)

    def refuse_entities(*_: object) -> None:
        raise EntrezResponseError("the article set declares entities: refused")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    parser.EntityDeclHandler = refuse_entities
    try:
        parser.Parse(xml, True)
    except expat.ExpatError as exc:
        raise EntrezResponseError(f"unreadable PubmedArticleSet: {exc}") from None
    return pieces


def _split_medline(text: str) -> dict[str, str]:
    """{PMID: its MEDLINE record} of MEDLINE text (records start with a `PMID- ` line)."""
    records: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("PMID-"):
            current = records.setdefault(line.partition("-")[2].strip(), [])
            current.append(line)
        elif current is not None and line.strip():
            current.append(line)
    return {pmid: "\n".join(lines) for pmid, lines in records.items() if pmid}

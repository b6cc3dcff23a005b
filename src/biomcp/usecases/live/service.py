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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Literal, get_args

from biomcp.domain.citations import CitationStyle, format_citation
from biomcp.domain.errors import InvalidQueryError
from biomcp.domain.sanitize import DateWindow, effective_term, parse_pmid, parse_pmids
from biomcp.domain.spelling import same_query, worth_spell_check
from biomcp.ports.entrez import (
    ESEARCH_ID_CAP,
    EntrezClient,
    EntrezError,
    EntrezRequestError,
    EntrezWarning,
    SearchResult,
)
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.vectors import VectorStore
from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.live.citations import CitationsMixin
from biomcp.usecases.live.citematch import CitationLookupMixin
from biomcp.usecases.live.common import (
    ClientStatus,
    LiveBase,
    LiveConfig,
    _bounded,
    _choice,
    _missing,
    _not_found,
    _pubmed_url,
    _warning_text,
    _window,
    _within_deadline,
)
from biomcp.usecases.live.documents import _split_article_xml, _split_medline
from biomcp.usecases.live.fulltext import FullTextMixin
from biomcp.usecases.live.identifiers import IdentifiersMixin
from biomcp.usecases.live.mesh import MeshMixin
from biomcp.usecases.live.paging import (
    MAX_OFFSET,
    Cursor,
    PagingMixin,
    corrected_for_cursor,
    decode_cursor,
    encode_cursor,
    first_deep_cursor,
    query_fingerprint,
)
from biomcp.usecases.live.shapes import (
    _abstract_plus,
    _author_string,
    _brief,
    _citation_data,
    _links,
    _ncbi_timestamp,
    _query_summary,
)
from biomcp.usecases.maintenance import IndexStatus
from biomcp.usecases.payloads import iso_utc

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
_USAGE_POLICY = "https://www.ncbi.nlm.nih.gov/books/NBK25497/"
_EUTILITIES = ("ESearch", "EFetch", "ESummary", "ELink", "EInfo", "ESpell", "ECitMatch")
_MIN_QUERY = 3
_MAX_RESULTS = 1000
_MAX_SUMMARIES = 100
_MAX_RELATED = 50


class LivePubMed(
    FullTextMixin,
    IdentifiersMixin,
    CitationLookupMixin,
    CitationsMixin,
    PagingMixin,
    MeshMixin,
    LiveBase,
):
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
        offset: int | None = None,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """ESearch `query_term` (with the date window and publication types folded into the
        term), then ESummary v2.0 of the first `brief_summaries` PMIDs of the page.

        Paging (see `paging`): `offset` is ESearch's retstart (at most 9,998; the page is
        clipped so that retstart + retmax <= 9,999); `cursor` is a previous page's
        `nextCursor`, which continues past 9,999 results by Entrez-date slices.

        Spelling: a first page whose term has free words and finds fewer than
        `SPELL_CHECK_BELOW` records (or has words PubMed could not find) asks ESpell once;
        a different suggestion is returned in `spelling`. The term is searched as written;
        only when it finds nothing and the suggestion finds something is the suggestion
        searched instead (`searchedWith: "corrected"`), and the pages after it follow it.

        Raises:
            InvalidRequestError, InvalidQueryError: a bad argument or cursor.
            EntrezRequestError: PubMed found nothing because it could read none of the terms
                (its ErrorList says which).
            EntrezError: NCBI failed.
        """
        _bounded("maxResults", max_results, 1, _MAX_RESULTS)
        _bounded("fetchBriefSummaries", brief_summaries, 0, _MAX_SUMMARIES)
        if offset is not None:
            _bounded("offset", offset, 0, MAX_OFFSET)
        sort = _choice("sortBy", sort_by, SORT_ORDERS)
        window = _window(date_range)
        types = list(publication_types or [])
        term = effective_term(query_term, window=window, publication_types=types)
        if len(" ".join(query_term.split())) < _MIN_QUERY:
            raise InvalidRequestError("queryTerm must be at least 3 characters")
        if cursor is not None and offset:
            raise InvalidRequestError(
                "give offset or cursor, not both: a cursor carries its own position",
                details={"field": "cursor"},
            )
        ncbi_sort = _NCBI_SORT[sort]
        fingerprint = query_fingerprint(term, sort)
        position = decode_cursor(cursor, fingerprint) if cursor is not None else None
        corrected = position.corrected if position is not None else None
        searched = (
            effective_term(corrected, window=window, publication_types=types) if corrected else term
        )
        spelling: dict[str, Any] | None = None
        warnings: list[str] = []
        if position is not None and position.deep:
            page = await self._deep_page(searched, ncbi_sort, position, max_results)
            pmids = list(page.pmids)
            result = SearchResult(count=0, retstart=0, retmax=max_results, pmids=page.pmids)
            next_cursor = encode_cursor(page.next) if page.next is not None else None
            search_params = page.last_params or [("term", searched)]
            start: int | None = None
            warnings.append(
                f"past PubMed's first {ESEARCH_ID_CAP} results, pages follow Entrez-date "
                f"windows newest first ({page.requests} ESearch requests for this page)"
            )
            count = await self._total(searched)
        else:
            start = position.offset if position is not None else (offset or 0)
            retmax = min(max_results, ESEARCH_ID_CAP - start)
            history = brief_summaries > 0 and start == 0
            result = await self._call(
                self._entrez.esearch(
                    searched, retstart=start, retmax=retmax, sort=ncbi_sort, usehistory=history
                )
            )
            errors = [w for w in result.warnings if w.source == "ErrorList"]
            if position is None and start == 0:
                spelling, result = await self._spelling(
                    query_term, result, [w.kind for w in errors], window, types, retmax, ncbi_sort
                )
                if spelling is not None and spelling["searchedWith"] == "corrected":
                    corrected = corrected_for_cursor(spelling["corrected"])
                    searched = effective_term(
                        spelling["corrected"], window=window, publication_types=types
                    )
                    errors = [w for w in result.warnings if w.source == "ErrorList"]
            if result.count == 0 and errors:
                hint = (
                    f" (ESpell suggests {spelling['corrected']!r})" if spelling is not None else ""
                )
                raise EntrezRequestError(
                    f"PubMed could not use the query {searched!r}: {_warning_text(errors)}"
                    f"{hint}. Check the spelling and field tags, or search with other words"
                )
            pmids = list(result.pmids)
            count = result.count
            search_params = [
                ("term", searched),
                ("retstart", str(start)),
                ("retmax", str(retmax)),
                ("sort", ncbi_sort),
            ]
            if history:
                search_params.append(("usehistory", "y"))
            next_cursor = self._next_cursor(
                fingerprint, corrected, start + retmax, len(pmids), count
            )
        summaries, summary_url = await self._briefs(result, min(brief_summaries, len(pmids)))
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
        if offset is not None:
            parameters["offset"] = offset
        answer: dict[str, Any] = {
            "searchParameters": parameters,
            "effectiveESearchTerm": searched,
            "totalFound": count,
            "retrievedPmidCount": len(pmids),
            "pmids": pmids,
            "briefSummaries": summaries,
            "eSearchUrl": self._url("esearch", search_params),
            "eSummaryUrl": summary_url,
            "queryTranslation": result.query_translation,
            "warnings": [str(w) for w in result.warnings] + warnings,
            "offset": start,
            "nextCursor": next_cursor,
        }
        if spelling is not None:
            answer["spelling"] = spelling
        return answer

    def _next_cursor(
        self, fingerprint: str, corrected: str | None, end: int, got: int, count: int
    ) -> str | None:
        """The cursor after an offset page ending at `end` (None: nothing follows)."""
        if got == 0 or end >= count:
            return None
        if end < ESEARCH_ID_CAP:
            return encode_cursor(Cursor(fingerprint, offset=end, corrected=corrected))
        return encode_cursor(first_deep_cursor(fingerprint, corrected))

    async def _total(self, term: str) -> int:
        """The query's whole count (a date-slice page reports it as the first page does)."""
        result = await self._call(self._entrez.esearch(term, retmax=0))
        return result.count

    async def _spelling(
        self,
        query_term: str,
        result: SearchResult,
        error_kinds: Sequence[str],
        window: DateWindow | None,
        types: Sequence[str],
        retmax: int,
        sort: str,
    ) -> tuple[dict[str, Any] | None, SearchResult]:
        """ESpell's suggestion for `query_term` when the search looks misspelled (see
        `domain.spelling`), and the result to show: the correction's, when the term as
        written found nothing and the correction finds something."""
        if not worth_spell_check(query_term, result.count, error_kinds):
            return None, result
        try:
            suggestion = await self._call(self._entrez.espell(query_term))
        except EntrezError as exc:  # a failed spelling check never fails the search
            note = EntrezWarning("ESpell", f"no spelling check: {exc}", source="client")
            return None, replace(result, warnings=(*result.warnings, note))
        if same_query(query_term, suggestion) or suggestion is None:
            return None, result
        spelling = {"original": query_term, "corrected": suggestion, "searchedWith": "original"}
        if result.count > 0:
            return spelling, result
        try:
            term = effective_term(suggestion, window=window, publication_types=types)
        except InvalidQueryError:
            return spelling, result
        retry = await self._call(
            self._entrez.esearch(term, retstart=0, retmax=retmax, sort=sort, usehistory=False)
        )
        if retry.count == 0:
            return spelling, result
        spelling["searchedWith"] = "corrected"
        return spelling, retry

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

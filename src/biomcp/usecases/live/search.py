"""searchPubMedArticles (spec 04): ESearch with dates and publication types, ESummary briefs,
offset and cursor paging (`paging`), and ESpell's correction when it differs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

from biomcp.domain.errors import InvalidQueryError
from biomcp.domain.sanitize import DateWindow, effective_term
from biomcp.domain.spelling import same_query, worth_spell_check
from biomcp.ports.entrez import (
    ESEARCH_ID_CAP,
    EntrezError,
    EntrezRequestError,
    EntrezWarning,
    SearchResult,
)
from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.live.common import (
    LiveContext,
    check_choice,
    check_range,
    date_window,
    warning_text,
    within_deadline,
)
from biomcp.usecases.live.paging import (
    MAX_OFFSET,
    Cursor,
    DateSlicePager,
    corrected_for_cursor,
    decode_cursor,
    encode_cursor,
    first_deep_cursor,
    query_fingerprint,
)
from biomcp.usecases.live.shapes import brief_summary

SortBy = Literal["relevance", "pub_date", "author", "journal_name"]

SORT_ORDERS: tuple[str, ...] = get_args(SortBy)

#: The tool's sort names -> ESearch's (NCBI's documented values for PubMed).
_NCBI_SORT = {
    "relevance": "relevance",
    "pub_date": "pub_date",
    "author": "Author",
    "journal_name": "JournalName",
}
_MIN_QUERY = 3
_MAX_RESULTS = 1000
_MAX_SUMMARIES = 100


@dataclass(frozen=True, slots=True)
class _Request:
    """A search request, its arguments checked."""

    query_term: str
    max_results: int
    sort: str
    ncbi_sort: str
    window: DateWindow | None
    types: list[str]
    term: str
    brief_summaries: int
    fingerprint: str


@dataclass(frozen=True, slots=True)
class _Page:
    """One page of PMIDs, how it was asked for, and what follows it."""

    searched: str
    result: SearchResult
    count: int
    start: int | None
    params: list[tuple[str, str]]
    next_cursor: str | None
    spelling: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)


class LiveSearch:
    """`search`: the live PubMed search."""

    def __init__(self, context: LiveContext) -> None:
        self.context = context
        self._pager = DateSlicePager(context)

    @within_deadline
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
        request = _checked(
            query_term,
            max_results=max_results,
            sort_by=sort_by,
            date_range=date_range,
            publication_types=publication_types,
            brief_summaries=brief_summaries,
            offset=offset,
            cursor=cursor,
        )
        position = decode_cursor(cursor, request.fingerprint) if cursor is not None else None
        corrected = position.corrected if position is not None else None
        searched = request.term
        if corrected:
            searched = effective_term(
                corrected, window=request.window, publication_types=request.types
            )
        if position is not None and position.deep:
            page = await self._date_slice_page(request, searched, position)
        else:
            page = await self._offset_page(request, searched, position, offset, corrected)
        pmids = list(page.result.pmids)
        summaries, summary_url = await self._briefs(page.result, min(brief_summaries, len(pmids)))
        answer: dict[str, Any] = {
            "searchParameters": _echoed(request, publication_types, offset),
            "effectiveESearchTerm": page.searched,
            "totalFound": page.count,
            "retrievedPmidCount": len(pmids),
            "pmids": pmids,
            "briefSummaries": summaries,
            "eSearchUrl": self.context.url("esearch", page.params),
            "eSummaryUrl": summary_url,
            "queryTranslation": page.result.query_translation,
            "warnings": [str(w) for w in page.result.warnings] + page.warnings,
            "offset": page.start,
            "nextCursor": page.next_cursor,
        }
        if page.spelling is not None:
            answer["spelling"] = page.spelling
        return answer

    async def _date_slice_page(self, request: _Request, searched: str, position: Cursor) -> _Page:
        """A page past the first 9,999 results (see `paging`)."""
        wanted = request.max_results
        page = await self._pager.page(searched, request.ncbi_sort, position, wanted)
        warning = (
            f"past PubMed's first {ESEARCH_ID_CAP} results, pages follow Entrez-date "
            f"windows newest first ({page.requests} ESearch requests for this page)"
        )
        return _Page(
            searched=searched,
            result=SearchResult(count=0, retstart=0, retmax=wanted, pmids=page.pmids),
            count=await self._total(searched),
            start=None,
            params=page.last_params or [("term", searched)],
            next_cursor=encode_cursor(page.next) if page.next is not None else None,
            warnings=[warning],
        )

    async def _offset_page(
        self,
        request: _Request,
        searched: str,
        position: Cursor | None,
        offset: int | None,
        corrected: str | None,
    ) -> _Page:
        """A page within the first 9,999 results; a first page may follow ESpell's correction."""
        start = position.offset if position is not None else (offset or 0)
        retmax = min(request.max_results, ESEARCH_ID_CAP - start)
        history = request.brief_summaries > 0 and start == 0
        result = await self.context.call(
            self.context.entrez.esearch(
                searched, retstart=start, retmax=retmax, sort=request.ncbi_sort, usehistory=history
            )
        )
        errors = _error_list(result)
        spelling: dict[str, Any] | None = None
        if position is None and start == 0:
            kinds = [w.kind for w in errors]
            spelling, result = await self._spelling(request, result, kinds, retmax)
            if spelling is not None and spelling["searchedWith"] == "corrected":
                corrected = corrected_for_cursor(spelling["corrected"])
                searched = effective_term(
                    spelling["corrected"], window=request.window, publication_types=request.types
                )
                errors = _error_list(result)
        warnings = _unread_types(request.types, result.warnings)
        if result.count == 0 and errors:
            hint = f" (ESpell suggests {spelling['corrected']!r})" if spelling is not None else ""
            raise EntrezRequestError(
                f"PubMed could not use the query {searched!r}: {warning_text(errors)}"
                f"{hint}. Check the spelling and field tags, or search with other words"
            )
        params = [
            ("term", searched),
            ("retstart", str(start)),
            ("retmax", str(retmax)),
            ("sort", request.ncbi_sort),
        ]
        if history:
            params.append(("usehistory", "y"))
        end = start + retmax
        following = self._next_cursor(
            request.fingerprint, corrected, end, len(result.pmids), result.count
        )
        return _Page(searched, result, result.count, start, params, following, spelling, warnings)

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
        result = await self.context.call(self.context.entrez.esearch(term, retmax=0))
        return result.count

    async def _spelling(
        self, request: _Request, result: SearchResult, error_kinds: Sequence[str], retmax: int
    ) -> tuple[dict[str, Any] | None, SearchResult]:
        """ESpell's suggestion for the query term when the search looks misspelled (see
        `domain.spelling`), and the result to show: the correction's, when the term as
        written found nothing and the correction finds something."""
        query_term, sort = request.query_term, request.ncbi_sort
        if not worth_spell_check(query_term, result.count, error_kinds):
            return None, result
        try:
            suggestion = await self.context.call(self.context.entrez.espell(query_term))
        except EntrezError as exc:  # a failed spelling check never fails the search
            note = EntrezWarning("ESpell", f"no spelling check: {exc}", source="client")
            return None, replace(result, warnings=(*result.warnings, note))
        if same_query(query_term, suggestion) or suggestion is None:
            return None, result
        spelling = {"original": query_term, "corrected": suggestion, "searchedWith": "original"}
        if result.count > 0:
            return spelling, result
        try:
            term = effective_term(
                suggestion, window=request.window, publication_types=request.types
            )
        except InvalidQueryError:
            return spelling, result
        retry = await self.context.call(
            self.context.entrez.esearch(
                term, retstart=0, retmax=retmax, sort=sort, usehistory=False
            )
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
            docs = await self.context.call(
                self.context.entrez.esummary(
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
            docs = await self.context.call(self.context.entrez.esummary(ids))
            params = [("version", "2.0"), ("id", ",".join(ids))]
        return [brief_summary(doc) for doc in docs[:wanted]], self.context.url("esummary", params)


def _unread_types(types: Sequence[str], warnings: Sequence[EntrezWarning]) -> list[str]:
    """Warnings for the publication types PubMed found nowhere (`QuotedPhraseNotFound`): it
    leaves them out of the term, so when it knows none of them the search is not filtered at
    all, which is refused here.

    Raises:
        InvalidRequestError: PubMed knows none of `types`.
    """
    if not types:
        return []
    wanted = {" ".join(t.split()).casefold(): " ".join(t.split()) for t in types}
    unread = {w.dropped for w in warnings}
    unknown = [name for key, name in wanted.items() if key in unread]
    if not unknown:
        return []
    names = ", ".join(repr(name) for name in unknown)
    if len(unknown) == len(wanted):
        raise InvalidRequestError(
            f"PubMed has no publication type {names}, so the search would not be filtered by "
            "type; give PubMed's names, e.g. Review, Systematic Review, Meta-Analysis, "
            "Randomized Controlled Trial, Clinical Trial, Observational Study",
            details={"field": "filterByPublicationTypes", "unknown": unknown},
        )
    return [f"PubMed has no publication type {names}; the other types filter the search"]


def _checked(
    query_term: str,
    *,
    max_results: int,
    sort_by: str,
    date_range: Mapping[str, Any] | None,
    publication_types: Sequence[str] | None,
    brief_summaries: int,
    offset: int | None,
    cursor: str | None,
) -> _Request:
    """The search's arguments, checked, with its effective term and fingerprint.

    Raises:
        InvalidRequestError, InvalidQueryError: a bad argument.
    """
    check_range("maxResults", max_results, 1, _MAX_RESULTS)
    check_range("fetchBriefSummaries", brief_summaries, 0, _MAX_SUMMARIES)
    if offset is not None:
        check_range("offset", offset, 0, MAX_OFFSET)
    sort = check_choice("sortBy", sort_by, SORT_ORDERS)
    window = date_window(date_range)
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
    return _Request(
        query_term=query_term,
        max_results=max_results,
        sort=sort,
        ncbi_sort=ncbi_sort,
        window=window,
        types=types,
        term=term,
        brief_summaries=brief_summaries,
        fingerprint=query_fingerprint(term, sort),
    )


def _echoed(
    request: _Request, publication_types: Sequence[str] | None, offset: int | None
) -> dict[str, Any]:
    """The answer's `searchParameters`: the arguments as given (defaults included)."""
    parameters: dict[str, Any] = {
        "queryTerm": request.query_term,
        "maxResults": request.max_results,
        "sortBy": request.sort,
        "fetchBriefSummaries": request.brief_summaries,
    }
    window = request.window
    if window is not None:
        echoed = (
            ("minDate", window.min_date),
            ("maxDate", window.max_date),
            ("dateType", window.date_type),
        )
        parameters["dateRange"] = {k: v for k, v in echoed if v is not None}
    if publication_types is not None:
        parameters["filterByPublicationTypes"] = request.types
    if offset is not None:
        parameters["offset"] = offset
    return parameters


def _error_list(result: SearchResult) -> list[EntrezWarning]:
    """The warnings of `result` that come from ESearch's ErrorList."""
    return [w for w in result.warnings if w.source == "ErrorList"]

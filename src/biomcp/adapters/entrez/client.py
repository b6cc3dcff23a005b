"""The EntrezClient adapter: NCBI E-utilities over httpx, polite and resilient.

* Every request carries `db`, `tool`, `email` and, when configured, `api_key`; the key is
  redacted from every log line and error message this module (or httpx) produces.
* Requests wait for the process-wide rate limit (`ratelimit.shared_limiter`).
* 429, 5xx, timeouts, connection failures, NCBI "backend failed" payloads and unreadable 200
  answers (HTML pages, truncated XML) are retried with exponential backoff and jitter, honouring
  `Retry-After`, up to `max_retries` retries and within `deadline_s`; then they surface as the
  port's typed errors. No httpx or lxml exception leaves this module.
* EFetch goes in batches, by POST when a batch holds more than `post_threshold` ids.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import TypeVar
from urllib.parse import quote_plus

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    stop_any,
    stop_before_delay,
)

from biomcp import __version__
from biomcp.adapters.entrez.eutils_xml import (
    parse_einfo,
    parse_elink,
    parse_esearch,
    parse_esummary,
)
from biomcp.adapters.entrez.pubmed_xml import parse_pubmed_articles
from biomcp.adapters.entrez.ratelimit import RateLimiter, shared_limiter
from biomcp.ports.entrez import (
    ESEARCH_ID_CAP,
    DatabaseInfo,
    DateType,
    DocSummary,
    EntrezError,
    EntrezRateLimitError,
    EntrezRequestError,
    EntrezResponseError,
    EntrezTimeoutError,
    EntrezUnavailableError,
    EntrezWarning,
    FetchResult,
    LinkSet,
    SearchResult,
    WindowEnumeration,
)

__all__ = ["DEFAULT_BASE_URL", "EntrezSettings", "HttpEntrezClient"]

DEFAULT_BASE_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
_log = logging.getLogger("biomcp.entrez")
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class EntrezSettings:
    """Plain values the adapter needs (the application settings object fills them in)."""

    base_url: str = DEFAULT_BASE_URL
    api_key: str | None = None
    tool: str = f"bio-mcp/{__version__}"
    email: str | None = None
    request_delay_ms: int = 0
    max_retries: int = 3
    timeout_s: float = 30.0
    deadline_s: float = 120.0
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 16.0
    retry_after_max_s: float = 60.0
    fetch_batch_size: int = 500
    post_threshold: int = 200
    fetch_concurrency: int = 3

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> EntrezSettings:
        """Read NCBI_EUTILS_BASE_URL, NCBI_API_KEY, NCBI_TOOL_IDENTIFIER, NCBI_ADMIN_EMAIL,
        NCBI_REQUEST_DELAY_MS and NCBI_MAX_RETRIES (spec 04); unset or empty means default.

        Raises:
            ValueError: when a number is not a non-negative integer.
        """
        default = cls()

        def number(name: str, fallback: int) -> int:
            raw = environ.get(name, "").strip()
            if not raw:
                return fallback
            if not raw.isdigit():
                raise ValueError(f"{name} must be a non-negative integer, got {raw!r}")
            return int(raw)

        return cls(
            base_url=environ.get("NCBI_EUTILS_BASE_URL", "").strip() or default.base_url,
            api_key=environ.get("NCBI_API_KEY", "").strip() or None,
            tool=environ.get("NCBI_TOOL_IDENTIFIER", "").strip() or default.tool,
            email=environ.get("NCBI_ADMIN_EMAIL", "").strip() or None,
            request_delay_ms=number("NCBI_REQUEST_DELAY_MS", default.request_delay_ms),
            max_retries=number("NCBI_MAX_RETRIES", default.max_retries),
        )

    def __repr__(self) -> str:
        # Never print the key, even in a traceback's locals.
        key = "***" if self.api_key else None
        return f"EntrezSettings(base_url={self.base_url!r}, api_key={key!r}, tool={self.tool!r})"


@dataclass(slots=True)
class ClientStats:
    """Operational figures for status pages: requests sent, retries, last success."""

    requests: int = 0
    retries: int = 0
    last_success_at: datetime | None = None
    last_error: str | None = None
    by_endpoint: dict[str, int] = field(default_factory=dict)


class _TransientError(Exception):
    """A failure worth retrying; `final` is what the caller gets when retries run out."""

    def __init__(self, final: EntrezError, retry_after: float | None = None) -> None:
        super().__init__(str(final))
        self.final = final
        self.retry_after = retry_after


def _retry_after_seconds(value: str | None) -> float | None:
    """`Retry-After` as seconds: a number (fractions accepted) or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _ncbi_date(day: date) -> str:
    return f"{day.year:04d}/{day.month:02d}/{day.day:02d}"


def _batches(items: Sequence[str], size: int) -> list[list[str]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(i.strip() for i in items if i and i.strip()))


class HttpEntrezClient:
    """EntrezClient over httpx. Create one per process; close it with `aclose()`.

    The httpx client is created lazily on the first request, so constructing this object
    connects to nothing.
    """

    def __init__(
        self,
        settings: EntrezSettings | None = None,
        *,
        limiter: RateLimiter | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.settings = settings or EntrezSettings()
        self._base = self.settings.base_url.rstrip("/")
        self._limiter = limiter or shared_limiter(
            self._base,
            has_api_key=bool(self.settings.api_key),
            min_interval_s=self.settings.request_delay_ms / 1000,
        )
        self._transport = transport
        self._http: httpx.AsyncClient | None = None
        self._secrets = tuple(s for s in (self.settings.api_key,) if s)
        self.stats = ClientStats()
        if self._secrets:
            _install_redaction(self._secrets)

    # --- plumbing ------------------------------------------------------------------------

    @property
    def queue_length(self) -> int:
        return self._limiter.queue_length

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(
                timeout=httpx.Timeout(self.settings.timeout_s),
                transport=self._transport,
                headers={"User-Agent": f"{self.settings.tool} (httpx)"},
                follow_redirects=True,
            )
        return self._http

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def redact(self, text: str) -> str:
        """`text` with the API key (plain or URL-encoded) replaced by `***`."""
        for secret in self._secrets:
            text = text.replace(secret, "***").replace(quote_plus(secret), "***")
        return text

    def _params(self, params: Iterable[tuple[str, str]], db: str) -> list[tuple[str, str]]:
        merged = [("db", db), ("tool", self.settings.tool), *params]
        if self.settings.email:
            merged.append(("email", self.settings.email))
        if self.settings.api_key:
            merged.append(("api_key", self.settings.api_key))
        return merged

    def _wait(self, state: RetryCallState) -> float:
        outcome = state.outcome
        exc = outcome.exception() if outcome is not None else None
        if isinstance(exc, _TransientError) and exc.retry_after is not None:
            return min(exc.retry_after, self.settings.retry_after_max_s)
        exponent = max(0, state.attempt_number - 1)
        backoff = min(
            self.settings.backoff_initial_s * float(2**exponent), self.settings.backoff_max_s
        )
        return float(backoff + random.uniform(0, backoff / 2))  # noqa: S311 - jitter, not crypto

    async def _call(
        self,
        endpoint: str,
        params: Iterable[tuple[str, str]],
        parse: Callable[[bytes], _T],
        *,
        post: bool = False,
        db: str = "pubmed",
    ) -> _T:
        """One E-utility call with rate limiting, retries and error mapping."""
        full = self._params(params, db)
        retrying = AsyncRetrying(
            stop=stop_any(
                stop_after_attempt(self.settings.max_retries + 1),
                stop_before_delay(self.settings.deadline_s),
            ),
            wait=self._wait,
            retry=retry_if_exception_type(_TransientError),
            reraise=True,
            before_sleep=self._before_sleep(endpoint),
        )
        try:
            async for attempt in retrying:
                with attempt:
                    body = await self._send(endpoint, full, post)
                    value = self._parse(endpoint, body, parse)
        except _TransientError as exc:
            self.stats.last_error = str(exc.final)
            raise exc.final from None
        except EntrezError as exc:
            self.stats.last_error = str(exc)
            raise
        self.stats.last_success_at = datetime.now(UTC)
        return value

    def _before_sleep(self, endpoint: str) -> Callable[[RetryCallState], Awaitable[None] | None]:
        def log_retry(state: RetryCallState) -> None:
            self.stats.retries += 1
            outcome = state.outcome
            reason = outcome.exception() if outcome is not None else None
            _log.warning(
                "NCBI %s attempt %d failed (%s); retrying",
                endpoint,
                state.attempt_number,
                self.redact(str(reason)),
            )

        return log_retry

    async def _send(self, endpoint: str, params: list[tuple[str, str]], post: bool) -> bytes:
        url = f"{self._base}/{endpoint}.fcgi"
        # Everything slow is done before the slot is taken: building the client (tens of ms)
        # after it would make the first request of a burst late and the next ones bunch
        # behind it, more arrivals in one second than NCBI allows.
        client = self._client()
        if post:
            request = client.build_request("POST", url, data=dict(_group(params)))
        else:
            request = client.build_request("GET", url, params=httpx.QueryParams(tuple(params)))
        await self._limiter.acquire()
        self.stats.requests += 1
        self.stats.by_endpoint[endpoint] = self.stats.by_endpoint.get(endpoint, 0) + 1
        _log.debug("NCBI %s %s", "POST" if post else "GET", endpoint)
        try:
            response = await client.send(request)
        except httpx.TimeoutException as exc:
            raise _TransientError(
                EntrezTimeoutError(f"NCBI {endpoint} timed out: {type(exc).__name__}")
            ) from None
        except httpx.HTTPError as exc:
            raise _TransientError(
                EntrezUnavailableError(
                    f"NCBI {endpoint} unreachable: {type(exc).__name__}: {self.redact(str(exc))}"
                )
            ) from None
        status = response.status_code
        if status == 429:
            retry_after = _retry_after_seconds(response.headers.get("Retry-After"))
            raise _TransientError(
                EntrezRateLimitError(
                    f"NCBI {endpoint} rate limit (429) persisted after retries", retry_after
                ),
                retry_after,
            )
        if status >= 500:
            raise _TransientError(
                EntrezUnavailableError(f"NCBI {endpoint} answered HTTP {status}"),
                _retry_after_seconds(response.headers.get("Retry-After")),
            )
        if status >= 400:
            snippet = self.redact(response.text[:300].strip())
            raise EntrezRequestError(
                f"NCBI {endpoint} rejected the request (HTTP {status}): {snippet}"
            )
        return response.content

    def _parse(self, endpoint: str, body: bytes, parse: Callable[[bytes], _T]) -> _T:
        try:
            return parse(body)
        except (EntrezResponseError, EntrezUnavailableError) as exc:
            # An HTML page, a truncated document or a "backend failed" payload: NCBI hiccups
            # that a second attempt usually clears.
            raise _TransientError(type(exc)(self.redact(f"NCBI {endpoint}: {exc}"))) from None
        except EntrezError as exc:
            raise type(exc)(self.redact(str(exc))) from None
        except Exception as exc:  # a parser bug must still surface as the port's error
            raise EntrezResponseError(
                f"NCBI {endpoint}: unreadable answer ({type(exc).__name__})"
            ) from None

    # --- ESearch -------------------------------------------------------------------------

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
        webenv: str | None = None,
    ) -> SearchResult:
        if not term.strip():
            raise EntrezRequestError("ESearch needs a non-empty term")
        params = [("term", term), ("retstart", str(retstart)), ("retmax", str(retmax))]
        if datetype:
            params.append(("datetype", datetype))
        if mindate:
            params.append(("mindate", mindate))
        if maxdate:
            params.append(("maxdate", maxdate))
        if sort:
            params.append(("sort", sort))
        if usehistory:
            params.append(("usehistory", "y"))
        if webenv:
            params.append(("WebEnv", webenv))
        return await self._call("esearch", params, parse_esearch, post=len(term) > 1500)

    async def esearch_delta(
        self, term: str, mindate: date, maxdate: date, datetype: DateType = "edat"
    ) -> WindowEnumeration:
        if maxdate < mindate:
            raise EntrezRequestError(f"empty date window: {mindate} > {maxdate}")
        found: dict[str, None] = {}
        warnings: list[EntrezWarning] = []
        requests = 0
        complete = True

        async def search(query: str, lo: date, hi: date) -> SearchResult:
            nonlocal requests
            requests += 1
            return await self.esearch(
                query,
                datetype=datetype,
                mindate=_ncbi_date(lo),
                maxdate=_ncbi_date(hi),
                retmax=ESEARCH_ID_CAP,
            )

        async def visit(lo: date, hi: date) -> None:
            result = await search(term, lo, hi)
            warnings.extend(w for w in result.warnings if w.kind != "PhraseNotFound")
            if result.count <= ESEARCH_ID_CAP:
                found.update(dict.fromkeys(result.pmids))
                return
            if lo == hi:
                await split_day(lo, result.count)
                return
            days = (hi - lo).days + 1
            parts = min(days, max(2, -(-result.count * 5 // (ESEARCH_ID_CAP * 4))))
            bounds = [lo + timedelta(days=days * k // parts) for k in range(parts + 1)]
            spans = [
                (bounds[k], bounds[k + 1] - timedelta(days=1))
                for k in range(parts)
                if bounds[k + 1] > bounds[k]
            ]
            spans[-1] = (spans[-1][0], hi)
            await asyncio.gather(*(visit(a, b) for a, b in spans))

        async def split_day(day: date, count: int) -> None:
            # One day over the cap: split it by PMID ranges ("lo:hi[uid]").
            if not await split_ids(day, 1, 99_999_999, count):
                warnings.append(
                    EntrezWarning(
                        "WindowOverCap",
                        f"{day.isoformat()} holds {count} records, more than PubMed's "
                        f"{ESEARCH_ID_CAP}-id cap, and could not be split further; "
                        "some PMIDs of that day were not enumerated",
                        source="client",
                    )
                )

        async def split_ids(day: date, lo: int, hi: int, count: int) -> bool:
            nonlocal complete
            if lo >= hi:
                complete = False
                return False
            mid = (lo + hi) // 2
            halves = [(lo, mid), (mid + 1, hi)]
            results = [await search(f"({term}) AND {a}:{b}[uid]", day, day) for a, b in halves]
            if sum(r.count for r in results) > count:
                complete = False  # the server ignored the range: the halves overlap
                return False
            ok = True
            for (a, b), result in zip(halves, results, strict=True):
                if result.count <= ESEARCH_ID_CAP:
                    found.update(dict.fromkeys(result.pmids))
                else:
                    ok = await split_ids(day, a, b, result.count) and ok
            return ok

        await visit(mindate, maxdate)
        pmids = tuple(found)
        return WindowEnumeration(
            pmids=pmids,
            count=len(pmids),
            requests=requests,
            complete=complete,
            warnings=tuple(dict.fromkeys(warnings)),
        )

    # --- EFetch --------------------------------------------------------------------------

    def _id_params(self, pmids: Sequence[str]) -> tuple[list[tuple[str, str]], bool]:
        return [("id", ",".join(pmids))], len(pmids) > self.settings.post_threshold

    async def efetch(self, pmids: Sequence[str]) -> FetchResult:
        wanted = _unique(pmids)
        if not wanted:
            return FetchResult(records=())
        semaphore = asyncio.Semaphore(max(1, self.settings.fetch_concurrency))

        async def one(batch: list[str]) -> FetchResult:
            async with semaphore:
                params, post = self._id_params(batch)
                params += [("retmode", "xml")]
                parsed = await self._call("efetch", params, parse_pubmed_articles, post=post)
                return FetchResult(
                    parsed.records, (), parsed.book_pmids, parsed.deleted_pmids, parsed.problems
                )

        parts = await asyncio.gather(
            *(one(b) for b in _batches(wanted, self.settings.fetch_batch_size))
        )
        return _merge_fetches(parts, wanted)

    async def efetch_history(
        self, webenv: str, query_key: str, retstart: int = 0, retmax: int = 500
    ) -> FetchResult:
        params = [
            ("WebEnv", webenv),
            ("query_key", query_key),
            ("retstart", str(retstart)),
            ("retmax", str(retmax)),
            ("retmode", "xml"),
        ]
        parsed = await self._call("efetch", params, parse_pubmed_articles)
        return FetchResult(
            parsed.records, (), parsed.book_pmids, parsed.deleted_pmids, parsed.problems
        )

    async def efetch_xml(self, pmids: Sequence[str]) -> bytes:
        wanted = _unique(pmids)
        if not wanted:
            raise EntrezRequestError("EFetch needs at least one PMID")
        params, post = self._id_params(wanted)

        def checked(body: bytes) -> bytes:
            parse_pubmed_articles(body)  # refuses HTML, truncation, error payloads
            return body

        return await self._call("efetch", [*params, ("retmode", "xml")], checked, post=post)

    async def efetch_medline(self, pmids: Sequence[str]) -> str:
        wanted = _unique(pmids)
        if not wanted:
            raise EntrezRequestError("EFetch needs at least one PMID")
        params, post = self._id_params(wanted)
        params += [("rettype", "medline"), ("retmode", "text")]
        return await self._call("efetch", params, _medline_text, post=post)

    # --- ESummary, ELink, EInfo ----------------------------------------------------------

    async def esummary(
        self,
        pmids: Sequence[str] = (),
        *,
        webenv: str | None = None,
        query_key: str | None = None,
        retstart: int = 0,
        retmax: int = 20,
    ) -> tuple[DocSummary, ...]:
        params: list[tuple[str, str]] = [("version", "2.0")]
        post = False
        wanted = _unique(pmids)
        if wanted:
            id_params, post = self._id_params(wanted)
            params += id_params
        elif webenv and query_key:
            params += [
                ("WebEnv", webenv),
                ("query_key", query_key),
                ("retstart", str(retstart)),
                ("retmax", str(retmax)),
            ]
        else:
            raise EntrezRequestError("ESummary needs PMIDs or a WebEnv and query_key")
        return await self._call("esummary", params, parse_esummary, post=post)

    async def elink(
        self,
        pmids: Sequence[str],
        *,
        linkname: str = "pubmed_pubmed",
        with_scores: bool = True,
    ) -> tuple[LinkSet, ...]:
        wanted = _unique(pmids)
        if not wanted:
            raise EntrezRequestError("ELink needs at least one PMID")
        cmd = "neighbor_score" if with_scores and linkname == "pubmed_pubmed" else "neighbor"
        params = [("dbfrom", "pubmed"), ("cmd", cmd), ("linkname", linkname)]
        params += [("id", pmid) for pmid in wanted]
        return await self._call("elink", params, parse_elink, post=len(wanted) > 100)

    async def einfo(self, db: str = "pubmed") -> DatabaseInfo:
        return await self._call("einfo", [], parse_einfo, db=db)


def _group(params: list[tuple[str, str]]) -> dict[str, str | list[str]]:
    """Form fields for a POST; a repeated key (ELink's one `id` per source) stays repeated."""
    grouped: dict[str, list[str]] = {}
    for key, value in params:
        grouped.setdefault(key, []).append(value)
    return {k: v[0] if len(v) == 1 else v for k, v in grouped.items()}


def _medline_text(body: bytes) -> str:
    text = body.decode("utf-8", "replace")
    head = text.lstrip()[:200].lower()
    if head.startswith("<"):
        if "<html" in head or "<!doctype html" in head:
            raise EntrezResponseError("expected MEDLINE text, received an HTML page")
        raise EntrezRequestError(f"expected MEDLINE text, received XML: {text.strip()[:200]}")
    if head and not head.startswith("pmid-"):
        raise EntrezResponseError("expected MEDLINE text starting with a PMID- line")
    return text


def _merge_fetches(parts: Sequence[FetchResult], wanted: Sequence[str]) -> FetchResult:
    records = [r for p in parts for r in p.records]
    books = [b for p in parts for b in p.book_pmids]
    deleted = [d for p in parts for d in p.deleted_pmids]
    seen = {r.pmid for r in records} | set(books) | set(deleted)
    return FetchResult(
        records=tuple(records),
        missing=tuple(p for p in wanted if p not in seen),
        book_pmids=tuple(books),
        deleted_pmids=tuple(deleted),
        problems=tuple(x for p in parts for x in p.problems),
    )


class _RedactFilter(logging.Filter):
    """Replaces secrets in log records of httpx / httpcore, which log full request URLs."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        message = record.getMessage()
        redacted = message
        for secret in self.secrets:
            redacted = redacted.replace(secret, "***")
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


_redaction = _RedactFilter()


def _install_redaction(secrets: Iterable[str]) -> None:
    _redaction.secrets.update(secrets)
    for name in ("httpx", "httpcore", "biomcp.entrez"):
        logger = logging.getLogger(name)
        if _redaction not in logger.filters:
            logger.addFilter(_redaction)

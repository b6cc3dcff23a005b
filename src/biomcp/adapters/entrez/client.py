"""The EntrezClient adapter: NCBI E-utilities over httpx, polite and resilient.

* Every request carries `db`, `tool`, `email` and, when configured, `api_key`; the key is
  redacted from every log line and error message this module (or httpx) produces.
* Requests wait for the process-wide rate limit (`ratelimit.shared_limiter`).
* Answers are streamed and read within `max_response_bytes` (NCBI_MAX_RESPONSE_MB), counted
  both as received and once decompressed (`body.read_bounded`): a larger answer, or a gzip
  bomb, is refused as soon as a count passes the limit, the connection is dropped, and the
  call fails with `EntrezResponseError` at once (the same request would get the same answer).
* 429, 5xx, timeouts, connection failures, NCBI "backend failed" payloads and unreadable 200
  answers (HTML pages, XML without its closing root, MEDLINE text whose last record lacks its
  end, a compressed stream cut short) are retried with exponential backoff and jitter,
  honouring `Retry-After`, up to `max_retries` retries and within `deadline_s`; then they
  surface as the port's typed errors (an answer still cut short: `EntrezResponseError`). No
  httpx or lxml exception leaves this module, and nothing cut short is returned, so nothing
  cut short can be cached.
* EFetch goes in batches, by POST when a batch holds more than `post_threshold` ids.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
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
from biomcp.adapters.entrez.bisection import enumerate_window
from biomcp.adapters.entrez.body import (
    ACCEPT_ENCODING,
    BodyCounts,
    ResponseTooLargeError,
    read_bounded,
)
from biomcp.adapters.entrez.eutils_xml import (
    parse_einfo,
    parse_elink,
    parse_esearch,
    parse_espell,
    parse_esummary,
)
from biomcp.adapters.entrez.jats import parse_pmc_articles
from biomcp.adapters.entrez.lookups import IDCONV_MAX_IDS, parse_ecitmatch, parse_idconv
from biomcp.adapters.entrez.medline import incomplete_medline
from biomcp.adapters.entrez.mesh_xml import parse_mesh_summaries
from biomcp.adapters.entrez.pubmed_xml import parse_pubmed_articles
from biomcp.adapters.entrez.ratelimit import RateLimiter, shared_limiter
from biomcp.adapters.entrez.xmlsafe import parse_document
from biomcp.domain.citematch import CitMatchAnswer
from biomcp.domain.fulltext import PmcArticleSet
from biomcp.domain.identifiers import IdConversion, IdKind
from biomcp.domain.mesh import MeshDescriptor
from biomcp.ports.entrez import (
    ESEARCH_ID_CAP,
    DatabaseInfo,
    DateType,
    DocSummary,
    EntrezApiKeyError,
    EntrezError,
    EntrezRateLimitError,
    EntrezRequestError,
    EntrezResponseError,
    EntrezTimeoutError,
    EntrezUnavailableError,
    FetchResult,
    LinkSet,
    SearchResult,
    WindowEnumeration,
)

__all__ = ["DEFAULT_BASE_URL", "EntrezSettings", "HttpEntrezClient"]

DEFAULT_BASE_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
DEFAULT_IDCONV_URL = "https://pmc.ncbi.nlm.nih.gov/tools/idconv/api/v1/articles/"
#: The default largest answer, received or decompressed, in MiB. The largest answers the
#: client asks for are EFetch batches of 500 PubMed records: about 5 MiB for ordinary records
#: (some 10 KiB each), 30 to 50 MiB for 500 reviews with long reference lists. 64 MiB lets
#: those through while bounding what one answer may cost: the body, then lxml's tree of it
#: (a few times its size), a few hundred MiB at worst instead of whatever the wire sends.
DEFAULT_MAX_RESPONSE_MB = 64
_MIB = 1024 * 1024
_log = logging.getLogger("biomcp.entrez")
#: NCBI's answer to a key it does not know: `{"error":"API key invalid", "api-key": ...}`.
_API_KEY_INVALID = re.compile(r"api[ -]?key\W+(is\W+)?invalid|invalid\W+api[ -]?key", re.I)
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class EntrezSettings:
    """Plain values the adapter needs (the application settings object fills them in)."""

    base_url: str = DEFAULT_BASE_URL
    #: NCBI's PMC ID converter (NCBI_IDCONV_BASE_URL); not an E-utility, same identity rules.
    idconv_base_url: str = DEFAULT_IDCONV_URL
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
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_MB * _MIB

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> EntrezSettings:
        """Read NCBI_EUTILS_BASE_URL, NCBI_API_KEY, NCBI_TOOL_IDENTIFIER, NCBI_ADMIN_EMAIL,
        NCBI_REQUEST_DELAY_MS, NCBI_MAX_RETRIES (spec 04) and NCBI_MAX_RESPONSE_MB; unset or
        empty means default.

        Raises:
            ValueError: when a number is not a non-negative integer, or the response limit
                is 0.
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
            idconv_base_url=environ.get("NCBI_IDCONV_BASE_URL", "").strip()
            or default.idconv_base_url,
            api_key=environ.get("NCBI_API_KEY", "").strip() or None,
            tool=environ.get("NCBI_TOOL_IDENTIFIER", "").strip() or default.tool,
            email=environ.get("NCBI_ADMIN_EMAIL", "").strip() or None,
            request_delay_ms=number("NCBI_REQUEST_DELAY_MS", default.request_delay_ms),
            max_retries=number("NCBI_MAX_RETRIES", default.max_retries),
            max_response_bytes=_positive_mib(
                number("NCBI_MAX_RESPONSE_MB", DEFAULT_MAX_RESPONSE_MB)
            ),
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
    #: Answer bytes read from the network, and after decompression, in all.
    bytes_received: int = 0
    bytes_decoded: int = 0
    #: Answers refused for their size.
    oversized: int = 0


class _TransientError(Exception):
    """A failure worth retrying; `final` is what the caller gets when retries run out."""

    def __init__(self, final: EntrezError, retry_after: float | None = None) -> None:
        super().__init__(str(final))
        self.final = final
        self.retry_after = retry_after


def _positive_mib(mib: int) -> int:
    if mib < 1:
        raise ValueError("NCBI_MAX_RESPONSE_MB must be at least 1")
    return mib * _MIB


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
                headers={
                    "User-Agent": f"{self.settings.tool} (httpx)",
                    "Accept-Encoding": ACCEPT_ENCODING,
                },
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

    def _params(self, params: Iterable[tuple[str, str]], db: str | None) -> list[tuple[str, str]]:
        merged = [*([("db", db)] if db else []), ("tool", self.settings.tool), *params]
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
        db: str | None = "pubmed",
        url: str | None = None,
    ) -> _T:
        """One E-utility call with rate limiting, the response size limit, retries and error
        mapping. `url` replaces `{base}/{endpoint}.fcgi` (a service such as the ID converter;
        `endpoint` then only names it); `db=None` sends no `db` parameter."""
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
                    body = await self._send(endpoint, full, post, url)
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

    async def _send(
        self, endpoint: str, params: list[tuple[str, str]], post: bool, url: str | None = None
    ) -> bytes:
        url = url or f"{self._base}/{endpoint}.fcgi"
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
            response = await client.send(request, stream=True)
            try:
                return await self._receive(endpoint, response)
            finally:
                # Closing a response not read to its end drops the connection: the rest of
                # an oversized answer is never read.
                await response.aclose()
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

    async def _receive(self, endpoint: str, response: httpx.Response) -> bytes:
        """The body of a streamed answer, or the error its status stands for."""
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
        body = await self._read(endpoint, response)
        if status >= 400:
            snippet = self.redact(body[:300].decode("utf-8", "replace").strip())
            if status in (400, 401, 403) and _API_KEY_INVALID.search(snippet):
                raise EntrezApiKeyError(f"NCBI {endpoint} refused the API key (HTTP {status})")
            raise EntrezRequestError(
                f"NCBI {endpoint} rejected the request (HTTP {status}): {snippet}"
            )
        return body

    async def _read(self, endpoint: str, response: httpx.Response) -> bytes:
        counts = BodyCounts()
        try:
            return await read_bounded(
                response, self.settings.max_response_bytes, counts, f"NCBI {endpoint}"
            )
        except ResponseTooLargeError:
            self.stats.oversized += 1
            _log.warning("NCBI %s answer refused: over the response size limit", endpoint)
            raise
        except EntrezResponseError as exc:  # cut short or corrupt in transit: ask again
            raise _TransientError(EntrezResponseError(self.redact(str(exc)))) from None
        finally:
            self.stats.bytes_received += counts.received
            self.stats.bytes_decoded += counts.decoded

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
        async def search(query: str, lo: date, hi: date) -> SearchResult:
            return await self.esearch(
                query,
                datetype=datetype,
                mindate=_ncbi_date(lo),
                maxdate=_ncbi_date(hi),
                retmax=ESEARCH_ID_CAP,
            )

        return await enumerate_window(search, term, mindate, maxdate)

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

    async def espell(self, term: str) -> str | None:
        if not term.strip():
            raise EntrezRequestError("ESpell needs a non-empty term")
        return await self._call("espell", [("term", term)], parse_espell, post=len(term) > 1500)

    async def mesh_search(self, term: str, *, retmax: int = 20) -> SearchResult:
        if not term.strip():
            raise EntrezRequestError("ESearch needs a non-empty term")
        params = [("term", term), ("retstart", "0"), ("retmax", str(retmax))]
        return await self._call("esearch", params, parse_esearch, db="mesh")

    async def mesh_summaries(self, uids: Sequence[str]) -> tuple[MeshDescriptor, ...]:
        wanted = _unique(uids)
        if not wanted:
            raise EntrezRequestError("ESummary needs at least one MeSH UID")
        params = [("version", "2.0"), ("id", ",".join(wanted))]
        return await self._call("esummary", params, parse_mesh_summaries, db="mesh")

    # --- lookups: the PMC ID converter and ECitMatch (not .fcgi E-utilities) --------------

    async def idconv(self, ids: Sequence[str], *, idtype: IdKind) -> tuple[IdConversion, ...]:
        wanted = _unique(ids)
        if not wanted:
            raise EntrezRequestError("the ID converter needs at least one id")
        if len(wanted) > IDCONV_MAX_IDS:
            raise EntrezRequestError(f"the ID converter takes at most {IDCONV_MAX_IDS} ids")
        params = [("ids", ",".join(wanted)), ("idtype", idtype), ("format", "json")]
        url = self.settings.idconv_base_url
        return await self._call("idconv", params, parse_idconv, db=None, url=url)

    async def ecitmatch(self, lines: Sequence[str]) -> tuple[CitMatchAnswer, ...]:
        wanted = [line.strip() for line in lines if line.strip()]
        if not wanted:
            raise EntrezRequestError("ECitMatch needs at least one citation line")
        keys = [line.split("|")[5] if line.count("|") >= 6 else "" for line in wanted]
        if not all(keys):
            raise EntrezRequestError("every ECitMatch line needs six |-separated fields")
        bdata = "\r".join(wanted)
        return await self._call(
            "ecitmatch",
            [("retmode", "xml"), ("bdata", bdata)],
            lambda body: parse_ecitmatch(body, keys),
            post=len(bdata) > 1500,
            url=f"{self._base}/ecitmatch.cgi",
        )

    # --- PMC full text (pubmed_fetch_fulltext) -------------------------------------------

    async def elink_pmc(self, pmids: Sequence[str]) -> tuple[LinkSet, ...]:
        wanted = _unique(pmids)
        if not wanted:
            raise EntrezRequestError("ELink needs at least one PMID")
        params = [("dbfrom", "pubmed"), ("cmd", "neighbor"), ("linkname", "pubmed_pmc")]
        params += [("id", pmid) for pmid in wanted]
        return await self._call("elink", params, parse_elink, post=len(wanted) > 100, db="pmc")

    async def efetch_pmc(self, pmcids: Sequence[str]) -> PmcArticleSet:
        wanted = _unique(i.upper().removeprefix("PMC") for i in pmcids)
        if not wanted:
            raise EntrezRequestError("EFetch needs at least one PMC id")
        params = [("id", ",".join(wanted)), ("retmode", "xml")]
        return await self._call(
            "efetch", params, parse_pmc_articles, post=len(wanted) > 200, db="pmc"
        )


def _group(params: list[tuple[str, str]]) -> dict[str, str | list[str]]:
    """Form fields for a POST; a repeated key (ELink's one `id` per source) stays repeated."""
    grouped: dict[str, list[str]] = {}
    for key, value in params:
        grouped.setdefault(key, []).append(value)
    return {k: v[0] if len(v) == 1 else v for k, v in grouped.items()}


def _medline_text(body: bytes) -> str:
    """EFetch's MEDLINE text, whole.

    Raises:
        EntrezResponseError: an HTML page, XML that is not an NCBI error, or text cut short
            (retried by `_parse`).
        EntrezUnavailableError: an NCBI "backend failed" payload (retried by `_parse`).
        EntrezRequestError: an NCBI error naming the request (not retried).
    """
    text = body.decode("utf-8", "replace")
    if text.lstrip()[:1] == "<":
        # XML or HTML instead of text: read it as XML, so that an NCBI error payload is
        # classified like in every other mode (a backend failure is retried, a bad request
        # is not) and anything else is an unreadable answer.
        parse_document(body, expected_roots=frozenset(), what="MEDLINE text")
        raise EntrezResponseError("expected MEDLINE text, received XML")  # not reached
    problem = incomplete_medline(text)
    if problem is not None:
        raise EntrezResponseError(f"MEDLINE answer not whole: {problem}")
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

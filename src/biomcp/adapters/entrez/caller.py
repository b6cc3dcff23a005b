"""One E-utility request, sent politely and resiliently: the caller under `HttpEntrezClient`.

* Each request carries `db`, `tool`, `email` and, when configured, `api_key`, and waits for
  the rate limiter.
* Answers are streamed and read within `max_response_bytes` (`body.read_bounded`); a larger
  answer fails at once with `EntrezResponseError`.
* 429, 5xx, timeouts, connection failures and unreadable answers are retried with exponential
  backoff and jitter, honouring `Retry-After`, up to `max_retries` retries within
  `deadline_s`; then they surface as the port's typed errors. No httpx exception leaves here.
"""

from __future__ import annotations

import email.utils
import logging
import random
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol, TypeVar
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

from biomcp.adapters.entrez.body import (
    ACCEPT_ENCODING,
    BodyCounts,
    ResponseTooLargeError,
    read_bounded,
)
from biomcp.adapters.entrez.ratelimit import RateLimiter
from biomcp.ports.entrez import (
    EntrezApiKeyError,
    EntrezError,
    EntrezRateLimitError,
    EntrezRequestError,
    EntrezResponseError,
    EntrezTimeoutError,
    EntrezUnavailableError,
)

__all__ = ["CallerSettings", "ClientStats", "EutilsCaller"]

_log = logging.getLogger("biomcp.entrez")
#: NCBI's answer to a key it does not know: `{"error":"API key invalid", "api-key": ...}`.
_API_KEY_INVALID = re.compile(r"api[ -]?key\W+(is\W+)?invalid|invalid\W+api[ -]?key", re.I)
_T = TypeVar("_T")


class CallerSettings(Protocol):
    """What the caller reads of the client's settings (`client.EntrezSettings`)."""

    @property
    def base_url(self) -> str: ...
    @property
    def api_key(self) -> str | None: ...
    @property
    def tool(self) -> str: ...
    @property
    def email(self) -> str | None: ...
    @property
    def max_retries(self) -> int: ...
    @property
    def timeout_s(self) -> float: ...
    @property
    def deadline_s(self) -> float: ...
    @property
    def backoff_initial_s(self) -> float: ...
    @property
    def backoff_max_s(self) -> float: ...
    @property
    def retry_after_max_s(self) -> float: ...
    @property
    def max_response_bytes(self) -> int: ...


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


class EutilsCaller:
    """Sends E-utility requests for one client: identity parameters, rate limit, size limit,
    retries, statistics and error mapping.

    The httpx client is created lazily on the first request, so constructing this object
    connects to nothing.
    """

    def __init__(
        self,
        settings: CallerSettings,
        limiter: RateLimiter,
        stats: ClientStats,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.settings = settings
        self._base = settings.base_url.rstrip("/")
        self._limiter = limiter
        self._transport = transport
        self._http: httpx.AsyncClient | None = None
        self._secrets = tuple(s for s in (settings.api_key,) if s)
        self.stats = stats

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

    async def call(
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


def _group(params: list[tuple[str, str]]) -> dict[str, str | list[str]]:
    """Form fields for a POST; a repeated key (ELink's one `id` per source) stays repeated."""
    grouped: dict[str, list[str]] = {}
    for key, value in params:
        grouped.setdefault(key, []).append(value)
    return {k: v[0] if len(v) == 1 else v for k, v in grouped.items()}

"""What every live PubMed job shares: its configuration, the client status it reports, the
context it runs in (`LiveContext`: the Entrez client, the clock, the last call's outcome), the
overall deadline of one call, the E-utility URLs it shows, argument checks.

Each job (search, articles, full text...) is a class built over one `LiveContext`;
`LivePubMed` (service.py) builds them and forwards to them.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar
from urllib.parse import urlencode

from biomcp.domain.sanitize import DateWindow
from biomcp.ports.entrez import (
    DocSummary,
    EntrezClient,
    EntrezError,
    EntrezTimeoutError,
    EntrezWarning,
)
from biomcp.usecases.errors import InvalidRequestError, NotFoundError

_T = TypeVar("_T")


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


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(slots=True)
class LiveContext:
    """The E-utilities client, the configuration, the clock, and the last call's outcome (for
    `server_info`), shared by the live jobs of one `LivePubMed`."""

    entrez: EntrezClient
    config: LiveConfig = field(default_factory=LiveConfig)
    clock: Callable[[], datetime] = _utc_now
    #: When the last E-utility call ended, and its error (None: it succeeded).
    last_call: tuple[datetime, str | None] | None = None

    async def call(self, pending: Awaitable[_T]) -> _T:
        """Await one E-utility call, remembering when it last succeeded or failed."""
        try:
            value = await pending
        except EntrezError as exc:
            self.last_call = (self.clock(), f"{type(exc).__name__}: {exc}")
            raise
        self.last_call = (self.clock(), None)
        return value

    def url(self, endpoint: str, params: Iterable[tuple[str, str]], *, db: str = "pubmed") -> str:
        """The E-utility URL of a call, as the client sends it minus the API key."""
        query = [("db", db), *params, ("tool", self.config.tool)]
        if self.config.email:
            query.append(("email", self.config.email))
        base = self.config.base_url.rstrip("/")
        return f"{base}/{endpoint}.fcgi?{urlencode(query)}"


class LiveJob(Protocol):
    """A live job: anything holding the `LiveContext` it runs in."""

    context: LiveContext


_P = ParamSpec("_P")
_J = TypeVar("_J", bound=LiveJob)


def within_deadline(
    method: Callable[Concatenate[_J, _P], Coroutine[Any, Any, _T]],
) -> Callable[Concatenate[_J, _P], Coroutine[Any, Any, _T]]:
    """Run a job's `method` under the overall deadline of one live call
    (`LiveConfig.deadline_s`)."""

    @functools.wraps(method)
    async def limited(self: _J, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        context = self.context
        limit = context.config.deadline_s
        try:
            async with asyncio.timeout(limit):
                return await method(self, *args, **kwargs)
        except TimeoutError:
            context.last_call = (context.clock(), "overall deadline exceeded")
            raise EntrezTimeoutError(
                f"PubMed gave no complete answer within the overall deadline of {limit:g} s "
                "(NCBI_TOTAL_DEADLINE_MS), retries included"
            ) from None

    return limited


# --- arguments -----------------------------------------------------------------------------


def check_range(name: str, value: int, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidRequestError(
            f"{name} must be an integer from {low} to {high}, got {value!r}",
            details={"field": name, "value": value},
        )


def check_choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise InvalidRequestError(
            f"{name} {value!r} is not one of {', '.join(allowed)}",
            details={"field": name, "allowed": list(allowed)},
        )
    return value


def date_window(date_range: Mapping[str, Any] | None) -> DateWindow | None:
    if not date_range:
        return None
    unknown = set(date_range) - {"minDate", "maxDate", "dateType"}
    if unknown:
        raise InvalidRequestError(f"dateRange has unknown fields: {', '.join(sorted(unknown))}")
    return DateWindow(
        date_range.get("minDate"), date_range.get("maxDate"), date_range.get("dateType") or "pdat"
    )


def warning_text(warnings: Iterable[EntrezWarning]) -> str:
    return "; ".join(f"{w.kind} {w.message}" for w in warnings)


# --- shapes --------------------------------------------------------------------------------


def pubmed_url(pmid: str) -> str:
    return f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/"


def not_found(pmid: str) -> NotFoundError:
    return NotFoundError(
        f"PMID {pmid} is not in PubMed: check the number (a PubMed search finds PMIDs)",
        details={"pmid": pmid},
    )


def missing(doc: DocSummary | None) -> bool:
    return doc is None or doc.error is not None

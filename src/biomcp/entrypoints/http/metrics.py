"""`GET /metrics`: this process's figures in Prometheus' text format (`prometheus-client`).

Each app has its own `CollectorRegistry`, never the library's global one, so several apps in
one process keep apart. Counted as they happen: tool calls by tool and outcome (`ok` or the
error envelope's code), their durations, and HTTP requests by route and status. Read at scrape
time: the E-utilities client's requests, retries and waiting callers, the response cache's hits
and misses, and the states of the newest sync jobs in the job log.

Labels are tool names, route paths, status and error codes only: never arguments, queries,
PMIDs or tokens. `BIOMCP_METRICS=off` removes the endpoint and all counting.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import Counter as Tally
from collections.abc import Iterable, Iterator
from typing import Any, Final

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from biomcp.entrypoints.services import Services

__all__ = ["JOBS_SCANNED", "METRICS_PATH", "CountRequests", "Metrics"]

METRICS_PATH: Final = "/metrics"
#: `biomcp_sync_jobs` counts the states of this many newest jobs of the shared job log.
JOBS_SCANNED: Final = 20
#: Reading the job log for a scrape is given up after this many seconds.
JOBS_TIMEOUT_S: Final = 5.0
#: Seconds: from a cached lookup to a long sync wait.
TOOL_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)

_CODE = re.compile(r"[A-Z][A-Z0-9_]{0,39}")
_log = logging.getLogger("biomcp.http")


class Metrics:
    """The figures of one app over `services`, in a registry of its own."""

    def __init__(self, services: Services) -> None:
        self.registry = CollectorRegistry()
        self.tool_calls = Counter(
            "biomcp_tool_calls",
            "Tool calls by tool and outcome (ok, or the error envelope's code).",
            ["tool", "outcome"],
            registry=self.registry,
        )
        self.tool_seconds = Histogram(
            "biomcp_tool_call_seconds",
            "Tool call durations in seconds, from argument checks to the answer.",
            ["tool"],
            buckets=TOOL_BUCKETS,
            registry=self.registry,
        )
        self.http_requests = Counter(
            "biomcp_http_requests",
            "HTTP requests by route (other for unknown paths) and status.",
            ["route", "status"],
            registry=self.registry,
        )
        self._services = services
        self._jobs = _JobStates()
        self.registry.register(_NcbiFigures(services))
        self.registry.register(self._jobs)

    def record_tool_call(self, tool: str, outcome: str, seconds: float) -> None:
        """Count one call of the registered tool `tool` (the server's `tool_observer`)."""
        if outcome != "ok" and not _CODE.fullmatch(outcome):
            outcome = "OTHER"  # codes are the envelope's; anything else stays out of labels
        self.tool_calls.labels(tool, outcome).inc()
        self.tool_seconds.labels(tool).observe(max(0.0, seconds))

    async def render(self) -> bytes:
        """The text exposition, the job states read from the job log first."""
        self._jobs.states = await _job_states(self._services)
        return generate_latest(self.registry)

    def route(self) -> Route:
        async def metrics(request: Request) -> Response:
            return Response(await self.render(), media_type=CONTENT_TYPE_LATEST)

        return Route(METRICS_PATH, metrics, methods=["GET"])


class CountRequests:
    """ASGI middleware counting HTTP requests by route and status. Paths outside `routes`
    count as `other`, so a scan of random paths adds no series."""

    def __init__(self, app: ASGIApp, metrics: Metrics, routes: Iterable[str]) -> None:
        self.app = app
        self.metrics = metrics
        self.routes = frozenset(routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        route = path if path in self.routes else "other"
        started = False

        async def counted(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start" and not started:
                started = True
                self.metrics.http_requests.labels(route, str(message["status"])).inc()
            await send(message)

        try:
            await self.app(scope, receive, counted)
        except Exception:
            if not started:  # Starlette answers 500 outside this middleware
                self.metrics.http_requests.labels(route, "500").inc()
            raise


class _NcbiFigures(Collector):
    """The E-utilities client's statistics, once this process has built the client."""

    def __init__(self, services: Services) -> None:
        self._services = services

    def collect(self) -> Iterator[Metric]:
        ncbi, entrez = self._services.built("ncbi"), self._services.built("entrez")
        stats: Any = getattr(ncbi, "stats", None)
        cache: Any = getattr(entrez, "cache_stats", None)
        figures = [
            ("requests", "E-utilities requests sent.", stats, "requests"),
            ("retries", "E-utilities requests retried.", stats, "retries"),
            ("cache_hits", "Live answers served from the response cache.", cache, "hits"),
            ("cache_misses", "Live answers the response cache did not hold.", cache, "misses"),
        ]
        for name, text, source, field in figures:
            family = CounterMetricFamily(f"biomcp_ncbi_{name}", text)
            family.add_metric([], float(getattr(source, field, 0) or 0))
            yield family
        waiting = GaugeMetricFamily(
            "biomcp_ncbi_waiting", "Callers waiting now for their turn under the rate limit."
        )
        waiting.add_metric([], float(getattr(ncbi, "queue_length", 0) or 0))
        yield waiting


class _JobStates(Collector):
    """`biomcp_sync_jobs{state}`: set by `Metrics.render` just before each scrape."""

    def __init__(self) -> None:
        self.states: dict[str, int] | None = None

    def collect(self) -> Iterator[Metric]:
        if self.states is None:
            return
        family = GaugeMetricFamily(
            "biomcp_sync_jobs",
            f"States of the newest {JOBS_SCANNED} sync jobs of the job log (shared by replicas).",
            labels=["state"],
        )
        for state, count in sorted(self.states.items()):
            family.add_metric([state], count)
        yield family


async def _job_states(services: Services) -> dict[str, int] | None:
    """Job states by count, or None before the jobs are built or when the log fails."""
    jobs = services.built("jobs")  # built by a sync tool call; a scrape builds nothing
    if jobs is None:
        return None
    try:
        recent = await asyncio.wait_for(jobs.recent(JOBS_SCANNED), JOBS_TIMEOUT_S)
    except Exception as exc:  # a scrape never fails for the job log
        _log.warning("metrics: the job log did not answer (%s)", type(exc).__name__)
        return None
    return dict(Tally(str(job["status"]) for job in recent))

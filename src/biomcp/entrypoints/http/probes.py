"""Probes and the index: `GET /health` (liveness, always 200), `GET /readyz` (cheap checks:
the stores answer, the model is loaded, the event loop keeps time: 200, else 503 with the
reasons, secrets redacted) and `GET /` (what this server offers). None of them needs a token.

`/readyz` reads nothing whose cost grows with the corpus. The corpus index's status (a scan of
the whole vector collection) comes from a per-process cache, refreshed in the background."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Final
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from biomcp import __version__
from biomcp.entrypoints.http.loopwatch import LoopWatch
from biomcp.entrypoints.mcp.policy import READ_SCOPE, WRITE_SCOPE
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.services import Services
from biomcp.entrypoints.settings import Settings
from biomcp.usecases.diagnostics import READINESS_CHECK_TIMEOUT_S, CheckFailedError, bounded

__all__ = [
    "INDEX_STATUS_EVERY_S",
    "INDEX_STATUS_TIMEOUT_S",
    "READINESS_TIMEOUT_S",
    "IndexStatusCache",
    "probe_routes",
]

_log = logging.getLogger("biomcp.http")

#: A readiness probe answers within about this many seconds, whatever the stores do: the checks
#: run at once, each bounded by `READINESS_CHECK_TIMEOUT_S`. Only while the process warms up
#: does a probe wait longer (`WARM_UP_WAIT_S` more), and its first ready probe one bound more.
READINESS_TIMEOUT_S: Final = READINESS_CHECK_TIMEOUT_S
#: The corpus index's status is checked again at most this often (seconds).
INDEX_STATUS_EVERY_S: Final = 300.0
#: A check of the corpus index's status that takes longer than this is given up.
INDEX_STATUS_TIMEOUT_S: Final = 120.0
#: What `/readyz` says of the corpus index before its first check ends.
NOT_CHECKED: Final = "not checked yet"


def _secrets(settings: Settings) -> list[str]:
    values = [
        settings.mcp_auth_secret_key,
        settings.ncbi_api_key,
        settings.openai_api_key,
        settings.weaviate_api_key,
    ]
    found = [v.get_secret_value() for v in values if v is not None and v.get_secret_value()]
    url = settings.biomcp_database_url
    if url:
        password = urlsplit(url).password
        if password:
            found.append(password)
    return found


def _redact(text: str, secrets: Iterable[str], limit: int = 500) -> str:
    for secret in secrets:
        text = text.replace(secret, "***")
    text = re.sub(r"(?i)(://[^:/@\s]+:)[^@\s]+@", r"\1***@", text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class IndexStatusCache:
    """The corpus index's last known status, for `/readyz`. `due()` starts a check in the
    background when the last one is older than `every_s`; `current()` answers from the cache.
    Only the first `current()` waits for a check (the first), and not for long."""

    def __init__(
        self,
        status: Callable[[], Awaitable[str]],
        *,
        every_s: float = INDEX_STATUS_EVERY_S,
        timeout_s: float = INDEX_STATUS_TIMEOUT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._status = status
        self._every_s = every_s
        self._timeout_s = timeout_s
        self._clock = clock
        self._value: str | None = None
        self._checked_at: float | None = None
        self._running: asyncio.Task[None] | None = None
        self._waited = False
        self._stragglers: set[asyncio.Future[Any]] = set()
        #: How many checks have started.
        self.checks = 0

    def due(self) -> None:
        """Start a check in the background, unless one runs or the last ended recently."""
        if self._running is not None:
            return
        if self._checked_at is not None and self._clock() - self._checked_at < self._every_s:
            return
        self.checks += 1
        self._running = asyncio.get_running_loop().create_task(
            self._refresh(), name="readyz-index-status"
        )

    async def current(self, wait_s: float) -> str:
        """The last known status. The first call waits for the first check at most `wait_s`
        seconds (it goes on if it takes longer); later ones never wait."""
        running = self._running
        if not self._waited and self._value is None and running is not None:
            self._waited = True
            await asyncio.wait({running}, timeout=wait_s)  # never cancels it
        return NOT_CHECKED if self._value is None else self._value

    async def _refresh(self) -> None:
        try:
            self._value = await bounded(self._status, self._timeout_s, self._stragglers)
        except CheckFailedError as exc:
            self._value = f"could not check: {exc}"
        finally:
            self._checked_at = self._clock()
            self._running = None


def _index_status(services: Services) -> Callable[[], Awaitable[str]]:
    async def status() -> str:
        await services.ready()  # nothing builds an adapter while the warm-up does
        # Built in a worker thread: its imports would hold the event loop for a while.
        maintenance = await asyncio.to_thread(lambda: services.maintenance)
        return (await maintenance.status()).describe()

    return status


async def _readiness(
    services: Services, watch: LoopWatch | None, secrets: Iterable[str]
) -> tuple[bool, dict[str, str]]:
    """(ready, each check's answer, redacted): the event loop first, then the other checks,
    each bounded in time. Raises nothing but the caller's own cancellation."""
    stalled = watch.check() if watch is not None else "ok"
    if stalled != "ok":  # the stores would wait for the same stalled threads: answer now
        checks = {"event_loop": stalled}
    else:
        try:
            checks = await services.readiness()
        except Exception as exc:  # each check catches its own: this is a last line
            checks = {"checks": f"{type(exc).__name__}: {exc}"}
        if watch is not None:
            checks["event_loop"] = "ok"
    checks = {name: _redact(value, secrets) for name, value in checks.items()}
    ready = bool(checks) and all(value == "ok" for value in checks.values())
    return ready, checks


def _auth_description(mode: str) -> dict[str, object]:
    """How a client authenticates in auth `mode` (`none`, `hs256` or `oauth`)."""
    auth_on = mode != "none"
    return {
        "enabled": auth_on,
        "scheme": "bearer" if auth_on else None,
        "mode": mode,
        "algorithm": {"hs256": "HS256", "oauth": "RS256/ES256"}.get(mode),
        "read_scope": READ_SCOPE if mode == "oauth" else None,
        "write_scope": WRITE_SCOPE if auth_on else None,
    }


async def _description(server: BioMcpServer, settings: Settings, mcp_path: str) -> dict[str, Any]:
    """The index: the server, its endpoints, tools, resources and auth."""
    tools = await server.list_tools()
    specs = server.tool_specs
    resources = await server.list_resources()
    templates = await server.list_resource_templates()
    return {
        "name": "bio-mcp",
        "title": server.title,
        "version": __version__,
        "contract_version": settings.biomcp_contract,
        "transports": ["stdio", "streamable-http"],
        "stateless": settings.mcp_http_stateless,  # no sessions over HTTP: any replica answers
        "endpoints": {
            "mcp": mcp_path,
            "health": "/health",
            "readyz": "/readyz",
            "metrics": "/metrics" if settings.biomcp_metrics == "on" else None,
            "index": "/",
        },
        "tools": [
            {
                "name": tool.name,
                "title": tool.title,
                "writes": specs[tool.name].writes
                if tool.name in specs
                else not (tool.annotations and tool.annotations.read_only_hint),
            }
            for tool in tools
        ],
        "resources": [{"uri": str(r.uri), "name": r.name, "title": r.title} for r in resources]
        + [{"uri_template": t.uri_template, "name": t.name, "title": t.title} for t in templates],
        "read_only": settings.biomcp_read_only,
        "auth": _auth_description(settings.auth_mode),
    }


def probe_routes(
    server: BioMcpServer,
    services: Services,
    settings: Settings,
    *,
    mcp_path: str,
    watch: LoopWatch | None = None,
) -> list[Route]:
    """The routes of `/health`, `/readyz` and `/`. With a `watch`, readiness also fails while
    the event loop or its worker threads are stalled."""
    secrets = _secrets(settings)
    index_status = IndexStatusCache(_index_status(services))

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "name": "bio-mcp", "version": __version__})

    async def readyz(request: Request) -> Response:
        index_status.due()  # in the background, beside the checks
        ready, checks = await _readiness(services, watch, secrets)
        if not ready:
            _log.warning("not ready: %s", json.dumps(checks))
        body: dict[str, object] = {"status": "ready" if ready else "unavailable", "checks": checks}
        if ready:
            # Reported, not failed on: a server whose corpus index needs a rebuild still
            # serves live PubMed and the documents themselves.
            # Only a process's first ready probe waits, for one check's bound at most.
            status = await index_status.current(READINESS_CHECK_TIMEOUT_S)
            body["corpus_index"] = _redact(status, secrets)
        return JSONResponse(body, status_code=200 if ready else 503)

    async def index(request: Request) -> Response:
        return JSONResponse(await _description(server, settings, mcp_path))

    return [
        Route("/health", health, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/", index, methods=["GET"]),
    ]

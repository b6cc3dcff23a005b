"""Probes and the index: `GET /health` (liveness, always 200), `GET /readyz` (each store
answers and the event loop keeps time: 200, else 503 with the reasons, secrets redacted) and
`GET /` (what this server offers). None of them needs a token."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from typing import Any, Final
from urllib.parse import urlsplit

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from biomcp import __version__
from biomcp.entrypoints.http.loopwatch import LoopWatch
from biomcp.entrypoints.mcp.policy import READ_SCOPE, WRITE_SCOPE
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.services import Services
from biomcp.entrypoints.settings import Settings

__all__ = ["READINESS_TIMEOUT_S", "probe_routes"]

_log = logging.getLogger("biomcp.http")

#: A readiness probe answers within this many seconds, whatever the stores do.
READINESS_TIMEOUT_S: Final = 10.0


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


async def _index_status(services: Services) -> str:
    try:
        with anyio.fail_after(READINESS_TIMEOUT_S):
            return (await services.maintenance.status()).describe()
    except TimeoutError:
        return f"no answer within {READINESS_TIMEOUT_S:g}s"
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


async def _readiness(
    services: Services, watch: LoopWatch | None, secrets: Iterable[str]
) -> tuple[bool, dict[str, str]]:
    """(ready, each check's answer, redacted): the event loop first, then the stores."""
    stalled = watch.check() if watch is not None else "ok"
    if stalled != "ok":  # the stores would wait for the same stalled threads: answer now
        checks = {"event_loop": stalled}
    else:
        try:
            with anyio.fail_after(READINESS_TIMEOUT_S):
                checks = await services.readiness()
        except TimeoutError:
            checks = {"stores": f"no answer within {READINESS_TIMEOUT_S:g}s"}
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
        "endpoints": {
            "mcp": mcp_path,
            "health": "/health",
            "readyz": "/readyz",
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

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "name": "bio-mcp", "version": __version__})

    async def readyz(request: Request) -> Response:
        ready, checks = await _readiness(services, watch, secrets)
        if not ready:
            _log.warning("not ready: %s", json.dumps(checks))
        body: dict[str, object] = {"status": "ready" if ready else "unavailable", "checks": checks}
        if ready:
            # Reported, not failed on: a server whose corpus index needs a rebuild still
            # serves live PubMed and the documents themselves.
            body["corpus_index"] = _redact(await _index_status(services), secrets)
        return JSONResponse(body, status_code=200 if ready else 503)

    async def index(request: Request) -> Response:
        return JSONResponse(await _description(server, settings, mcp_path))

    return [
        Route("/health", health, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/", index, methods=["GET"]),
    ]

"""The Streamable HTTP surface: MCP at `/mcp`, probes at `/health` and `/readyz`, an index at `/`.

`build_http_app` wraps the MCP server of `build_server` in a Starlette app:

- `/mcp` is the SDK's Streamable HTTP transport (stateful sessions, SSE answers); the app's
  lifespan runs its session manager and closes the services at shutdown. With
  `MCP_HTTP_STATELESS` each request stands alone (no `Mcp-Session-Id`, no resumable streams),
  so replicas behind a round-robin balancer can serve 2025-11-25 clients.
- `probes`: `/health`, `/readyz` and `/`, no token needed.
- `metrics`: `/metrics`, Prometheus' text format, no token needed; `BIOMCP_METRICS=off` drops it.
- `auth`, `oauth`: with `MCP_AUTH_SECRET_KEY` (HS256) or the OAuth settings (`MCP_AUTH_ISSUER`
  ...), `/mcp` needs a bearer JWT; the writing tools also need the `biomcp:write` scope
  (`mcp.policy`), else they answer the VALIDATION envelope. OAuth mode also serves the
  protected-resource metadata (RFC 9728) under `/.well-known/oauth-protected-resource`.
- `gate`: Host and Origin checks and CORS; a non-loopback bind needs an auth mode or `insecure`.
- `run`: uvicorn, until SIGINT or SIGTERM.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import Route
from starlette.types import ASGIApp

from biomcp.entrypoints.http.auth import RequireBearer
from biomcp.entrypoints.http.events import (
    RETRY_INTERVAL_MS,
    BoundedEventStore,
    NoStreams,
    StreamScopes,
)
from biomcp.entrypoints.http.gate import (
    InsecureBindError,
    OriginPolicy,
    RequestGate,
    bind_refusal,
    cors_options,
    is_loopback_host,
)
from biomcp.entrypoints.http.loopwatch import LoopWatch
from biomcp.entrypoints.http.metrics import CountRequests, Metrics
from biomcp.entrypoints.http.oauth import configured_auth, metadata_routes
from biomcp.entrypoints.http.probes import probe_routes
from biomcp.entrypoints.mcp.server import build_server
from biomcp.entrypoints.services import Services
from biomcp.entrypoints.settings import Settings

__all__ = ["MCP_PATH", "build_http_app"]

MCP_PATH: Final = "/mcp"

_log = logging.getLogger("biomcp.http")


def build_http_app(services: Services, settings: Settings, *, insecure: bool = False) -> Starlette:
    """The Starlette app serving `services` over Streamable HTTP (see the module docstring).

    The app owns `services` from then on: its lifespan closes them at shutdown.

    Raises:
        InsecureBindError: `settings.mcp_http_host` is not loopback, no auth mode is set and
            `insecure` is False.
    """
    refusal = bind_refusal(settings, insecure=insecure)
    if refusal is not None:
        raise InsecureBindError(refusal)
    auth = configured_auth(settings)
    server = build_server(services, require_write_scope=auth is not None)

    # The SDK builds the session manager; Host/Origin checks are ours (`RequestGate`), so
    # its own DNS-rebinding check (which knows nothing of MCP_ALLOWED_ORIGINS) stays off.
    stateless = settings.mcp_http_stateless
    # Stateful SSE answers are resumable (`events`): a priming event with `retry`, then
    # `Last-Event-ID`. Stateless, a stream ends with its request: nothing to resume.
    events = None if stateless else BoundedEventStore()
    server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=settings.mcp_http_json_response,
        stateless_http=stateless,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        event_store=events,
        retry_interval=None if stateless else RETRY_INTERVAL_MS,
    )
    manager = server.session_manager
    endpoint: ASGIApp = StreamableHTTPASGIApp(manager)
    endpoint = NoStreams(endpoint) if events is None else StreamScopes(endpoint, events)
    if auth is not None:
        endpoint = RequireBearer(endpoint, auth.verifier, auth.challenge)

    watch = LoopWatch()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            async with manager.run():
                if stateless:
                    _log.info("Streamable HTTP is stateless: no sessions, no resumable streams")
                services.start_warm_up()  # the model loads while we answer
                watch.start()
                yield
        finally:
            await watch.stop()
            await services.aclose()

    origins = OriginPolicy.from_settings(settings)
    routes = [
        Route(MCP_PATH, endpoint),
        *probe_routes(server, services, settings, mcp_path=MCP_PATH, watch=watch),
        *metadata_routes(settings, mcp_path=MCP_PATH),
    ]
    middleware = [
        Middleware(
            RequestGate, origins=origins, loopback_only=is_loopback_host(settings.mcp_http_host)
        ),
        Middleware(CORSMiddleware, **cors_options(origins)),
    ]
    if settings.biomcp_metrics == "on":
        metrics = Metrics(services)
        server.tool_observer = metrics.record_tool_call
        routes.append(metrics.route())
        # Outermost, so the gate's refusals count too.
        paths = [route.path for route in routes if isinstance(route, Route)]
        middleware.insert(0, Middleware(CountRequests, metrics=metrics, routes=paths))
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.mcp_server = server
    return app

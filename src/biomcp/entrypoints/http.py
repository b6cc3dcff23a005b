"""The Streamable HTTP surface: MCP at `/mcp`, probes at `/health` and `/readyz`, an index at `/`.

`build_http_app` wraps the MCP server of `build_server` in a Starlette app:

- `/mcp` is the SDK's Streamable HTTP transport (stateful sessions, SSE answers); the app's
  lifespan runs its session manager and closes the services at shutdown.
- `GET /health` is liveness (always 200); `GET /readyz` checks each store (200 when all answer,
  503 with the reasons otherwise); `GET /` describes the server.
- Auth: with `MCP_AUTH_SECRET_KEY` set, `/mcp` needs `Authorization: Bearer <JWT>` signed with
  HS256 by that key (`exp` and `nbf` checked when present, with a small leeway). The writing
  tools also need the `write` scope (the `scope` claim, space-separated, or a `scopes` list);
  without it they answer the VALIDATION envelope. The probes and the index need no token.
- Browsers: a request that carries an `Origin` is refused (403) unless that origin is listed in
  `MCP_ALLOWED_ORIGINS`, or, when the list is empty, is a loopback origin. Allowed origins get
  CORS headers. When bound to loopback, the `Host` must be a loopback name too (DNS rebinding).
- Binding a non-loopback address without a key is refused unless `insecure` is set.

Tokens and keys are never logged or echoed.
"""

from __future__ import annotations

import copy
import gc
import ipaddress
import json
import logging
import re
import signal
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

import anyio
import jwt
import uvicorn
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.authentication import AuthCredentials
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from biomcp import __version__
from biomcp.entrypoints.container import Services
from biomcp.entrypoints.mcp_server import BioMcpServer, build_server
from biomcp.entrypoints.schemas import CONTRACT_VERSION
from biomcp.entrypoints.settings import Settings

__all__ = [
    "MCP_PATH",
    "WRITE_SCOPE",
    "BearerAuth",
    "InsecureBindError",
    "bind_refusal",
    "build_http_app",
    "is_loopback_host",
    "run_http",
]

_log = logging.getLogger("biomcp.http")

MCP_PATH: Final = "/mcp"
WRITE_SCOPE: Final = "write"
#: Seconds of clock skew tolerated on `exp` / `nbf`.
JWT_LEEWAY_S: Final = 30
#: A readiness probe answers within this many seconds, whatever the stores do.
READINESS_TIMEOUT_S: Final = 10.0
#: Open streams (an idle client's SSE GET) may delay a shutdown by at most this long.
GRACEFUL_SHUTDOWN_S: Final = 5
_REALM: Final = "bio-mcp"
_LOOPBACK_NAMES: Final = frozenset({"localhost", "ip6-localhost"})


class InsecureBindError(ValueError):
    """A non-loopback bind with no auth key and without `insecure`."""


# --- addresses and origins -----------------------------------------------------------------


def is_loopback_host(host: str) -> bool:
    """True for `localhost` and any loopback IP (127.0.0.0/8, ::1), brackets allowed."""
    name = host.strip().strip("[]").lower()
    if name in _LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def bind_refusal(settings: Settings, *, insecure: bool) -> str | None:
    """Why serving on `settings.mcp_http_host` must not start, or None when it may."""
    host = settings.mcp_http_host
    if is_loopback_host(host) or settings.mcp_auth_secret_key is not None or insecure:
        return None
    return (
        f"refusing to serve on {host}: it is not a loopback address and MCP_AUTH_SECRET_KEY is "
        "not set, so anyone who can reach the port could call every tool, the writing ones "
        "included. Set MCP_AUTH_SECRET_KEY (a random string of 32+ characters; clients then "
        "send `Authorization: Bearer <HS256 JWT>`), bind 127.0.0.1, or pass --insecure if "
        "something in front of the server already restricts access."
    )


def _normal_origin(origin: str) -> str:
    return origin.strip().rstrip("/").lower()


def _origin_is_loopback(origin: str) -> bool:
    try:
        parts = urlsplit(origin)
        _ = parts.port  # raises on a malformed port
    except ValueError:
        return False
    return (
        parts.scheme in {"http", "https"}
        and parts.hostname is not None
        and is_loopback_host(parts.hostname)
    )


@dataclass(frozen=True, slots=True)
class OriginPolicy:
    """Which browser origins may talk to the server (the configured list, else loopback)."""

    allowed: frozenset[str]

    @classmethod
    def from_settings(cls, settings: Settings) -> OriginPolicy:
        return cls(frozenset(_normal_origin(o) for o in settings.allowed_origins))

    @property
    def any_origin(self) -> bool:
        return "*" in self.allowed

    def allows(self, origin: str) -> bool:
        if self.any_origin:
            return True
        if self.allowed:
            return _normal_origin(origin) in self.allowed
        return _origin_is_loopback(origin)


def _host_name(host_header: str) -> str:
    """The name part of a `Host` header (`[::1]:8000` -> `::1`, `localhost:80` -> `localhost`)."""
    host_header = host_header.strip()
    if host_header.startswith("["):
        return host_header[1 : host_header.find("]")] if "]" in host_header else host_header
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


def _error(status: int, error: str, description: str, **headers: str) -> JSONResponse:
    return JSONResponse(
        {"error": error, "error_description": description}, status_code=status, headers=headers
    )


class _RequestGate:
    """Refuses foreign origins (403) and, on a loopback bind, foreign Host names (421)."""

    def __init__(self, app: ASGIApp, *, origins: OriginPolicy, loopback_only: bool) -> None:
        self.app = app
        self.origins = origins
        self.loopback_only = loopback_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if origin is not None and not self.origins.allows(origin):
            _log.warning("refused a request from origin %r (not allowed)", origin[:200])
            response = _error(
                403,
                "forbidden_origin",
                "this origin may not use the server: add it to MCP_ALLOWED_ORIGINS "
                "(comma-separated; by default only loopback origins are allowed)",
            )
            await response(scope, receive, send)
            return
        if self.loopback_only and not is_loopback_host(_host_name(headers.get("host", ""))):
            response = _error(
                421,
                "misdirected_request",
                "the server listens on loopback and answers only requests addressed to a "
                "loopback name (localhost, 127.0.0.1, [::1])",
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


# --- bearer tokens -------------------------------------------------------------------------


def _header(headers: Mapping[str, str], name: str) -> str | None:
    if isinstance(headers, Headers):
        return headers.get(name)
    wanted = name.lower()
    return next((value for key, value in headers.items() if key.lower() == wanted), None)


def _bearer_token(headers: Mapping[str, str]) -> str | None:
    value = _header(headers, "authorization")
    if value is None:
        return None
    scheme, _, token = value.strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def token_scopes(claims: Mapping[str, Any]) -> frozenset[str]:
    """The scopes a token grants: its `scope` string (space-separated) and `scopes` list."""
    found: set[str] = set()
    scope = claims.get("scope")
    if isinstance(scope, str):
        found.update(scope.split())
    scopes = claims.get("scopes")
    if isinstance(scopes, list | tuple):
        found.update(s for s in scopes if isinstance(s, str))
    return frozenset(found)


class BearerAuth:
    """HS256 JWT verification with one shared secret (`MCP_AUTH_SECRET_KEY`)."""

    def __init__(self, secret: str, *, leeway_s: float = JWT_LEEWAY_S) -> None:
        self._secret = secret
        self._leeway = leeway_s

    def __repr__(self) -> str:  # never show the key
        return "BearerAuth(HS256)"

    def verify(self, token: str) -> dict[str, Any]:
        """The token's claims.

        Raises:
            jwt.InvalidTokenError: bad signature, wrong algorithm, expired, not yet valid,
                or malformed.
        """
        claims = jwt.decode(
            token,
            self._secret,
            algorithms=["HS256"],
            leeway=self._leeway,
            # No audience is configured to compare with; exp/nbf/iat are checked when present.
            options={"verify_aud": False},
        )
        if not isinstance(claims, dict):  # pragma: no cover - PyJWT returns a dict
            raise jwt.InvalidTokenError("the token's payload is not a JSON object")
        return claims

    def claims_from(self, headers: Mapping[str, str] | None) -> dict[str, Any] | None:
        """The verified claims of the request's bearer token, or None (absent or invalid)."""
        token = _bearer_token(headers) if headers is not None else None
        if token is None:
            return None
        try:
            return self.verify(token)
        except jwt.InvalidTokenError:
            return None

    def write_guard(self, headers: Mapping[str, str] | None) -> str | None:
        """The MCP server's write guard: None when the token has the write scope."""
        claims = self.claims_from(headers)
        if claims is None:
            return (
                "this tool writes to the corpus and needs a valid bearer token with the "
                f"'{WRITE_SCOPE}' scope; none was presented"
            )
        if WRITE_SCOPE not in token_scopes(claims):
            return (
                f"this tool writes to the corpus and needs the '{WRITE_SCOPE}' scope; the "
                "presented token does not grant it (ask for a token whose `scope` claim "
                f"includes '{WRITE_SCOPE}'). Reading tools remain available."
            )
        return None


def _principal(token: str, claims: Mapping[str, Any]) -> AuthenticatedUser:
    """The SDK's user for `claims`: sessions are bound to (client_id, iss, sub)."""
    subject = claims.get("sub")
    client = claims.get("client_id") or claims.get("azp") or subject or "bearer"
    issuer = claims.get("iss")
    expires = claims.get("exp")
    return AuthenticatedUser(
        AccessToken(
            token=token,
            client_id=str(client),
            scopes=sorted(token_scopes(claims)),
            expires_at=int(expires) if isinstance(expires, int | float) else None,
            subject=str(subject) if subject is not None else None,
            claims={"iss": issuer} if issuer is not None else None,
        )
    )


class _RequireBearer:
    """Wraps the MCP endpoint: 401 (RFC 6750) unless a valid bearer token is presented."""

    def __init__(self, app: ASGIApp, auth: BearerAuth) -> None:
        self.app = app
        self.auth = auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = _bearer_token(Headers(scope=scope))
        if token is None:
            response = _error(
                401,
                "invalid_request",
                "this server needs `Authorization: Bearer <token>` (an HS256 JWT signed with "
                "the server's MCP_AUTH_SECRET_KEY)",
                **{"WWW-Authenticate": f'Bearer realm="{_REALM}"'},
            )
            await response(scope, receive, send)
            return
        try:
            claims = self.auth.verify(token)
        except jwt.InvalidTokenError as exc:
            reason = _token_problem(exc)
            _log.info("refused a bearer token: %s", reason)
            response = _error(
                401,
                "invalid_token",
                f"the bearer token was refused: {reason}",
                **{
                    "WWW-Authenticate": (
                        f'Bearer realm="{_REALM}", error="invalid_token", '
                        f'error_description="{reason}"'
                    )
                },
            )
            await response(scope, receive, send)
            return
        user = _principal(token, claims)
        scope["user"] = user
        scope["auth"] = AuthCredentials(user.scopes)
        await self.app(scope, receive, send)


def _token_problem(exc: jwt.InvalidTokenError) -> str:
    """A short, secret-free reason (never the token or PyJWT's raw text)."""
    if isinstance(exc, jwt.ExpiredSignatureError):
        return "expired"
    if isinstance(exc, jwt.ImmatureSignatureError):
        return "not valid yet"
    if isinstance(exc, jwt.InvalidSignatureError):
        return "bad signature"
    if isinstance(exc, jwt.InvalidAlgorithmError):
        return "algorithm not allowed (HS256 only)"
    if isinstance(exc, jwt.DecodeError):
        return "malformed token"
    return "invalid claims"


# --- probes and index ----------------------------------------------------------------------


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


def _probe_routes(server: BioMcpServer, services: Services, settings: Settings) -> list[Route]:
    secrets = _secrets(settings)
    auth_on = settings.mcp_auth_secret_key is not None

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "name": "bio-mcp", "version": __version__})

    async def readyz(request: Request) -> Response:
        try:
            with anyio.fail_after(READINESS_TIMEOUT_S):
                checks = await services.readiness()
        except TimeoutError:
            checks = {"stores": f"no answer within {READINESS_TIMEOUT_S:g}s"}
        checks = {name: _redact(value, secrets) for name, value in checks.items()}
        ready = bool(checks) and all(value == "ok" for value in checks.values())
        if not ready:
            _log.warning("not ready: %s", json.dumps(checks))
        return JSONResponse(
            {"status": "ready" if ready else "unavailable", "checks": checks},
            status_code=200 if ready else 503,
        )

    async def index(request: Request) -> Response:
        tools = await server.list_tools()
        specs = server.tool_specs
        resources = await server.list_resources()
        templates = await server.list_resource_templates()
        body = {
            "name": "bio-mcp",
            "title": server.title,
            "version": __version__,
            "contract_version": CONTRACT_VERSION,
            "transports": ["stdio", "streamable-http"],
            "endpoints": {
                "mcp": MCP_PATH,
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
            + [
                {"uri_template": t.uri_template, "name": t.name, "title": t.title}
                for t in templates
            ],
            "read_only": settings.biomcp_read_only,
            "auth": {
                "enabled": auth_on,
                "scheme": "bearer" if auth_on else None,
                "algorithm": "HS256" if auth_on else None,
                "write_scope": WRITE_SCOPE if auth_on else None,
            },
        }
        return JSONResponse(body)

    return [
        Route("/health", health, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/", index, methods=["GET"]),
    ]


# --- the app -------------------------------------------------------------------------------


def build_http_app(services: Services, settings: Settings, *, insecure: bool = False) -> Starlette:
    """The Starlette app serving `services` over Streamable HTTP (see the module docstring).

    The app owns `services` from then on: its lifespan closes them at shutdown.

    Raises:
        InsecureBindError: `settings.mcp_http_host` is not loopback, no auth key is set and
            `insecure` is False.
    """
    refusal = bind_refusal(settings, insecure=insecure)
    if refusal is not None:
        raise InsecureBindError(refusal)
    key = settings.mcp_auth_secret_key
    auth = BearerAuth(key.get_secret_value()) if key is not None else None
    server = build_server(services, write_guard=auth.write_guard if auth is not None else None)

    # The SDK builds the session manager; Host/Origin checks are ours (`_RequestGate`), so
    # its own DNS-rebinding check (which knows nothing of MCP_ALLOWED_ORIGINS) stays off.
    server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=settings.mcp_http_json_response,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    manager = server.session_manager
    endpoint: ASGIApp = StreamableHTTPASGIApp(manager)
    if auth is not None:
        endpoint = _RequireBearer(endpoint, auth)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            async with manager.run():
                yield
        finally:
            await services.aclose()

    origins = OriginPolicy.from_settings(settings)
    cors: dict[str, Any] = {
        "allow_methods": ["GET", "POST", "DELETE", "OPTIONS"],
        "allow_headers": [
            "authorization",
            "content-type",
            "accept",
            "last-event-id",
            "mcp-session-id",
            "mcp-protocol-version",
        ],
        "expose_headers": ["mcp-session-id", "mcp-protocol-version", "www-authenticate"],
    }
    if origins.any_origin:
        cors["allow_origins"] = ["*"]
    elif origins.allowed:
        cors["allow_origins"] = sorted(origins.allowed)
    else:
        cors["allow_origin_regex"] = r"https?://(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d+)?"

    app = Starlette(
        routes=[Route(MCP_PATH, endpoint), *_probe_routes(server, services, settings)],
        middleware=[
            Middleware(
                _RequestGate,
                origins=origins,
                loopback_only=is_loopback_host(settings.mcp_http_host),
            ),
            Middleware(CORSMiddleware, **cors),
        ],
        lifespan=lifespan,
    )
    app.state.mcp_server = server
    return app


# --- running it ----------------------------------------------------------------------------


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{MCP_PATH}"


class _Uvicorn(uvicorn.Server):
    """uvicorn's server, reporting the bound URL once it accepts connections.

    With `freeze_heap`, everything alive once the server has started (the imported modules,
    the app, its schemas) moves out of the garbage collector's sight (`gc.freeze`). Otherwise
    every full collection walks those objects again: pauses of about 100 ms on this server,
    which were most of the tail latency of `rag_get` under load (p99 92 -> 4 ms at 300
    calls/s, benchmarks/mcp_http.py's `no_gc_freeze` variant)."""

    def __init__(
        self,
        config: uvicorn.Config,
        on_started: Callable[[str], None],
        *,
        freeze_heap: bool = False,
    ) -> None:
        super().__init__(config)
        self._on_started = on_started
        self._freeze_heap = freeze_heap

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and self._freeze_heap:
            gc.collect()
            gc.freeze()
        if self.started and self.servers:
            bound = self.servers[0].sockets
            port = int(bound[0].getsockname()[1]) if bound else self.config.port
            self._on_started(_url(self.config.host, port))


def _log_config() -> dict[str, Any]:
    """uvicorn's logging, all of it on stderr (stdout carries the served URL only)."""
    config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    for handler in config["handlers"].values():
        handler["stream"] = "ext://sys.stderr"
    return config


def run_http(
    app: Starlette,
    *,
    host: str,
    port: int,
    log_level: str = "info",
    on_started: Callable[[str], None] = lambda url: None,
) -> None:
    """Serve `app` until SIGINT or SIGTERM, then shut down gracefully and return.

    `on_started` gets the MCP URL (with the real port when `port` is 0) once the socket
    accepts connections and the app's lifespan has started.
    """
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        lifespan="on",
        log_config=_log_config(),
        log_level=log_level,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        ws="none",
        server_header=False,
    )
    # In the main thread this process is the server (`biomcp serve-http`): freeze its heap
    # once started. A server run in another thread (tests) leaves its host's heap alone.
    in_main = threading.current_thread() is threading.main_thread()
    server = _Uvicorn(config, on_started, freeze_heap=in_main)
    if not in_main:
        server.run()
        return
    # uvicorn catches SIGINT/SIGTERM while it serves, then re-raises the signal to the handler
    # that was in place before it started. Make that handler uvicorn's own: a signal during
    # start-up then stops the server too, and the re-raise after a graceful shutdown does not
    # kill the process (exit status 0, not death by signal or KeyboardInterrupt).
    handled = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, server.handle_exit) for sig in handled}
    try:
        server.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

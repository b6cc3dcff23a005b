"""Transport security for the HTTP app: which addresses may be bound, which origins and Host
names may talk to the server.

- Binding a non-loopback address without an auth mode (HS256 key or OAuth) is refused unless
  `insecure` is set.
- Browsers: a request that carries an `Origin` is refused (403) unless that origin is listed in
  `MCP_ALLOWED_ORIGINS`, or, when the list is empty, is a loopback origin. Allowed origins get
  CORS headers (see `cors_options`).
- When bound to loopback, the `Host` must be a loopback name too (421 otherwise): DNS
  rebinding.
"""

from __future__ import annotations

import ipaddress
import logging
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from biomcp.entrypoints.settings import Settings

__all__ = [
    "InsecureBindError",
    "OriginPolicy",
    "RequestGate",
    "bind_refusal",
    "cors_options",
    "error_response",
    "is_loopback_host",
]

_log = logging.getLogger("biomcp.http")

_LOOPBACK_NAMES: Final = frozenset({"localhost", "ip6-localhost"})


class InsecureBindError(ValueError):
    """A non-loopback bind with no auth mode and without `insecure`."""


def error_response(status: int, error: str, description: str, **headers: str) -> JSONResponse:
    """An OAuth-style error body (`error`, `error_description`) with `status`."""
    return JSONResponse(
        {"error": error, "error_description": description}, status_code=status, headers=headers
    )


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
    if is_loopback_host(host) or settings.auth_mode != "none" or insecure:
        return None
    return (
        f"refusing to serve on {host}: it is not a loopback address and no auth is configured, "
        "so anyone who can reach the port could call every tool, the writing ones included. "
        "Configure OAuth (MCP_AUTH_ISSUER, MCP_AUTH_AUDIENCE and MCP_AUTH_RESOURCE_URL: "
        "access tokens of your authorization server) or set MCP_AUTH_SECRET_KEY (a random "
        "string of 32+ characters; clients then send `Authorization: Bearer <HS256 JWT>`), "
        "bind 127.0.0.1, or pass --insecure if something in front of the server already "
        "restricts access."
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


class RequestGate:
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
            response = error_response(
                403,
                "forbidden_origin",
                "this origin may not use the server: add it to MCP_ALLOWED_ORIGINS "
                "(comma-separated; by default only loopback origins are allowed)",
            )
            await response(scope, receive, send)
            return
        if self.loopback_only and not is_loopback_host(_host_name(headers.get("host", ""))):
            response = error_response(
                421,
                "misdirected_request",
                "the server listens on loopback and answers only requests addressed to a "
                "loopback name (localhost, 127.0.0.1, [::1])",
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def cors_options(origins: OriginPolicy) -> dict[str, Any]:
    """Starlette `CORSMiddleware` options for the allowed origins."""
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
    return cors

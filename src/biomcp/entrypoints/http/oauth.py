"""OAuth 2.1 resource-server mode: JWTs from an external authorization server.

With `MCP_AUTH_ISSUER`, `MCP_AUTH_AUDIENCE` and `MCP_AUTH_RESOURCE_URL` set (and no
`MCP_AUTH_SECRET_KEY`), `/mcp` accepts the issuer's access tokens:

- signed with RS256 or ES256 by a key of the issuer's JWKS (`JwksCache`): fetched over HTTP
  (async, bounded in size and time) from `MCP_AUTH_JWKS_URL`, or from the `jwks_uri` of the
  issuer's metadata (RFC 8414 `oauth-authorization-server`, then OpenID `openid-configuration`)
  when that is unset; cached for `JWKS_TTL_S`. A token naming an unknown `kid` triggers one
  refresh (key rotation), at most once per `UNKNOWN_KID_REFRESH_S`, so a flood of made-up
  `kid`s cannot hammer the issuer;
- `exp`, `iss` (exactly the issuer) and `aud` (containing the audience) required and checked;
- `biomcp:read` needed for every request, `biomcp:write` for the writing tools (`mcp.policy`).

The protected-resource metadata (RFC 9728) is served at `/.well-known/oauth-protected-resource`
and at its path-suffixed form for `/mcp`; every 401 names it in `WWW-Authenticate`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

import httpx
import jwt
from mcp.server.auth.provider import AccessToken
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from biomcp.entrypoints.http.auth import (
    JWT_LEEWAY_S,
    AuthUnavailableError,
    BearerAuth,
    BearerChallenge,
    UnknownKeyError,
    access_token,
    token_scopes,
)
from biomcp.entrypoints.mcp.policy import READ_SCOPE, SCOPES, WRITE_SCOPE
from biomcp.entrypoints.settings import Settings

__all__ = [
    "ALGORITHMS",
    "JWKS_MAX_BYTES",
    "JWKS_TTL_S",
    "METADATA_PATH",
    "UNKNOWN_KID_REFRESH_S",
    "JwksCache",
    "OAuthVerifier",
    "configured_auth",
    "metadata_candidates",
    "metadata_routes",
    "protected_resource_metadata",
    "resource_metadata_url",
]

_log = logging.getLogger("biomcp.http")

ALGORITHMS: Final = ("RS256", "ES256")
METADATA_PATH: Final = "/.well-known/oauth-protected-resource"
#: How long fetched keys are used before they are fetched again.
JWKS_TTL_S: Final = 300.0
#: The least time between two refreshes caused by unknown `kid`s.
UNKNOWN_KID_REFRESH_S: Final = 60.0
#: After a failed fetch, requests wait this long before the next attempt.
FAILURE_BACKOFF_S: Final = 5.0
#: The most bytes read from a JWKS or metadata document.
JWKS_MAX_BYTES: Final = 256 * 1024
FETCH_TIMEOUT_S: Final = 5.0


class _FetchError(Exception):
    """One JWKS / metadata fetch failed (the message is safe to log)."""


def _allowed_url(url: str) -> bool:
    parts = urlsplit(url)
    host = parts.hostname or ""
    local = host in {"localhost", "::1"} or host.startswith("127.")
    return bool(host) and (parts.scheme == "https" or (parts.scheme == "http" and local))


async def _get_json(url: str, *, timeout_s: float, max_bytes: int) -> dict[str, Any]:
    """The JSON object at `url`, read up to `max_bytes`, within `timeout_s`.

    Raises:
        _FetchError: any failure (network, status, size, not a JSON object).
    """
    try:
        async with (
            asyncio.timeout(timeout_s),
            httpx.AsyncClient(timeout=timeout_s, follow_redirects=False) as client,
            client.stream("GET", url, headers={"accept": "application/json"}) as response,
        ):
            if response.status_code != 200:
                raise _FetchError(f"{url} answered HTTP {response.status_code}")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > max_bytes:
                    raise _FetchError(f"{url} sent more than {max_bytes} bytes")
    except (httpx.HTTPError, TimeoutError) as exc:
        raise _FetchError(f"{url} could not be fetched ({type(exc).__name__})") from exc
    try:
        document = json.loads(body)
    except ValueError as exc:
        raise _FetchError(f"{url} did not answer JSON") from exc
    if not isinstance(document, dict):
        raise _FetchError(f"{url} did not answer a JSON object")
    return document


def metadata_candidates(issuer: str) -> list[str]:
    """Where an issuer's metadata may live, in the order the MCP authorization spec tries:
    RFC 8414 (path inserted), OpenID Connect with the path inserted, then appended."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    origin = f"{parts.scheme}://{parts.netloc}"
    found = [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]
    return list(dict.fromkeys(found))


def _usable_keys(document: dict[str, Any]) -> dict[str | None, jwt.PyJWK]:
    """The JWKS's signature keys for our algorithms, by `kid` (unusable members skipped)."""
    members = document.get("keys")
    if not isinstance(members, list):
        raise _FetchError("the JWKS has no `keys` list")
    keys: dict[str | None, jwt.PyJWK] = {}
    for member in members:
        if not isinstance(member, dict) or member.get("use", "sig") != "sig":
            continue
        try:
            key = jwt.PyJWK(member)
        except jwt.PyJWTError:
            continue
        if key.algorithm_name in ALGORITHMS:
            keys.setdefault(key.key_id if isinstance(key.key_id, str) else None, key)
    return keys


class JwksCache:
    """The issuer's signing keys, fetched when first needed, after `ttl_s`, and (rate-limited)
    when a token names an unknown key. Concurrent requests share one fetch."""

    def __init__(
        self,
        *,
        issuer: str,
        jwks_url: str | None = None,
        ttl_s: float = JWKS_TTL_S,
        unknown_kid_refresh_s: float = UNKNOWN_KID_REFRESH_S,
        failure_backoff_s: float = FAILURE_BACKOFF_S,
        timeout_s: float = FETCH_TIMEOUT_S,
        max_bytes: int = JWKS_MAX_BYTES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.issuer = issuer
        self.jwks_url = jwks_url
        self._ttl = ttl_s
        self._kid_refresh = unknown_kid_refresh_s
        self._backoff = failure_backoff_s
        self._timeout = timeout_s
        self._max_bytes = max_bytes
        self._clock = clock
        self._keys: dict[str | None, jwt.PyJWK] | None = None
        self._fetched_at = 0.0
        self._failed_at: float | None = None
        self._kid_refreshed_at: float | None = None
        self._generation = 0
        self._lock = asyncio.Lock()

    async def signing_key(self, kid: str | None) -> jwt.PyJWK:
        """The key for `kid` (None: the only key).

        Raises:
            UnknownKeyError: no such key, even after the refresh allowed now.
            AuthUnavailableError: no keys could be fetched at all.
        """
        now = self._clock()
        refreshed = False
        stale = self._keys is None or now - self._fetched_at >= self._ttl
        if stale and (self._failed_at is None or now - self._failed_at >= self._backoff):
            await self._refresh()
            refreshed = True
        key = self._find(kid)
        if key is None and not refreshed:
            if self._lock.locked():  # a fetch is under way: wait for its keys, fetch nothing
                await self._refresh()
            elif self._may_refresh_for_kid(now):
                self._kid_refreshed_at = now
                _log.info("a token names an unknown signing key; refreshing the issuer's JWKS")
                await self._refresh()
            key = self._find(kid)
        if key is not None:
            return key
        if self._keys is None:
            raise AuthUnavailableError("the issuer's signing keys could not be fetched")
        raise UnknownKeyError("unknown signing key")

    def _may_refresh_for_kid(self, now: float) -> bool:
        last = self._kid_refreshed_at
        return last is None or now - last >= self._kid_refresh

    def _find(self, kid: str | None) -> jwt.PyJWK | None:
        keys = self._keys or {}
        if kid is None:
            return next(iter(keys.values())) if len(keys) == 1 else None
        return keys.get(kid)

    async def _refresh(self) -> None:
        """Fetch the JWKS once, unless another request did while this one waited."""
        generation = self._generation
        async with self._lock:
            if self._generation != generation:
                return
            try:
                keys = _usable_keys(await self._fetch_jwks())
            except _FetchError as exc:
                self._failed_at = self._clock()
                _log.warning("the issuer's JWKS could not be used: %s", exc)
                return
            finally:
                self._generation += 1
            self._keys, self._fetched_at, self._failed_at = keys, self._clock(), None
            _log.info("fetched the issuer's JWKS: %d usable signing keys", len(keys))

    async def _fetch_jwks(self) -> dict[str, Any]:
        url = self.jwks_url or await self._discover_jwks_url()
        return await _get_json(url, timeout_s=self._timeout, max_bytes=self._max_bytes)

    async def _discover_jwks_url(self) -> str:
        """The `jwks_uri` of the issuer's metadata, whose `issuer` must be ours (RFC 8414 §3.3)."""
        problems: list[str] = []
        for url in metadata_candidates(self.issuer):
            try:
                document = await _get_json(url, timeout_s=self._timeout, max_bytes=self._max_bytes)
            except _FetchError as exc:
                problems.append(str(exc))
                continue
            jwks_uri = document.get("jwks_uri")
            if document.get("issuer") != self.issuer:
                problems.append(f"{url} names another issuer")
            elif not isinstance(jwks_uri, str) or not _allowed_url(jwks_uri):
                problems.append(f"{url} has no usable https jwks_uri")
            else:
                self.jwks_url = jwks_uri
                _log.info("the issuer's JWKS is at %s", jwks_uri)
                return jwks_uri
        raise _FetchError("no metadata with a jwks_uri: " + "; ".join(problems))


class OAuthVerifier:
    """Access tokens of one external authorization server (see the module docstring)."""

    def __init__(
        self, *, issuer: str, audience: str, keys: JwksCache, leeway_s: float = JWT_LEEWAY_S
    ) -> None:
        self.issuer = issuer
        self.audience = audience
        self.keys = keys
        self._leeway = leeway_s

    def __repr__(self) -> str:
        return f"OAuthVerifier(issuer={self.issuer!r})"

    async def authenticate(self, token: str) -> AccessToken:
        header = jwt.get_unverified_header(token)
        if header.get("alg") not in ALGORITHMS:
            raise jwt.InvalidAlgorithmError("algorithm not allowed")
        kid = header.get("kid")
        key = await self.keys.signing_key(kid if isinstance(kid, str) else None)
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=list(ALGORITHMS),
                audience=self.audience,
                issuer=self.issuer,
                leeway=self._leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.InvalidTokenError:
            raise
        except jwt.PyJWTError as exc:  # e.g. a key unfit for its algorithm
            raise jwt.InvalidSignatureError("the key cannot verify this token") from exc
        return access_token(token, claims, scopes=token_scopes(claims))

    async def verify_token(self, token: str) -> AccessToken | None:
        """The SDK's `TokenVerifier`: the token as an `AccessToken`, or None when refused."""
        try:
            return await self.authenticate(token)
        except (jwt.InvalidTokenError, AuthUnavailableError):
            return None


def resource_metadata_url(resource_url: str) -> str:
    """RFC 9728 §3.1: the well-known path inserted between host and the resource's path."""
    parts = urlsplit(resource_url)
    return f"{parts.scheme}://{parts.netloc}{METADATA_PATH}{parts.path.rstrip('/')}"


def protected_resource_metadata(settings: Settings) -> dict[str, Any]:
    """The RFC 9728 document for OAuth mode (read-only servers offer only the read scope)."""
    scopes = [READ_SCOPE] if settings.biomcp_read_only else list(SCOPES)
    return {
        "resource": settings.mcp_auth_resource_url,
        "authorization_servers": [settings.mcp_auth_issuer],
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_signing_alg_values_supported": list(ALGORITHMS),
        "resource_name": "bio-mcp: PubMed evidence",
    }


def metadata_routes(settings: Settings, *, mcp_path: str) -> list[Route]:
    """`/.well-known/oauth-protected-resource` and `.../<mcp_path>` in OAuth mode, else none."""
    if settings.auth_mode != "oauth":
        return []
    document = protected_resource_metadata(settings)

    async def metadata(request: Request) -> JSONResponse:
        return JSONResponse(document, headers={"Cache-Control": "public, max-age=300"})

    return [
        Route(METADATA_PATH, metadata, methods=["GET"]),
        Route(f"{METADATA_PATH}{mcp_path}", metadata, methods=["GET"]),
    ]


@dataclass(frozen=True, slots=True)
class ConfiguredAuth:
    """The auth mode the settings select: its verifier and its `WWW-Authenticate` challenge."""

    verifier: BearerAuth | OAuthVerifier
    challenge: BearerChallenge


def configured_auth(settings: Settings) -> ConfiguredAuth | None:
    """HS256 with MCP_AUTH_SECRET_KEY, OAuth with MCP_AUTH_ISSUER..., else None (no auth).

    `Settings` validation guarantees OAuth mode has its issuer, audience and resource URL."""
    secret = settings.mcp_auth_secret_key
    if secret is not None:
        hs256 = BearerAuth(
            secret.get_secret_value(),
            issuer=settings.mcp_auth_issuer,
            audience=settings.mcp_auth_audience,
        )
        hint = "an HS256 JWT with `exp`, signed with the server's MCP_AUTH_SECRET_KEY"
        return ConfiguredAuth(hs256, BearerChallenge(hint=hint))
    issuer, audience = settings.mcp_auth_issuer, settings.mcp_auth_audience
    resource = settings.mcp_auth_resource_url
    if issuer is None or audience is None or resource is None:
        return None
    keys = JwksCache(issuer=issuer, jwks_url=settings.mcp_auth_jwks_url)
    challenge = BearerChallenge(
        hint=f"an access token from {issuer} with the '{READ_SCOPE}' scope ('{WRITE_SCOPE}' "
        "to write); see the resource metadata",
        resource_metadata=resource_metadata_url(resource),
        required_scope=READ_SCOPE,
        algorithms=ALGORITHMS,
    )
    return ConfiguredAuth(OAuthVerifier(issuer=issuer, audience=audience, keys=keys), challenge)

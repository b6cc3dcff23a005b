"""Bearer tokens: who is calling, verified once per request.

Two modes (`Settings.auth_mode`), both with `Authorization: Bearer <JWT>` on `/mcp`:

- HS256 (`MCP_AUTH_SECRET_KEY`): tokens signed with the shared secret (`BearerAuth`). `exp` is
  required; `iss` and `aud` are checked when MCP_AUTH_ISSUER / MCP_AUTH_AUDIENCE are set. Any
  valid token may read; the older `write` scope counts as `biomcp:write`.
- OAuth 2.1 resource server (`MCP_AUTH_ISSUER` ...): tokens from an external authorization
  server, checked against its JWKS (`oauth.OAuthVerifier`).

`RequireBearer` answers 401 (RFC 6750, with a secret-free reason and, in OAuth mode, the
`resource_metadata` URL of RFC 9728) for a missing or refused token, 403 `insufficient_scope`
for a token without the scope the endpoint needs, 503 when the issuer's keys cannot be had;
else it stores the verified principal where the SDK keeps it (`scope["user"]`, then
`get_access_token()` through `AuthContextMiddleware`). Tools read that principal
(`mcp.policy`); nothing decodes the header a second time. Tokens and keys are never logged or
echoed.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

import jwt
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.authentication import AuthCredentials
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from biomcp.entrypoints.http.gate import error_response
from biomcp.entrypoints.mcp.policy import LEGACY_WRITE_SCOPE, WRITE_SCOPE

__all__ = [
    "JWT_LEEWAY_S",
    "AuthUnavailableError",
    "Authenticator",
    "BearerAuth",
    "BearerChallenge",
    "RequireBearer",
    "UnknownKeyError",
    "access_token",
    "token_problem",
    "token_scopes",
]

_log = logging.getLogger("biomcp.http")

#: Seconds of clock skew tolerated on `exp` / `nbf`.
JWT_LEEWAY_S: Final = 30
_REALM: Final = "bio-mcp"


class AuthUnavailableError(Exception):
    """Tokens cannot be checked right now (the issuer's keys are out of reach): a 503, not
    the caller's fault."""


class UnknownKeyError(jwt.InvalidTokenError):
    """The token names a key (`kid`) the issuer's JWKS does not hold, even after a refresh."""


class Authenticator(Protocol):
    """Turns a bearer token into the SDK's verified principal."""

    async def authenticate(self, token: str) -> AccessToken:
        """The verified principal.

        Raises:
            jwt.InvalidTokenError: the token is refused (`token_problem` says why).
            AuthUnavailableError: the token cannot be checked now.
        """
        ...


def _bearer_token(headers: Headers) -> str | None:
    value = headers.get("authorization")
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


def _required_claims(*, issuer: str | None, audience: str | None) -> list[str]:
    return ["exp", *(["iss"] if issuer else []), *(["aud"] if audience else [])]


class BearerAuth:
    """HS256 JWT verification with one shared secret (`MCP_AUTH_SECRET_KEY`): `exp` required,
    `iss` / `aud` checked when configured."""

    def __init__(
        self,
        secret: str,
        *,
        issuer: str | None = None,
        audience: str | None = None,
        leeway_s: float = JWT_LEEWAY_S,
    ) -> None:
        self._secret = secret
        self._issuer = issuer
        self._audience = audience
        self._leeway = leeway_s

    def __repr__(self) -> str:  # never show the key
        return "BearerAuth(HS256)"

    def verify(self, token: str) -> dict[str, Any]:
        """The token's claims.

        Raises:
            jwt.InvalidTokenError: bad signature, wrong algorithm, no `exp`, expired, not yet
                valid, wrong issuer or audience (when configured), or malformed.
        """
        claims = jwt.decode(
            token,
            self._secret,
            algorithms=["HS256"],
            leeway=self._leeway,
            issuer=self._issuer,
            audience=self._audience,
            options={
                "require": _required_claims(issuer=self._issuer, audience=self._audience),
                # Without a configured audience there is nothing to compare `aud` with.
                "verify_aud": self._audience is not None,
            },
        )
        if not isinstance(claims, dict):  # pragma: no cover - PyJWT returns a dict
            raise jwt.InvalidTokenError("the token's payload is not a JSON object")
        return claims

    async def authenticate(self, token: str) -> AccessToken:
        claims = self.verify(token)
        scopes = token_scopes(claims)
        if LEGACY_WRITE_SCOPE in scopes:  # what HS256 tokens carried before `biomcp:write`
            scopes |= {WRITE_SCOPE}
        return access_token(token, claims, scopes=scopes)

    async def verify_token(self, token: str) -> AccessToken | None:
        """The SDK's `TokenVerifier`: the token as an `AccessToken`, or None when refused."""
        try:
            return await self.authenticate(token)
        except jwt.InvalidTokenError:
            return None


def access_token(
    token: str, claims: Mapping[str, Any], *, scopes: frozenset[str] | None = None
) -> AccessToken:
    """The SDK's access token for verified `claims`: sessions are bound to (client_id, iss,
    sub), tools read its scopes (`scopes`, else the token's own)."""
    subject = claims.get("sub")
    client = claims.get("client_id") or claims.get("azp") or subject or "bearer"
    issuer = claims.get("iss")
    expires = claims.get("exp")
    return AccessToken(
        token=token,
        client_id=str(client),
        scopes=sorted(token_scopes(claims) if scopes is None else scopes),
        expires_at=int(expires) if isinstance(expires, int | float) else None,
        subject=str(subject) if subject is not None else None,
        claims={"iss": issuer} if issuer is not None else None,
    )


@dataclass(frozen=True, slots=True)
class BearerChallenge:
    """What the `WWW-Authenticate` header of a refusal says (RFC 6750 §3, RFC 9728 §5.1)."""

    #: Said when no token came: which token the server wants.
    hint: str
    #: The protected-resource metadata URL (OAuth mode).
    resource_metadata: str | None = None
    #: The scope every request needs (OAuth mode: `biomcp:read`); None: any valid token.
    required_scope: str | None = None
    #: The algorithms accepted, for the refusal text.
    algorithms: tuple[str, ...] = ("HS256",)

    def header(self, error: str | None = None, description: str | None = None) -> str:
        params = [f'realm="{_REALM}"']
        if error is not None:
            params.append(f'error="{error}"')
        if description is not None:  # our fixed texts; quotes and backslashes never occur
            params.append(f'error_description="{_quotable(description)}"')
        if self.required_scope is not None:
            params.append(f'scope="{self.required_scope}"')
        if self.resource_metadata is not None:
            params.append(f'resource_metadata="{self.resource_metadata}"')
        return "Bearer " + ", ".join(params)

    def refuse(self, status: int, error: str, description: str) -> JSONResponse:
        """The refusal: an OAuth-style JSON body and the challenge header."""
        bare = status == 401 and error == "invalid_request"  # no token: no error code (§3.1)
        header = self.header() if bare else self.header(error, description)
        return error_response(status, error, description, **{"WWW-Authenticate": header})


def _quotable(text: str) -> str:
    return "".join(c for c in text if c not in '"\\' and 0x20 <= ord(c) < 0x7F)


class RequireBearer:
    """Wraps the MCP endpoint: 401 (RFC 6750) unless a valid bearer token is presented, 403
    without the required scope.

    A token is verified once, through `Authenticator.authenticate`."""

    def __init__(self, app: ASGIApp, auth: Authenticator, challenge: BearerChallenge) -> None:
        # The SDK's middleware puts the principal where `get_access_token()` finds it.
        self.app = AuthContextMiddleware(app)
        self.auth = auth
        self.challenge = challenge

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        verified = await self._principal(scope, receive, send)
        if verified is None:
            return
        user = AuthenticatedUser(verified)
        scope["user"] = user
        scope["auth"] = AuthCredentials(user.scopes)
        await self.app(scope, receive, send)

    async def _principal(self, scope: Scope, receive: Receive, send: Send) -> AccessToken | None:
        """The verified principal, or None once a refusal has been sent."""
        challenge = self.challenge
        token = _bearer_token(Headers(scope=scope))
        if token is None:
            response = challenge.refuse(
                401,
                "invalid_request",
                f"this server needs `Authorization: Bearer <token>`: {challenge.hint}",
            )
            await response(scope, receive, send)
            return None
        try:
            verified = await self.auth.authenticate(token)
        except jwt.InvalidTokenError as exc:
            reason = token_problem(exc, challenge.algorithms)
            _log.info("refused a bearer token: %s", reason)
            response = challenge.refuse(
                401, "invalid_token", f"the bearer token was refused: {reason}"
            )
            await response(scope, receive, send)
            return None
        except AuthUnavailableError:
            response = challenge.refuse(
                503,
                "temporarily_unavailable",
                "the authorization server's signing keys could not be fetched; try again soon",
            )
            response.headers["Retry-After"] = "5"
            await response(scope, receive, send)
            return None
        needed = challenge.required_scope
        if needed is not None and needed not in verified.scopes:
            _log.info("refused a bearer token: no %s scope", needed)
            response = challenge.refuse(
                403,
                "insufficient_scope",
                f"the bearer token lacks the '{needed}' scope, which every request needs "
                "(writing tools also need 'biomcp:write')",
            )
            await response(scope, receive, send)
            return None
        return verified


def token_problem(exc: jwt.InvalidTokenError, algorithms: tuple[str, ...] = ("HS256",)) -> str:
    """A short, secret-free reason (never the token or PyJWT's raw text)."""
    if isinstance(exc, jwt.ExpiredSignatureError):
        return "expired"
    if isinstance(exc, jwt.ImmatureSignatureError):
        return "not valid yet"
    if isinstance(exc, jwt.MissingRequiredClaimError) and exc.claim in {"exp", "iss", "aud"}:
        return f"no '{exc.claim}' claim (it is required)"
    if isinstance(exc, jwt.InvalidAudienceError):
        return "wrong audience (aud)"
    if isinstance(exc, jwt.InvalidIssuerError):
        return "wrong issuer (iss)"
    if isinstance(exc, UnknownKeyError):
        return "unknown signing key (kid)"
    if isinstance(exc, jwt.InvalidSignatureError):
        return "bad signature"
    if isinstance(exc, jwt.InvalidAlgorithmError):
        return f"algorithm not allowed ({', '.join(algorithms)} only)"
    if isinstance(exc, jwt.DecodeError):
        return "malformed token"
    return "invalid claims"

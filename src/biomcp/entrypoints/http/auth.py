"""Bearer tokens: who is calling, verified once per request.

With `MCP_AUTH_SECRET_KEY` set, `/mcp` needs `Authorization: Bearer <JWT>` signed with HS256 by
that key (`exp` and `nbf` checked when present, with a small leeway). `BearerAuth` is the SDK's
`TokenVerifier` for such tokens; `RequireBearer` answers 401 (RFC 6750, with a secret-free
reason) for a missing or refused token, else stores the verified principal where the SDK keeps
it (`scope["user"]`, then `get_access_token()` through `AuthContextMiddleware`). Tools read that
principal (`mcp.policy`); nothing decodes the header a second time. Tokens and keys are never
logged or echoed.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final

import jwt
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.authentication import AuthCredentials
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from biomcp.entrypoints.http.gate import error_response

__all__ = ["JWT_LEEWAY_S", "BearerAuth", "RequireBearer", "access_token", "token_scopes"]

_log = logging.getLogger("biomcp.http")

#: Seconds of clock skew tolerated on `exp` / `nbf`.
JWT_LEEWAY_S: Final = 30
_REALM: Final = "bio-mcp"


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

    async def verify_token(self, token: str) -> AccessToken | None:
        """The SDK's `TokenVerifier`: the token as an `AccessToken`, or None when refused."""
        try:
            return access_token(token, self.verify(token))
        except jwt.InvalidTokenError:
            return None

    def refusal_reason(self, token: str) -> str:
        """Why `verify_token` refused `token`: short and secret-free (for the 401's text)."""
        try:
            self.verify(token)
        except jwt.InvalidTokenError as exc:
            return _token_problem(exc)
        return "invalid claims"  # pragma: no cover - only asked about a refused token


def access_token(token: str, claims: Mapping[str, Any]) -> AccessToken:
    """The SDK's access token for verified `claims`: sessions are bound to (client_id, iss,
    sub), tools read its scopes."""
    subject = claims.get("sub")
    client = claims.get("client_id") or claims.get("azp") or subject or "bearer"
    issuer = claims.get("iss")
    expires = claims.get("exp")
    return AccessToken(
        token=token,
        client_id=str(client),
        scopes=sorted(token_scopes(claims)),
        expires_at=int(expires) if isinstance(expires, int | float) else None,
        subject=str(subject) if subject is not None else None,
        claims={"iss": issuer} if issuer is not None else None,
    )


class RequireBearer:
    """Wraps the MCP endpoint: 401 (RFC 6750) unless a valid bearer token is presented.

    A token is verified once, through the SDK's `TokenVerifier` interface; a refused one is
    looked at again only to say why."""

    def __init__(self, app: ASGIApp, auth: BearerAuth) -> None:
        # The SDK's middleware puts the principal where `get_access_token()` finds it.
        self.app = AuthContextMiddleware(app)
        self.auth = auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = _bearer_token(Headers(scope=scope))
        if token is None:
            response = error_response(
                401,
                "invalid_request",
                "this server needs `Authorization: Bearer <token>` (an HS256 JWT signed with "
                "the server's MCP_AUTH_SECRET_KEY)",
                **{"WWW-Authenticate": f'Bearer realm="{_REALM}"'},
            )
            await response(scope, receive, send)
            return
        verified = await self.auth.verify_token(token)
        if verified is None:
            reason = self.auth.refusal_reason(token)
            _log.info("refused a bearer token: %s", reason)
            response = error_response(
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
        user = AuthenticatedUser(verified)
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

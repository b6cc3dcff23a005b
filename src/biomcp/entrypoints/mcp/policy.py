"""Who may call what, when the transport authenticates: the scopes mapped to tools.

- `biomcp:read` (`READ_SCOPE`): the reading tools, resources and every other MCP request. In
  OAuth mode the HTTP app refuses a token without it before any MCP message is read (403
  `insufficient_scope`); tokens signed with the shared secret (HS256 mode) need no scope to
  read, as before.
- `biomcp:write` (`WRITE_SCOPE`): the writing tools (sync, checkpoint set, store_chunks),
  checked here, per call, after the read check: a token without it gets spec 01's VALIDATION
  envelope naming the scope. HS256 tokens may carry the older `write` (`LEGACY_WRITE_SCOPE`);
  the HS256 verifier maps it to `biomcp:write`.

The scopes are read from the principal the transport already verified (the SDK's
`get_access_token()`, set by the HTTP app's bearer middleware), never from a raw header.
"""

from __future__ import annotations

from typing import Final

from mcp.server.auth.middleware.auth_context import get_access_token

__all__ = ["LEGACY_WRITE_SCOPE", "READ_SCOPE", "SCOPES", "WRITE_SCOPE", "write_scope_denial"]

READ_SCOPE: Final = "biomcp:read"
WRITE_SCOPE: Final = "biomcp:write"
#: What HS256 tokens carried before the OAuth mode; still accepted from them.
LEGACY_WRITE_SCOPE: Final = "write"
SCOPES: Final = (READ_SCOPE, WRITE_SCOPE)


def write_scope_denial() -> str | None:
    """None when the caller's verified token grants the write scope, else why not."""
    token = get_access_token()
    if token is None:
        return (
            "this tool writes and needs a valid bearer token with the "
            f"'{WRITE_SCOPE}' scope; none was presented"
        )
    if WRITE_SCOPE not in token.scopes:
        return (
            f"this tool writes and needs the '{WRITE_SCOPE}' scope; the presented token does "
            f"not grant it (ask for a token whose `scope` claim includes '{WRITE_SCOPE}'; "
            f"tokens signed with MCP_AUTH_SECRET_KEY may carry '{LEGACY_WRITE_SCOPE}'). "
            "Reading tools remain available."
        )
    return None

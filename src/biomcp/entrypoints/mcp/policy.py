"""Who may call what: the writing tools need the `write` scope when the transport authenticates.

The scope is read from the principal the transport already verified (the SDK's
`get_access_token()`, set by the HTTP app's bearer middleware), never from a raw header.
"""

from __future__ import annotations

from typing import Final

from mcp.server.auth.middleware.auth_context import get_access_token

__all__ = ["WRITE_SCOPE", "write_scope_denial"]

WRITE_SCOPE: Final = "write"


def write_scope_denial() -> str | None:
    """None when the caller's verified token grants the write scope, else why not."""
    token = get_access_token()
    if token is None:
        return (
            "this tool writes to the corpus and needs a valid bearer token with the "
            f"'{WRITE_SCOPE}' scope; none was presented"
        )
    if WRITE_SCOPE not in token.scopes:
        return (
            f"this tool writes to the corpus and needs the '{WRITE_SCOPE}' scope; the "
            "presented token does not grant it (ask for a token whose `scope` claim "
            f"includes '{WRITE_SCOPE}'). Reading tools remain available."
        )
    return None

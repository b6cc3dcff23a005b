"""`biomcp serve-http` as an OAuth 2.1 resource server, driven over real HTTP on 127.0.0.1.

A fake authorization server (`tests.support.oauth_issuer`, real HTTP on loopback) publishes
RSA and EC keys the test makes; `biomcp serve-http` runs in a child process with
MCP_AUTH_ISSUER / MCP_AUTH_AUDIENCE / MCP_AUTH_RESOURCE_URL, finds the JWKS through the
issuer's metadata (or MCP_AUTH_JWKS_URL), and real MCP clients call it with the issuer's
tokens. Covered: the RFC 9728 metadata, RS256 and ES256 tokens, the refusals (no `exp`, wrong
`aud` / `iss`, expired, unknown `kid`, other algorithms...) with `WWW-Authenticate` pointing at
the metadata, the scopes mapped to tools, key rotation and the rate-limited refresh.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from mcp import Client

from biomcp.testing.eutils import FakeEutilsServer
from tests.support.oauth_issuer import AUDIENCE, FakeIssuer
from tests.support.servers import (
    HttpServer,
    http_client,
    mcp_http,
    recent_fake,
    serve_http,
    server_env,
)

pytestmark = pytest.mark.e2e

RESOURCE = AUDIENCE  # the public URL of /mcp, as the metadata names it
METADATA_URL = "https://biomcp.test/.well-known/oauth-protected-resource/mcp"
TERM = "humans[mh] OR animals[mh]"
PROJECT = "oauth-p"
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "oauth-test", "version": "0"},
    },
}


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


def post_initialize(server: HttpServer, **headers: str) -> httpx.Response:
    with http_client(server) as http:
        return http.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **headers})


async def call(client: Client, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(name, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    return bool(result.is_error), json.loads(text)


def oauth_env(
    root: Path, fake: FakeEutilsServer, issuer: FakeIssuer, **extra: str
) -> dict[str, str]:
    return server_env(
        root / "data",
        fake.base_url,
        MCP_AUTH_ISSUER=issuer.issuer,
        MCP_AUTH_AUDIENCE=AUDIENCE,
        MCP_AUTH_RESOURCE_URL=RESOURCE,
        **extra,
    )


# --- fixtures --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    with recent_fake(12, seed=5) as server:
        yield server


@pytest.fixture(scope="module")
def issuer() -> Iterator[FakeIssuer]:
    with FakeIssuer() as fake_issuer:
        fake_issuer.make_key("rsa-1", "RS256")
        fake_issuer.make_key("ec-1", "ES256")
        fake_issuer.make_key("rogue", "RS256")  # never published
        fake_issuer.publish("rsa-1", "ec-1")
        yield fake_issuer


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeEutilsServer, issuer: FakeIssuer
) -> Iterator[HttpServer]:
    """OAuth mode; the JWKS URL is discovered from the issuer's metadata."""
    root = tmp_path_factory.mktemp("oauth")
    (root / "data").mkdir()
    (root / "data" / "projects.toml").write_text(f'[projects."{PROJECT}"]\n')
    with serve_http(["--port", "0"], env=oauth_env(root, fake, issuer), cwd=root) as running:
        yield running


# --- metadata ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]
)
def test_the_protected_resource_metadata_names_the_issuer_and_the_scopes(
    server: HttpServer, issuer: FakeIssuer, path: str
) -> None:
    with http_client(server) as http:
        response = http.get(path)  # no token needed
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    document = response.json()
    assert document["resource"] == RESOURCE
    assert document["authorization_servers"] == [issuer.issuer]
    assert document["scopes_supported"] == ["biomcp:read", "biomcp:write"]
    assert document["bearer_methods_supported"] == ["header"]


def test_the_index_describes_oauth_mode(server: HttpServer) -> None:
    with http_client(server) as http:
        auth = http.get("/").json()["auth"]  # no token needed
    assert auth["enabled"] is True
    assert (auth["mode"], auth["algorithm"]) == ("oauth", "RS256/ES256")
    assert (auth["read_scope"], auth["write_scope"]) == ("biomcp:read", "biomcp:write")
    assert "auth on (OAuth)" in server.stderr_text()  # and the start-up banner says so
    assert "without authentication" not in server.stderr_text()


def test_no_token_gets_401_pointing_at_the_metadata(server: HttpServer) -> None:
    response = post_initialize(server)
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{METADATA_URL}"' in challenge
    assert 'scope="biomcp:read"' in challenge
    assert "error=" not in challenge  # RFC 6750 §3.1: no error code without credentials
    assert response.json()["error"] == "invalid_request"


# --- valid tokens ------------------------------------------------------------------------------


@pytest.mark.parametrize("kid", ["rsa-1", "ec-1"])
def test_rs256_and_es256_tokens_open_a_session(
    server: HttpServer, issuer: FakeIssuer, kid: str
) -> None:
    response = post_initialize(server, **bearer(issuer.token(kid)))
    assert response.status_code == 200, response.text
    assert response.headers.get("mcp-session-id")

    async def scenario() -> None:
        async with mcp_http(server.url, bearer(issuer.token(kid))) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"rag_search", "store_chunks", "pubmed_sync_delta"} <= names
            error, listed = await call(client, "list_projects", {})
            assert not error, listed

    asyncio.run(scenario())


# --- refusals ----------------------------------------------------------------------------------

HOUR = 3600
REFUSALS: dict[str, tuple[Any, str]] = {
    # name: (token maker, what the error_description says)
    "no exp": (lambda i: i.token("rsa-1", drop=("exp",)), "no 'exp' claim"),
    "no aud": (lambda i: i.token("ec-1", drop=("aud",)), "no 'aud' claim"),
    "no iss": (lambda i: i.token("rsa-1", drop=("iss",)), "no 'iss' claim"),
    "wrong aud": (lambda i: i.token("rsa-1", aud="https://other.example/mcp"), "wrong audience"),
    "wrong iss": (lambda i: i.token("ec-1", iss="https://evil.example"), "wrong issuer"),
    "expired": (lambda i: i.token("rsa-1", exp=int(time.time()) - HOUR), "expired"),
    "not yet valid": (lambda i: i.token("ec-1", nbf=int(time.time()) + HOUR), "not valid yet"),
    "unknown kid": (lambda i: i.token("rogue"), "unknown signing key"),
    "forged with a known kid": (
        lambda i: _with_kid(i.token("rogue"), "rsa-1"),
        "bad signature",
    ),
    "HS256": (
        lambda i: jwt.encode(
            {"iss": i.issuer, "aud": AUDIENCE, "exp": int(time.time()) + 600},
            "a-shared-secret-that-is-long-enough-000",
            algorithm="HS256",
            headers={"kid": "rsa-1"},
        ),
        "algorithm not allowed",
    ),
    "unsigned": (
        # PyJWT annotates `key` without None, the only key its algorithm "none" takes.
        lambda i: jwt.encode({"iss": i.issuer, "aud": AUDIENCE}, None, algorithm="none"),  # type: ignore[arg-type]
        "algorithm not allowed",
    ),
    "garbage": (lambda i: "not.a.jwt", "malformed token"),
}


def _with_kid(token: str, kid: str) -> str:
    """`token` re-signed by nobody: its header now names `kid` (the signature stays)."""
    header, payload, signature = token.split(".")
    claims = jwt.get_unverified_header(token)
    forged = jwt.utils.base64url_encode(json.dumps({**claims, "kid": kid}).encode()).decode()
    assert forged != header
    return f"{forged}.{payload}.{signature}"


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_bad_tokens_get_401_with_the_reason_and_the_metadata(
    server: HttpServer, issuer: FakeIssuer, name: str
) -> None:
    make, reason = REFUSALS[name]
    presented = make(issuer)
    response = post_initialize(server, **bearer(presented))
    assert response.status_code == 401, (name, response.status_code, response.text)
    body = response.json()
    assert body["error"] == "invalid_token"
    assert reason in body["error_description"], body
    challenge = response.headers["www-authenticate"]
    assert 'error="invalid_token"' in challenge
    assert f'error_description="the bearer token was refused: {reason}' in challenge
    assert f'resource_metadata="{METADATA_URL}"' in challenge
    assert presented not in response.text


def test_a_token_without_the_read_scope_is_403_insufficient_scope(
    server: HttpServer, issuer: FakeIssuer
) -> None:
    for scope in ["", "openid profile", "biomcp:write", "read write"]:
        response = post_initialize(server, **bearer(issuer.token("rsa-1", scope=scope)))
        assert response.status_code == 403, (scope, response.text)
        assert response.json()["error"] == "insufficient_scope"
        challenge = response.headers["www-authenticate"]
        assert 'error="insufficient_scope"' in challenge
        assert 'scope="biomcp:read"' in challenge
        assert f'resource_metadata="{METADATA_URL}"' in challenge


# --- scopes and tools --------------------------------------------------------------------------


def test_a_read_token_never_reaches_a_writing_tool_and_a_write_token_does(
    server: HttpServer, issuer: FakeIssuer, fake: FakeEutilsServer
) -> None:
    item = {"id": "note-1", "text": "a note on statins"}
    writing_calls: list[tuple[str, dict[str, Any]]] = [
        ("store_chunks", {"project": PROJECT, "items": [item]}),
        ("pubmed_sync_delta", {"query_key": "oauth-q", "term": TERM}),
        ("corpus_checkpoint_set", {"query_key": "oauth-q", "last_edat": "2021-01-01T00:00:00Z"}),
    ]

    async def scenario() -> None:
        # `write` is the HS256 mode's older name: an OAuth token needs `biomcp:write`.
        for scope in ["biomcp:read", "biomcp:read write"]:
            async with mcp_http(server.url, bearer(issuer.token("ec-1", scope=scope))) as client:
                eutils_before = len(fake.log)
                for name, arguments in writing_calls:
                    error, denied = await call(client, name, arguments)
                    assert error, (name, denied)
                    assert denied["error"]["code"] == "VALIDATION", denied
                    assert denied["error"]["details"]["required_scope"] == "biomcp:write"
                    assert "biomcp:write" in denied["error"]["message"]
                assert len(fake.log) == eutils_before  # the sync never reached NCBI
                error, collection = await call(client, "inspect_collection", {"project": PROJECT})
                assert not error, collection
                assert collection["size"] == 0  # nothing was stored
                error, status = await call(
                    client, "corpus_checkpoint_get", {"query_key": "oauth-q"}
                )
                assert not error, status
                assert status["last_edat"] is None

        writer = bearer(issuer.token("rsa-1", scope="biomcp:read biomcp:write"))
        async with mcp_http(server.url, writer) as client:
            error, stored = await call(client, "store_chunks", writing_calls[0][1])
            assert not error, stored
            assert stored["chunks_written"] == 1
            error, report = await call(client, "pubmed_sync_delta", writing_calls[1][1])
            assert not error, report
            assert report["inserted"] == len(fake.corpus)

    asyncio.run(scenario())


def test_tokens_never_reach_the_logs(server: HttpServer, issuer: FakeIssuer) -> None:
    presented = issuer.token("rsa-1")
    refused = issuer.token("rsa-1", aud="https://other.example/mcp")
    assert post_initialize(server, **bearer(presented)).status_code == 200
    assert post_initialize(server, **bearer(refused)).status_code == 401
    logs = server.stderr_text() + "".join(server.stdout_lines)
    assert "refused a bearer token: wrong audience" in logs
    for token in (presented, refused):
        assert token not in logs
        assert token.split(".")[2] not in logs


# --- key rotation --------------------------------------------------------------------------------


def test_key_rotation_refreshes_once_and_a_flood_of_unknown_kids_does_not_hammer_the_issuer(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeEutilsServer
) -> None:
    root = tmp_path_factory.mktemp("rotation")
    with FakeIssuer() as rotating:
        rotating.make_key("old", "RS256")
        rotating.make_key("new", "ES256")
        rotating.publish("old")
        env = oauth_env(root, fake, rotating, MCP_AUTH_JWKS_URL=rotating.jwks_url)
        with serve_http(["--port", "0"], env=env, cwd=root) as running:
            assert rotating.jwks_fetches == 0  # fetched when first needed
            assert post_initialize(running, **bearer(rotating.token("old"))).status_code == 200
            assert post_initialize(running, **bearer(rotating.token("old"))).status_code == 200
            assert rotating.jwks_fetches == 1  # cached
            assert rotating.hits["/.well-known/oauth-authorization-server"] == 0  # URL given

            rotating.publish("new")  # the issuer swaps its keys
            response = post_initialize(running, **bearer(rotating.token("new")))
            assert response.status_code == 200, response.text
            assert rotating.jwks_fetches == 2  # one refresh for the unknown kid

            # The retired key is gone from the cache, and no refresh is spent on it.
            retired = post_initialize(running, **bearer(rotating.token("old")))
            assert retired.status_code == 401
            assert "unknown signing key" in retired.json()["error_description"]
            for _ in range(20):
                rotating.make_key(kid := f"made-up-{uuid.uuid4().hex[:8]}", "RS256")
                flood = post_initialize(running, **bearer(rotating.token(kid)))
                assert flood.status_code == 401
            assert rotating.jwks_fetches == 2  # the flood caused no fetch

            assert post_initialize(running, **bearer(rotating.token("new"))).status_code == 200
            assert rotating.jwks_fetches == 2

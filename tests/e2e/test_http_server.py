"""`biomcp serve-http` as a child process, driven over real HTTP on 127.0.0.1.

The server runs on the embedded stores and the deterministic embedder, syncing from the fake
E-utilities server (started here, also over HTTP). Covered: the probes (`/health`, `/readyz`
including a store that is down, `/`), the MCP tools through the SDK's Streamable HTTP client
(error envelope included), bearer-JWT auth with the write scope, the Origin and Host checks, the
refusal to bind a public address without a key, and a clean stop on SIGTERM / SIGINT.
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from jsonschema import Draft202012Validator
from mcp.shared.exceptions import MCPError

from biomcp import __version__
from biomcp.entrypoints.mcp.contract import CONTRACT_VERSION, ERROR_ENVELOPE, V11_OUTPUTS
from biomcp.testing.eutils import FakeEutilsServer
from tests.support.mcp_inprocess import call_structured as call
from tests.support.servers import DEFAULT_TOOLS as TOOLS
from tests.support.servers import (
    HttpServer,
    http_client,
    mcp_http,
    recent_fake,
    run_biomcp,
    serve_http,
    server_env,
)

pytestmark = pytest.mark.e2e

SECRET = "e2e-test-secret-0123456789-abcdefghijklmnop"  # noqa: S105 - a test key
PUBLIC = "0.0.0.0"  # noqa: S104 - the point of the binding tests
TERM = "humans[mh] OR animals[mh]"
MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw-http-test", "version": "0"},
    },
}


# --- helpers ---------------------------------------------------------------------------------


def token(secret: str = SECRET, *, algorithm: str = "HS256", **claims: Any) -> str:
    now = int(time.time())
    payload: dict[str, Any] = {"sub": "tester", "iat": now, "exp": now + 600}
    payload.update(claims)
    with warnings.catch_warnings():
        # HS512 with this 44-byte test key: PyJWT warns that 64 bytes are recommended.
        warnings.simplefilter("ignore", jwt.warnings.InsecureKeyLengthWarning)
        return jwt.encode(payload, secret, algorithm=algorithm)


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


def assert_envelope(body: Any, code: str) -> None:
    Draft202012Validator(ERROR_ENVELOPE).validate(body)
    assert body["error"]["code"] == code, body
    assert body["error"]["message"]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def post_initialize(server: HttpServer, **headers: str) -> httpx.Response:
    with http_client(server) as http:
        return http.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **headers})


# --- fixtures --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    with recent_fake(40, seed=11) as server:
        yield server


@pytest.fixture(scope="module")
def open_server(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeEutilsServer
) -> Iterator[HttpServer]:
    """No auth key, loopback, port 0."""
    root = tmp_path_factory.mktemp("open")
    env = server_env(root / "data", fake.base_url)
    with serve_http(["--port", "0"], env=env, cwd=root) as server:
        yield server


@pytest.fixture(scope="module")
def auth_server(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeEutilsServer
) -> Iterator[HttpServer]:
    """MCP_AUTH_SECRET_KEY set."""
    root = tmp_path_factory.mktemp("auth")
    env = server_env(root / "data", fake.base_url, MCP_AUTH_SECRET_KEY=SECRET)
    with serve_http(["--port", "0"], env=env, cwd=root) as server:
        yield server


# --- probes and index ------------------------------------------------------------------------


def test_the_printed_url_is_the_mcp_endpoint_on_a_picked_port(open_server: HttpServer) -> None:
    assert open_server.url.startswith("http://127.0.0.1:")
    assert open_server.url.endswith("/mcp")
    assert open_server.port > 0
    assert open_server.stdout_lines[-1].strip() == f"bio-mcp serving MCP at {open_server.url}"


def test_health_and_readyz_answer_ok(open_server: HttpServer) -> None:
    with http_client(open_server) as http:
        health = http.get("/health")
        assert health.status_code == 200
        assert health.json()["status"] == "ok"
        ready = http.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json() == {
            "status": "ready",
            "checks": {"metadata": "ok", "vectors": "ok", "event_loop": "ok"},
            "corpus_index": "ok",
        }


def test_the_index_describes_the_server(open_server: HttpServer) -> None:
    with http_client(open_server) as http:
        response = http.get("/")
    assert response.status_code == 200
    index = response.json()
    assert index["name"] == "bio-mcp"
    assert index["version"] == __version__
    assert index["contract_version"] == CONTRACT_VERSION
    assert set(index["transports"]) == {"stdio", "streamable-http"}
    assert index["endpoints"]["mcp"] == "/mcp"
    assert {"/health", "/readyz", "/"} <= set(index["endpoints"].values())
    tools = {tool["name"]: tool for tool in index["tools"]}
    assert set(tools) == TOOLS
    assert all(tool["title"] for tool in tools.values())
    assert tools["pubmed_sync_delta"]["writes"] is True
    assert tools["rag_search"]["writes"] is False
    uris = {r.get("uri") or r.get("uri_template") for r in index["resources"]}
    assert {"biomcp://help", "resource://pubmed/paper/{pmid}"} <= uris
    assert index["auth"]["enabled"] is False


def test_readyz_is_503_with_the_reason_when_the_vector_store_is_down(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    port = closed_port()
    env = server_env(
        tmp_path / "data",
        fake.base_url,
        BIOMCP_VECTOR_BACKEND="weaviate",
        WEAVIATE_URL=f"http://127.0.0.1:{port}",
        WEAVIATE_GRPC_PORT=str(port),
    )
    with serve_http(["--port", "0"], env=env, cwd=tmp_path) as server, http_client(server) as http:
        ready = http.get("/readyz")
        assert ready.status_code == 503, ready.text
        body = ready.json()
        assert body["status"] == "unavailable"
        assert body["checks"]["metadata"] == "ok"
        assert body["checks"]["vectors"] != "ok"
        assert body["checks"]["vectors"]  # the reason
        assert http.get("/health").status_code == 200  # alive, just not ready


# --- MCP over Streamable HTTP ----------------------------------------------------------------


def test_an_mcp_client_lists_and_calls_every_tool(
    open_server: HttpServer, fake: FakeEutilsServer
) -> None:
    async def scenario() -> None:
        async with mcp_http(open_server.url) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(listed) == TOOLS
            assert all(tool.title for tool in listed.values())

            error, report = await call(
                client, "pubmed_sync_delta", {"query_key": "e2e", "term": TERM}
            )
            assert not error, report
            Draft202012Validator(V11_OUTPUTS["pubmed.sync_delta"]).validate(report)
            assert report["inserted"] == len(fake.corpus)

            error, found = await call(client, "rag_search", {"query": "randomized trial"})
            assert not error, found
            Draft202012Validator(V11_OUTPUTS["rag.search"]).validate(found)
            assert found["results"]
            doc_id = found["results"][0]["doc_id"]

            error, document = await call(client, "rag_get", {"doc_id": doc_id})
            assert not error, document
            assert document["doc_id"] == doc_id
            read = await client.read_resource(
                f"resource://pubmed/paper/{doc_id.removeprefix('pmid:')}"
            )
            assert json.loads(read.contents[0].text) == document  # type: ignore[union-attr]

            error, checkpoint = await call(client, "corpus_checkpoint_get", {"query_key": "e2e"})
            assert not error
            assert checkpoint["last_edat"] is not None
            error, moved = await call(
                client,
                "corpus_checkpoint_set",
                {"query_key": "e2e", "last_edat": "2021-02-03T04:05:06Z"},
            )
            assert not error
            assert moved["ok"] is True
            assert moved["previous_edat"] == checkpoint["last_edat"]
            error, checkpoint = await call(client, "corpus_checkpoint_get", {"query_key": "e2e"})
            assert checkpoint["last_edat"] == "2021-02-03T04:05:06Z"

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("rag_search", {}),
        ("rag_search", {"query": "x", "top_k": 0}),
        ("rag_get", {"doc_id": "12345"}),
        ("pubmed_sync_delta", {"query_key": "k"}),
        ("corpus_checkpoint_set", {"query_key": "k", "last_edat": "yesterday"}),
    ],
)
def test_bad_arguments_get_the_validation_envelope_and_the_server_keeps_answering(
    open_server: HttpServer, tool: str, arguments: dict[str, Any]
) -> None:
    async def scenario() -> None:
        async with mcp_http(open_server.url) as client:
            error, answer = await call(client, tool, arguments)
            assert error
            assert_envelope(answer, "VALIDATION")
            error, fine = await call(client, "corpus_checkpoint_get", {"query_key": "other"})
            assert not error
            assert fine == {"query_key": "other", "last_edat": None}

    asyncio.run(scenario())
    with http_client(open_server) as http:
        assert http.get("/health").status_code == 200


def test_an_unknown_tool_is_a_protocol_error_naming_the_tools_and_the_server_keeps_answering(
    open_server: HttpServer,
) -> None:
    async def scenario() -> None:
        async with mcp_http(open_server.url) as client:
            with pytest.raises(MCPError) as raised:
                await client.call_tool("no_such_tool", {})
            assert raised.value.code == -32602  # invalid params, as the MCP spec says
            assert "rag_search" in raised.value.message
            error, fine = await call(client, "corpus_checkpoint_get", {"query_key": "other"})
            assert not error
            assert fine == {"query_key": "other", "last_edat": None}

    asyncio.run(scenario())


def _tools_call(http: httpx.Client, name: str, arguments: dict[str, Any]) -> httpx.Response:
    """initialize + initialized over raw HTTP, then one tools/call; its response."""
    opened = http.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS)
    assert opened.status_code == 200, opened.text
    session = {
        **MCP_HEADERS,
        "mcp-session-id": opened.headers["mcp-session-id"],
        "mcp-protocol-version": INITIALIZE["params"]["protocolVersion"],  # type: ignore[index]
    }
    done = http.post(
        "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session
    )
    assert done.status_code == 202, done.text
    request = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    return http.post("/mcp", json=request, headers=session)


def test_answers_stream_as_sse_and_a_sync_reports_progress_over_http(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    env = server_env(tmp_path / "data", fake.base_url, BIOMCP_SYNC_BATCH_SIZE="10")
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async def scenario(url: str) -> None:
        async with mcp_http(url) as client:
            result = await client.call_tool(
                "pubmed_sync_delta",
                {"query_key": "p", "term": TERM},
                progress_callback=on_progress,
            )
            assert not result.is_error, result

    with serve_http(["--port", "0"], env=env, cwd=tmp_path) as server:
        asyncio.run(scenario(server.url))
        with http_client(server) as http:
            answer = _tools_call(http, "corpus_checkpoint_get", {"query_key": "p"})
    assert seen, "no progress notification reached the HTTP client"
    assert seen[-1] == (len(fake.corpus), len(fake.corpus))
    assert answer.headers["content-type"].startswith("text/event-stream")
    assert '"last_edat"' in answer.text


def test_json_responses_answer_each_call_with_one_json_body(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    env = server_env(tmp_path / "data", fake.base_url, MCP_HTTP_JSON_RESPONSE="true")
    with serve_http(["--port", "0"], env=env, cwd=tmp_path) as server:
        with http_client(server) as http:
            answer = _tools_call(http, "corpus_checkpoint_get", {"query_key": "p"})
            assert answer.status_code == 200, answer.text
            assert answer.headers["content-type"].startswith("application/json")
            body = answer.json()
            assert body["id"] == 2
            assert body["result"]["structuredContent"] == {"query_key": "p", "last_edat": None}
            missing = _tools_call(http, "rag_get", {"doc_id": "pmid:1"})
            assert missing.status_code == 200
            assert missing.json()["result"]["isError"] is True

        async def scenario() -> None:  # the SDK's client works with JSON answers too
            async with mcp_http(server.url) as client:
                error, report = await call(
                    client, "pubmed_sync_delta", {"query_key": "j", "term": TERM}
                )
                assert not error, report
                assert report["inserted"] == len(fake.corpus)

        asyncio.run(scenario())


# --- auth --------------------------------------------------------------------------------------


BAD_CREDENTIALS: dict[str, Callable[[], dict[str, str]]] = {
    "no token": lambda: {},
    "not bearer": lambda: {"Authorization": f"Basic {token()}"},
    "bearer without a token": lambda: {"Authorization": "Bearer"},
    "bad signature": lambda: bearer(token("another-secret-of-at-least-32-characters!!")),
    "expired": lambda: bearer(token(exp=int(time.time()) - 3600)),
    "no exp": lambda: bearer(jwt.encode({"sub": "x", "scope": "write"}, SECRET, algorithm="HS256")),
    "not yet valid": lambda: bearer(token(nbf=int(time.time()) + 3600)),
    "other algorithm": lambda: bearer(token(algorithm="HS512")),
    "unsigned": lambda: bearer(jwt.encode({"sub": "x"}, "", algorithm="none")),
    "garbage": lambda: bearer("not.a.jwt"),
}


@pytest.mark.parametrize("name", sorted(BAD_CREDENTIALS))
def test_mcp_refuses_requests_without_a_valid_token(auth_server: HttpServer, name: str) -> None:
    response = post_initialize(auth_server, **BAD_CREDENTIALS[name]())
    assert response.status_code == 401, (name, response.status_code, response.text)
    assert response.headers["www-authenticate"].startswith("Bearer ")
    body = response.json()
    assert body["error"] in {"invalid_request", "invalid_token"}
    assert body["error_description"]
    assert SECRET not in response.text


def test_a_valid_token_opens_a_session(auth_server: HttpServer) -> None:
    response = post_initialize(auth_server, **bearer(token(scope="read")))
    assert response.status_code == 200, response.text
    assert response.headers.get("mcp-session-id")


def test_probes_and_index_need_no_token(auth_server: HttpServer) -> None:
    with http_client(auth_server) as http:
        assert http.get("/health").status_code == 200
        assert http.get("/readyz").status_code == 200
        index = http.get("/").json()
    assert index["auth"]["enabled"] is True
    assert (index["auth"]["mode"], index["auth"]["algorithm"]) == ("hs256", "HS256")
    assert index["auth"]["write_scope"] == "biomcp:write"  # HS256 tokens may say `write`


def test_reading_needs_a_token_and_writing_the_write_scope(
    auth_server: HttpServer, fake: FakeEutilsServer
) -> None:
    reader = bearer(token(scope="read"))
    writer_scope = bearer(token(scope="read write"))
    writer_list = bearer(token(scopes=["write"]))

    async def scenario() -> None:
        async with mcp_http(auth_server.url, reader) as client:
            assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS
            error, denied = await call(
                client, "pubmed_sync_delta", {"query_key": "a", "term": TERM}
            )
            assert error
            assert_envelope(denied, "VALIDATION")
            assert "write" in denied["error"]["message"]
            error, denied = await call(
                client,
                "corpus_checkpoint_set",
                {"query_key": "a", "last_edat": "2021-01-01T00:00:00Z"},
            )
            assert error
            assert_envelope(denied, "VALIDATION")
            item = {"id": "n", "text": "a note"}
            error, denied = await call(client, "store_chunks", {"project": "p", "items": [item]})
            assert error
            assert_envelope(denied, "VALIDATION")
            assert "write" in denied["error"]["message"]
            error, listed = await call(client, "list_projects", {})
            assert not error  # reading projects needs no write scope
            assert listed == {"warnings": [], "projects": []}
            error, checkpoint = await call(client, "corpus_checkpoint_get", {"query_key": "a"})
            assert not error
            assert checkpoint["last_edat"] is None

        async with mcp_http(auth_server.url, writer_scope) as client:
            error, report = await call(
                client, "pubmed_sync_delta", {"query_key": "a", "term": TERM}
            )
            assert not error, report
            assert report["inserted"] == len(fake.corpus)

        async with mcp_http(auth_server.url, writer_list) as client:
            error, moved = await call(
                client,
                "corpus_checkpoint_set",
                {"query_key": "a", "last_edat": "2021-01-01T00:00:00Z"},
            )
            assert not error, moved
            assert moved["ok"] is True

        async with mcp_http(auth_server.url, reader) as client:
            error, found = await call(client, "rag_search", {"query": "trial", "top_k": 3})
            assert not error, found
            assert 1 <= len(found["results"]) <= 3
            error, document = await call(
                client, "rag_get", {"doc_id": found["results"][0]["doc_id"]}
            )
            assert not error, document

    asyncio.run(scenario())


def test_a_session_answers_only_the_token_holder_that_opened_it(auth_server: HttpServer) -> None:
    opened = post_initialize(auth_server, **bearer(token(sub="alice")))
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    headers = {**MCP_HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
    with http_client(auth_server) as http:
        stolen = http.post("/mcp", json=listing, headers={**headers, **bearer(token(sub="bob"))})
        assert stolen.status_code == 404, stolen.text
        own = http.post("/mcp", json=listing, headers={**headers, **bearer(token(sub="alice"))})
        assert own.status_code == 200, own.text


def test_tokens_and_the_key_never_reach_the_logs(auth_server: HttpServer) -> None:
    presented = token(scope="read")
    post_initialize(auth_server, **bearer(presented))
    post_initialize(auth_server, **bearer(token("another-secret-of-at-least-32-characters!!")))
    logs = auth_server.stderr_text() + "".join(auth_server.stdout_lines)
    assert "refused a bearer token" in logs  # the refusal is logged...
    assert SECRET not in logs  # ...but never the key
    assert presented not in logs
    assert presented.split(".")[2] not in logs  # nor a token's signature


# --- origins, hosts and binding -----------------------------------------------------------------


@pytest.mark.parametrize("path", ["/mcp", "/health", "/"])
def test_a_foreign_origin_is_refused(open_server: HttpServer, path: str) -> None:
    with http_client(open_server) as http:
        if path == "/mcp":
            response = http.post(
                path, json=INITIALIZE, headers={**MCP_HEADERS, "Origin": "https://evil.example"}
            )
        else:
            response = http.get(path, headers={"Origin": "https://evil.example"})
    assert response.status_code == 403, response.text
    assert response.json()["error"] == "forbidden_origin"


def test_loopback_origins_are_allowed_by_default_with_cors(open_server: HttpServer) -> None:
    origin = "http://localhost:6274"
    with http_client(open_server) as http:
        response = http.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "Origin": origin})
        assert response.status_code == 200, response.text
        assert response.headers["access-control-allow-origin"] == origin
        preflight = http.options(
            "/mcp",
            headers={
                "Origin": origin,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type, mcp-session-id",
            },
        )
        assert preflight.status_code == 200, preflight.text
        assert http.get("/health", headers={"Origin": "http://127.0.0.1:3000"}).status_code == 200


def test_a_foreign_host_header_is_refused_on_a_loopback_bind(open_server: HttpServer) -> None:
    with http_client(open_server) as http:
        response = http.get("/health", headers={"Host": "rebound.example:80"})
    assert response.status_code == 421


def test_the_configured_origins_replace_the_loopback_default(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    env = server_env(
        tmp_path / "data",
        fake.base_url,
        MCP_ALLOWED_ORIGINS="https://app.example, https://other.example",
    )
    with serve_http(["--port", "0"], env=env, cwd=tmp_path) as server, http_client(server) as http:
        allowed = http.post(
            "/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "Origin": "https://app.example"}
        )
        assert allowed.status_code == 200, allowed.text
        assert http.get("/", headers={"Origin": "https://other.example"}).status_code == 200
        assert http.get("/", headers={"Origin": "http://localhost:6274"}).status_code == 403
        assert http.get("/", headers={"Origin": "https://app.example.evil"}).status_code == 403


def test_a_public_bind_without_a_key_refuses_to_start(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    env = server_env(tmp_path / "data", fake.base_url)
    result = run_biomcp(["serve-http", "--host", PUBLIC, "--port", "0"], env=env, cwd=tmp_path)
    assert result.returncode == 2, result
    assert "MCP_AUTH_SECRET_KEY" in result.stderr
    assert "--insecure" in result.stderr
    assert "serving MCP" not in result.stdout


def test_a_public_bind_starts_with_insecure_or_with_a_key(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    env = server_env(tmp_path / "data", fake.base_url)
    with serve_http(["--host", PUBLIC, "--port", "0", "--insecure"], env=env, cwd=tmp_path) as s:
        assert s.url.startswith("http://0.0.0.0:")
        assert "without authentication" in s.stderr_text()
        response = httpx.get(f"http://127.0.0.1:{s.port}/health", timeout=30)
        assert response.status_code == 200
    keyed = {**env, "MCP_AUTH_SECRET_KEY": SECRET}
    with serve_http(["--host", PUBLIC, "--port", "0"], env=keyed, cwd=tmp_path) as s:
        response = httpx.post(
            f"http://127.0.0.1:{s.port}/mcp", json=INITIALIZE, headers=MCP_HEADERS, timeout=30
        )
        assert response.status_code == 401


def test_a_short_key_is_a_configuration_error(tmp_path: Path, fake: FakeEutilsServer) -> None:
    env = server_env(tmp_path / "data", fake.base_url, MCP_AUTH_SECRET_KEY="short-key")  # noqa: S106
    result = run_biomcp(["serve-http", "--port", "0"], env=env, cwd=tmp_path)
    assert result.returncode == 2
    assert "MCP_AUTH_SECRET_KEY" in result.stderr
    assert "short-key" not in result.stderr + result.stdout


# --- stopping -----------------------------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_server_cleanly_even_with_a_session_open(
    tmp_path: Path, fake: FakeEutilsServer, sig: signal.Signals
) -> None:
    env = server_env(tmp_path / "data", fake.base_url)
    with serve_http(["--port", "0"], env=env, cwd=tmp_path) as server:

        async def scenario() -> int:
            async with mcp_http(server.url) as client:
                error, _ = await call(client, "corpus_checkpoint_get", {"query_key": "k"})
                assert not error
                # A session is open (with its SSE stream) when the signal arrives.
                return await asyncio.to_thread(server.stop, sig)

        code = asyncio.run(scenario())
        assert code == 0, server.stderr_text()
        log = server.stderr_text()
        assert "Traceback" not in log
        assert "Application shutdown complete" in log
        with pytest.raises(httpx.TransportError):
            httpx.get(f"{server.base_url}/health", timeout=5)

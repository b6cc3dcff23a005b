"""Hostile or careless input never hurts the server (the hostile-input rules, and the lenient
inputs), tried over real HTTP on 127.0.0.1.

`biomcp serve-http` runs as a child process on the fake E-utilities server; the calls come from
the SDK's Streamable HTTP client, the hostile requests from raw sockets. Covered: a 4 MB
argument (VALIDATION in under 1 s, `/health` answering within 100 ms meanwhile: the issue's
figures), PMIDs sent as JSON numbers, `1.0` / `1.5` where an integer is expected, an overlap of
2**31 days, non-printable and overlong query keys, the live tools' overall deadline against a
slow NCBI, the request-head bounds (a 64 MB header, a slowloris client) and single-line logs
without session ids at INFO.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from biomcp.entrypoints.http.run import MAX_HEADER_BYTES, build_uvicorn
from biomcp.entrypoints.mcp.contract import ERROR_ENVELOPE
from biomcp.testing.eutils import FakeEutilsServer
from tests.support.servers import (
    HttpServer,
    http_client,
    mcp_http,
    recent_fake,
    serve_http,
    server_env,
)

pytestmark = pytest.mark.e2e

#: The live tools' deadline in these tests (the setting's smallest allowed value is 1 s).
DEADLINE_MS = 2000
#: A slow NCBI answer, far past the deadline.
SLOW_S = 8.0
#: "4 MB": the SDK answers bodies over 4 MiB with HTTP 413 before any tool sees them.
FOUR_MB = 4_000_000
LOG_LINE = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ (DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.]+: \S"
)


# --- helpers ---------------------------------------------------------------------------------


async def call(client: Client, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(name, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    if result.is_error:
        return True, json.loads(text)
    return False, result.structured_content


def code_of(answer: tuple[bool, Any]) -> str | None:
    error, body = answer
    if not error:
        return None
    Draft202012Validator(ERROR_ENVELOPE).validate(body)
    return str(body["error"]["code"])


def rss_peak_kib(pid: int) -> int:
    """The process's peak resident memory (VmHWM), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc status")


# --- fixtures --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    with recent_fake(20, seed=16) as server:
        yield server


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeEutilsServer
) -> Iterator[HttpServer]:
    root = tmp_path_factory.mktemp("hostile")
    env = server_env(
        root / "data",
        fake.base_url,
        NCBI_TOTAL_DEADLINE_MS=str(DEADLINE_MS),
        NCBI_MAX_RETRIES="3",
    )
    with serve_http(["--port", "0"], env=env, cwd=root) as running:
        yield running


# --- size ------------------------------------------------------------------------------------


def test_a_4_mb_argument_is_refused_in_under_a_second_while_health_answers(
    server: HttpServer,
) -> None:
    health_times: list[float] = []
    stop = threading.Event()

    def poll_health() -> None:
        with http_client(server) as http:
            while not stop.is_set():
                began = time.perf_counter()
                assert http.get("/health").status_code == 200
                health_times.append(time.perf_counter() - began)
                time.sleep(0.01)

    async def scenario() -> tuple[float, tuple[bool, Any]]:
        async with mcp_http(server.url) as client:
            assert code_of(await call(client, "rag_get", {"doc_id": "pmid:1"})) == "NOT_FOUND"
            poller = threading.Thread(target=poll_health)
            poller.start()
            try:
                while len(health_times) < 3:  # polling before the call goes out
                    await asyncio.sleep(0.01)
                began = time.perf_counter()
                answer = await call(client, "rag_get", {"doc_id": "(" * FOUR_MB})
                elapsed = time.perf_counter() - began
                polled = len(health_times)
                while len(health_times) < polled + 3:  # and after it came back
                    await asyncio.sleep(0.01)
            finally:
                stop.set()
                poller.join()
            return elapsed, answer

    elapsed, answer = asyncio.run(scenario())
    assert code_of(answer) == "VALIDATION"
    message = answer[1]["error"]["message"]
    assert "((((" not in message
    assert len(message) < 500
    assert elapsed < 1.0, f"the 4 MB argument took {elapsed:.3f} s"
    assert max(health_times) < 0.1, f"/health took up to {max(health_times):.3f} s"
    assert "((((" not in server.stderr_text()


# --- lenient inputs --------------------------------------------------------------------------


def test_pmids_sent_as_numbers_are_read_as_pmids(
    server: HttpServer, fake: FakeEutilsServer
) -> None:
    pmid = int(fake.corpus.pmids()[0])

    async def scenario() -> None:
        async with mcp_http(server.url) as client:
            error, fetched = await call(
                client, "pubmed_fetch_article_details", {"pmids": [pmid, str(pmid)]}
            )
            assert not error, fetched
            assert {a["pmid"] for a in fetched["articles"]} == {str(pmid)}
            error, related = await call(
                client,
                "pubmed_article_relationships",
                {"sourcePmid": pmid, "relationshipType": "citation_formats"},
            )
            assert not error, related
            assert related["sourcePmid"] == str(pmid)

    asyncio.run(scenario())


def test_integral_floats_are_integers_and_fractions_are_refused(server: HttpServer) -> None:
    async def scenario() -> None:
        async with mcp_http(server.url) as client:
            synced = await call(
                client, "pubmed_sync_delta", {"query_key": "floats", "term": "humans[mh]"}
            )
            assert code_of(synced) is None, synced
            error, found = await call(client, "rag_search", {"query": "trial", "top_k": 1.0})
            assert not error, found
            assert len(found["results"]) == 1
            answer = await call(client, "rag_search", {"query": "trial", "top_k": 1.5})
            assert code_of(answer) == "VALIDATION"
            assert "top_k" in answer[1]["error"]["message"]

    asyncio.run(scenario())


def test_an_overlap_of_2_31_days_is_refused_or_served_never_an_internal_error(
    server: HttpServer,
) -> None:
    async def scenario() -> None:
        async with mcp_http(server.url) as client:
            answer = await call(
                client,
                "pubmed_sync_delta",
                {"query_key": "overflow", "term": "humans[mh]", "overlap_days": 2**31},
            )
            assert code_of(answer) in (None, "VALIDATION"), answer
            # A second sync has a watermark to subtract the overlap from.
            answer = await call(
                client,
                "pubmed_sync_delta",
                {"query_key": "overflow", "term": "humans[mh]", "overlap_days": 2**31},
            )
            assert code_of(answer) in (None, "VALIDATION"), answer

    asyncio.run(scenario())


# --- query keys ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    ["nul\x00key", "bidi\u202ekey", "zero\u200bwidth", "bom\ufeff", "k" * 2000, "line\nbreak"],
)
def test_non_printable_or_overlong_query_keys_are_refused(server: HttpServer, key: str) -> None:
    async def scenario() -> None:
        async with mcp_http(server.url) as client:
            answer = await call(
                client,
                "corpus_checkpoint_set",
                {"query_key": key, "last_edat": "2024-01-01T00:00:00Z"},
            )
            assert code_of(answer) == "VALIDATION", answer
            answer = await call(client, "pubmed_sync_delta", {"query_key": key, "term": "x"})
            assert code_of(answer) == "VALIDATION", answer

    asyncio.run(scenario())


def test_a_printable_key_is_set_and_read(server: HttpServer) -> None:
    async def scenario() -> None:
        async with mcp_http(server.url) as client:
            key = "études glp1/v1"
            answer = await call(
                client,
                "corpus_checkpoint_set",
                {"query_key": key, "last_edat": "2024-01-01T00:00:00Z"},
            )
            assert code_of(answer) is None, answer
            error, read = await call(client, "corpus_checkpoint_get", {"query_key": key})
            assert not error
            assert read["query_key"] == key

    asyncio.run(scenario())


# --- the live deadline -----------------------------------------------------------------------


def test_a_slow_ncbi_ends_in_timeout_at_the_overall_deadline(
    server: HttpServer, fake: FakeEutilsServer
) -> None:
    async def scenario() -> tuple[float, tuple[bool, Any]]:
        async with mcp_http(server.url) as client:
            warm = await call(client, "pubmed_search_articles", {"queryTerm": "humans[mh]"})
            assert code_of(warm) is None, warm
            fake.faults.sequence([{"kind": "slow", "delay": SLOW_S}] * 4, endpoint="esearch")
            try:
                began = time.perf_counter()
                answer = await call(client, "pubmed_search_articles", {"queryTerm": "humans[mh]"})
                elapsed = time.perf_counter() - began
                # One slow answer was awaited, none retried: the deadline ended the call.
                assert fake.faults.pending == 3
                return elapsed, answer
            finally:
                fake.faults.clear()

    elapsed, answer = asyncio.run(scenario())
    assert code_of(answer) == "TIMEOUT", answer
    assert "NCBI_TOTAL_DEADLINE_MS" in answer[1]["error"]["message"]
    # The deadline is 2 s; one slow answer alone takes 8 s and the retries more.
    assert elapsed < SLOW_S - 1, f"TIMEOUT came after {elapsed:.1f} s"


# --- request heads ---------------------------------------------------------------------------


def _receive_all(sock: socket.socket, into: bytearray) -> None:
    try:
        while chunk := sock.recv(65536):
            into.extend(chunk)
    except OSError:
        pass


def test_a_64_mb_header_is_refused_without_being_buffered(server: HttpServer) -> None:
    peak_before = rss_peak_kib(server.process.pid)
    received = bytearray()
    sent = 0
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        reader = threading.Thread(target=_receive_all, args=(sock, received))
        reader.start()
        head = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "
        chunk = b"a" * 65536
        try:
            sock.sendall(head)
            while sent < 64 * 1024 * 1024:
                sock.sendall(chunk)
                sent += len(chunk)
        except OSError:
            pass  # the server closed the connection: the point
        reader.join(timeout=30)
    assert sent < 64 * 1024 * 1024, "the server read a 64 MB header to its end"
    assert received.startswith(b"HTTP/1.1 431 "), bytes(received[:200])
    growth_kib = rss_peak_kib(server.process.pid) - peak_before
    assert growth_kib < 16 * 1024, f"peak memory grew by {growth_kib} KiB"
    with http_client(server) as http:
        assert http.get("/health").status_code == 200


def test_a_normal_request_with_a_big_body_is_not_a_big_head(server: HttpServer) -> None:
    with http_client(server) as http:
        response = http.post(
            "/mcp",
            content=b"{" + b" " * (4 * MAX_HEADER_BYTES) + b"}",
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
    assert response.status_code not in (408, 431), response.text


@pytest.fixture(scope="module")
def tiny_server() -> Iterator[int]:
    """uvicorn as `run_http` builds it, on a two-route app, with a 0.5 s head timeout and a
    1 KiB head bound; yields the port."""

    async def echo(request: Request) -> Response:
        body = await request.body()
        return JSONResponse({"bytes": len(body)})

    app = Starlette(routes=[Route("/", echo, methods=["GET", "POST"])])
    started = threading.Event()
    urls: list[str] = []

    def on_started(url: str) -> None:
        urls.append(url)
        started.set()

    uvicorn_server = build_uvicorn(
        app,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        on_started=on_started,
        max_header_bytes=1024,
        header_timeout_s=0.5,
    )
    thread = threading.Thread(target=uvicorn_server.run, daemon=True)
    thread.start()
    try:
        assert started.wait(30), "uvicorn did not start"
        yield int(urls[0].rsplit(":", 1)[1].split("/", 1)[0])
    finally:
        uvicorn_server.should_exit = True
        thread.join(timeout=30)


def test_a_slowloris_client_is_cut_off_at_the_head_timeout(tiny_server: int) -> None:
    with socket.create_connection(("127.0.0.1", tiny_server), timeout=10) as sock:
        began = time.monotonic()
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        received = bytearray()
        sent_lines = 0
        try:
            while time.monotonic() - began < 8:
                sock.sendall(b"X-Slow: 1\r\n")
                sent_lines += 1
                sock.settimeout(0.1)
                try:
                    chunk = sock.recv(4096)
                except TimeoutError:
                    continue
                if not chunk:
                    break
                received.extend(chunk)
        except OSError:
            pass
        closed_after = time.monotonic() - began
    assert received.startswith(b"HTTP/1.1 408 "), bytes(received)
    assert closed_after < 8, "the slow client kept its connection"
    assert sent_lines >= 2  # it was trickling headers when it was cut off


def test_an_idle_connection_is_closed_at_the_head_timeout(tiny_server: int) -> None:
    with socket.create_connection(("127.0.0.1", tiny_server), timeout=10) as sock:
        received = bytearray()
        _receive_all(sock, received)  # returns at EOF
    assert received.startswith(b"HTTP/1.1 408 ")


def test_the_head_bound_spares_bodies_and_kept_alive_connections(tiny_server: int) -> None:
    with httpx.Client(base_url=f"http://127.0.0.1:{tiny_server}", timeout=10) as http:
        assert http.post("/", content=b"x" * 1_000_000).json() == {"bytes": 1_000_000}
        time.sleep(0.8)  # longer than the head timeout, shorter than keep-alive
        assert http.get("/").json() == {"bytes": 0}
        refused = http.get("/", headers={"X-Big": "b" * 4096})
        assert refused.status_code == 431


# --- logs ------------------------------------------------------------------------------------


def test_logs_are_single_lines_without_session_ids(server: HttpServer) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "log-test", "version": "0"},
        },
    }
    with http_client(server) as http:
        response = http.post(
            "/mcp",
            json=initialize,
            headers={"Accept": "application/json, text/event-stream"},
        )
        assert response.status_code == 200
        session = response.headers["mcp-session-id"]
        http.delete("/mcp", headers={"mcp-session-id": session})

    async def failing_call() -> None:
        async with mcp_http(server.url) as client:
            long_bad = {"doc_id": "x" * 5000 + "\nFAKE 2026-01-01T00:00:00Z ERROR forged: line"}
            assert code_of(await call(client, "rag_get", long_bad)) == "VALIDATION"

    asyncio.run(failing_call())
    stderr = server.stderr_text()
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines
    strays = [line for line in lines if not LOG_LINE.match(line)]
    assert not strays, strays[:5]
    assert session not in stderr
    failures = [line for line in lines if "tool call failed with VALIDATION" in line]
    assert failures
    assert all(len(line) < 600 for line in failures)
    assert not any(line.startswith("FAKE") for line in lines)


def test_retries_end_at_the_overall_deadline_too(
    server: HttpServer, fake: FakeEutilsServer
) -> None:
    """Four 429s asking for 1.5 s each: NCBI_MAX_RETRIES=3 would wait 4.5 s and end in
    RATE_LIMIT; the 2 s deadline ends the call first, in TIMEOUT."""

    async def scenario() -> tuple[bool, Any]:
        async with mcp_http(server.url) as client:
            fake.faults.sequence([{"kind": "429", "retry_after": 1.5}] * 4, endpoint="esearch")
            try:
                answer = await call(client, "pubmed_search_articles", {"queryTerm": "humans[mh]"})
                assert fake.faults.pending >= 1  # retries were still due
                return answer
            finally:
                fake.faults.clear()

    answer = asyncio.run(scenario())
    assert code_of(answer) == "TIMEOUT", answer

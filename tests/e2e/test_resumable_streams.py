"""Resumable Streamable HTTP streams, driven by a raw HTTP client (httpx, SSE read by hand).

`biomcp serve-http` runs as a child process against the fake E-utilities server. A client of
protocol 2025-11-25 gets SSE answers that start with a priming event (an id, empty data, a
`retry` field); when its stream is lost it reconnects with `GET` and `Last-Event-ID` and
receives what it missed: the tool's answer, whether that answer was sent before the stream was
lost or only after the client came back. A session cannot resume another session's stream.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from biomcp.entrypoints.http.events import RETRY_INTERVAL_MS
from biomcp.testing.eutils import FakeEutilsServer
from tests.support.servers import HttpServer, recent_fake, serve_http, server_env

pytestmark = pytest.mark.e2e

PROTOCOL = "2025-11-25"
TERM = "humans[mh] OR animals[mh]"
ACCEPT_BOTH = {"Accept": "application/json, text/event-stream"}


# --- a small SSE client ----------------------------------------------------------------------


def sse_events(lines: Iterator[str]) -> Iterator[dict[str, str]]:
    """The events of an SSE body, as {field: value} (data lines joined by newlines)."""
    event: dict[str, str] = {}
    for line in lines:
        if not line:
            if event:
                yield event
            event = {}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        event[name] = f"{event[name]}\n{value}" if name in event else value
    if event:
        yield event


class Session:
    """One MCP session over raw HTTP."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        opened = http.post("/mcp", json=self.message(0, "initialize", self.hello()), headers={
            **ACCEPT_BOTH, "Content-Type": "application/json",
        })  # fmt: skip
        assert opened.status_code == 200, opened.text
        self.id = opened.headers["mcp-session-id"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        done = http.post("/mcp", json=initialized, headers=self.headers())
        assert done.status_code == 202, done.text

    @staticmethod
    def hello() -> dict[str, Any]:
        return {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "resume-test", "version": "0"},
        }

    @staticmethod
    def message(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}

    def headers(self, **extra: str) -> dict[str, str]:
        return {
            **ACCEPT_BOTH,
            "Content-Type": "application/json",
            "Mcp-Session-Id": self.id,
            "MCP-Protocol-Version": PROTOCOL,
            **extra,
        }

    def search_call(self, request_id: int) -> dict[str, Any]:
        arguments = {"queryTerm": TERM, "maxResults": 3}
        return self.message(
            request_id, "tools/call", {"name": "pubmed_search_articles", "arguments": arguments}
        )

    def resume(self, last_event_id: str, request_id: int) -> list[dict[str, str]]:
        """`GET` with `Last-Event-ID`: the events up to the answer to `request_id` (or to the
        end of the stream, when the server has nothing to replay)."""
        headers = {
            "Accept": "text/event-stream",
            "Mcp-Session-Id": self.id,
            "MCP-Protocol-Version": PROTOCOL,
            "Last-Event-ID": last_event_id,
        }
        received = []
        with self.http.stream("GET", "/mcp", headers=headers) as response:
            assert response.status_code == 200, response.read()
            assert response.headers["content-type"].startswith("text/event-stream")
            for event in sse_events(response.iter_lines()):
                received.append(event)
                if answer_to(event, request_id) is not None:
                    break
        return received


def answer_to(event: dict[str, str], request_id: int) -> dict[str, Any] | None:
    if not event.get("data"):
        return None
    body: dict[str, Any] = json.loads(event["data"])
    return body if body.get("id") == request_id and "method" not in body else None


def the_answer(events: list[dict[str, str]], request_id: int) -> dict[str, Any]:
    answers = [a for e in events if (a := answer_to(e, request_id)) is not None]
    assert len(answers) == 1, events
    return answers[0]


def assert_priming(event: dict[str, str]) -> None:
    assert event["id"]
    assert event["data"] == ""
    assert event["retry"] == str(RETRY_INTERVAL_MS)


def assert_search_result(answer: dict[str, Any]) -> None:
    result = answer["result"]
    assert result.get("isError") is not True, result
    assert result["structuredContent"]["effectiveESearchTerm"]
    assert len(result["structuredContent"]["pmids"]) == 3


# --- fixtures --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    with recent_fake(20, seed=5) as server:
        yield server


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeEutilsServer
) -> Iterator[HttpServer]:
    root = tmp_path_factory.mktemp("resume")
    env = server_env(root / "data", fake.base_url, BIOMCP_NCBI_CACHE_TTL_S="0")
    with serve_http(["--port", "0"], env=env, cwd=root) as running:
        yield running


@pytest.fixture
def http(server: HttpServer, fake: FakeEutilsServer) -> Iterator[httpx.Client]:
    fake.faults.clear()
    with httpx.Client(base_url=server.base_url, timeout=60) as client:
        yield client
    fake.faults.clear()


# --- tests -----------------------------------------------------------------------------------


def test_an_answer_starts_with_a_priming_event_and_replays_after_it(http: httpx.Client) -> None:
    session = Session(http)
    with http.stream("POST", "/mcp", json=session.search_call(1), headers=session.headers()) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        events = list(sse_events(r.iter_lines()))
    priming, *rest = events
    assert_priming(priming)
    answer = the_answer(rest, 1)
    assert_search_result(answer)
    answer_event = next(e for e in rest if answer_to(e, 1) is not None)

    replayed = session.resume(priming["id"], 1)
    assert the_answer(replayed, 1) == answer
    assert any(e.get("id") == answer_event["id"] for e in replayed)  # the same event, same id


def test_a_client_that_drops_the_stream_mid_call_resumes_and_gets_the_answer(
    http: httpx.Client, fake: FakeEutilsServer
) -> None:
    session = Session(http)
    fake.faults.sequence([{"kind": "slow", "delay": 2.0}], endpoint="esearch")
    with http.stream("POST", "/mcp", json=session.search_call(2), headers=session.headers()) as r:
        first = next(sse_events(r.iter_lines()))
    # The stream is closed here, after the priming event alone: the call is still at NCBI.
    assert_priming(first)

    resumed = session.resume(first["id"], 2)
    assert_search_result(the_answer(resumed, 2))
    assert fake.faults.pending == 0  # the slow answer was the one the call waited for


def test_a_session_cannot_resume_another_sessions_stream(http: httpx.Client) -> None:
    owner, other = Session(http), Session(http)
    with http.stream("POST", "/mcp", json=owner.search_call(1), headers=owner.headers()) as r:
        priming, *rest = sse_events(r.iter_lines())
    assert_priming(priming)
    assert_search_result(the_answer(rest, 1))

    stolen = other.resume(priming["id"], 1)
    assert all(answer_to(e, 1) is None for e in stolen), stolen
    assert all(not e.get("data") for e in stolen)


def test_a_client_of_an_older_protocol_gets_no_priming_event(http: httpx.Client) -> None:
    opened = http.post(
        "/mcp",
        json=Session.message(0, "initialize", {**Session.hello(), "protocolVersion": "2025-06-18"}),
        headers={**ACCEPT_BOTH, "Content-Type": "application/json"},
    )
    events = list(sse_events(iter(opened.text.splitlines())))
    assert [e for e in events if e.get("data") == ""] == []
    assert events[0]["event"] == "message"

"""Two `biomcp serve-http` replicas behind a round-robin balancer, with and without
`MCP_HTTP_STATELESS`.

The replicas are child processes on one data folder; the balancer (`tests.support.balancer`)
sends each HTTP request to the next replica in turn, so consecutive MCP requests land on
different replicas. The clients are the SDK's: `mode="legacy"` speaks 2025-11-25 (initialize
handshake, a session), `mode="auto"` negotiates 2026-07-28 (sessionless).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from biomcp.testing.eutils import FakeEutilsServer
from tests.support.balancer import Balancer, round_robin
from tests.support.servers import HttpServer, recent_fake, serve_http, server_env

pytestmark = pytest.mark.e2e

CALLS = 30
LEGACY = "2025-11-25"
SESSIONLESS = "2026-07-28"
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
ACCESS_LINE = re.compile(r'"(?P<method>[A-Z]+) /mcp HTTP/1\.1" (?P<status>\d{3})')


@dataclass
class Outcome:
    """What a client saw through the balancer, and what the balancer routed."""

    protocol: str
    answered: int  # calls answered without an error
    errors: list[str]  # the messages of the calls that raised
    balancer: Balancer


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    with recent_fake(8, seed=40) as server:
        yield server


def _replicas(root: Path, fake: FakeEutilsServer, *, stateless: bool) -> Iterator[list[HttpServer]]:
    env = server_env(
        root / "data",
        fake.base_url,
        MCP_HTTP_STATELESS=str(stateless).lower(),
        BIOMCP_SYNC_BATCH_SIZE="4",
    )
    with ExitStack() as stack:
        # One after the other: the second starts on a data folder the first has set up.
        yield [stack.enter_context(serve_http(["--port", "0"], env=env, cwd=root)) for _ in "ab"]


@pytest.fixture(scope="module")
def stateless_pair(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeEutilsServer
) -> Iterator[list[HttpServer]]:
    yield from _replicas(tmp_path_factory.mktemp("stateless"), fake, stateless=True)


@pytest.fixture(scope="module")
def stateful_pair(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeEutilsServer
) -> Iterator[list[HttpServer]]:
    yield from _replicas(tmp_path_factory.mktemp("stateful"), fake, stateless=False)


def _through_round_robin(replicas: list[HttpServer], mode: str, calls: int = CALLS) -> Outcome:
    """`calls` calls of `corpus_overview` by one SDK client (`mode`) through a new balancer."""

    async def scenario() -> Outcome:
        upstreams = [("127.0.0.1", replica.port) for replica in replicas]
        async with round_robin(upstreams) as balancer:
            answered, errors = 0, []
            async with (
                httpx2.AsyncClient(timeout=httpx2.Timeout(60.0, read=120.0)) as http,
                Client(
                    streamable_http_client(f"{balancer.base_url}/mcp", http_client=http),
                    mode=mode,
                    read_timeout_seconds=120,
                ) as client,
            ):
                for _ in range(calls):
                    try:
                        result = await client.call_tool("corpus_overview", {})
                    except MCPError as exc:
                        errors.append(exc.error.message)
                        continue
                    assert not result.is_error, result
                    answered += 1
                protocol = client.protocol_version
            return Outcome(protocol, answered, errors, balancer)

    return asyncio.run(scenario())


def _statuses(replica: HttpServer, since: int = 0) -> list[tuple[str, int]]:
    """(method, status) of each `/mcp` request in the replica's access log from `since` (an
    offset in its stderr)."""
    log = replica.stderr_text()[since:]
    return [(m["method"], int(m["status"])) for m in ACCESS_LINE.finditer(log)]


def _log_sizes(replicas: list[HttpServer]) -> list[int]:
    return [len(replica.stderr_text()) for replica in replicas]


def _assert_both_served(outcome: Outcome, replicas: list[HttpServer], since: list[int]) -> None:
    """Each replica got about half the calls (balancer) and answered them (its own log)."""
    for index, replica in enumerate(replicas):
        assert outcome.balancer.served(index, "tools/call") >= CALLS // 2 - 1
        answered = [s for s in _statuses(replica, since[index]) if s == ("POST", 200)]
        assert len(answered) >= CALLS // 2 - 1, replica.stderr_text()[-2000:]


# --- with MCP_HTTP_STATELESS ---------------------------------------------------------------


def test_a_legacy_client_succeeds_on_every_call_through_round_robin_when_stateless(
    stateless_pair: list[HttpServer],
) -> None:
    since = _log_sizes(stateless_pair)
    outcome = _through_round_robin(stateless_pair, "legacy")

    assert outcome.protocol == LEGACY
    assert (outcome.answered, outcome.errors) == (CALLS, [])
    _assert_both_served(outcome, stateless_pair, since)


def test_a_sessionless_client_succeeds_on_every_call_through_round_robin_when_stateless(
    stateless_pair: list[HttpServer],
) -> None:
    since = _log_sizes(stateless_pair)
    outcome = _through_round_robin(stateless_pair, "auto")

    assert outcome.protocol == SESSIONLESS
    assert (outcome.answered, outcome.errors) == (CALLS, [])
    _assert_both_served(outcome, stateless_pair, since)


def test_a_sync_reports_progress_in_its_own_answer_through_round_robin_when_stateless(
    stateless_pair: list[HttpServer], fake: FakeEutilsServer
) -> None:
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async def scenario() -> None:
        upstreams = [("127.0.0.1", replica.port) for replica in stateless_pair]
        async with (
            round_robin(upstreams) as balancer,
            httpx2.AsyncClient(timeout=httpx2.Timeout(60.0, read=300.0)) as http,
            Client(
                streamable_http_client(f"{balancer.base_url}/mcp", http_client=http),
                mode="legacy",
                read_timeout_seconds=300,
            ) as client,
        ):
            result = await client.call_tool(
                "pubmed_sync_delta",
                {"query_key": "stateless", "term": "humans[mh] OR animals[mh]"},
                progress_callback=on_progress,
            )
            assert not result.is_error, result
            assert result.structured_content is not None
            assert result.structured_content["inserted"] == len(fake.corpus), result

    asyncio.run(scenario())

    assert seen, "no progress notification reached the client"
    assert seen[-1] == (len(fake.corpus), len(fake.corpus))


def test_a_stateless_replica_opens_no_session_and_no_stream(
    stateless_pair: list[HttpServer],
) -> None:
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "stateless-test", "version": "0"},
        },
    }
    with httpx.Client(base_url=stateless_pair[0].base_url, timeout=60) as http:
        index = http.get("/").json()
        opened = http.post("/mcp", json=hello, headers=MCP_HEADERS)
        stream = http.get(
            "/mcp",
            headers={"Accept": "text/event-stream", "Mcp-Protocol-Version": LEGACY},
        )
        resume = http.get(
            "/mcp",
            headers={
                "Accept": "text/event-stream",
                "Mcp-Protocol-Version": LEGACY,
                "Last-Event-ID": "an-event-of-another-replica",
            },
        )

    assert index["stateless"] is True
    assert opened.status_code == 200, opened.text
    assert "mcp-session-id" not in opened.headers
    assert not any(line.startswith("id:") for line in opened.text.splitlines())  # not resumable
    for refused in (stream, resume):
        assert refused.status_code == 405, refused.text
        assert refused.headers["allow"] == "POST"
        assert "stateless" in refused.json()["error"]["message"]


# --- without it ------------------------------------------------------------------------------


def test_a_sessionless_client_succeeds_on_every_call_through_round_robin_without_the_setting(
    stateful_pair: list[HttpServer],
) -> None:
    since = _log_sizes(stateful_pair)
    outcome = _through_round_robin(stateful_pair, "auto")

    assert outcome.protocol == SESSIONLESS
    assert (outcome.answered, outcome.errors) == (CALLS, [])
    _assert_both_served(outcome, stateful_pair, since)


def test_a_legacy_client_fails_with_session_not_found_through_round_robin_without_the_setting(
    stateful_pair: list[HttpServer],
) -> None:
    with httpx.Client(base_url=stateful_pair[0].base_url, timeout=60) as http:
        assert http.get("/").json()["stateless"] is False

    since = _log_sizes(stateful_pair)
    outcome = _through_round_robin(stateful_pair, "legacy")

    assert outcome.protocol == LEGACY
    # Every request that reaches the replica that did not open the session fails; a call
    # sends one or two (tools/list, for the output schema), so at least every other one.
    assert len(outcome.errors) >= CALLS // 2, outcome
    assert set(outcome.errors) == {"Session not found"}
    opener = next(r.upstream for r in outcome.balancer.routes if r.rpc_method == "initialize")
    other = 1 - opener
    assert {status for _, status in _statuses(stateful_pair[other], since[other])} == {404}

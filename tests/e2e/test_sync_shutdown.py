"""Syncs pile up, clients give up, processes stop or die: real `biomcp` processes against the
fake E-utilities (each EFetch late), driven over HTTP by the MCP SDK and by signals.

- Eight HTTP clients that give up after 2 s while search and `/readyz` keep answering.
- SIGTERM during syncs stops the server (or the CLI) within the stop bound, and its jobs read
  `interrupted`, with no traceback logged.
- A process killed with SIGKILL leaves jobs that the next status read, from another process,
  finds `interrupted`.

Bounds are generous (15 s for a call that takes milliseconds; 30 s to stop): the tests assert
which states the jobs reach, not how fast."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import time
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from biomcp.entrypoints.cli.common import EXIT_INTERRUPTED
from biomcp.entrypoints.services import build_services
from biomcp.entrypoints.settings import Settings
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, FaultInjector, generate_articles
from tests.support.servers import (
    STOP_TIMEOUT_S,
    biomcp_command,
    mcp_http,
    serve_http,
    server_env,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

TERM = "humans[mh] OR animals[mh]"
ANSWER_S = 15.0
OPEN = ("queued", "running")


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    """30 records; each EFetch 1 s late, so a sync in batches of 5 takes at least 6 s."""
    today = date.today()
    xml = generate_articles(30, start=today - timedelta(days=10), end=today, seed=39)
    faults = FaultInjector(delay=1.0)
    faults.sequence(["slow"] * 1000, endpoint="efetch")
    with FakeEutilsServer(FakeCorpus.from_xml_bytes(xml), faults=faults) as server:
        yield server


def _env(tmp_path: Path, fake: FakeEutilsServer, **extra: str) -> dict[str, str]:
    return server_env(
        tmp_path / "data",
        fake.base_url,
        BIOMCP_SYNC_BATCH_SIZE="5",
        BIOMCP_SYNC_INITIAL_DAYS="0",
        **extra,
    )


def _jobs(tmp_path: Path) -> dict[str, list[str]]:
    """Each key's job states, read (and settled: a dead owner's job is interrupted) by a
    process of its own, as `corpus_sync_status` would."""
    settings = Settings(_env_file=None, biomcp_data_dir=tmp_path / "data")

    async def read() -> dict[str, list[str]]:
        services = build_services(settings)
        try:
            found: dict[str, list[str]] = {}
            for job in await services.metadata.list_jobs(limit=200):
                status = (await services.jobs.status(job.job_id))["status"]
                found.setdefault(job.query_key, []).append(status)
            return found
        finally:
            await services.aclose()

    return asyncio.run(read())


def _all_states(tmp_path: Path) -> list[str]:
    return [state for states in _jobs(tmp_path).values() for state in states]


async def _tool(client: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result
    answer: dict[str, Any] = result.structured_content
    return answer


def _wait_for(predicate: Any, what: str, rounds: int = 1200) -> None:
    """Poll `predicate` (each round 0.1 s apart) until it holds; bounded."""
    for _ in range(rounds):
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"never: {what}")


def test_eight_http_clients_that_give_up_leave_a_server_that_answers_and_ends_every_sync(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    keys = [f"h{i}" for i in range(8)]
    with serve_http(["--port", "0"], env=_env(tmp_path, fake), cwd=tmp_path) as server:

        async def impatient(key: str) -> None:
            async with mcp_http(server.url) as client:
                with anyio.move_on_after(2.0):  # the client's own timeout
                    await _tool(client, "pubmed_sync_delta", {"query_key": key, "term": TERM})

        async def scenario() -> tuple[int, int]:
            searches = probes = 0
            async with httpx.AsyncClient(base_url=server.base_url, timeout=ANSWER_S) as http:
                async with anyio.create_task_group() as group:
                    for key in keys:
                        group.start_soon(impatient, key)
                async with mcp_http(server.url) as client:
                    for _ in range(1200):  # while the syncs run and queue
                        with anyio.fail_after(ANSWER_S):
                            result = await client.call_tool(
                                "rag_search", {"query": "trial", "top_k": 3}
                            )
                        assert not result.is_error or "NOT_FOUND" in str(result.content)
                        searches += 1
                        with anyio.fail_after(ANSWER_S):
                            ready = await http.get("/readyz")
                        assert ready.status_code == 200, ready.text
                        probes += 1
                        states = await asyncio.to_thread(_jobs, tmp_path)
                        if len(states) == 8 and not any(
                            s in OPEN for found in states.values() for s in found
                        ):
                            break
                        await asyncio.sleep(1.0)
            return searches, probes

        searches, probes = asyncio.run(scenario())
        assert searches >= 2
        assert probes >= 2
        assert server.stop() == 0
        assert "Traceback" not in server.stderr_text()
    assert _jobs(tmp_path) == {key: ["succeeded"] for key in keys}


def test_sigterm_stops_a_server_with_running_and_queued_syncs_and_they_read_interrupted(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    env = _env(tmp_path, fake, BIOMCP_SYNC_WAIT_S="0")
    with serve_http(["--port", "0"], env=env, cwd=tmp_path) as server:

        async def start() -> None:
            async with mcp_http(server.url) as client:
                for key in ("t1", "t2", "t3"):
                    await _tool(client, "pubmed_sync_delta", {"query_key": key, "term": TERM})

        asyncio.run(start())
        _wait_for(
            lambda: "running" in _all_states(tmp_path),
            "a job running",
        )
        assert server.stop(signal.SIGTERM) == 0  # within STOP_TIMEOUT_S, or the test fails
        log = server.stderr_text()
        assert "Traceback" not in log
        assert "Executor shutdown" not in log
    assert _jobs(tmp_path) == {key: ["interrupted"] for key in ("t1", "t2", "t3")}


def _cli_sync(tmp_path: Path, fake: FakeEutilsServer, key: str) -> subprocess.Popen[str]:
    return subprocess.Popen(  # noqa: S603 - our own entry point, fixed arguments
        [*biomcp_command(), "sync", "-k", key, "-t", TERM, "-q"],
        env=_env(tmp_path, fake),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_sigterm_stops_a_cli_sync_and_its_job_reads_interrupted(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    process = _cli_sync(tmp_path, fake, "cli_term")
    try:
        _wait_for(lambda: _jobs(tmp_path).get("cli_term") == ["running"], "the CLI job running")
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=STOP_TIMEOUT_S)
    finally:
        process.kill()
    assert process.returncode == EXIT_INTERRUPTED, stderr
    assert "Traceback" not in stderr
    assert _jobs(tmp_path) == {"cli_term": ["interrupted"]}


def test_a_killed_cli_sync_reads_interrupted_from_another_process(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    process = _cli_sync(tmp_path, fake, "cli_kill")
    try:
        _wait_for(lambda: _jobs(tmp_path).get("cli_kill") == ["running"], "the CLI job running")
    finally:
        process.kill()  # SIGKILL: no chance to record anything
        process.communicate(timeout=STOP_TIMEOUT_S)
    assert _jobs(tmp_path) == {"cli_kill": ["interrupted"]}


def test_a_killed_server_leaves_its_running_and_queued_jobs_interrupted(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    env = _env(tmp_path, fake, BIOMCP_SYNC_WAIT_S="0", BIOMCP_SYNC_MAX_RUNNING="1")
    with serve_http(["--port", "0"], env=env, cwd=tmp_path) as server:

        async def start() -> None:
            async with mcp_http(server.url) as client:
                for key in ("k1", "k2"):
                    await _tool(client, "pubmed_sync_delta", {"query_key": key, "term": TERM})

        asyncio.run(start())
        _wait_for(
            lambda: sorted(_all_states(tmp_path)) == ["queued", "running"],
            "one job running, one queued",
        )
        server.kill()
    assert _jobs(tmp_path) == {"k1": ["interrupted"], "k2": ["interrupted"]}


def _rpc(process: subprocess.Popen[str], message: dict[str, Any]) -> dict[str, Any] | None:
    """Send one JSON-RPC message on the server's stdin; for a request, its answer."""
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()
    if "id" not in message:
        return None
    for line in process.stdout:  # notifications may come first
        answer: dict[str, Any] = json.loads(line)
        if answer.get("id") == message["id"]:
            return answer
    raise AssertionError("the server closed stdout")


def test_sigterm_stops_a_stdio_server_with_a_sync_running_and_its_job_reads_interrupted(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    log = (tmp_path / "serve.stderr").open("w+", encoding="utf-8")
    process = subprocess.Popen(  # noqa: S603 - our own entry point, fixed arguments
        [*biomcp_command(), "serve"],
        env=_env(tmp_path, fake, BIOMCP_SYNC_WAIT_S="0"),
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    try:
        _rpc(
            process,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"},
                },
            },
        )
        _rpc(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        answer = _rpc(
            process,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {
                    "name": "pubmed_sync_delta",
                    "arguments": {"query_key": "stdio", "term": TERM},
                },
            },
        )
        assert answer is not None
        assert "result" in answer, answer
        _wait_for(lambda: _jobs(tmp_path).get("stdio") == ["running"], "the job running")
        process.send_signal(signal.SIGTERM)  # stdin stays open: the client has not gone
        process.wait(timeout=STOP_TIMEOUT_S)
    finally:
        process.kill()
        log.seek(0)
        stderr = log.read()
        log.close()
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                pipe.close()
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert _jobs(tmp_path) == {"stdio": ["interrupted"]}

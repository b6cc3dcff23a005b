"""Jobs any replica can account for: two `biomcp serve-http` replicas over one PostgreSQL
schema and one data folder (the embedded vector store), driven over HTTP by the MCP SDK.

A sync started on replica A shows its progress on replica B; A killed with SIGKILL reads
`interrupted` on B within 10 s of the kill (its session ends, and with it A's advisory
lock); the next sync of the key, from B, completes the work with nothing lost or duplicated.
The fake E-utilities answer each EFetch 1 s late, so A's sync outlives the poll that sees it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from sqlalchemy import text

from biomcp.adapters.sql import upgrade
from biomcp.adapters.sql.engine import (
    PG_CLIENT_CHECK_MS,
    PG_KEEPALIVE_COUNT,
    PG_KEEPALIVE_IDLE_S,
    PG_KEEPALIVE_INTERVAL_S,
    make_engine,
)
from biomcp.domain.chunking import chunk_record
from biomcp.entrypoints.services import build_services
from biomcp.entrypoints.settings import Settings
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, FaultInjector, generate_articles
from tests.support.servers import HttpServer, mcp_http, serve_http, server_env
from tests.support.services import postgres_url
from tests.support.sql_databases import postgres_schema
from tests.support.sync_harness import matching

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

N = 50
TERM = "humans[mh] OR animals[mh]"
KEY = "replicas"
#: The issue's bound, from the kill to `interrupted` on the other replica.
INTERRUPTED_WITHIN_S = 10.0
#: Generous bounds for what takes seconds (a sync of N records, a job starting).
ROUNDS = 1800
POLL_S = 0.1


@pytest.fixture
def database() -> Iterator[str]:
    """A schema of the test's own, migrated (replicas on PostgreSQL do not migrate it)."""
    with postgres_schema(postgres_url()) as url:
        upgrade(url)
        yield url


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    """N records; each EFetch 1 s late, so a sync in batches of 5 takes at least 10 s."""
    today = date.today()
    xml = generate_articles(N, start=today - timedelta(days=10), end=today, seed=40)
    faults = FaultInjector(delay=1.0)
    faults.sequence(["slow"] * 1000, endpoint="efetch")
    with FakeEutilsServer(FakeCorpus.from_xml_bytes(xml), faults=faults) as server:
        yield server


def _env(tmp_path: Path, fake: FakeEutilsServer, database: str) -> dict[str, str]:
    return server_env(
        tmp_path / "data",
        fake.base_url,
        BIOMCP_DATABASE_URL=database,
        BIOMCP_SYNC_BATCH_SIZE="5",
        BIOMCP_SYNC_INITIAL_DAYS="0",
        BIOMCP_SYNC_WAIT_S="0",
    )


def _replicas(stack: ExitStack, env: dict[str, str], cwd: Path) -> tuple[HttpServer, HttpServer]:
    """Two replicas, started side by side (each start imports the whole stack)."""
    servers = [stack.enter_context(serve_http(["--port", "0"], env=env, cwd=cwd, wait=False))]
    servers.append(stack.enter_context(serve_http(["--port", "0"], env=env, cwd=cwd, wait=False)))
    for server in servers:
        server.wait_started()
        assert httpx.get(f"{server.base_url}/health", timeout=30).status_code == 200
    return servers[0], servers[1]


async def _tool(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content
    answer: dict[str, Any] = result.structured_content
    return answer


async def _status(client: Client, job_id: str) -> dict[str, Any]:
    return await _tool(client, "corpus_sync_status", {"job_id": job_id})


async def _sync(url: str) -> str:
    async with mcp_http(url) as client:
        answer = await _tool(client, "pubmed_sync_delta", {"query_key": KEY, "term": TERM})
    job_id: str = answer["job_id"]
    return job_id


async def _until_progress(client: Client, job_id: str) -> dict[str, Any]:
    """B's status of A's job once it shows records processed."""
    for _ in range(ROUNDS):
        status = await _status(client, job_id)
        progress = status["progress"]
        if status["status"] == "running" and progress and progress["processed"] > 0:
            return status
        assert status["status"] in ("queued", "running"), status
        await asyncio.sleep(POLL_S)
    raise AssertionError(f"job {job_id} never showed progress on the other replica")


async def _until_ended(client: Client, job_id: str, deadline: float) -> dict[str, Any]:
    while True:
        status = await _status(client, job_id)
        if status["status"] not in ("queued", "running") or time.monotonic() > deadline:
            return status
        await asyncio.sleep(POLL_S)


async def _stored(settings: Settings) -> tuple[list[str], set[str], set[str], int]:
    """(the stored PMIDs, the chunk uuids their records make, those the vector store has,
    the vector store's chunk count), read by a process of the test's own."""
    services = build_services(settings)
    try:
        pmids = await services.metadata.document_pmids(limit=10 * N)
        documents = await services.metadata.get_documents(pmids)
        chunking = services.sync.chunking
        expected = {
            chunk.uuid
            for document in documents.values()
            for chunk in chunk_record(document.record, chunking)
        }
        collection = settings.biomcp_collection
        found = await services.vectors.existing_uuids(collection, expected)
        return pmids, expected, found, await services.vectors.count(collection)
    finally:
        await services.aclose()


def test_a_replica_killed_mid_sync_reads_interrupted_on_the_other_and_its_next_sync_completes(
    tmp_path: Path, fake: FakeEutilsServer, database: str
) -> None:
    env = _env(tmp_path, fake, database)
    with ExitStack() as stack:
        a, b = _replicas(stack, env, tmp_path)
        job_id = asyncio.run(_sync(a.url))

        async def watch() -> tuple[dict[str, Any], dict[str, Any], float]:
            async with mcp_http(b.url) as client:
                seen = await _until_progress(client, job_id)
                killed_at = time.monotonic()
                await asyncio.to_thread(a.kill)
                ended = await _until_ended(client, job_id, killed_at + INTERRUPTED_WITHIN_S)
                return seen, ended, time.monotonic() - killed_at

        seen, ended, after_s = asyncio.run(watch())
        # Progress recorded by A, read on B: counted, under way, not B's own.
        assert seen["progress"]["here"] is False
        assert 0 < seen["progress"]["processed"] < seen["progress"]["total"] == N
        assert ended["status"] == "interrupted", (after_s, ended)

        async def complete() -> dict[str, Any]:
            again = await _sync(b.url)
            assert again != job_id
            async with mcp_http(b.url) as client:
                return await _until_ended(client, again, time.monotonic() + ROUNDS * POLL_S)

        done = asyncio.run(complete())
        assert done["status"] == "succeeded", done
        assert b.stop() == 0
        assert "Traceback" not in b.stderr_text()

    settings = Settings(
        _env_file=None, biomcp_data_dir=tmp_path / "data", biomcp_database_url=database
    )
    pmids, expected, found, count = asyncio.run(_stored(settings))
    oracle = set(matching(fake.corpus, "Humans")) | set(matching(fake.corpus, "Animals"))
    assert len(oracle) == N
    assert sorted(pmids) == sorted(oracle)  # none lost, none extra
    assert found == expected  # every chunk of every record indexed
    assert count == len(expected)  # and none twice


def test_a_postgresql_session_drops_a_vanished_client_within_seconds(database: str) -> None:
    engine = make_engine(database)
    try:
        with engine.connect() as connection:
            shown = [
                connection.execute(text(f"SHOW {name}")).scalar_one()
                for name in (
                    "tcp_keepalives_idle",
                    "tcp_keepalives_interval",
                    "tcp_keepalives_count",
                    "client_connection_check_interval",
                    "search_path",
                )
            ]
    finally:
        engine.dispose()
    assert shown[:4] == [
        str(PG_KEEPALIVE_IDLE_S),
        str(PG_KEEPALIVE_INTERVAL_S),
        str(PG_KEEPALIVE_COUNT),
        f"{PG_CLIENT_CHECK_MS // 1000}s",
    ]
    assert shown[4].startswith("t_")  # the URL's own options still apply

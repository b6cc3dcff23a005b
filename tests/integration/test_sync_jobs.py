"""Long syncs are jobs: `pubmed_sync_delta` answers within `BIOMCP_SYNC_WAIT_S` and the job goes
on; `corpus_sync_status` follows it to its end. Driven by the in-process MCP client; the fake
E-utilities answer EFetch slowly so the sync is still running when the answer comes. Nothing
here waits on the clock: the wait is 0 s and the status is polled until it changes."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from biomcp.entrypoints.mcp.contract import SPEC_OUTPUTS
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.mcp.tools.corpus.schemas import SYNC_STATUS_OUTPUT
from biomcp.entrypoints.services import Services
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, FaultInjector, generate_articles
from tests.support.mcp_inprocess import call_json as _call
from tests.support.mcp_inprocess import serve, test_settings

pytestmark = pytest.mark.integration

TERM = "humans[mh] OR animals[mh]"
N = 40


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    today = date.today()
    xml = generate_articles(N, start=today - timedelta(days=10), end=today, seed=41)
    faults = FaultInjector(delay=0.3)
    faults.sequence(["slow"] * 20, endpoint="efetch")
    with FakeEutilsServer(FakeCorpus.from_xml_bytes(xml), faults=faults) as server:
        yield server


async def _until_done(client: Client, job_id: str) -> dict[str, Any]:
    for _ in range(3000):  # bounded; each round is one status call
        error, status = await _call(client, "corpus_sync_status", {"job_id": job_id})
        assert not error, status
        Draft202012Validator(SYNC_STATUS_OUTPUT).validate(status)
        if status["status"] not in ("queued", "running"):
            finished: dict[str, Any] = status
            return finished
        await asyncio.sleep(0.02)
    raise AssertionError(f"job {job_id} never finished")


def test_a_long_sync_answers_at_once_and_its_job_reports_the_full_result(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    settings = test_settings(
        tmp_path, fake.base_url, biomcp_sync_wait_s=0, biomcp_sync_batch_size=10
    )

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, answer = await _call(
            client, "pubmed_sync_delta", {"query_key": "jobs_v1", "term": TERM}
        )
        assert not error, answer
        Draft202012Validator(SPEC_OUTPUTS["pubmed.sync_delta"]).validate(answer)
        job_id = answer["job_id"]
        assert answer["inserted"] < N  # partial: the job was still running
        assert any(job_id in w and "corpus_sync_status" in w for w in answer["warnings"])

        # Queued for a moment (its task has not begun), then running with live progress.
        for _ in range(3000):
            error, status = await _call(client, "corpus_sync_status", {"job_id": job_id})
            assert not error, status
            assert status["status"] in ("queued", "running")
            if status["status"] == "running":
                break
            await asyncio.sleep(0.01)
        assert status["status"] == "running"
        assert status["progress"]["here"] is True
        assert status["report"] is None

        done = await _until_done(client, job_id)
        assert done["status"] == "succeeded"
        assert done["progress"] is None
        assert done["finished_at"] is not None
        report = done["report"]
        assert report["job_id"] == job_id
        assert report["inserted"] == N
        assert report["pmids_processed"] == N

        # The synced corpus is searchable, and a replay finishes within the wait again.
        error, hits = await _call(client, "rag_search", {"query": "trial", "top_k": 3})
        assert not error
        assert hits["results"]

    serve(settings, body)


def test_a_sync_that_ends_within_the_wait_answers_its_report(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    fake.faults.clear()
    settings = test_settings(tmp_path, fake.base_url, biomcp_sync_wait_s=600)

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, answer = await _call(
            client, "pubmed_sync_delta", {"query_key": "jobs_v2", "term": TERM}
        )
        assert not error, answer
        assert answer["inserted"] == N
        assert answer["warnings"] == []
        done = await _until_done(client, answer["job_id"])
        assert done["status"] == "succeeded"
        assert done["report"] == answer

    serve(settings, body)


def test_an_unknown_job_is_not_found_and_an_empty_id_is_refused(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    settings = test_settings(tmp_path, fake.base_url)

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, answer = await _call(client, "corpus_sync_status", {"job_id": "sync_nope"})
        assert error
        assert answer["error"]["code"] == "NOT_FOUND"
        error, answer = await _call(client, "corpus_sync_status", {"job_id": ""})
        assert error
        assert answer["error"]["code"] == "VALIDATION"

    serve(settings, body)


def test_a_server_shutting_down_records_its_running_job_as_interrupted(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    settings = test_settings(
        tmp_path, fake.base_url, biomcp_sync_wait_s=0, biomcp_sync_batch_size=10
    )
    started: list[str] = []

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, answer = await _call(
            client, "pubmed_sync_delta", {"query_key": "jobs_v3", "term": TERM}
        )
        assert not error, answer
        started.append(answer["job_id"])
        # Wait on state: the job's record exists (it holds the key's lock and runs).
        for _ in range(3000):
            if await services.metadata.get_job(started[0]) is not None:
                return
            await asyncio.sleep(0.02)
        raise AssertionError("the job never recorded itself")

    serve(settings, body)  # closing the services stops the job

    async def check() -> None:
        from biomcp.entrypoints.services import build_services

        services = build_services(settings)
        try:
            job = await services.metadata.get_job(started[0])
            assert job is not None
            assert job.status == "interrupted"
            assert job.finished_at is not None
        finally:
            await services.aclose()

    asyncio.run(check())


def test_a_job_that_fails_before_it_could_record_itself_is_reported_failed(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    settings = test_settings(
        tmp_path, fake.base_url, biomcp_sync_wait_s=0, biomcp_sync_lock_timeout_s=0.2
    )

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        # Another sync of the key holds its lock for the whole test.
        async with services.metadata.query_lock("jobs_v4", timeout_s=5):
            error, answer = await _call(
                client, "pubmed_sync_delta", {"query_key": "jobs_v4", "term": TERM}
            )
            assert not error, answer
            done = await _until_done(client, answer["job_id"])
        assert done["status"] == "failed"
        assert done["query_key"] == "jobs_v4"
        assert done["error"].startswith("LockTimeoutError")
        assert done["report"] is None

    serve(settings, body)

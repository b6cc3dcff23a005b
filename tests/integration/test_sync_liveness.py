"""A server keeps answering while syncs pile up: waiting for a lock holds no worker thread,
a second sync of a key joins the job under way, and at most `BIOMCP_SYNC_MAX_RUNNING` jobs
run while the others queue. Driven by the in-process MCP client on an event loop whose
default executor has 6 threads, as asyncio gives a 2-core machine. The bounds are generous
(15 s for a search that takes milliseconds): each test asserts what the code controls
(which jobs exist, their states, that every call answered), not how fast it was."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from biomcp.entrypoints.errors import classify
from biomcp.entrypoints.mcp.server import build_server
from biomcp.entrypoints.services import Services, build_services
from biomcp.entrypoints.settings import Settings
from biomcp.ports.store_errors import LockTimeoutError
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, FaultInjector, generate_articles
from biomcp.usecases.indexing import INDEX_LOCK
from tests.support.mcp_inprocess import call_json as _call
from tests.support.mcp_inprocess import test_settings

pytestmark = pytest.mark.integration

TERM = "humans[mh] OR animals[mh]"
N = 30
#: What asyncio's default executor has on a 2-core machine: min(32, cores + 4).
THREADS = 6
#: A search that takes milliseconds must answer within this, however many syncs wait.
ANSWER_S = 15.0
OPEN = ("queued", "running")


def _fake(delay: float) -> FakeEutilsServer:
    """The fake E-utilities, each EFetch `delay` seconds late."""
    today = date.today()
    xml = generate_articles(N, start=today - timedelta(days=10), end=today, seed=38)
    faults = FaultInjector(delay=delay)
    faults.sequence(["slow"] * 400, endpoint="efetch")
    return FakeEutilsServer(FakeCorpus.from_xml_bytes(xml), faults=faults)


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    with _fake(0.2) as server:
        yield server


@pytest.fixture
def slow_fake() -> Iterator[FakeEutilsServer]:
    """A sync of it takes at least 6 x 2 s: longer than eight retries a second apart."""
    with _fake(2.0) as server:
        yield server


Body = Callable[[Client, Services], Awaitable[None]]


def _serve(settings: Settings, body: Body) -> None:
    async def main() -> None:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(THREADS))
        services = build_services(settings)
        server = build_server(services)
        try:
            async with Client(server) as client:
                await body(client, services)
        finally:
            await services.aclose()

    asyncio.run(main())


async def _keep_searching(client: Client, answers: list[float], stop: anyio.Event) -> None:
    """Ask `rag_search` every second until `stop`; each answer's wait goes to `answers`."""
    while not stop.is_set():
        began = anyio.current_time()
        with anyio.fail_after(ANSWER_S):
            error, hits = await _call(client, "rag_search", {"query": "trial", "top_k": 3})
        # An answer: hits, or (before the first sync commits) that the corpus is empty.
        assert not error or hits["error"]["code"] == "NOT_FOUND", hits
        answers.append(anyio.current_time() - began)
        with anyio.move_on_after(1.0):
            await stop.wait()


async def _until_ended(services: Services, keys: list[str]) -> dict[str, list[str]]:
    """Each key's job states once none of them is queued or running (bounded)."""
    for _ in range(6000):
        states = {
            key: [job.status for job in await services.metadata.list_jobs(key)] for key in keys
        }
        if all(s and not any(state in OPEN for state in s) for s in states.values()):
            return states
        await asyncio.sleep(0.05)
    raise AssertionError(f"jobs never ended: {states}")


def test_eight_syncs_of_one_key_cancelled_after_one_second_make_one_job_and_search_answers(
    slow_fake: FakeEutilsServer, tmp_path: Path
) -> None:
    settings = test_settings(tmp_path, slow_fake.base_url, biomcp_sync_batch_size=5)
    answers: list[float] = []

    async def body(client: Client, services: Services) -> None:
        stop = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(_keep_searching, client, answers, stop)
            for _ in range(8):  # an impatient agent retries its slow sync
                with anyio.move_on_after(1.0):
                    await _call(client, "pubmed_sync_delta", {"query_key": "k1", "term": TERM})
            states = await _until_ended(services, ["k1"])
            stop.set()
        assert states == {"k1": ["succeeded"]}  # the seven retries joined the first job
        checkpoint = await services.metadata.get_checkpoint("k1")
        assert checkpoint.last_edat is not None

    _serve(settings, body)
    assert len(answers) >= 2  # it kept searching while the job ran


def test_eight_syncs_of_eight_keys_queue_behind_two_and_all_end_while_search_answers(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    settings = test_settings(
        tmp_path, fake.base_url, biomcp_sync_batch_size=5, biomcp_sync_wait_s=0
    )
    keys = [f"key_{i}" for i in range(8)]
    answers: list[float] = []
    seen_queued: list[int] = []
    #: How many syncs run at once, counted where the jobs start and end them (one event loop:
    #: a status read job by job is no snapshot, since a job may end and another start between).
    running = {"now": 0, "peak": 0}

    async def body(client: Client, services: Services) -> None:
        run_request = services.sync.run_request

        async def counted(*args: Any, **kwargs: Any) -> Any:
            running["now"] += 1
            running["peak"] = max(running["peak"], running["now"])
            try:
                return await run_request(*args, **kwargs)
            finally:
                running["now"] -= 1

        services.sync.run_request = counted  # type: ignore[method-assign]
        stop = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(_keep_searching, client, answers, stop)
            jobs = []
            for key in keys:
                with anyio.fail_after(ANSWER_S):
                    error, answer = await _call(
                        client, "pubmed_sync_delta", {"query_key": key, "term": TERM}
                    )
                assert not error, answer
                jobs.append(answer["job_id"])
            assert len(set(jobs)) == 8
            while True:
                with anyio.fail_after(ANSWER_S):
                    statuses = [
                        (await _call(client, "corpus_sync_status", {"job_id": job}))[1]["status"]
                        for job in jobs
                    ]
                seen_queued.append(statuses.count("queued"))
                if not any(status in OPEN for status in statuses):
                    break
                await asyncio.sleep(0.1)
            stop.set()
        states = await _until_ended(services, keys)
        assert states == {key: ["succeeded"] for key in keys}
        for key in keys:
            assert (await services.metadata.get_checkpoint(key)).last_edat is not None

    _serve(settings, body)
    assert 1 <= running["peak"] <= 2  # BIOMCP_SYNC_MAX_RUNNING's default
    assert max(seen_queued) >= 1  # the others waited in the queue
    assert len(answers) >= 2


def test_a_lock_wait_holds_no_worker_thread_and_a_cancelled_waiter_leaves_the_lock_free(
    tmp_path: Path,
) -> None:
    settings = test_settings(tmp_path, "http://127.0.0.1:9")

    async def main() -> None:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(2))
        services = build_services(settings)
        store = services.metadata
        try:
            async with store.query_lock("busy", timeout_s=0):
                waiters = [
                    asyncio.ensure_future(_enter(store.query_lock("busy", timeout_s=120)))
                    for _ in range(8)
                ]
                await asyncio.sleep(0.2)  # they are all waiting now
                # Eight waiters, two threads: a thread is still free for anyone else.
                with anyio.fail_after(ANSWER_S):
                    assert await asyncio.to_thread(os.getpid) == os.getpid()
                for waiter in waiters:
                    waiter.cancel()
                await asyncio.gather(*waiters, return_exceptions=True)
                assert all(waiter.cancelled() for waiter in waiters)
            # No cancelled waiter took the lock on its way out.
            async with store.query_lock("busy", timeout_s=0):
                pass
        finally:
            await services.aclose()

    asyncio.run(main())


async def _enter(lock: Any) -> None:
    async with lock:
        pass


def test_a_lock_wait_that_runs_out_is_a_retryable_timeout_naming_the_holder(
    tmp_path: Path,
) -> None:
    settings = test_settings(tmp_path, "http://127.0.0.1:9")

    async def main() -> tuple[LockTimeoutError, LockTimeoutError]:
        services = build_services(settings)
        store = services.metadata
        caught = []
        try:
            for key in ("asthma", INDEX_LOCK):
                async with store.query_lock(key, timeout_s=0):
                    with pytest.raises(LockTimeoutError) as raised:
                        async with store.query_lock(key, timeout_s=0.2):
                            pass
                    caught.append(raised.value)
        finally:
            await services.aclose()
        return caught[0], caught[1]

    by_key, by_index = asyncio.run(main())
    code, message, details = classify(by_key)
    assert code == "TIMEOUT"
    assert details["retryable"] is True
    assert details["holder"]["pid"] == os.getpid()
    assert details["query_key"] == "asthma"
    assert "'asthma'" in message
    assert f"pid {os.getpid()}" in message
    code, message, details = classify(by_index)
    assert code == "TIMEOUT"
    assert INDEX_LOCK not in message  # an internal name means nothing to the caller
    assert "corpus index" in message
    assert details["query_key"] is None


def test_a_second_sync_of_a_key_under_way_answers_with_its_job_and_says_it_joined(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    settings = test_settings(
        tmp_path, fake.base_url, biomcp_sync_batch_size=5, biomcp_sync_wait_s=0
    )

    async def body(client: Client, services: Services) -> None:
        arguments = {"query_key": "again", "term": TERM}
        error, first = await _call(client, "pubmed_sync_delta", arguments)
        assert not error, first
        error, second = await _call(client, "pubmed_sync_delta", arguments)
        assert not error, second
        assert second["job_id"] == first["job_id"]
        assert any("joined" in warning for warning in second["warnings"])
        assert not any("joined" in warning for warning in first["warnings"])
        # Another term for the key is another job, queued behind the first.
        error, other = await _call(
            client, "pubmed_sync_delta", {"query_key": "again", "term": "humans[mh]"}
        )
        assert not error, other
        assert other["job_id"] != first["job_id"]
        states = await _until_ended(services, ["again"])
        assert states == {"again": ["succeeded", "succeeded"]}

    _serve(settings, body)

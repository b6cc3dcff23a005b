"""NCBI's budget shared through a file: limiters that stand for separate processes, over one
file and one virtual clock, never start more than NCBI allows together."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from pathlib import Path

import pytest

from biomcp.adapters.entrez.budget import (
    FileStartLog,
    budget_file,
    budget_identity,
    fallback_share,
)
from biomcp.adapters.entrez.budget_sql import SqlBudget, SqlStartLog
from biomcp.adapters.entrez.client import EntrezSettings, HttpEntrezClient
from biomcp.adapters.entrez.ratelimit import MARGIN_S, WINDOW_S, RateLimiter
from biomcp.entrypoints.backends import entrez_settings
from biomcp.entrypoints.settings import Settings
from tests.support.virtual_time import VirtualTime, most_in_span

pytestmark = pytest.mark.unit

SPAN = WINDOW_S + MARGIN_S


def test_two_processes_sharing_a_file_share_one_window(tmp_path: Path) -> None:
    clock = VirtualTime()
    path = tmp_path / "budget.bin"
    first, second = (
        RateLimiter(3, clock=clock, sleep=clock.sleep, shared=FileStartLog(path, clock=clock))
        for _ in range(2)
    )

    async def scenario() -> None:
        tasks = [asyncio.create_task(limiter.acquire()) for limiter in (first, second) * 5]
        await clock.run(tasks)

    asyncio.run(scenario())
    starts = [*first.history(), *second.history()]
    assert len(starts) == 10
    assert most_in_span(starts, SPAN) == 3  # alone, each would have started 3 at once
    assert len(FileStartLog(path, clock=clock).starts()) == 3  # only the last ones are kept


def test_a_start_recorded_in_the_future_counts_as_now(tmp_path: Path) -> None:
    clock = VirtualTime()
    log = FileStartLog(tmp_path / "b.bin", clock=clock)
    assert log.take(1, SPAN, 0.0) == 0.0
    clock.now -= 3600  # the wall clock was set back an hour
    assert log.take(1, SPAN, 0.0) == pytest.approx(SPAN)
    clock.now += SPAN
    assert log.take(1, SPAN, 0.0) == 0.0


def test_the_file_is_per_identity_and_never_holds_the_key(tmp_path: Path) -> None:
    keyed = budget_file(tmp_path, "http://x/eutils/", "secret-key")
    assert keyed == budget_file(tmp_path, "http://y/eutils", "secret-key")  # NCBI counts a key
    assert budget_file(tmp_path, "http://x/eutils", None) == budget_file(
        tmp_path, "http://x/eutils/", None
    )
    assert budget_file(tmp_path, "http://x/eutils", None) != keyed
    assert "secret" not in keyed.name
    clock = VirtualTime()
    FileStartLog(keyed, clock=clock).take(3, SPAN, 0.0)
    assert b"secret" not in keyed.read_bytes()


def test_an_unusable_file_warns_once_and_leaves_the_process_its_own_share(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")  # the budget's folder cannot be made, even by root
    clock = VirtualTime()
    limiter = RateLimiter(
        10, clock=clock, sleep=clock.sleep, shared=FileStartLog(blocked / "b.bin", clock=clock)
    )
    with caplog.at_level(logging.WARNING, logger="biomcp.entrez"):
        first = [limiter.try_start() for _ in range(5)]
    warnings = [r for r in caplog.records if "budget file" in r.getMessage()]
    assert len(warnings) == 1
    assert limiter.limit == fallback_share(10) == 3
    assert first[:3] == [0.0, 0.0, 0.0]
    assert first[3] > 0


class ThreadRecordingLog:
    """A blocking start log in memory that lets `allowed` starts through, then asks to wait;
    it notes the thread of each `take`."""

    blocking = True

    def __init__(self, allowed: int) -> None:
        self.usable = True
        self.allowed = allowed
        self.threads: list[int] = []

    def take(self, limit: int, span: float, interval: float) -> float:
        self.threads.append(threading.get_ident())
        if self.allowed <= 0:
            return 0.05
        self.allowed -= 1
        return 0.0


def test_a_blocking_log_is_asked_from_a_worker_thread_never_on_the_event_loop() -> None:
    log = ThreadRecordingLog(allowed=3)
    limiter = RateLimiter(3, shared=log)

    async def scenario() -> int:
        await asyncio.gather(*(limiter.acquire() for _ in range(3)))
        return threading.get_ident()

    loop_thread = asyncio.run(scenario())
    assert len(limiter.history()) == 3
    assert len(log.threads) == 3
    assert loop_thread not in log.threads


def test_while_a_blocking_log_says_wait_no_caller_of_the_process_starts() -> None:
    log = ThreadRecordingLog(allowed=1)
    limiter = RateLimiter(3, shared=log)

    async def scenario() -> tuple[int, int, int]:
        tasks = [asyncio.create_task(limiter.acquire()) for _ in range(3)]
        while len(log.threads) < 3:  # the second caller has been told to wait, twice
            await asyncio.sleep(0.01)
        started, queued, sync_start = len(limiter.history()), limiter.queue_length, 0
        if limiter.try_start() == 0.0:
            sync_start = 1
        log.allowed = 2
        await asyncio.gather(*tasks)
        return started, queued, sync_start

    assert asyncio.run(scenario()) == (1, 2, 0)
    assert len(limiter.history()) == 3


def test_a_blocking_log_that_fails_leaves_the_process_its_own_share() -> None:
    class FailingLog(ThreadRecordingLog):
        def take(self, limit: int, span: float, interval: float) -> float:
            self.usable = False
            return 0.0

    limiter = RateLimiter(10, shared=FailingLog(allowed=0))

    async def scenario() -> None:
        await asyncio.gather(*(limiter.acquire() for _ in range(3)))

    asyncio.run(scenario())
    assert limiter.limit == fallback_share(10)
    assert len(limiter.history()) == 3
    assert limiter.try_start() > 0  # a fourth start waits: the process keeps to 3


@pytest.fixture
def settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Settings:
    """Settings from no bio-mcp variable and no `.env`."""
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith(("NCBI_", "BIOMCP_")):
            monkeypatch.delenv(name)
    return Settings(biomcp_data_dir=tmp_path / "data")


def test_on_postgresql_the_budget_goes_to_the_database_and_its_password_stays_hidden(
    settings: Settings,
) -> None:
    url = "postgresql+psycopg://bio:s3cret@db.example:5432/biomcp"
    on_postgres = settings.model_copy(update={"biomcp_database_url": url})

    given = entrez_settings(on_postgres)

    assert (given.budget_database_url, given.budget_dir) == (url, None)
    assert entrez_settings(settings).budget_dir == settings.biomcp_data_dir
    assert entrez_settings(settings).budget_database_url is None
    off = on_postgres.model_copy(update={"biomcp_ncbi_shared_budget": False})
    assert (entrez_settings(off).budget_database_url, entrez_settings(off).budget_dir) == (
        None,
        None,
    )
    client = HttpEntrezClient(given)  # connects to nothing until a request
    shared = client._limiter._shared
    assert isinstance(shared, SqlStartLog)
    assert "s3cret" not in repr(given) + repr(shared) + repr(SqlBudget(url, "x"))


def test_the_database_budget_names_the_identity_as_the_file_does(tmp_path: Path) -> None:
    keyed = EntrezSettings(
        base_url="http://x/", api_key="k3y", budget_database_url="postgresql://h/d"
    )
    identity = budget_identity("http://x", "k3y")

    assert HttpEntrezClient(keyed)._budget() == SqlBudget("postgresql://h/d", identity)
    assert budget_file(tmp_path, "http://y", "k3y").name == f"ncbi-budget-{identity}.bin"
    assert "k3y" not in identity


class SlowToAnswerLog:
    """A blocking start log that lets every start through, each `take` moving the limiter's
    clock by the next of `durations` (how long the answer took to come back)."""

    blocking = True

    def __init__(self, durations: list[float]) -> None:
        self.usable = True
        self.durations = durations
        self.now = 100.0
        self.takes = 0

    def clock(self) -> float:
        return self.now

    def take(self, limit: int, span: float, interval: float) -> float:
        self.now += self.durations[min(self.takes, len(self.durations) - 1)]
        self.takes += 1
        return 0.0


@pytest.mark.parametrize(
    ("durations", "takes"),
    [
        ([0.02, 0.02, 0.02], 3),  # on time: one take per start
        ([0.3, 0.3, 0.3], 3),  # a steady slow round trip delays every start alike
        ([0.02, 0.02, 0.5, 0.02], 4),  # the late answer's start is taken again
        ([0.02, 0.02, 0.5], 6),  # at most three retakes, then it starts
    ],
)
def test_a_start_the_log_answered_late_is_taken_again_nearer_the_send(
    durations: list[float], takes: int
) -> None:
    log = SlowToAnswerLog(durations)
    limiter = RateLimiter(10, clock=log.clock, shared=log)

    async def scenario() -> None:
        for _ in range(3):
            await limiter.acquire()

    asyncio.run(scenario())
    assert log.takes == takes
    assert len(limiter.history()) == 3

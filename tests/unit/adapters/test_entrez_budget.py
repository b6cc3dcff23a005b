"""NCBI's budget shared through a file: limiters that stand for separate processes, over one
file and one virtual clock, never start more than NCBI allows together."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from biomcp.adapters.entrez.budget import FileStartLog, budget_file, fallback_share
from biomcp.adapters.entrez.ratelimit import MARGIN_S, WINDOW_S, RateLimiter
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

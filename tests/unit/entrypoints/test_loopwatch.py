"""`LoopWatch` tells `/readyz` when the event loop or its worker threads stall. Each test
causes the stall itself (a blocking call on the loop, threads held by events) and lets it
go, so the verdicts follow from what the test did, not from the machine's speed."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from biomcp.entrypoints.http.loopwatch import LoopWatch

pytestmark = pytest.mark.unit


async def _beats(watch: LoopWatch, count: int) -> None:
    """Wait until the watch has beaten `count` more times (bounded)."""
    wanted = watch.beats + count
    for _ in range(2000):
        if watch.beats >= wanted:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the watch never beat")


def test_a_watch_not_started_and_a_healthy_loop_are_ok() -> None:
    async def scenario() -> tuple[str, str]:
        watch = LoopWatch(interval_s=0.01, stall_s=60.0)
        before = watch.check()
        watch.start()
        await _beats(watch, 3)
        after = watch.check()
        await watch.stop()
        return before, after

    assert asyncio.run(scenario()) == ("ok", "ok")


def test_a_loop_blocked_longer_than_the_bound_is_reported_until_the_window_passes() -> None:
    async def scenario() -> tuple[str, str]:
        watch = LoopWatch(interval_s=0.01, stall_s=0.2, window_s=0.5)
        watch.start()
        await _beats(watch, 1)
        time.sleep(0.5)  # a coroutine that blocks the loop
        await _beats(watch, 1)
        stalled = watch.check()
        await asyncio.sleep(0.6)  # past the window: the stall is history
        await _beats(watch, 1)
        recovered = watch.check()
        await watch.stop()
        return stalled, recovered

    stalled, recovered = asyncio.run(scenario())
    assert stalled.startswith("event loop stalled: it answered")
    # A loaded machine may stall again by itself, but never as long as the blocking call.
    late = re.search(r"answered ([0-9.]+) s late", recovered)
    assert recovered == "ok" or (late is not None and float(late[1]) < 0.45), recovered


def test_worker_threads_all_taken_are_reported_and_freed_threads_are_ok_again() -> None:
    release = threading.Event()

    async def scenario() -> tuple[str, str]:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(2))
        watch = LoopWatch(interval_s=0.01, stall_s=0.2)
        watch.start()
        await _beats(watch, 1)
        held = [loop.run_in_executor(None, release.wait) for _ in range(2)]
        for _ in range(2000):  # until the watch's no-op has waited past the bound
            if watch.check() != "ok":
                break
            await asyncio.sleep(0.01)
        busy = watch.check()
        release.set()
        await asyncio.gather(*held)
        await _beats(watch, 2)
        freed = watch.check()
        await watch.stop()
        return busy, freed

    busy, freed = asyncio.run(scenario())
    assert busy.startswith("worker threads busy: a no-op has waited")
    assert not freed.startswith("worker threads busy")

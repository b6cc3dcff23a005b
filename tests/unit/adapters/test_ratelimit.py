"""The process-wide NCBI rate limiter (a sliding-window log of starts), on virtual time."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.adapters.entrez.ratelimit import MARGIN_S, WINDOW_S, RateLimiter, shared_limiter
from tests.support.virtual_time import VirtualTime, most_in_span

pytestmark = pytest.mark.unit

SPAN = WINDOW_S + MARGIN_S


def _limiter(rate: float, clock: VirtualTime, *, min_interval_s: float = 0.0) -> RateLimiter:
    return RateLimiter(rate, clock=clock, sleep=clock.sleep, min_interval_s=min_interval_s)


def _callers(limiter: RateLimiter, count: int, order: list[int]) -> list[Coroutine[Any, Any, None]]:
    async def one(i: int) -> None:
        await limiter.acquire()
        order.append(i)

    return [one(i) for i in range(count)]


# --- the window, exactly ----------------------------------------------------------------


@pytest.mark.parametrize("rate", [3, 10])
def test_a_burst_starts_n_at_once_then_n_per_window_and_margin(rate: int) -> None:
    clock = VirtualTime()
    limiter = _limiter(rate, clock)
    order: list[int] = []

    async def scenario() -> None:
        tasks = [asyncio.create_task(c) for c in _callers(limiter, 3 * rate + 1, order)]
        await clock.run(tasks)

    asyncio.run(scenario())
    starts = limiter.history()
    expected = [100.0 + SPAN * (k // rate) for k in range(3 * rate + 1)]
    assert starts == pytest.approx(expected)
    assert most_in_span(starts, SPAN) == rate
    assert order == list(range(3 * rate + 1))  # first come, first served
    assert limiter.queue_length == 0


@given(
    rate=st.sampled_from([3, 10]),
    gaps=st.lists(st.floats(min_value=0, max_value=0.7), min_size=1, max_size=60),
    stalls=st.lists(st.floats(min_value=0, max_value=2.0), max_size=5),
)
def test_no_n_plus_one_starts_in_any_window_whatever_the_arrivals_and_stalls(
    rate: int, gaps: list[float], stalls: list[float]
) -> None:
    """Callers arrive at random, the loop stalls at random: the log of actual starts never
    holds N + 1 starts within window + margin, and nobody waits longer than needed."""
    clock = VirtualTime()
    limiter = _limiter(rate, clock)

    async def scenario() -> None:
        tasks: list[asyncio.Task[object]] = []
        pending = list(stalls)
        for gap in gaps:
            clock.now += gap
            tasks.append(asyncio.create_task(limiter.acquire()))
            await clock.settle()
            if pending:
                clock.stall(pending.pop())
        await clock.run(tasks)

    asyncio.run(scenario())
    starts = limiter.history()
    assert len(starts) == len(gaps)
    assert list(starts) == sorted(starts)
    for first, last in zip(starts, starts[rate:], strict=False):
        assert last - first >= SPAN
    assert most_in_span(starts, SPAN) <= rate


def test_try_start_says_exactly_how_long_to_wait() -> None:
    clock = VirtualTime()
    limiter = _limiter(3, clock)
    assert [limiter.try_start() for _ in range(3)] == [0.0, 0.0, 0.0]
    clock.now += 0.5
    assert limiter.try_start() == pytest.approx(SPAN - 0.5)
    clock.now = 100.0 + SPAN - 1e-9
    assert limiter.try_start() > 0
    clock.now = 100.0 + SPAN  # the first three are a whole span ago: three more may go
    assert [limiter.try_start() for _ in range(4)] == [0.0, 0.0, 0.0, pytest.approx(SPAN)]
    assert limiter.history() == pytest.approx([100.0] * 3 + [100.0 + SPAN] * 3)


def test_a_stalled_loop_releases_at_most_n_starts_together() -> None:
    """Six waiters, then the loop is blocked past three windows: when it runs again, three
    start at once (the window is empty) and the other three a window and margin later, not
    all six together as planned slots would have let them."""
    clock = VirtualTime()
    limiter = _limiter(3, clock)
    order: list[int] = []

    async def scenario() -> None:
        tasks = [asyncio.create_task(c) for c in _callers(limiter, 6, order)]
        await clock.settle()
        assert limiter.history() == (100.0, 100.0, 100.0)
        clock.stall(3 * SPAN)
        await clock.run(tasks)

    asyncio.run(scenario())
    resumed = 100.0 + 3 * SPAN
    assert limiter.history()[3:] == pytest.approx([resumed] * 3)
    assert order == list(range(6))


def test_a_cancelled_waiter_leaves_no_trace() -> None:
    clock = VirtualTime()
    limiter = _limiter(3, clock)
    order: list[int] = []

    async def scenario() -> None:
        tasks = [asyncio.create_task(c) for c in _callers(limiter, 7, order)]
        await clock.settle()
        assert limiter.queue_length == 4
        tasks[4].cancel()  # the second in line
        await clock.settle()
        assert limiter.queue_length == 3
        await clock.run([t for i, t in enumerate(tasks) if i != 4])

    asyncio.run(scenario())
    assert order == [0, 1, 2, 3, 5, 6]
    assert limiter.history() == pytest.approx([100.0] * 3 + [100.0 + SPAN] * 3)
    assert limiter.queue_length == 0


def test_a_cancelled_first_in_line_does_not_block_the_others() -> None:
    clock = VirtualTime()
    limiter = _limiter(3, clock)
    order: list[int] = []

    async def scenario() -> None:
        tasks = [asyncio.create_task(c) for c in _callers(limiter, 5, order)]
        await clock.settle()
        tasks[3].cancel()
        await clock.run([t for i, t in enumerate(tasks) if i != 3])

    asyncio.run(scenario())
    assert order == [0, 1, 2, 4]
    assert limiter.history()[-1] == pytest.approx(100.0 + SPAN)


def test_a_request_delay_spaces_starts_as_well() -> None:
    clock = VirtualTime()
    limiter = _limiter(10, clock, min_interval_s=0.5)
    order: list[int] = []

    async def scenario() -> None:
        await clock.run([asyncio.create_task(c) for c in _callers(limiter, 4, order)])

    asyncio.run(scenario())
    assert limiter.history() == pytest.approx([100.0, 100.5, 101.0, 101.5])


def test_threads_with_their_own_event_loops_share_one_window() -> None:
    """Real time, real threads: the limiter's own log (its clock, no network) still never
    holds N + 1 starts within the span. Exact: it checks what the limiter recorded."""
    limiter = RateLimiter(3, margin_s=0.0, window_s=0.3)

    def worker() -> None:
        async def calls() -> None:
            await asyncio.gather(*(limiter.acquire() for _ in range(4)))

        asyncio.run(calls())

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    starts = limiter.history()
    assert len(starts) == 12
    for first, last in zip(starts, starts[3:], strict=False):
        assert last - first >= 0.3


def test_a_start_is_recorded_on_the_limiter_clock_at_the_moment_it_is_allowed() -> None:
    limiter = RateLimiter(1000)
    before = time.monotonic()
    asyncio.run(limiter.acquire())
    assert before <= limiter.history()[-1] <= time.monotonic()


# --- identity and settings ---------------------------------------------------------------


def test_limiter_is_shared_per_ncbi_identity_across_the_process() -> None:
    a = shared_limiter("http://127.0.0.1:1/", has_api_key=True)
    b = shared_limiter("http://127.0.0.1:1", has_api_key=True)
    c = shared_limiter("http://127.0.0.1:1", has_api_key=False)
    assert a is b
    assert a is not c
    assert (a.limit, c.limit) == (10, 3)
    assert a.span == c.span == SPAN


def test_a_slower_client_of_the_same_identity_slows_the_shared_limiter() -> None:
    a = shared_limiter("http://127.0.0.1:2", has_api_key=False)
    b = shared_limiter("http://127.0.0.1:2", has_api_key=False, min_interval_s=0.4)
    c = shared_limiter("http://127.0.0.1:2", has_api_key=False, min_interval_s=0.1)
    assert a is b is c
    assert a.interval == 0.4


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ValueError, match="positive"):
        RateLimiter(0)
    with pytest.raises(ValueError, match="window_s"):
        RateLimiter(3, margin_s=-0.1)
    assert RateLimiter(2.9).limit == 2
    assert RateLimiter(0.5).limit == 1

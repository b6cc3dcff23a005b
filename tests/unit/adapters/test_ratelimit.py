"""The process-wide NCBI rate limiter, on an injected clock."""

from __future__ import annotations

import asyncio
import time
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.adapters.entrez.ratelimit import SAFETY_MARGIN, RateLimiter, shared_limiter

pytestmark = pytest.mark.unit


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@given(
    rate=st.sampled_from([3.0, 10.0]),
    arrivals=st.lists(st.floats(min_value=0, max_value=0.5), min_size=1, max_size=60),
)
def test_reserved_slots_never_put_more_than_rate_starts_in_any_one_second(
    rate: float, arrivals: list[float]
) -> None:
    clock = FakeClock()
    limiter = RateLimiter(rate, clock=clock)
    starts = []
    for gap in arrivals:
        clock.now += gap
        starts.append(clock.now + limiter.reserve())
    starts.sort()
    for i, start in enumerate(starts):
        in_window = [s for s in starts[i:] if s < start + 1.0]
        assert len(in_window) <= rate


def test_request_delay_slows_the_limiter_further() -> None:
    assert RateLimiter(10, min_interval_s=0.5).interval == 0.5
    assert RateLimiter(3).interval == pytest.approx((1 + SAFETY_MARGIN) / 3)


def test_limiter_is_shared_per_ncbi_identity_across_the_process() -> None:
    a = shared_limiter("http://127.0.0.1:1/", has_api_key=True)
    b = shared_limiter("http://127.0.0.1:1", has_api_key=True)
    c = shared_limiter("http://127.0.0.1:1", has_api_key=False)
    assert a is b
    assert a is not c
    assert a.interval < c.interval


def test_concurrent_waiters_are_counted_in_the_queue_and_released_in_turn() -> None:
    limiter = RateLimiter(50)

    async def scenario() -> tuple[list[float], list[int]]:
        starts: list[float] = []
        seen: list[int] = []

        async def one() -> None:
            await limiter.acquire()
            starts.append(time.monotonic())

        tasks = [asyncio.create_task(one()) for _ in range(6)]
        await asyncio.sleep(0.01)
        seen.append(limiter.queue_length)
        await asyncio.gather(*tasks)
        seen.append(limiter.queue_length)
        return starts, seen

    starts, seen = asyncio.run(scenario())
    assert seen[0] >= 4
    assert seen[1] == 0
    # The last waiter cannot start before its slot: five intervals after the first start.
    # (Single gaps are not asserted: a late wake-up of one waiter shortens the next gap.)
    assert starts[-1] - starts[0] >= limiter.interval * 5 * 0.8


def test_a_stalled_event_loop_does_not_release_a_burst() -> None:
    """Six waiters, then the loop is blocked past four of their slots: when it runs again, the
    waiters still start an interval apart, not together."""
    limiter = RateLimiter(20)

    async def scenario() -> list[float]:
        starts: list[float] = []

        async def one() -> None:
            await limiter.acquire()
            starts.append(time.monotonic())

        tasks = [asyncio.create_task(one()) for _ in range(6)]
        await asyncio.sleep(0)  # every waiter has reserved its slot
        time.sleep(limiter.interval * 4.5)  # the stall under test
        await asyncio.gather(*tasks)
        return starts

    starts = asyncio.run(scenario())
    gaps = [b - a for a, b in pairwise(starts)]
    assert len(gaps) == 5
    assert min(gaps) >= limiter.interval * 0.95, gaps


def test_a_non_positive_rate_is_rejected() -> None:
    with pytest.raises(ValueError, match="positive"):
        RateLimiter(0)

"""Virtual time for the rate limiter's tests: a clock and a sleep that take no real time."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Sequence

__all__ = ["VirtualTime", "most_in_span"]


class VirtualTime:
    """A clock and an `asyncio.sleep` stand-in on virtual time: `run` lets every runnable task
    run, then jumps the clock to the earliest sleeper's wake-up, so the limiter's decisions
    are exact and the test takes no real time."""

    def __init__(self) -> None:
        self.now = 100.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self.now + seconds, next(self._seq), future))
        await future

    async def settle(self) -> None:
        for _ in range(20):
            await asyncio.sleep(0)

    async def run(self, tasks: Sequence[asyncio.Task[object]]) -> None:
        await self.settle()
        while not all(task.done() for task in tasks):
            assert self._sleepers, "every task waits, but nobody sleeps"
            when = self._sleepers[0][0]
            self.now = max(self.now, when)
            while self._sleepers and self._sleepers[0][0] <= self.now:
                _, _, future = heapq.heappop(self._sleepers)
                if not future.done():
                    future.set_result(None)
            await self.settle()

    def stall(self, seconds: float) -> None:
        """The event loop blocked: time passes and nobody runs."""
        self.now += seconds


def most_in_span(starts: Sequence[float], span: float) -> int:
    """The most starts within any half-open interval [t, t + span)."""
    ordered = sorted(starts)
    return max(
        (sum(1 for u in ordered[i:] if u < t + span) for i, t in enumerate(ordered)), default=0
    )

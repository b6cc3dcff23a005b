"""NCBI's request-rate rule, enforced across every caller in the process.

NCBI allows 3 requests per second per IP without an API key and 10 with one. `RateLimiter` hands
out start times spaced `1.1 / rate` apart: the 10% margin means `rate` consecutive requests span
1.1 s, so the server, which sees arrival times with network and scheduling jitter, never counts
one request too many in a one-second window unless that jitter exceeds 100 ms. Scheduling
takes a thread lock only to reserve a slot and then sleeps outside it, so it works from any
event loop and any thread; a cancelled waiter simply leaves its slot unused.

Reserved slots alone are not enough: a waiter that wakes late (a stalled event loop, a busy
CPU, a garbage collection) would start together with the waiters whose slots came due
meanwhile, a burst NCBI counts. So a waiter also checks, when it wakes, that the previous
request started at least one interval ago, and waits for the rest if not: actual starts are
spaced, not only their plans.

`shared_limiter` returns one limiter per NCBI identity (base URL, with or without a key) for the
whole process: NCBI counts per client, not per `httpx.AsyncClient`, so two clients created by
mistake still share one budget.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

__all__ = ["RateLimiter", "shared_limiter"]

#: Fraction added to every interval: covers arrival-time jitter (network, a busy event loop).
SAFETY_MARGIN = 0.1


class RateLimiter:
    """Spaces request starts at least `interval` seconds apart (`rate` per second, or slower
    when `min_interval_s` says so)."""

    def __init__(
        self,
        rate_per_s: float,
        *,
        min_interval_s: float = 0.0,
        margin: float = SAFETY_MARGIN,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if rate_per_s <= 0:
            raise ValueError("rate_per_s must be positive")
        self.interval = max((1.0 + margin) / rate_per_s, min_interval_s)
        self._clock = clock
        self._lock = threading.Lock()
        self._next_slot = 0.0
        self._last_start = float("-inf")
        self._waiting = 0

    @property
    def queue_length(self) -> int:
        """Callers currently waiting for their slot."""
        return self._waiting

    def reserve(self) -> float:
        """Reserve the next slot; returns how long the caller must wait before starting."""
        with self._lock:
            now = self._clock()
            slot = max(now, self._next_slot)
            self._next_slot = slot + self.interval
            return slot - now

    def _start(self) -> float:
        """Start now if the previous start is at least an interval ago (returns 0), else how
        long to wait before asking again."""
        with self._lock:
            now = self._clock()
            wait = self._last_start + self.interval - now
            if wait <= 0:
                self._last_start = now
                return 0.0
            return wait

    async def acquire(self) -> None:
        """Wait for this caller's turn: its reserved slot, then an interval after the start
        before it."""
        delay = self.reserve()
        self._waiting += 1
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            while (wait := self._start()) > 0:
                await asyncio.sleep(wait)
        finally:
            self._waiting -= 1


_registry: dict[tuple[str, bool, float], RateLimiter] = {}
_registry_lock = threading.Lock()


def shared_limiter(base_url: str, *, has_api_key: bool, min_interval_s: float = 0.0) -> RateLimiter:
    """The process-wide limiter for one NCBI identity: 10/s with a key, 3/s without, never
    faster than `min_interval_s` (NCBI_REQUEST_DELAY_MS)."""
    key = (base_url.rstrip("/"), has_api_key, min_interval_s)
    with _registry_lock:
        limiter = _registry.get(key)
        if limiter is None:
            limiter = RateLimiter(10.0 if has_api_key else 3.0, min_interval_s=min_interval_s)
            _registry[key] = limiter
        return limiter

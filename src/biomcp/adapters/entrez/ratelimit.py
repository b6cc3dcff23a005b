"""NCBI's request-rate rule, enforced across every caller in the process.

NCBI allows 3 requests per second per IP without an API key and 10 with one, and it counts
what *arrives*, not what a client meant to send. `RateLimiter` therefore keeps a log of the
actual request starts (a sliding-window log): a request may start only when the N-th previous
start is at least `window_s + margin_s` ago, so no N + 1 starts ever fall within that span,
whatever the callers do (bursts, a stalled event loop, many threads). The log is the truth;
nothing is planned ahead, so a waiter that wakes late can never start "on its old slot"
together with the others.

**The margin: 0.25 s.** A start is taken just before the request is sent; NCBI sees it one
network delay later, and that delay varies from request to request. The largest regular
variation is a new connection against a reused one: TCP plus a TLS 1.3 handshake cost about two
round trips more, some 200 ms from Europe to NCBI (about 100 ms RTT), against a kept-alive
connection; an event loop or CPU under load adds tens of milliseconds. N + 1 arrivals fit in
one second only if the first of them was delayed more than 0.25 s longer than the last, which
covers both. The price is throughput: at most 2.4 requests per second without a key (3 per
1.25 s) and 8 with one, against NCBI's 3 and 10.

**No even spacing by default.** The window alone bounds what NCBI counts; spacing starts
`window / N` apart adds nothing to that bound (the risk is the same delay difference between
the first and the last of N + 1 starts) and makes every small burst (a tool call fanning out
three requests) slower. `min_interval_s` (NCBI_REQUEST_DELAY_MS) still spaces starts when an
operator asks for it.

Waiters are served first come, first served: each takes a ticket, and only the oldest ticket
may start; the others sleep until the time the window would let their turn come, then look
again. The state is guarded by a thread lock, taken only to check and record, never across a
sleep, so the limiter works from any event loop and any thread. A cancelled waiter gives its
ticket back and wakes the waiters behind it (through their own event loops), whose turn may
now come sooner: it leaves no trace, as nothing is reserved ahead of a start.

`shared_limiter` returns one limiter per NCBI identity (base URL, with or without a key) for the
whole process: NCBI counts per client, not per `httpx.AsyncClient`, so two clients created by
mistake, tool calls and syncs still share one budget. With a shared `StartLog` (a file in the
data folder, or a PostgreSQL table for replicas on several machines), the first waiter in line
also asks the log, so processes share the budget too. A log that waits on the network
(`blocking`) is asked from a worker thread while the waiter keeps its place at the head of the
line, so the event loop never waits on it and no other caller of the process starts meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from biomcp.adapters.entrez.budget import FileStartLog, StartLog, fallback_share
from biomcp.adapters.entrez.budget_sql import SqlBudget, SqlStartLog

__all__ = ["MARGIN_S", "WINDOW_S", "RateLimiter", "shared_limiter"]

#: NCBI's counting window.
WINDOW_S = 1.0
#: Added to the window to absorb arrival-time jitter (see the module docstring).
MARGIN_S = 0.25
#: Start times kept for inspection (`RateLimiter.history`).
_HISTORY = 4096
#: The shortest sleep of a waiter that may not start yet: waiters behind one that wakes late
#: look again at this pace, not in a busy loop.
_POLL_S = 0.005
#: What `_turn` returns when only the shared, blocking log stands between a caller and its start.
_ASK_SHARED = -1.0
#: A start that took the blocking log this much longer than its fastest answer is taken again.
STALE_S = 0.1
#: How many stale starts one caller may take before it sends on the last one anyway.
_RETAKES = 3


@dataclass(eq=False, slots=True)
class _Ticket:
    """A caller waiting in `acquire`: its event loop, and the event that wakes it early."""

    loop: asyncio.AbstractEventLoop
    moved: asyncio.Event
    #: Stale starts taken so far (see `_ask_shared`).
    retakes: int = 0


class RateLimiter:
    """At most `rate_per_s` request starts in any `window_s + margin_s` seconds, and starts at
    least `min_interval_s` apart.

    Args:
        rate_per_s: how many starts NCBI allows per window (3 or 10); fractions are rounded
            down, at least 1.
        min_interval_s: a floor on the gap between two consecutive starts (0: none).
        window_s: NCBI's counting window.
        margin_s: added to the window for network and scheduling jitter.
        clock: monotonic seconds (tests pass their own, with a matching `sleep`).
        sleep: how a waiter waits (`asyncio.sleep`).
        shared: the start log other processes share, asked once this process's rule allows a
            start (None: this process alone); a `blocking` one from a worker thread.
    """

    def __init__(
        self,
        rate_per_s: float,
        *,
        min_interval_s: float = 0.0,
        window_s: float = WINDOW_S,
        margin_s: float = MARGIN_S,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        shared: StartLog | None = None,
    ) -> None:
        if rate_per_s <= 0:
            raise ValueError("rate_per_s must be positive")
        if window_s <= 0 or margin_s < 0 or min_interval_s < 0:
            raise ValueError("window_s must be positive, margin_s and min_interval_s >= 0")
        self.limit = max(1, math.floor(rate_per_s))
        self.span = window_s + margin_s
        self.interval = float(min_interval_s)
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._starts: deque[float] = deque(maxlen=self.limit)
        self._history: deque[float] = deque(maxlen=_HISTORY)
        self._tickets: deque[_Ticket] = deque()
        self._shared = shared
        #: The fastest answer of the blocking shared log so far (its steady round trip).
        self._fastest_take = math.inf

    @property
    def queue_length(self) -> int:
        """Callers currently waiting for their turn."""
        with self._lock:
            return len(self._tickets)

    def history(self) -> tuple[float, ...]:
        """The most recent start times (the limiter's clock), oldest first."""
        with self._lock:
            return tuple(self._history)

    def slow_down(self, min_interval_s: float) -> None:
        """Raise the floor between consecutive starts to `min_interval_s` (never lowers it)."""
        with self._lock:
            self.interval = max(self.interval, float(min_interval_s))

    def try_start(self) -> float:
        """Record a start now and return 0 when the window allows one and no caller is
        queued in `acquire`; otherwise record nothing and return the seconds until a start
        might be allowed. The shared log is asked in the calling thread, even a blocking one."""
        with self._lock:
            now = self._clock()
            due = self._earliest(len(self._tickets), now)
            if self._tickets or now < due:
                return max(due - now, _POLL_S)
            shared = self._shared_wait()
            if shared > 0:
                return max(shared, _POLL_S)
            self._record(now)
            return 0.0

    async def acquire(self) -> None:
        """Wait for this caller's turn, then record its start (the request must follow at
        once). Cancelling the wait leaves no trace: the callers behind look again at once."""
        ticket = _Ticket(asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._tickets.append(ticket)
        started = False
        try:
            while True:
                ticket.moved.clear()
                wait = self._turn(ticket)
                if wait == _ASK_SHARED:
                    wait = await self._ask_shared(ticket)
                if wait <= 0:
                    started = True
                    return
                await self._pause(ticket, wait)
        finally:
            if not started:
                self._leave(ticket)

    # -- internals ------------------------------------------------------------------------

    async def _pause(self, ticket: _Ticket, seconds: float) -> None:
        """Sleep `seconds`, or less when a caller ahead leaves the line."""
        sleeper = asyncio.ensure_future(self._sleep(seconds))
        moved = asyncio.ensure_future(ticket.moved.wait())
        try:
            await asyncio.wait((sleeper, moved), return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            moved.cancel()

    def _leave(self, ticket: _Ticket) -> None:
        """Take a waiter that gave up out of the line and wake the ones behind it, whose turn
        may now come sooner."""
        with self._lock:
            if ticket not in self._tickets:
                return
            position = self._tickets.index(ticket)
            del self._tickets[position]
            behind = list(itertools.islice(self._tickets, position, None))
        for other in behind:
            with contextlib.suppress(RuntimeError):  # its event loop is closed: nobody waits
                other.loop.call_soon_threadsafe(other.moved.set)

    def _turn(self, ticket: _Ticket) -> float:
        """Start `ticket`'s caller now (0) if it is first in line and the window allows it,
        else how long it should sleep before looking again."""
        with self._lock:
            now = self._clock()
            position = self._tickets.index(ticket)
            due = self._earliest(position, now)
            if position == 0 and now >= due:
                if self._shared is not None and self._shared.blocking:
                    return _ASK_SHARED
                shared = self._shared_wait()
                if shared > 0:  # another process started within the window
                    return max(shared, _POLL_S)
                self._tickets.popleft()
                self._record(now)
                return 0.0
            # Not yet, or callers ahead have not started (they may wake late, or leave):
            # sleep until this turn could come at the soonest, then look again.
            return max(due - now, _POLL_S)

    async def _ask_shared(self, ticket: _Ticket) -> float:
        """Ask the blocking shared log from a worker thread, `ticket` first in line all the
        while; start it (0) if the log recorded a start, else how long to sleep."""
        shared = self._shared
        if shared is None:  # another thread found the log unusable meanwhile
            return 0.0 if self._start_first(ticket) else _POLL_S
        asked = self._clock()
        wait = await asyncio.to_thread(shared.take, self.limit, self.span, self.interval)
        with self._lock:
            self._leave_if_unusable(shared)
        if wait > 0:
            return max(wait, _POLL_S)
        took = self._clock() - asked
        self._fastest_take = min(self._fastest_take, took)
        late = took - self._fastest_take  # a steady round trip delays every start alike
        if late > STALE_S and ticket.retakes < _RETAKES and shared.usable:
            # The log recorded the start, then this process was slow to get back to it: the
            # request would leave later than recorded, nearer the next process's starts. The
            # stale start stays counted (never fewer than what was sent) and a fresh one is
            # taken, so what NCBI sees follows what the log says.
            ticket.retakes += 1
            return _POLL_S
        # Nobody else of this process started: only the first in line may, and it is ours
        # (the window changes only when the log failed and this process took its own share).
        return 0.0 if self._start_first(ticket) else _POLL_S

    def _start_first(self, ticket: _Ticket) -> bool:
        """Record the start of `ticket`, first in line, if the window still allows it."""
        with self._lock:
            now = self._clock()
            if self._tickets[0] is not ticket or now < self._earliest(0, now):
                return False
            self._tickets.popleft()
            self._record(now)
            return True

    def _shared_wait(self) -> float:
        """0 once the shared log recorded this start (or there is none), else how long to wait.
        Call with `_lock` held."""
        shared = self._shared
        if shared is None:
            return 0.0
        wait = shared.take(self.limit, self.span, self.interval)
        self._leave_if_unusable(shared)
        return wait

    def _leave_if_unusable(self, shared: StartLog) -> None:
        """A log that failed is left for good, and this process keeps to its own share. Call
        with `_lock` held."""
        if not shared.usable and self._shared is shared:
            self._shared = None
            self.limit = fallback_share(self.limit)

    def _record(self, now: float) -> None:
        self._starts.append(now)
        self._history.append(now)

    def _earliest(self, ahead: int, now: float) -> float:
        """When the caller with `ahead` callers before it could start at the soonest, if
        each of them started as early as the rules allow. Call with `_lock` held."""
        starts = list(self._starts)
        when = now
        for _ in range(ahead + 1):
            if len(starts) >= self.limit:
                when = max(when, starts[-self.limit] + self.span)
            if starts:
                when = max(when, starts[-1] + self.interval)
            starts.append(when)
        return when


_registry: dict[tuple[str, bool, Path | SqlBudget | None], RateLimiter] = {}
_registry_lock = threading.Lock()


def shared_limiter(
    base_url: str,
    *,
    has_api_key: bool,
    min_interval_s: float = 0.0,
    budget: Path | SqlBudget | None = None,
) -> RateLimiter:
    """The process-wide limiter for one NCBI identity: 10 starts per window with a key, 3
    without, never closer than `min_interval_s` (NCBI_REQUEST_DELAY_MS; when clients of one
    identity ask for different floors, the largest holds). With `budget`, a file every local
    process shares (`budget.budget_file`) or a PostgreSQL database every replica shares, the
    processes share the rate too."""
    key = (base_url.rstrip("/"), has_api_key, budget)
    with _registry_lock:
        limiter = _registry.get(key)
        if limiter is None:
            shared: StartLog | None = None
            if isinstance(budget, Path):
                shared = FileStartLog(budget)
            elif budget is not None:
                shared = SqlStartLog(budget)
            limiter = RateLimiter(
                10.0 if has_api_key else 3.0, min_interval_s=min_interval_s, shared=shared
            )
            _registry[key] = limiter
        else:
            limiter.slow_down(min_interval_s)
        return limiter

"""How late the server's event loop and its worker threads answer, for `GET /readyz`.

A server can accept connections and answer `/health` while its tools hang: a coroutine that
blocks the event loop, or worker threads all taken, stop every tool call that needs them.
`LoopWatch` beats on the loop every `interval_s` and, at each beat, hands a no-op to the
default executor (the threads the stores and tools use). Readiness fails while the loop beat
late by more than `stall_s` within the last `window_s`, or while a no-op has waited longer
than `stall_s` for a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import Final

__all__ = ["STALL_S", "LoopWatch"]

#: A loop that answers later than this, or a thread that takes longer to start, is stalled.
STALL_S: Final = 5.0


def _noop() -> None:
    return None


class LoopWatch:
    """Beats on the running loop (`run`) and judges its health (`check`)."""

    def __init__(
        self, *, interval_s: float = 0.5, stall_s: float = STALL_S, window_s: float = 30.0
    ) -> None:
        self.interval_s = interval_s
        self.stall_s = stall_s
        self.window_s = window_s
        self._lags: deque[tuple[float, float]] = deque()
        #: How many times the watch has beaten since it started.
        self.beats = 0
        self._probe_since: float | None = None
        self._last_beat: float | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start beating on the running loop (once)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self.run(), name="loop-watch")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(self.interval_s)
            now = loop.time()
            self._last_beat = now
            self._lags.append((now, max(0.0, now - before - self.interval_s)))
            self.beats += 1
            while self._lags and self._lags[0][0] < now - self.window_s:
                self._lags.popleft()
            self._probe_since = now
            await loop.run_in_executor(None, _noop)
            self._probe_since = None

    def check(self) -> str:
        """`ok`, or what is stalled and for how long."""
        if self._task is None:
            return "ok"
        now = asyncio.get_running_loop().time()
        if self._probe_since is not None and now - self._probe_since > self.stall_s:
            waited = now - self._probe_since
            return f"worker threads busy: a no-op has waited {waited:.1f} s for a thread"
        if self._last_beat is not None and now - self._last_beat > self.stall_s + self.interval_s:
            return f"event loop stalled: no beat for {now - self._last_beat:.1f} s"
        worst = max((lag for when, lag in self._lags if when >= now - self.window_s), default=0.0)
        if worst > self.stall_s:
            return f"event loop stalled: it answered {worst:.1f} s late within {self.window_s:g} s"
        return "ok"

"""The private event loop a corpus runs on: one daemon thread per corpus, so the adapters live
on one loop whichever thread or loop the caller is on."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["LoopThread", "stop_loop"]

T = TypeVar("T")


class LoopThread:
    """An event loop running forever in a daemon thread; coroutines are submitted to it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._serve, name="biomcp-corpus-loop", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            try:
                self.loop.run_until_complete(self.loop.shutdown_default_executor())
            finally:
                self.loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    @property
    def in_loop_thread(self) -> bool:
        return threading.current_thread() is self.thread

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        if not self.in_loop_thread:
            self.thread.join(timeout=10)


def stop_loop(runner: LoopThread) -> None:
    """The finalizer of a corpus that was never closed: release the thread (adapters are
    dropped)."""
    with contextlib.suppress(RuntimeError):  # the loop closed concurrently
        runner.stop()

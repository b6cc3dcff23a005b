"""`CorpusLoop`: where one corpus runs its work, and how it stops.

Every call of a corpus, and of its live PubMed, runs on one private event loop in a daemon
thread. The adapters then live on one loop whichever thread or loop the caller is on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from biomcp.entrypoints.library.loop import LoopThread, stop_loop

__all__ = ["CorpusClosedError", "CorpusLoop"]

T = TypeVar("T")


class CorpusClosedError(RuntimeError):
    """A call on a corpus after `close()`."""


class CorpusLoop:
    """The private loop of one corpus: it runs the corpus's coroutines until `shutdown`."""

    def __init__(self) -> None:
        self._runner = LoopThread()
        self._closed = False
        self._lock = threading.Lock()
        self._finalizer = weakref.finalize(self, stop_loop, self._runner)

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def in_loop_thread(self) -> bool:
        return self._runner.in_loop_thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule `coro` on the private loop; refused once closed or from that loop."""
        with self._lock:
            if self._closed:
                refusal: Exception = CorpusClosedError(
                    "this corpus is closed: open a new one with open_corpus()"
                )
            elif self._runner.in_loop_thread:
                refusal = RuntimeError(
                    "a Corpus method was called from its own loop (e.g. in a sync progress "
                    "callback); call it from your code instead"
                )
            else:
                return self._runner.submit(coro)
        coro.close()
        raise refusal

    async def run(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Await `make()` on the private loop, from any loop."""
        if self._runner.in_loop_thread:  # `Corpus` submitted the whole call to the loop
            return await make()
        return await asyncio.wrap_future(self.submit(make()))

    def shutdown(self, close: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run `close()` on the loop once, then stop the loop; blocks the calling thread."""
        with self._lock:
            if self._closed:
                return
            if self._runner.in_loop_thread:
                raise RuntimeError("close() was called from the corpus's own loop")
            self._closed = True
            future = self._runner.submit(close())
        try:
            future.result(timeout=60)
        finally:
            self._finalizer()

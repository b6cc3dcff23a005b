"""The fault plan of the fake OpenAI embeddings API: which requests fail, and how."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, cast

__all__ = ["FakeFaultKind", "OpenAIFault", "OpenAIFaults"]

FakeFaultKind = Literal["429", "500", "502", "503", "slow", "garbage"]
_FAULT_KINDS: tuple[str, ...] = ("429", "500", "502", "503", "slow", "garbage")


@dataclass(frozen=True, slots=True)
class OpenAIFault:
    """One injected failure: an HTTP 429 (with `retry-after`/`retry-after-ms` headers set from
    `retry_after` seconds), a 500/502/503 (with the same headers when `retry_after` > 0, which
    OpenAI does not send but which makes SDK retries fast in tests), or `slow` (wait `delay`
    seconds, then answer normally), or `garbage` (status 200 with a body that is not JSON)."""

    kind: FakeFaultKind
    retry_after: float = 0.0
    delay: float = 1.0

    def __post_init__(self) -> None:
        if self.kind not in _FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; expected one of {_FAULT_KINDS}")
        if self.retry_after < 0 or self.delay < 0:
            raise ValueError("retry_after and delay must be >= 0")


class OpenAIFaults:
    """The fault plan: a queue consumed one fault per embeddings request (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: deque[OpenAIFault] = deque()

    def next(
        self,
        count: int,
        kind: FakeFaultKind | int = "500",
        *,
        retry_after: float = 0.0,
        delay: float = 1.0,
    ) -> None:
        """Fail the next `count` requests with `kind` (added after the faults already
        queued)."""
        if count < 0:
            raise ValueError("count must be >= 0")
        fault = OpenAIFault(cast("FakeFaultKind", str(kind)), retry_after, delay)
        with self._lock:
            self._queue.extend([fault] * count)

    def sequence(self, faults: Iterable[OpenAIFault | FakeFaultKind | int]) -> None:
        """Replace the queue by `faults`, in order."""
        parsed = [
            f if isinstance(f, OpenAIFault) else OpenAIFault(cast("FakeFaultKind", str(f)))
            for f in faults
        ]
        with self._lock:
            self._queue = deque(parsed)

    def clear(self) -> None:
        with self._lock:
            self._queue.clear()

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def take(self) -> OpenAIFault | None:
        with self._lock:
            return self._queue.popleft() if self._queue else None

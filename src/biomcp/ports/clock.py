"""The Clock port: where use cases read the current time, so tests can fix it."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class Clock(Protocol):
    """Tells the time.

    Contract: `now()` returns a timezone-aware UTC datetime and never goes backward within one
    process. Raises nothing.
    """

    def now(self) -> datetime: ...

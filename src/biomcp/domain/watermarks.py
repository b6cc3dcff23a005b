"""EDAT watermarks: where the next sync window starts, and how a watermark may move.

A query key's watermark (`last_edat`) is the latest Entrez date of a record fully stored and
indexed for that key. The next sync reads from `last_edat - overlap` so records that PubMed
dates late are not missed, and the PMID-keyed upsert makes the overlap harmless. Automatic
moves (after a successful sync) are monotonic; an operator may set a watermark backward for a
backfill, and that move yields an audit entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from biomcp.domain.errors import InvalidRecordError

__all__ = ["WatermarkAudit", "advance_watermark", "manual_watermark", "window_start"]


def _require_aware(name: str, value: datetime | None) -> None:
    if value is not None and value.utcoffset() is None:
        raise InvalidRecordError(f"{name} must be timezone-aware (UTC), got {value!r}")


def window_start(
    last_edat: datetime | None, overlap_days: int, now: datetime, initial_days: int | None
) -> datetime | None:
    """Start of the next EDAT window.

    `last_edat - overlap_days` when a watermark exists; otherwise `now - initial_days`, or None
    (the whole history) when `initial_days` is None or 0.

    Raises:
        InvalidRecordError: on a negative overlap or a naive datetime.
    """
    if overlap_days < 0:
        raise InvalidRecordError(f"overlap_days must be >= 0, got {overlap_days}")
    _require_aware("last_edat", last_edat)
    _require_aware("now", now)
    if last_edat is not None:
        return last_edat - timedelta(days=overlap_days)
    if not initial_days:
        return None
    return now - timedelta(days=initial_days)


def advance_watermark(current: datetime | None, candidate: datetime | None) -> datetime | None:
    """The watermark after an automatic advance: never earlier than `current`."""
    _require_aware("current", current)
    _require_aware("candidate", candidate)
    if candidate is None:
        return current
    if current is None:
        return candidate
    return max(current, candidate)


@dataclass(frozen=True, slots=True)
class WatermarkAudit:
    """One manual move of a watermark, kept for audit."""

    query_key: str
    previous: datetime | None
    new: datetime
    actor: str
    reason: str
    at: datetime

    @property
    def moved_backward(self) -> bool:
        return self.previous is not None and self.new < self.previous


def manual_watermark(
    query_key: str,
    current: datetime | None,
    new: datetime,
    *,
    actor: str,
    reason: str,
    at: datetime,
) -> tuple[datetime, WatermarkAudit]:
    """An operator's set: any direction is allowed, and the move is returned with its audit
    entry (who, why, when, from, to)."""
    for name, value in (("current", current), ("new", new), ("at", at)):
        _require_aware(name, value)
    return new, WatermarkAudit(query_key, current, new, actor, reason, at)

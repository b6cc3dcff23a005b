"""EDAT watermarks: where the next sync window starts, and how a watermark may move.

A query key's watermark (`last_edat`) is the latest Entrez date of a record fully stored and
indexed for that key. The next sync reads from `last_edat - overlap` so records that PubMed
dates late are not missed, and the PMID-keyed upsert makes the overlap harmless. Automatic
moves (after a successful sync) are monotonic; an operator may set a watermark backward for a
backfill, and that move yields an audit entry.

A query key names a saved query in logs, audit trails and answers: 1 to `QUERY_KEY_MAX_CHARS`
characters, each printable (letters, digits, marks, punctuation, symbols, the plain space): no
control characters, NUL, bidi overrides, zero-width or other format characters, line or
paragraph separators, private-use or unassigned code points (`query_key_problem`).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from biomcp.domain.errors import InvalidRecordError

__all__ = [
    "QUERY_KEY_MAX_CHARS",
    "WatermarkAudit",
    "advance_watermark",
    "covered_from",
    "manual_watermark",
    "query_key_problem",
    "reads_history",
    "window_start",
]

#: The longest query key accepted for a new watermark or sync.
QUERY_KEY_MAX_CHARS: Final = 200
#: Unicode categories a query key may not contain (control, format, surrogate, private use,
#: unassigned; line and paragraph separators). Of the space separators only " " is allowed.
_REFUSED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def query_key_problem(key: str) -> str | None:
    """Why `key` (already stripped) cannot name a saved query, or None when it can."""
    if not key:
        return "query_key is empty: name the saved query, e.g. glp1_v1"
    if len(key) > QUERY_KEY_MAX_CHARS:
        return (
            f"query_key is {len(key)} characters long; at most {QUERY_KEY_MAX_CHARS} are "
            "allowed: use a short name such as glp1_v1"
        )
    for position, char in enumerate(key):
        category = unicodedata.category(char)
        if category in _REFUSED_CATEGORIES or (category == "Zs" and char != " "):
            return (
                f"query_key has a non-printable character (U+{ord(char):04X}, category "
                f"{category}) at position {position}: use letters, digits and punctuation, "
                "e.g. glp1_v1"
            )
    return None


def _require_aware(name: str, value: datetime | None) -> None:
    if value is not None and value.utcoffset() is None:
        raise InvalidRecordError(f"{name} must be timezone-aware (UTC), got {value!r}")


def window_start(
    last_edat: datetime | None, overlap_days: int, now: datetime, initial_days: int | None
) -> datetime | None:
    """Start of the next EDAT window.

    `last_edat - overlap_days` when a watermark exists; otherwise `now - initial_days`, or None
    (the whole history) when `initial_days` is None or 0, or when the window would reach back
    before year 1 (an overlap of 2**31 days is the whole history, never an OverflowError).

    Raises:
        InvalidRecordError: on a negative overlap or a naive datetime.
    """
    if overlap_days < 0:
        raise InvalidRecordError(f"overlap_days must be >= 0, got {overlap_days}")
    _require_aware("last_edat", last_edat)
    _require_aware("now", now)
    if last_edat is not None:
        return _days_before(last_edat, overlap_days)
    if not initial_days:
        return None
    return _days_before(now, initial_days)


def _days_before(moment: datetime, days: int) -> datetime | None:
    """`moment - days`, or None (the whole history) when that lies before year 1: a window
    that long holds everything, and `datetime` cannot express it (OverflowError)."""
    available = (moment.replace(tzinfo=None) - datetime.min).days
    if days > available:
        return None
    return moment - timedelta(days=days)


def advance_watermark(current: datetime | None, candidate: datetime | None) -> datetime | None:
    """The watermark after an automatic advance: never earlier than `current`."""
    _require_aware("current", current)
    _require_aware("candidate", candidate)
    if candidate is None:
        return current
    if current is None:
        return candidate
    return max(current, candidate)


def covered_from(
    recorded: datetime | None, scanned_before: bool, window: datetime | None
) -> datetime | None:
    """The earliest Entrez date a query key's corpus covers, once a sync whose EDAT window
    started at `window` (None: the whole history) has completed.

    The first completed sync (`scanned_before` false) sets it: a key first synced from
    `initial_days` back, or from a watermark an operator set, covers what its window held, not
    the term's whole history. Later syncs only widen it (an operator's backfill moves the
    window back); None, the whole history, stays. A key scanned before this was recorded reads
    None too, and so keeps the whole history.
    """
    _require_aware("recorded", recorded)
    _require_aware("window", window)
    if not scanned_before:
        return window
    if recorded is None or window is None:
        return None
    return min(recorded, window)


def reads_history(recorded: datetime | None, scanned_before: bool, window: datetime | None) -> bool:
    """Whether a sync whose EDAT window starts at `window` (None: the whole history) reads a
    query key's whole history, which starts at `recorded` (its `covers_from`; None, the whole
    history) once a sync of it has completed (`scanned_before`). A first sync always does:
    its window is the key's history."""
    _require_aware("recorded", recorded)
    _require_aware("window", window)
    if not scanned_before or window is None:
        return True
    return recorded is not None and window <= recorded


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

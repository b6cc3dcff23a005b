"""When a stored record became retracted, as the store keeps it across writes.

A record can be retracted after it was first stored: a later sync stores it again, flagged.
The store keeps the moment of the first retracted write, so an export can tell a retraction
its reader has already seen from a new one. An unretracted record has no such moment.
"""

from __future__ import annotations

from datetime import datetime

__all__ = ["retracted_at"]


def retracted_at(retracted: bool, kept: datetime | None, now: datetime) -> datetime | None:
    """The retraction moment to store for a record written at `now`.

    `retracted` says whether the written record is retracted. `kept` is the moment stored with
    its earlier write (None when it was not retracted, or not stored). A record that stays
    retracted keeps `kept`; one retracted by this write gets `now`; one not retracted gets None.
    """
    if not retracted:
        return None
    return kept if kept is not None else now

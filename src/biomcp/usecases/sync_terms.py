"""A sync's term and window (`usecases.sync`, steps 2 and 3): why a window starts where it
does, when a key's term changed, the history a key's syncs cover, and what the report says of
a term."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from biomcp.domain.queries import compact
from biomcp.ports.entrez import EntrezWarning
from biomcp.ports.saved_queries import Checkpoint
from biomcp.usecases.payloads import iso_utc

__all__ = [
    "WindowBasis",
    "changed_term",
    "term_changed_warning",
    "term_warning",
    "within_history",
]


class WindowBasis(StrEnum):
    """Why a sync's EDAT window starts where it does (`SyncReport.window_basis`)."""

    #: the key's watermark less the overlap
    CHECKPOINT = "checkpoint"
    #: a first sync, `initial_days` back
    INITIAL_DAYS = "initial_days"
    #: a first sync over the whole history
    WHOLE_HISTORY = "whole_history"
    #: the term differs from the key's last completed sync: the key's history again
    TERM_CHANGED = "term_changed"
    #: asked for (`rescan`): the key's history again, from `Checkpoint.covers_from`
    RESCAN = "rescan"


def changed_term(checkpoint: Checkpoint, term: str) -> str | None:
    """The term of the key's last completed sync when `term` is another query (spacing aside,
    as PubMed reads it), else None (also before a completed sync, or when it was not recorded).

    Continuing from the checkpoint would never fetch the new term's records older than it, so
    such a sync reads the key's history (`Checkpoint.covers_from`) again instead (step 2)."""
    previous = checkpoint.term
    if previous is None or checkpoint.last_scan_at is None or compact(previous) == compact(term):
        return None
    return previous


def term_changed_warning(previous: str, term: str, start: datetime | None) -> str:
    history = f"from {iso_utc(start)}" if start is not None else "over the whole history"
    return (
        f"this query key was last synced with another term ({_clip(previous)}), so its "
        f"history is read again for {_clip(term)}, {history}, rather than from its checkpoint; "
        "records stored for the earlier term stay in the corpus (a new query_key keeps two "
        "queries apart)"
    )


def _clip(term: str, limit: int = 120) -> str:
    term = compact(term)
    return repr(term if len(term) <= limit else term[: limit - 3] + "...")


def within_history(term: str, covers_from: datetime | None) -> str:
    """`term` limited to the records PubMed entered (EDAT) from the day of `covers_from` on:
    the history a key's syncs cover (`Checkpoint.covers_from`; None, the whole history, leaves
    `term` as it is). The revisions' ESearch asks with it, so that a key first synced
    `initial_days` back does not gain every older record of its term PubMed revises (most of
    MEDLINE at its yearly MeSH update)."""
    if covers_from is None:
        return term
    day = covers_from.astimezone(UTC).date()
    return f'({term}) AND ("{day:%Y/%m/%d}"[EDAT] : "3000/12/31"[EDAT])'


def term_warning(warning: EntrezWarning) -> str:
    """What NCBI said of the sync's term, for the report: a part of the query PubMed found
    nowhere is left out of the search, which widens a query that ANDs it."""
    if warning.dropped is not None:
        return (
            f"PubMed found nothing for {warning.message} and searched without it "
            f"({warning.kind}): the window holds what the rest of the query matches; "
            "check the saved query's term"
        )
    return str(warning)

"""The SavedQueryStore port: what a saved query keeps between its syncs.

A saved query is a key with its term, an EDAT watermark (moved automatically only forward,
manually either way with an audit entry), the records it brought, the PMIDs pending a retry
and the mark of its last `export --new`. Every method raises only `MetadataStoreError`s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from biomcp.domain.watermarks import WatermarkAudit

__all__ = ["Checkpoint", "ForgottenQuery", "PendingPmid", "SavedQueryStore"]


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A query key's EDAT watermark (`last_edat`), when a sync of it last completed
    (`last_scan_at`) and with which `term`, and the earliest Entrez date its syncs have
    covered (`covers_from`; None: the whole history, also for a key scanned before this was
    recorded)."""

    query_key: str
    last_edat: datetime | None = None
    last_scan_at: datetime | None = None
    covers_from: datetime | None = None
    term: str | None = None
    #: Whether every record the key's syncs brought is recorded as the key's (`query_records`).
    #: False for a key synced before bio-mcp recorded it, until a completed sync of it reads
    #: its whole history again: its count of records is a lower bound until then.
    records_tracked: bool = True
    #: Whether the key's syncs keep the PMC full text of its records (`set_fulltext`).
    fulltext: bool = False


@dataclass(frozen=True, slots=True)
class ForgottenQuery:
    """What forgetting a saved query removed: its checkpoint (whether it had one), its pending
    PMIDs and its sync jobs (how many), how many records were recorded as its (`records`;
    they stay unless deleted) and how many of those were deleted (`records_deleted`)."""

    query_key: str
    checkpoint: bool
    pending: int
    jobs: int
    records: int = 0
    records_deleted: int = 0
    #: False: the key was synced before its records were recorded; some may not be counted.
    records_tracked: bool = True
    #: Filled by the use case that deletes the records' chunks from the vector store.
    chunks_deleted: int = 0


@dataclass(frozen=True, slots=True)
class PendingPmid:
    """A PMID a sync of a query key found by ESearch and EFetch did not return: each later
    sync of the key asks for it again until it arrives. `misses` counts the syncs that asked
    and did not get it."""

    pmid: str
    first_missed_at: datetime
    last_missed_at: datetime
    misses: int


class SavedQueryStore(Protocol):
    """Checkpoints, records held, pending PMIDs and export marks, by query key."""

    async def get_checkpoint(self, query_key: str) -> Checkpoint: ...

    async def advance_checkpoint(
        self,
        query_key: str,
        candidate: datetime | None,
        scanned_at: datetime,
        *,
        window_start: datetime | None,
        term: str | None,
        read_history: bool = False,
    ) -> Checkpoint:
        """Automatic move after a completed sync of `term` whose EDAT window started at
        `window_start` (None: the whole history): the watermark becomes max(current,
        candidate), never less; `last_scan_at` becomes `scanned_at`; `covers_from` follows
        `covered_from`. `read_history`: the sync read the key's whole history, so every
        record of it is recorded as the key's now (`records_tracked` becomes true)."""
        ...

    async def set_checkpoint(
        self, query_key: str, last_edat: datetime, *, actor: str, reason: str, at: datetime
    ) -> WatermarkAudit:
        """Manual move (any direction), written with its audit entry."""
        ...

    async def checkpoint_audit(self, query_key: str) -> list[WatermarkAudit]: ...

    async def set_fulltext(self, query_key: str, enabled: bool) -> None:
        """Remember whether `query_key`'s syncs keep full text (a key not synced yet gets its
        checkpoint row, without a watermark)."""
        ...

    async def list_checkpoints(self) -> list[Checkpoint]: ...

    async def forget_query(
        self, query_key: str, *, delete_records: Sequence[str] = ()
    ) -> ForgottenQuery:
        """Delete the checkpoint, the pending PMIDs, the sync jobs, the record memberships and
        the export mark of `query_key` in one transaction, so that it is a saved query no more;
        its audit trail stays. Documents stay (every key shares them), except those of
        `delete_records` that no other key holds at that moment, which are deleted in the same
        transaction."""
        ...

    async def query_record_counts(self) -> dict[str, int]:
        """How many records each saved query holds (keys holding none are absent)."""
        ...

    async def records_of(self, query_key: str, *, added_since: datetime | None = None) -> list[str]:
        """The PMIDs `query_key` holds, ascending; with `added_since`, only those a sync of the
        key first recorded at or after it (a living review's new records)."""
        ...

    async def records_held_only_by(self, query_key: str) -> list[str]:
        """The PMIDs `query_key` holds and no other key does, ascending."""
        ...

    async def queries_holding(self, pmids: Sequence[str]) -> dict[str, list[str]]:
        """The saved queries holding each of `pmids` (keys ascending); a PMID no query holds
        is absent."""
        ...

    async def records_held_by_none(self) -> list[str]:
        """The PMIDs of stored records no saved query holds (their key forgotten without its
        records, or stored before bio-mcp recorded which query brought each record),
        ascending."""
        ...

    async def delete_unheld(self, pmids: Sequence[str]) -> int:
        """Delete, in one transaction, the documents of `pmids` that no saved query holds
        (read in the transaction: one a sync took in the meantime stays); how many went."""
        ...

    async def export_mark(self, query_key: str) -> datetime | None:
        """Where the next `export --new` of `query_key` starts (the `next_added_since` of its
        last one), or None before the first; forgetting the key deletes it."""
        ...

    async def set_export_mark(self, query_key: str, next_added_since: datetime) -> None:
        """Record `next_added_since` as `query_key`'s export mark (replacing the last one)."""
        ...

    async def pending_pmids(self, query_key: str) -> list[PendingPmid]:
        """The PMIDs pending for `query_key`, the longest pending first (then by PMID)."""
        ...

    async def settle_pending(
        self, query_key: str, *, missed: Sequence[str], arrived: Sequence[str], at: datetime
    ) -> list[PendingPmid]:
        """In one transaction: each of `missed` becomes pending (first missed `at`) or, when it
        already is, counts one more miss (last missed `at`); each of `arrived` is no longer
        pending. A PMID in both is pending. Returns what is pending for `query_key` now."""
        ...

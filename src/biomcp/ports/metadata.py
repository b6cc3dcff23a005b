"""The MetadataStore port: PubMed documents, watermarks and sync jobs in SQL.

Invariants (spec 01): one row per PMID; its version starts at 1 and grows by one when the
content hash changes or LR advances (the domain's `decide_version`, applied inside the store's
transaction so two writers cannot both bump). Automatic watermark moves are monotonic; manual
sets may go backward and are audited.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from biomcp.domain.evidence import EvidenceClassification
from biomcp.domain.records import PubMedRecord, QualityBreakdown
from biomcp.domain.versioning import UpsertAction
from biomcp.domain.watermarks import WatermarkAudit

__all__ = [
    "Checkpoint",
    "DocumentUpsert",
    "ForgottenQuery",
    "LockTimeoutError",
    "MetadataStore",
    "MetadataStoreError",
    "StoreUnavailableError",
    "StoredDocument",
    "StoredScore",
    "SyncJob",
    "UpsertOutcome",
    "UpsertSummary",
]


class MetadataStoreError(Exception):
    """Base of every error a MetadataStore raises."""


class StoreUnavailableError(MetadataStoreError):
    """The database cannot be reached, opened or migrated."""


class LockTimeoutError(MetadataStoreError):
    """Another holder kept the lock of this query key for the whole wait (a sync of it runs).

    Retryable: the holder releases it when it ends or dies. `holder` says who it is (pid,
    host, program, since), when known; never a path."""

    def __init__(
        self,
        message: str,
        *,
        query_key: str | None = None,
        holder: dict[str, object] | None = None,
        waited_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.query_key = query_key
        self.holder = holder
        self.waited_s = waited_s


@dataclass(frozen=True, slots=True)
class DocumentUpsert:
    """A record with everything the domain derived from it, ready to store."""

    record: PubMedRecord
    evidence: EvidenceClassification
    quality: QualityBreakdown
    content_hash: str


@dataclass(frozen=True, slots=True)
class UpsertOutcome:
    pmid: str
    action: UpsertAction
    version: int


@dataclass(frozen=True, slots=True)
class UpsertSummary:
    inserted: int
    updated: int
    skipped: int
    max_edat_seen: datetime | None
    outcomes: tuple[UpsertOutcome, ...] = ()
    #: with `held_by`: how many of the PMIDs that saved query did not hold before
    newly_held: int = 0


@dataclass(frozen=True, slots=True)
class StoredDocument:
    """A stored PubMed document: the normalized record plus its derived values and versions.
    `indexed_version` is the version whose chunks are in the vector store (0: none yet)."""

    record: PubMedRecord
    evidence: EvidenceClassification
    quality: QualityBreakdown
    content_hash: str
    version: int
    indexed_version: int
    last_seen_at: datetime


@dataclass(frozen=True, slots=True)
class StoredScore:
    """A stored document's quality score with what rescoring it needs: the record's
    publication year (`PubMedRecord.year`; None when undated) and the version it was scored
    at (a new score is stored only while the document is still at that version)."""

    pmid: str
    year: int | None
    version: int
    indexed_version: int
    quality: QualityBreakdown


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


#: How many of a key's latest sync jobs are read for one still marked running: a sync marks
#: the orphans among them interrupted, an export starts its next one from a running one.
RECENT_JOBS = 20


@dataclass(frozen=True, slots=True)
class SyncJob:
    """The report of one sync run, kept for audit.

    `status` is `queued`, `running`, `succeeded`, `failed` or `interrupted`. `owner` names the
    process whose queue runs the job; None for a sync run directly (under its key's lock)."""

    job_id: str
    query_key: str
    term: str
    started_at: datetime
    finished_at: datetime | None
    status: str
    inserted: int = 0
    updated: int = 0
    skipped: int = 0
    pmids_processed: int = 0
    max_edat_seen: datetime | None = None
    warnings: tuple[str, ...] = ()
    error: str | None = None
    owner: str | None = None


class MetadataStore(Protocol):
    """SQL metadata. Every method raises only `MetadataStoreError`s."""

    async def upsert_documents(
        self, docs: Sequence[DocumentUpsert], *, held_by: str | None = None
    ) -> UpsertSummary:
        """Insert / update / skip each document by the versioning rule, in one transaction;
        with `held_by`, record in it that the saved query `held_by` holds each of them."""
        ...

    async def get_document(self, pmid: str) -> StoredDocument | None: ...

    async def get_documents(self, pmids: Sequence[str]) -> dict[str, StoredDocument]: ...

    async def retracted_pmids(self, pmids: Sequence[str]) -> set[str]:
        """Those of `pmids` whose stored record is retracted now (`PubMedRecord.is_retracted`);
        unknown PMIDs are absent."""
        ...

    async def documents_to_index(self, pmids: Sequence[str]) -> list[StoredDocument]:
        """Those of `pmids` whose indexed version is behind their version."""
        ...

    async def mark_indexed(self, versions: dict[str, int]) -> None:
        """Record that `pmid`'s chunks of `version` are in the vector store."""
        ...

    async def count_documents(
        self, *, indexed: bool = False, scored_before: int | None = None
    ) -> int:
        """How many documents are stored (`indexed`: only those with chunks written;
        `scored_before`: only those `scores_before` that year would list)."""
        ...

    async def scores_before(
        self, year: int, after: str = "", limit: int = 500
    ) -> list[StoredScore]:
        """The scores of the documents whose quality was scored in a calendar year before
        `year`, or in an unrecorded one (`QualityBreakdown.scored_in` None), in ascending PMID
        order: the first `limit` after `after`."""
        ...

    async def set_quality(self, scores: Sequence[StoredScore]) -> int:
        """Store each score's quality as its document's, where the document is still at the
        score's version (one that moved on keeps its own); return how many were stored."""
        ...

    async def document_pmids(self, after: str = "", limit: int = 1000) -> list[str]:
        """The PMIDs of stored documents in ascending (string) order: the first `limit` after
        `after` (page through every document by passing the last one back)."""
        ...

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

    def query_lock(
        self, query_key: str, *, timeout_s: float = 0.0
    ) -> AbstractAsyncContextManager[None]:
        """Hold the lock of `query_key` across processes for the block; raise LockTimeoutError
        when another holder keeps it past `timeout_s`."""
        ...

    async def record_job(self, job: SyncJob) -> None:
        """Insert or replace the job by id."""
        ...

    async def get_job(self, job_id: str) -> SyncJob | None: ...

    async def list_jobs(self, query_key: str | None = None, limit: int = 50) -> list[SyncJob]: ...

    async def ping(self) -> None:
        """Raise StoreUnavailableError unless the database answers (for /readyz)."""
        ...

    async def quick_check(self) -> list[str]:
        """What the database's own integrity check finds wrong in its files (SQLite's
        `PRAGMA quick_check`); empty when nothing is, or when a server keeps its own pages."""
        ...

    async def aclose(self) -> None: ...

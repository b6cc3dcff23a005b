"""What a sync reports (`usecases.sync`): its progress while it runs, its outcome, its job id."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from biomcp.ports.jobs import JobLog, SyncJob
from biomcp.usecases.fulltext_sync import FullTextOutcome
from biomcp.usecases.payloads import iso_utc

__all__ = ["ProgressCallback", "SyncProgress", "SyncReport", "new_job_id", "record_whole"]


def new_job_id(started_at: datetime) -> str:
    """A job id: the start time and a random suffix (`sync_2026-01-02T03:04:05Z_1a2b3c4d`)."""
    return f"sync_{iso_utc(started_at)}_{uuid.uuid4().hex[:8]}"


async def record_whole(log: JobLog, job: SyncJob) -> None:
    """Record `job`; when cancelled meanwhile, let the write land before the cancellation
    goes on.

    A store may write from a worker thread that a cancellation does not stop. A record begun
    before a cancellation could then land after the record that ends the job. The job would
    read `queued` or `running` until a later status read found its process gone.

    Raises:
        MetadataStoreError: the write failed (not cancelled).
        asyncio.CancelledError: cancelled, once the write has ended either way.
    """
    write = asyncio.ensure_future(log.record_job(job))
    try:
        await asyncio.shield(write)
    except asyncio.CancelledError:
        while not write.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait({write})
        if not write.cancelled():
            write.exception()  # retrieved: the cancellation is what the caller sees
        raise


@dataclass(frozen=True, slots=True)
class SyncProgress:
    """Where a running sync stands (sent after enumeration and after every batch)."""

    query_key: str
    total: int
    processed: int
    chunks_embedded: int
    elapsed_s: float
    inserted: int = 0
    updated: int = 0
    skipped: int = 0
    max_edat_seen: datetime | None = None

    @property
    def rate(self) -> float:
        """Records per second so far."""
        return self.processed / self.elapsed_s if self.elapsed_s > 0 else 0.0


@dataclass(frozen=True, slots=True)
class SyncReport:
    """The outcome of one sync. `as_payload()` is the spec's response; the rest is for the CLI,
    the job log and the benchmarks (`timings` in seconds per stage)."""

    job_id: str
    query_key: str
    inserted: int
    updated: int
    skipped: int
    pmids_processed: int
    max_edat_seen: datetime | None
    warnings: tuple[str, ...]
    pmids_found: int = 0
    chunks_written: int = 0
    chunks_deleted: int = 0
    texts_embedded: int = 0
    checkpoint: datetime | None = None
    checkpoint_advanced: bool = False
    window_start: datetime | None = None
    timings: dict[str, float] = field(default_factory=dict)
    retractions_rechecked: int = 0
    newly_retracted: tuple[str, ...] = ()
    pending: tuple[str, ...] = ()
    pending_arrived: tuple[str, ...] = ()
    pending_gone: tuple[str, ...] = ()
    #: the PubMed query synced
    term: str = ""
    #: stored scores whose recency the calendar moved, brought up to date (`usecases.rescoring`)
    rescored: int = 0
    #: PMIDs of the term PubMed revised since the last sync, outside the EDAT window (step 3)
    revisions_found: int = 0
    #: why the EDAT window starts at `window_start` (`WindowBasis`)
    window_basis: str = "checkpoint"
    #: the term of the key's last completed sync, when this sync's term differs (step 2)
    previous_term: str | None = None
    #: records this saved query holds now and did not before (stored by it, or by another
    #: query first): what its next `export --new` brings
    new_to_query: int = 0
    #: what the full-text step did (None: the key does not keep full text)
    fulltext: FullTextOutcome | None = None

    def as_payload(self) -> dict[str, Any]:
        """Spec 01's answer, exactly (its schema is closed, and v1.1 keeps the sync answer as
        spec 01 has it): the retraction re-check and the pending PMIDs reach it as warnings;
        `retractions_rechecked`, `newly_retracted`, `pending` (the PMIDs pending after this
        sync), `pending_arrived` (those pending before that arrived and were indexed, or that
        EFetch reported deleted) and `pending_gone` (those ESearch no longer finds) are here
        for the CLI, the library and the job log."""
        return {
            "job_id": self.job_id,
            "inserted": self.inserted,
            "updated": self.updated,
            "skipped": self.skipped,
            "pmids_processed": self.pmids_processed,
            "max_edat_seen": iso_utc(self.max_edat_seen),
            "warnings": list(self.warnings),
        }


#: Called after enumeration and after every batch; may be a coroutine function.
ProgressCallback = Callable[[SyncProgress], Awaitable[None] | None]

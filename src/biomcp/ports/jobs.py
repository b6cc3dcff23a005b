"""The JobLog port: the report of every sync run, and the lock a sync of a key holds.

Every method raises only `MetadataStoreError`s; the lock raises `LockTimeoutError`.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

__all__ = ["RECENT_JOBS", "JobLog", "JobProgress", "SyncJob"]


#: How many of a key's latest sync jobs are read for one still marked running: a sync marks
#: the orphans among them interrupted, an export starts its next one from a running one.
RECENT_JOBS = 20


@dataclass(frozen=True, slots=True)
class JobProgress:
    """Where a running job stands, as its process last recorded it (`recorded_at`, UTC).
    `total` is None until the sync has counted its records."""

    total: int | None
    processed: int
    inserted: int = 0
    updated: int = 0
    skipped: int = 0
    chunks_embedded: int = 0
    elapsed_s: float | None = None
    recorded_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class SyncJob:
    """The report of one sync run, kept for audit.

    `status` is `queued`, `running`, `succeeded`, `failed` or `interrupted`. `owner` names the
    process whose queue runs the job; None for a sync run directly (under its key's lock).
    `progress` is the running job's last recorded progress (`JobLog.record_progress`)."""

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
    progress: JobProgress | None = None


class JobLog(Protocol):
    """Sync jobs by id and key, and the per-key lock across processes."""

    def query_lock(
        self, query_key: str, *, timeout_s: float = 0.0
    ) -> AbstractAsyncContextManager[None]:
        """Hold the lock of `query_key` across processes for the block; raise LockTimeoutError
        when another holder keeps it past `timeout_s`."""
        ...

    async def record_job(self, job: SyncJob) -> None:
        """Insert or replace the job by id (its `progress` included)."""
        ...

    async def record_progress(self, job_id: str, progress: JobProgress) -> bool:
        """Set the progress of job `job_id` if it is `running`, touching nothing else; False
        (nothing written) for a job that is not running or does not exist."""
        ...

    async def get_job(self, job_id: str) -> SyncJob | None: ...

    async def list_jobs(self, query_key: str | None = None, limit: int = 50) -> list[SyncJob]: ...

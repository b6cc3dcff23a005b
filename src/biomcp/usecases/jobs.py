"""Long syncs are jobs: a sync outlives the request that started it.

`SyncJobs.run` starts the sync as a task of this process and waits for it at most `wait_s`
seconds. A sync done by then answers with its report, as before; one still running answers
with its counts so far and a warning naming the job, and goes on. Cancelling the request that
waits (a client's timeout, a user pressing stop) does not stop the job: it finishes and is
recorded, and `status` tells how it ended. Jobs live in SQL, so any process can read their
state; one that is running here also has its live progress.

A job is `running`, `succeeded`, `failed` or `interrupted` (its process stopped: a shutdown
cancels it, a kill leaves it to the next sync of the key to mark).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from dataclasses import dataclass, field
from typing import Any

from biomcp.ports.clock import Clock
from biomcp.ports.metadata import MetadataStore, SyncJob
from biomcp.usecases.errors import InvalidRequestError, NotFoundError
from biomcp.usecases.payloads import iso_utc
from biomcp.usecases.sync import SyncDelta
from biomcp.usecases.sync_report import ProgressCallback, SyncProgress, SyncReport, new_job_id

__all__ = ["JobOutcome", "SyncJobs"]

JOB_STATES = ("running", "succeeded", "failed", "interrupted")


@dataclass(slots=True)
class _Live:
    """A job running in this process."""

    job_id: str
    query_key: str
    task: asyncio.Task[SyncReport] | None = None
    progress: SyncProgress | None = None
    listeners: list[ProgressCallback] = field(default_factory=list)

    async def publish(self, state: SyncProgress) -> None:
        self.progress = state
        for listener in list(self.listeners):
            with contextlib.suppress(Exception):  # a gone listener never stops the job
                result = listener(state)
                if inspect.isawaitable(result):
                    await result


@dataclass(frozen=True, slots=True)
class JobOutcome:
    """What `run` answers: the final report, or the counts so far of a job that goes on."""

    job_id: str
    report: SyncReport | None
    progress: SyncProgress | None
    waited_s: float

    def as_payload(self) -> dict[str, Any]:
        """Spec 01's `pubmed.sync_delta` response."""
        if self.report is not None:
            return self.report.as_payload()
        state = self.progress
        so_far = (
            f"{state.processed} of {state.total} records so far"
            if state is not None and state.total
            else "still starting"
        )
        return {
            "job_id": self.job_id,
            "inserted": state.inserted if state else 0,
            "updated": state.updated if state else 0,
            "skipped": state.skipped if state else 0,
            "pmids_processed": state.processed if state else 0,
            "max_edat_seen": iso_utc(state.max_edat_seen) if state else None,
            "warnings": [
                f"the sync goes on as job {self.job_id} ({so_far} after {self.waited_s:g} s): "
                "the counts here are partial; call corpus_sync_status with this job_id for its "
                "progress and final report"
            ],
        }


class SyncJobs:
    """The syncs of this process, run as jobs over `sync`; their records in `metadata`."""

    def __init__(self, sync: SyncDelta, metadata: MetadataStore, *, clock: Clock) -> None:
        self._sync = sync
        self._metadata = metadata
        self._clock = clock
        self._live: dict[str, _Live] = {}
        #: Jobs of this process that failed before they could record themselves (waiting for
        #: the key's lock, say): job id -> (query key, error). The latest 100.
        self._unrecorded: dict[str, tuple[str, str]] = {}

    async def run(
        self,
        query_key: str,
        term: str,
        overlap_days: int = 5,
        *,
        wait_s: float,
        progress: ProgressCallback | None = None,
    ) -> JobOutcome:
        """Start the sync as a job and wait for it at most `wait_s` seconds (`progress` hears
        from it while this call waits).

        Raises:
            InvalidRequestError: bad arguments (before any job starts).
            The sync's errors, when it fails within the wait.
        """
        key, _ = self._sync.check_arguments(query_key, term, overlap_days)
        job_id = new_job_id(self._clock.now())
        live = _Live(job_id, key)
        live.task = asyncio.get_running_loop().create_task(
            self._sync.run(query_key, term, overlap_days, job_id=job_id, progress=live.publish),
            name=f"biomcp-{job_id}",
        )
        self._live[job_id] = live
        live.task.add_done_callback(lambda task: self._forget(job_id, task))
        if progress is not None:
            live.listeners.append(progress)
        began = time.perf_counter()
        try:
            # asyncio.wait never cancels the task: a cancelled caller leaves the job running.
            await asyncio.wait({live.task}, timeout=max(0.0, wait_s))
        finally:
            if progress is not None:
                with contextlib.suppress(ValueError):
                    live.listeners.remove(progress)
        waited = round(time.perf_counter() - began, 1)
        report = live.task.result() if live.task.done() else None
        return JobOutcome(job_id, report, live.progress, waited)

    def _forget(self, job_id: str, task: asyncio.Task[SyncReport]) -> None:
        live = self._live.pop(job_id, None)
        if task.cancelled():
            return
        exc = task.exception()  # retrieved: the job record keeps the failure
        if exc is not None and live is not None:
            self._unrecorded[job_id] = (live.query_key, f"{type(exc).__name__}: {exc}"[:2000])
            while len(self._unrecorded) > 100:
                self._unrecorded.pop(next(iter(self._unrecorded)))

    async def status(self, job_id: str) -> dict[str, Any]:
        """The state of job `job_id`: its record, its live progress when it runs here.

        Raises:
            InvalidRequestError: an empty id. NotFoundError: no such job.
        """
        job_id = job_id.strip()
        if not job_id:
            raise InvalidRequestError("job_id is empty: give the job_id a sync answered with")
        live = self._live.get(job_id)
        record = await self._metadata.get_job(job_id)
        if record is None and live is None and job_id in self._unrecorded:
            query_key, error = self._unrecorded[job_id]
            return {
                "job_id": job_id,
                "query_key": query_key,
                "status": "failed",
                "started_at": None,
                "finished_at": None,
                "progress": None,
                "report": None,
                "error": error,
            }
        if record is None and live is None:
            raise NotFoundError(f"no sync job {job_id!r} (job ids come from pubmed_sync_delta)")
        return _status_payload(job_id, record, live)

    async def aclose(self) -> None:
        """Stop the jobs still running here (each is recorded as interrupted)."""
        running = [live.task for live in self._live.values() if live.task is not None]
        for task in running:
            task.cancel()
        for task in running:
            with contextlib.suppress(BaseException):
                await task


def _status_payload(job_id: str, record: SyncJob | None, live: _Live | None) -> dict[str, Any]:
    state = live.progress if live is not None else None
    status = record.status if record is not None else "running"
    if status not in JOB_STATES:
        status = "failed"
    report = None
    if record is not None and record.status == "succeeded":
        report = {
            "job_id": job_id,
            "inserted": record.inserted,
            "updated": record.updated,
            "skipped": record.skipped,
            "pmids_processed": record.pmids_processed,
            "max_edat_seen": iso_utc(record.max_edat_seen),
            "warnings": list(record.warnings),
        }
    progress = None
    if status == "running":
        progress = {
            "total": state.total if state else None,
            "processed": state.processed if state else 0,
            "inserted": state.inserted if state else 0,
            "updated": state.updated if state else 0,
            "skipped": state.skipped if state else 0,
            "chunks_embedded": state.chunks_embedded if state else 0,
            "elapsed_s": round(state.elapsed_s, 3) if state else None,
            "here": live is not None,
        }
    return {
        "job_id": job_id,
        "query_key": record.query_key if record is not None else (live.query_key if live else ""),
        "status": status,
        "started_at": iso_utc(record.started_at) if record is not None else None,
        "finished_at": iso_utc(record.finished_at) if record is not None else None,
        "progress": progress,
        "report": report,
        "error": record.error if record is not None and status == "failed" else None,
    }

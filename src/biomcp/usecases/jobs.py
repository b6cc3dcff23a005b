"""Long syncs are jobs: a sync outlives the request that started it.

`SyncJobs.run` starts the sync as a task of this process and waits for it at most `wait_s`
seconds. A sync done by then answers with its report, as before; one still running answers
with its counts so far and a warning naming the job, and goes on. Cancelling the request that
waits (a client's timeout, a user pressing stop) does not stop the job: it finishes and is
recorded, and `status` tells how it ended. Jobs live in SQL, so any process can read their
state. A running job's progress goes to its record too, at most every `PROGRESS_EVERY_S`
seconds and when its count of records is known or reached: other processes show that, and
this one its live progress.

One job per query key: a sync of a key whose job is queued or running here, with the same
term, joins that job and answers with its `job_id`, instead of queueing a second run behind
it. At most `max_running` jobs run at once; the others are `queued` until one ends. A queued
job waits without holding a worker thread, so tool calls keep their threads however many
syncs pile up.

A job is `queued`, `running`, `succeeded`, `failed` or `interrupted` (its process stopped).
Each job records its owner: this process, which holds a lock of its own while it has jobs. A
status read of a job that is not live here probes that lock (or, for a job run without a
queue, its key's lock): a free lock means the process died, and the job is recorded as
`interrupted` then.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
import uuid
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from biomcp.ports.clock import Clock
from biomcp.ports.jobs import JobLog, JobProgress, SyncJob
from biomcp.ports.store_errors import LockTimeoutError, MetadataStoreError
from biomcp.usecases.errors import InvalidRequestError, NotFoundError
from biomcp.usecases.payloads import iso_utc
from biomcp.usecases.saved_queries import SyncRequest
from biomcp.usecases.sync import SyncDelta
from biomcp.usecases.sync_report import (
    ProgressCallback,
    SyncProgress,
    SyncReport,
    new_job_id,
    record_whole,
)

__all__ = [
    "JOB_STATES",
    "MAX_RUNNING",
    "PROGRESS_EVERY_S",
    "JobOutcome",
    "SyncJobs",
    "owner_lock_name",
]

JOB_STATES = ("queued", "running", "succeeded", "failed", "interrupted")
#: States of a job that has not ended.
_OPEN = ("queued", "running")
#: States whose record carries an error.
_ENDED_BADLY = ("failed", "interrupted")

#: How many syncs one process runs at once by default; the others wait in its queue.
MAX_RUNNING = 2

#: How long a shutdown waits for its cancelled jobs to record themselves.
CLOSE_WAIT_S = 10.0

#: The least time between two progress records of one job (a phase change records at once).
PROGRESS_EVERY_S = 2.0

_log = logging.getLogger("biomcp.jobs")


def owner_lock_name(owner: str) -> str:
    """The lock a process with jobs holds for its lifetime (never a saved query's key)."""
    return f"__biomcp_process__:{owner}"


@dataclass(slots=True)
class _Live:
    """A job of this process, queued or running."""

    job_id: str
    query_key: str
    term: str
    #: Done once the job is recorded `queued` (or failed to be).
    admitted: asyncio.Future[None]
    task: asyncio.Task[SyncReport] | None = None
    started: bool = False
    progress: SyncProgress | None = None
    listeners: list[ProgressCallback] = field(default_factory=list)
    #: The progress last recorded in the job's record, and when (this process's clock).
    saved: SyncProgress | None = None
    saved_at: datetime | None = None
    save_failed: bool = False

    async def publish(self, state: SyncProgress) -> None:
        self.progress = state
        for listener in list(self.listeners):
            with contextlib.suppress(Exception):  # a gone listener never stops the job
                result = listener(state)
                if inspect.isawaitable(result):
                    await result


@dataclass(frozen=True, slots=True)
class JobOutcome:
    """What `run` answers: the final report, or the counts so far of a job that goes on.
    `joined` says the call joined a job of the key that was already queued or running."""

    job_id: str
    report: SyncReport | None
    progress: SyncProgress | None
    waited_s: float
    joined: bool = False
    queued: bool = False

    def as_payload(self) -> dict[str, Any]:
        """Spec 01's `pubmed.sync_delta` response."""
        joined = (
            [
                f"a sync of this query key was already under way as job {self.job_id}: this "
                "call joined it rather than start a second one"
            ]
            if self.joined
            else []
        )
        if self.report is not None:
            payload = self.report.as_payload()
            payload["warnings"] = joined + list(payload["warnings"])
            return payload
        state = self.progress
        so_far = (
            "waiting in the queue behind other syncs"
            if self.queued
            else f"{state.processed} of {state.total} records so far"
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
                *joined,
                f"the sync goes on as job {self.job_id} ({so_far} after {self.waited_s:g} s): "
                "the counts here are partial; call corpus_sync_status with this job_id for its "
                "progress and final report",
            ],
        }


class SyncJobs:
    """The syncs of this process, run as jobs over `sync`; their records in `metadata`."""

    def __init__(
        self,
        sync: SyncDelta,
        metadata: JobLog,
        *,
        clock: Clock,
        max_running: int = MAX_RUNNING,
    ) -> None:
        if max_running < 1:
            raise ValueError("max_running must be >= 1")
        self._sync = sync
        self._metadata = metadata
        self._clock = clock
        self.max_running = max_running
        self._slots: asyncio.Semaphore | None = None
        self._live: dict[str, _Live] = {}
        self.owner = uuid.uuid4().hex
        self._owner_lock: AbstractAsyncContextManager[None] | None = None
        self._owner_guard: asyncio.Lock | None = None
        self._ending: set[asyncio.Task[None]] = set()

    async def run(
        self,
        query_key: str,
        term: str,
        overlap_days: int = 5,
        *,
        wait_s: float,
        progress: ProgressCallback | None = None,
        fulltext: bool | None = None,
    ) -> JobOutcome:
        """Start the sync as a job, or join the key's job under way here with the same term,
        and wait for it at most `wait_s` seconds (`progress` hears from it meanwhile).
        `fulltext` is the key's full-text choice (`SyncDelta.run`).

        Raises:
            InvalidRequestError: bad arguments (before any job starts).
            The sync's errors, when it fails within the wait.
        """
        request = SyncRequest.check(query_key, term, overlap_days, fulltext=fulltext)
        live = self._joinable(request.query_key, request.term)
        joined = live is not None
        if live is None:
            live = self._start(request)
        # Shielded: a caller cancelled while the job is recorded leaves the job going.
        await asyncio.shield(live.admitted)
        if progress is not None:
            live.listeners.append(progress)
        began = time.perf_counter()
        task = live.task
        if task is None:  # pragma: no cover - `_start` always sets it
            raise RuntimeError("a job without a task")
        try:
            # asyncio.wait never cancels the task: a cancelled caller leaves the job running.
            await asyncio.wait({task}, timeout=max(0.0, wait_s))
        finally:
            if progress is not None:
                with contextlib.suppress(ValueError):
                    live.listeners.remove(progress)
        waited = round(time.perf_counter() - began, 1)
        report = task.result() if task.done() else None
        return JobOutcome(
            live.job_id, report, live.progress, waited, joined=joined, queued=not live.started
        )

    def _joinable(self, query_key: str, term: str) -> _Live | None:
        for live in self._live.values():
            if live.query_key == query_key and live.term == term:
                return live
        return None

    def _start(self, request: SyncRequest) -> _Live:
        """The job, known here at once (a retry meanwhile joins it); its task records it."""
        loop = asyncio.get_running_loop()
        job_id = new_job_id(self._clock.now())
        live = _Live(job_id, request.query_key, request.term, admitted=loop.create_future())
        live.task = loop.create_task(self._job(live, request), name=f"biomcp-{job_id}")
        self._live[job_id] = live
        live.task.add_done_callback(lambda task: self._forget(job_id, task))
        return live

    async def _admit(self, live: _Live) -> None:
        """Hold this process's lock and record the job `queued`; `live.admitted` tells how
        that went."""
        try:
            await self._hold_owner_lock()
            job = SyncJob(
                live.job_id, live.query_key, live.term, self._clock.now(), None, "queued",
                owner=self.owner,
            )  # fmt: skip
            await record_whole(self._metadata, job)
        except asyncio.CancelledError:
            live.admitted.cancel()
            raise
        except BaseException as exc:
            live.admitted.set_exception(exc)
            raise
        live.admitted.set_result(None)

    async def _job(self, live: _Live, request: SyncRequest) -> SyncReport:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.max_running)
        try:
            await self._admit(live)
            async with self._slots:
                live.started = True
                return await self._sync.run_request(
                    request,
                    job_id=live.job_id,
                    progress=lambda state: self._publish(live, state),
                    owner=self.owner,
                )
        except BaseException as exc:
            # A job that ended before the sync recorded it (cancelled in the queue, or out of
            # patience for its key's lock) is recorded here. The record outlives a cancelled
            # job, so `aclose` waits for it before the stores close.
            ending = asyncio.get_running_loop().create_task(self._record_end(live, exc))
            self._ending.add(ending)
            ending.add_done_callback(self._ending.discard)
            await asyncio.shield(ending)
            raise

    async def _publish(self, live: _Live, state: SyncProgress) -> None:
        """Tell the job's listeners, and record the progress when it is due (`_due`)."""
        await live.publish(state)
        now = self._clock.now()
        if not _due(live, state, now):
            return
        live.saved, live.saved_at = state, now
        try:
            await self._metadata.record_progress(live.job_id, _recorded(state, now))
        except MetadataStoreError as exc:
            # Progress is advisory: the sync goes on, and its final record is what counts.
            if not live.save_failed:
                _log.warning("could not record the progress of job %s: %s", live.job_id, exc)
            live.save_failed = True

    async def _record_end(self, live: _Live, exc: BaseException) -> None:
        with contextlib.suppress(Exception):  # the original failure is what the caller sees
            record = await self._metadata.get_job(live.job_id)
            if record is None or record.status not in _OPEN:
                return
            stopped = isinstance(exc, asyncio.CancelledError)
            error = (
                "the process stopped before this sync finished"
                if stopped
                else f"{type(exc).__name__}: {exc}"[:2000]
            )
            await self._metadata.record_job(
                replace(
                    record,
                    status="interrupted" if stopped else "failed",
                    finished_at=self._clock.now(),
                    error=error,
                )
            )

    def _forget(self, job_id: str, task: asyncio.Task[SyncReport]) -> None:
        live = self._live.pop(job_id, None)
        if not task.cancelled():
            task.exception()  # retrieved: the job record keeps the failure
        if live is not None and live.admitted.done() and not live.admitted.cancelled():
            live.admitted.exception()  # retrieved: the callers that waited raised it

    async def _hold_owner_lock(self) -> None:
        """Hold this process's own lock while it has jobs, so that others can tell it lives."""
        if self._owner_guard is None:
            self._owner_guard = asyncio.Lock()
        async with self._owner_guard:
            if self._owner_lock is not None:
                return
            lock = self._metadata.query_lock(owner_lock_name(self.owner), timeout_s=0)
            await lock.__aenter__()
            self._owner_lock = lock

    async def status(self, job_id: str) -> dict[str, Any]:
        """The state of job `job_id`: its record, its live progress when it runs here. A job
        recorded as queued or running whose process died reads (and is recorded) as
        `interrupted`.

        Raises:
            InvalidRequestError: an empty id. NotFoundError: no such job.
        """
        job_id = job_id.strip()
        if not job_id:
            raise InvalidRequestError("job_id is empty: give the job_id a sync answered with")
        live = self._live.get(job_id)
        record = await self._metadata.get_job(job_id)
        if record is None and live is None:
            raise NotFoundError(f"no sync job {job_id!r} (job ids come from pubmed_sync_delta)")
        if live is None and record is not None and record.status in _OPEN:
            record = await self.settle(record)
        return _status_payload(job_id, record, live)

    async def recent(self, limit: int = 20) -> list[dict[str, Any]]:
        """The states of the latest `limit` jobs of every process, newest first (as `status`)."""
        return [
            await self.status(job.job_id) for job in await self._metadata.list_jobs(limit=limit)
        ]

    async def settle(self, record: SyncJob) -> SyncJob:
        """`record` as it stands: a queued or running job whose process is gone is recorded
        as `interrupted`. Never waits: a held lock means the job lives."""
        if record.status not in _OPEN or record.job_id in self._live:
            return record
        if record.owner == self.owner:
            probe = None  # this process's own job, ended without its final record
        elif record.owner:
            probe = owner_lock_name(record.owner)
        else:
            probe = record.query_key
        try:
            if probe is None:
                return await self._interrupt(record)
            async with self._metadata.query_lock(probe, timeout_s=0):
                return await self._interrupt(record)
        except LockTimeoutError:
            return record  # its process holds the lock: it lives
        except MetadataStoreError:
            _log.warning("could not tell whether job %s still runs", record.job_id)
            return record

    async def _interrupt(self, record: SyncJob) -> SyncJob:
        fresh = await self._metadata.get_job(record.job_id)
        if fresh is None or fresh.status not in _OPEN:
            return fresh or record
        stopped = replace(
            fresh,
            status="interrupted",
            finished_at=self._clock.now(),
            error="the process running this sync stopped before it finished",
        )
        await self._metadata.record_job(stopped)
        return stopped

    async def aclose(self, wait_s: float = CLOSE_WAIT_S) -> None:
        """Stop the jobs of this process (each is recorded as interrupted), waiting at most
        `wait_s` seconds for them to record it, then release this process's lock."""
        tasks = [live.task for live in self._live.values() if live.task is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=wait_s)
            if pending:
                _log.warning("%d sync job(s) did not stop within %g s", len(pending), wait_s)
        if self._ending:  # end records still being written, shielded from the cancellation
            await asyncio.wait(set(self._ending), timeout=wait_s)
        lock, self._owner_lock = self._owner_lock, None
        if lock is not None:
            with contextlib.suppress(Exception):
                await lock.__aexit__(None, None, None)


def _due(live: _Live, state: SyncProgress, now: datetime) -> bool:
    """Record `state`? At a phase change (the first progress, a new total, the last record
    processed), else when `PROGRESS_EVERY_S` passed since the last record."""
    saved = live.saved
    if saved is None or live.saved_at is None or saved.total != state.total:
        return True
    if state.processed >= state.total and saved.processed < state.total:
        return True
    return (now - live.saved_at).total_seconds() >= PROGRESS_EVERY_S


def _recorded(state: SyncProgress, at: datetime | None = None) -> JobProgress:
    """`state` as the job record keeps it."""
    return JobProgress(
        total=state.total,
        processed=state.processed,
        inserted=state.inserted,
        updated=state.updated,
        skipped=state.skipped,
        chunks_embedded=state.chunks_embedded,
        elapsed_s=round(state.elapsed_s, 3),
        recorded_at=at,
    )


def _status_payload(job_id: str, record: SyncJob | None, live: _Live | None) -> dict[str, Any]:
    # A job running here shows its live progress; one running elsewhere, its recorded one.
    state = (
        _recorded(live.progress)
        if live is not None and live.progress is not None
        else record.progress
        if record is not None
        else None
    )
    status = record.status if record is not None else "queued"
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
        shown = state or JobProgress(total=None, processed=0)
        progress = {
            "total": shown.total,
            "processed": shown.processed,
            "inserted": shown.inserted,
            "updated": shown.updated,
            "skipped": shown.skipped,
            "chunks_embedded": shown.chunks_embedded,
            "elapsed_s": shown.elapsed_s,
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
        "error": record.error if record is not None and status in _ENDED_BADLY else None,
    }

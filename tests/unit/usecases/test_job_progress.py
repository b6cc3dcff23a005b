"""A running job's progress reaches its record at a bounded rate, and another process's
`status` shows it. Over the in-memory JobLog and a scripted sync that moves a hand-driven
clock: the rate is asserted on the clock, never on the wall."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, cast

from biomcp.ports.jobs import SyncJob
from biomcp.testing.memory import MemoryJobLog, MemoryTables
from biomcp.usecases.jobs import PROGRESS_EVERY_S, SyncJobs
from biomcp.usecases.saved_queries import SyncRequest
from biomcp.usecases.sync import SyncDelta
from biomcp.usecases.sync_report import ProgressCallback, SyncProgress, SyncReport
from tests.support.sql_records import FakeClock

TOTAL = 50


class ScriptedSync:
    """Records its job running, then reports `(seconds, processed)` steps, moving the clock by
    each step's seconds first; after each, notes what the job's record and `watcher` show."""

    def __init__(
        self,
        log: MemoryJobLog,
        clock: FakeClock,
        steps: Sequence[tuple[float, int]],
        watcher: SyncJobs | None = None,
    ) -> None:
        self.log, self.clock, self.steps, self.watcher = log, clock, steps, watcher
        self.recorded: list[int | None] = []
        self.watched: list[dict[str, Any]] = []

    async def run_request(
        self, request: SyncRequest, *, job_id: str, progress: ProgressCallback, owner: str
    ) -> SyncReport:
        key = request.query_key
        job = SyncJob(job_id, key, request.term, self.clock.now(), None, "running", owner=owner)
        await self.log.record_job(job)
        for seconds, processed in self.steps:
            self.clock.advance(seconds=seconds)
            told = progress(SyncProgress(key, TOTAL, processed, 3 * processed, 1.0, processed))
            if told is not None:
                await told
            record = await self.log.get_job(job_id)
            assert record is not None
            self.recorded.append(record.progress.processed if record.progress else None)
            if self.watcher is not None:
                self.watched.append(await self.watcher.status(job_id))
        done = replace(job, status="succeeded", finished_at=self.clock.now(), inserted=TOTAL)
        await self.log.record_job(done)
        return SyncReport(job_id, key, TOTAL, 0, 0, TOTAL, None, ())


def _jobs(sync: ScriptedSync, log: MemoryJobLog, clock: FakeClock) -> SyncJobs:
    return SyncJobs(cast(SyncDelta, sync), log, clock=clock)


def _run(sync: ScriptedSync, log: MemoryJobLog, clock: FakeClock) -> str:
    async def scenario() -> str:
        jobs = _jobs(sync, log, clock)
        try:
            outcome = await jobs.run("progress_key", "obesity", wait_s=600)
            assert outcome.report is not None
            return outcome.job_id
        finally:
            await jobs.aclose()

    return asyncio.run(scenario())


def test_progress_is_recorded_at_phase_changes_and_at_most_once_per_interval() -> None:
    clock, log = FakeClock(), MemoryJobLog(MemoryTables())
    step = PROGRESS_EVERY_S / 4
    steps = [(0, 0), (step, 10), (step, 20), (step, 25), (step, 30), (step, 40), (0, TOTAL)]
    sync = ScriptedSync(log, clock, steps)

    _run(sync, log, clock)

    # Counted (the first), then once PROGRESS_EVERY_S passed, then the last record processed.
    assert sync.recorded == [0, 0, 0, 0, 30, 30, TOTAL]


def test_a_frozen_clock_records_only_the_phase_changes() -> None:
    clock, log = FakeClock(), MemoryJobLog(MemoryTables())
    sync = ScriptedSync(log, clock, [(0, n) for n in range(0, TOTAL + 1, 5)])

    _run(sync, log, clock)

    assert sync.recorded == [0] * (TOTAL // 5) + [TOTAL]


def test_another_process_sees_the_recorded_progress_of_a_job_it_does_not_run() -> None:
    clock, log = FakeClock(), MemoryJobLog(MemoryTables())
    elsewhere = SyncJobs(cast(SyncDelta, None), MemoryJobLog(log.tables), clock=clock)
    sync = ScriptedSync(log, clock, [(0, 0), (PROGRESS_EVERY_S, 20)], watcher=elsewhere)

    job_id = _run(sync, log, clock)

    first, second = sync.watched
    assert [first["status"], second["status"]] == ["running", "running"]
    assert first["progress"]["here"] is False
    assert (first["progress"]["total"], first["progress"]["processed"]) == (TOTAL, 0)
    assert second["progress"] == {
        "total": TOTAL,
        "processed": 20,
        "inserted": 20,
        "updated": 0,
        "skipped": 0,
        "chunks_embedded": 60,
        "elapsed_s": 1.0,
        "here": False,
    }
    ended = asyncio.run(elsewhere.status(job_id))
    assert (ended["status"], ended["progress"]) == ("succeeded", None)

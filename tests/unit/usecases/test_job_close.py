"""`SyncJobs.aclose` returns only once every job's end record is written.

A job that fails before its sync records it is recorded by a task shielded from cancellation.
When that task outlived `aclose`, it reopened the stores after they were closed (a leaked
SQLite connection that broke the next open of the same file in the process).
"""

from __future__ import annotations

import asyncio
import threading
from typing import cast

import pytest

from biomcp.ports.jobs import SyncJob
from biomcp.ports.store_errors import StoreUnavailableError
from biomcp.testing.memory import MemoryJobLog, MemoryTables
from biomcp.usecases.jobs import SyncJobs
from biomcp.usecases.sync import SyncDelta
from tests.support.sql_records import FakeClock

#: Loop turns the end record's read takes: far more than cancelling a job needs.
SLOW_TURNS = 200


class RefusingJobLog(MemoryJobLog):
    """Refuses the first job record (as a read-only database does); its reads take
    `SLOW_TURNS` turns of the event loop and are counted when they finish."""

    def __init__(self, tables: MemoryTables) -> None:
        super().__init__(tables)
        self.refused = False
        self.reads_done = 0

    async def record_job(self, job: SyncJob) -> None:
        if not self.refused:
            self.refused = True
            raise StoreUnavailableError("the database is read-only")
        await super().record_job(job)

    async def get_job(self, job_id: str) -> SyncJob | None:
        for _ in range(SLOW_TURNS):
            await asyncio.sleep(0)
        found = await super().get_job(job_id)
        self.reads_done += 1
        return found


def test_close_waits_for_the_end_record_of_a_job_refused_at_admission() -> None:
    log = RefusingJobLog(MemoryTables())

    async def scenario() -> int:
        jobs = SyncJobs(cast(SyncDelta, None), log, clock=FakeClock())
        with pytest.raises(StoreUnavailableError):
            await jobs.run("refused", "obesity", wait_s=60)
        assert log.reads_done == 0  # the end record is still being written
        await jobs.aclose()
        return log.reads_done

    assert asyncio.run(scenario()) == 1


class ThreadedJobLog(MemoryJobLog):
    """Writes each job record from a worker thread, as the SQL store does. The first write
    waits for `release` inside the thread, where a cancellation cannot stop it."""

    def __init__(self, tables: MemoryTables) -> None:
        super().__init__(tables)
        self.release = threading.Event()
        self.writing = asyncio.Event()
        self.first = True

    async def record_job(self, job: SyncJob) -> None:
        first, self.first = self.first, False
        if first:
            self.writing.set()

        def write() -> None:
            if first:
                self.release.wait(timeout=60)
            asyncio.run(MemoryJobLog.record_job(self, job))

        await asyncio.to_thread(write)


def test_a_job_cancelled_while_its_queued_record_is_written_ends_interrupted() -> None:
    """The `queued` record lands after the cancellation; the end record must still come last."""
    log = ThreadedJobLog(MemoryTables())

    async def scenario() -> list[SyncJob]:
        jobs = SyncJobs(cast(SyncDelta, None), log, clock=FakeClock())
        run = asyncio.create_task(jobs.run("landing", "obesity", wait_s=60))
        await log.writing.wait()
        closing = asyncio.create_task(jobs.aclose())
        try:
            for _ in range(SLOW_TURNS):  # the cancellation reaches the job while it writes
                await asyncio.sleep(0)
            assert not closing.done()  # close waits for the record it cancelled
        finally:
            log.release.set()
        await closing
        with pytest.raises(asyncio.CancelledError):
            await run
        return await log.list_jobs()

    (job,) = asyncio.run(scenario())
    assert job.status == "interrupted"
    assert job.finished_at is not None

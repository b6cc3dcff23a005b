"""`MemoryJobLog`: the JobLog port in memory, with a per-key lock shared by every store over
the same tables (threads and event loops included)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace

from biomcp.adapters.filelocks import whoami
from biomcp.ports.holders import describe_holder
from biomcp.ports.jobs import JobProgress, SyncJob
from biomcp.ports.store_errors import LockTimeoutError
from biomcp.testing.memory.tables import MemoryDatabase

__all__ = ["MemoryJobLog"]

#: How long a waiter sleeps between two tries of a held lock.
_POLL_S = 0.01


class MemoryJobLog(MemoryDatabase):
    """Sync jobs in a dict; the query lock a dict entry naming its holder."""

    def query_lock(
        self, query_key: str, *, timeout_s: float = 0.0
    ) -> AbstractAsyncContextManager[None]:
        return self._hold(query_key, timeout_s)

    @asynccontextmanager
    async def _hold(self, query_key: str, timeout_s: float) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not self._try_lock(query_key):
            if loop.time() >= deadline:
                holder = self.tables.locks.get(query_key)
                raise LockTimeoutError(
                    f"query key {query_key!r} is locked by "
                    f"{describe_holder(holder, 'another holder')} (waited {timeout_s:g} s)",
                    query_key=query_key,
                    holder=holder,
                    waited_s=timeout_s,
                )
            await asyncio.sleep(min(_POLL_S, max(deadline - loop.time(), 0.0)))
        try:
            yield
        finally:
            with self.tables.mutex:
                del self.tables.locks[query_key]

    def _try_lock(self, query_key: str) -> bool:
        with self.tables.mutex:
            if query_key in self.tables.locks:
                return False
            self.tables.locks[query_key] = whoami()
            return True

    async def record_job(self, job: SyncJob) -> None:
        with self._transaction() as tables:
            tables.jobs[job.job_id] = job

    async def record_progress(self, job_id: str, progress: JobProgress) -> bool:
        with self._transaction() as tables:
            job = tables.jobs.get(job_id)
            if job is None or job.status != "running":
                return False
            tables.jobs[job_id] = replace(job, progress=progress)
            return True

    async def get_job(self, job_id: str) -> SyncJob | None:
        with self._transaction() as tables:
            return tables.jobs.get(job_id)

    async def list_jobs(self, query_key: str | None = None, limit: int = 50) -> list[SyncJob]:
        if limit <= 0:
            return []
        with self._transaction() as tables:
            jobs = [j for j in tables.jobs.values() if query_key in (None, j.query_key)]
        jobs.sort(key=lambda j: (j.started_at, j.job_id), reverse=True)
        return jobs[:limit]

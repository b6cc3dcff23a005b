"""`SqlJobLog`: the JobLog port in SQL, and the per-key lock (a file lock beside SQLite, an
advisory lock on PostgreSQL).
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from sqlalchemy import (
    Engine,
    select,
    update,
)

from biomcp.adapters.sql.database import SqlDatabase
from biomcp.adapters.sql.engine import (
    replace_row,
    writing,
)
from biomcp.adapters.sql.locks import AdvisoryQueryLock, FileQueryLock
from biomcp.adapters.sql.readonly import WritableFirst
from biomcp.adapters.sql.rows import (
    JOBS,
    job_from_row,
    job_values,
    progress_values,
)
from biomcp.ports.jobs import JobProgress, SyncJob

__all__ = ["SqlJobLog"]


class SqlJobLog(SqlDatabase):
    """Sync jobs and the query lock (`JobLog`)."""

    def query_lock(
        self, query_key: str, *, timeout_s: float = 0.0
    ) -> AbstractAsyncContextManager[None]:
        """Hold the lock of `query_key` across processes (and within this one) for the block.

        Raises (on entering):
            LockTimeoutError: when another holder keeps it past `timeout_s` seconds.
        """
        if self._sqlite_file is not None:
            lock = FileQueryLock(self._sqlite_file, query_key, timeout_s)
            return WritableFirst(self._open_engine, lock)
        return AdvisoryQueryLock(self._open_engine, query_key, timeout_s)

    # -- jobs -------------------------------------------------------------------------------

    async def record_job(self, job: SyncJob) -> None:
        """Insert or replace the job by id."""

        def work(engine: Engine) -> None:
            values = job_values(job)
            with writing(engine) as connection:
                replace_row(connection, JOBS, values, "job_id")

        await self._run("recording a sync job", work)

    async def record_progress(self, job_id: str, progress: JobProgress) -> bool:
        """Set the progress of job `job_id` if it is running (one conditional UPDATE, so an
        ended job is never revived); False when nothing was written."""
        statement = (
            update(JOBS)
            .where(JOBS.c.job_id == job_id, JOBS.c.status == "running")
            .values(progress=progress_values(progress))
        )

        def work(engine: Engine) -> bool:
            with writing(engine) as connection:
                return connection.execute(statement).rowcount == 1

        return await self._run("recording a sync job's progress", work)

    async def get_job(self, job_id: str) -> SyncJob | None:
        def work(engine: Engine) -> SyncJob | None:
            with engine.connect() as connection:
                row = connection.execute(select(JOBS).where(JOBS.c.job_id == job_id)).first()
            return job_from_row(row) if row is not None else None

        return await self._run("reading a sync job", work)

    async def list_jobs(self, query_key: str | None = None, limit: int = 50) -> list[SyncJob]:
        """The latest `limit` jobs (of `query_key`, or of every key), newest start first."""

        def work(engine: Engine) -> list[SyncJob]:
            query = select(JOBS).order_by(JOBS.c.started_at.desc(), JOBS.c.job_id.desc())
            if query_key is not None:
                query = query.where(JOBS.c.query_key == query_key)
            with engine.connect() as connection:
                return [job_from_row(row) for row in connection.execute(query.limit(limit))]

        return await self._run("listing sync jobs", work) if limit > 0 else []

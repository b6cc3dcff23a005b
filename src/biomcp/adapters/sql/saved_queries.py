"""`SqlSavedQueryStore`: the SavedQueryStore port in SQL (checkpoints, records held, pending
PMIDs, export marks).

A watermark move locks its checkpoint row for the transaction, so two writers never both move
it from the same starting point.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    delete,
    func,
    select,
    update,
)

from biomcp.adapters.sql.database import SqlDatabase, unique
from biomcp.adapters.sql.engine import (
    chunks,
    dialect_insert,
    replace_row,
    writing,
)
from biomcp.adapters.sql.rows import (
    AUDIT,
    CHECKPOINTS,
    DOCS,
    EXPORT_MARKS,
    FULLTEXT,
    JOBS,
    PENDING,
    QUERY_RECORDS,
    audit_from_row,
    audit_values,
    checkpoint_from_row,
    pending_from_row,
)
from biomcp.domain.watermarks import (
    WatermarkAudit,
    advance_watermark,
    covered_from,
    manual_watermark,
)
from biomcp.ports.saved_queries import Checkpoint, ForgottenQuery, PendingPmid

__all__ = ["SqlSavedQueryStore"]


def _delete_unheld(connection: Connection, pmids: Sequence[str]) -> int:
    """Delete the documents of `pmids` no saved query holds now, with their full-text rows;
    how many went. The full-text rows go after their documents: a writer that stored one
    meanwhile held the document's row, so this statement sees its commit."""
    deleted = 0
    for part in chunks(pmids):
        held = select(QUERY_RECORDS.c.pmid).where(QUERY_RECORDS.c.pmid.in_(part))
        statement = delete(DOCS).where(DOCS.c.pmid.in_(part), DOCS.c.pmid.not_in(held))
        returned = connection.execute(statement.returning(DOCS.c.pmid)).scalars()
        gone = [str(pmid) for pmid in returned]
        if gone:
            connection.execute(delete(FULLTEXT).where(FULLTEXT.c.pmid.in_(gone)))
        deleted += len(gone)
    return deleted


class SqlSavedQueryStore(SqlDatabase):
    """What each saved query keeps between syncs, in SQL (`SavedQueryStore`)."""

    async def get_checkpoint(self, query_key: str) -> Checkpoint:
        """The watermark of `query_key` (all None when it has none yet)."""

        def work(engine: Engine) -> Checkpoint:
            with engine.connect() as connection:
                query = select(CHECKPOINTS).where(CHECKPOINTS.c.query_key == query_key)
                return checkpoint_from_row(query_key, connection.execute(query).one_or_none())

        return await self._run("reading a checkpoint", work)

    @staticmethod
    def _lock_checkpoint(connection: Connection, query_key: str) -> Any:
        """Create the key's row when missing, then lock it for this transaction."""
        connection.execute(
            dialect_insert(connection, CHECKPOINTS)
            .values(query_key=query_key)
            .on_conflict_do_nothing(index_elements=["query_key"])
        )
        query = select(CHECKPOINTS).where(CHECKPOINTS.c.query_key == query_key)
        return connection.execute(query.with_for_update()).one()

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
        """Automatic move: the watermark becomes max(current, candidate), never less;
        `last_scan_at` becomes `scanned_at`; `covers_from` follows `covered_from`;
        `records_tracked` becomes true with `read_history` and never false."""

        def work(engine: Engine) -> Checkpoint:
            with writing(engine) as connection:
                row = self._lock_checkpoint(connection, query_key)
                new = advance_watermark(row.last_edat, candidate)
                covers = covered_from(row.covers_from, row.last_scan_at is not None, window_start)
                tracked = bool(row.records_tracked) or read_history
                keeps_fulltext = bool(row.fulltext)
                connection.execute(
                    update(CHECKPOINTS)
                    .where(CHECKPOINTS.c.query_key == query_key)
                    .values(
                        last_edat=new,
                        last_scan_at=scanned_at,
                        covers_from=covers,
                        term=term,
                        records_tracked=tracked,
                    )
                )
            return Checkpoint(query_key, new, scanned_at, covers, term, tracked, keeps_fulltext)

        return await self._run("advancing a checkpoint", work)

    async def set_checkpoint(
        self, query_key: str, last_edat: datetime, *, actor: str, reason: str, at: datetime
    ) -> WatermarkAudit:
        """Manual move (any direction), written with its audit entry in one transaction."""

        def work(engine: Engine) -> WatermarkAudit:
            with writing(engine) as connection:
                row = self._lock_checkpoint(connection, query_key)
                new, audit = manual_watermark(
                    query_key, row.last_edat, last_edat, actor=actor, reason=reason, at=at
                )
                connection.execute(
                    update(CHECKPOINTS)
                    .where(CHECKPOINTS.c.query_key == query_key)
                    .values(last_edat=new)
                )
                connection.execute(AUDIT.insert().values(audit_values(audit)))
            return audit

        return await self._run("setting a checkpoint", work)

    async def checkpoint_audit(self, query_key: str) -> list[WatermarkAudit]:
        """The manual moves of `query_key`, newest first."""

        def work(engine: Engine) -> list[WatermarkAudit]:
            query = (
                select(AUDIT)
                .where(AUDIT.c.query_key == query_key)
                .order_by(AUDIT.c.at.desc(), AUDIT.c.id.desc())
            )
            with engine.connect() as connection:
                return [audit_from_row(row) for row in connection.execute(query)]

        return await self._run("reading checkpoint audit", work)

    async def set_fulltext(self, query_key: str, enabled: bool) -> None:
        """Remember whether `query_key`'s syncs keep full text; a key without a checkpoint
        gets its row, without a watermark (as if never synced)."""
        values = {"query_key": query_key, "fulltext": bool(enabled)}

        def work(engine: Engine) -> None:
            with writing(engine) as connection:
                replace_row(connection, CHECKPOINTS, values, "query_key")

        await self._run("setting a saved query's full-text choice", work)

    async def list_checkpoints(self) -> list[Checkpoint]:
        """Every checkpoint, by query key."""

        def work(engine: Engine) -> list[Checkpoint]:
            query = select(CHECKPOINTS).order_by(CHECKPOINTS.c.query_key)
            with engine.connect() as connection:
                return [checkpoint_from_row(r.query_key, r) for r in connection.execute(query)]

        return await self._run("listing checkpoints", work)

    async def forget_query(
        self, query_key: str, *, delete_records: Sequence[str] = ()
    ) -> ForgottenQuery:
        """Delete the checkpoint, pending PMIDs, sync jobs, record memberships and export mark
        of `query_key` in one transaction, with the documents of `delete_records` no other key
        holds (read in the transaction: a key that took one in the meantime keeps it); its
        audit trail stays."""
        doomed = unique(delete_records)

        def work(engine: Engine) -> ForgottenQuery:
            with writing(engine) as connection:
                tracked = connection.execute(
                    select(CHECKPOINTS.c.records_tracked).where(
                        CHECKPOINTS.c.query_key == query_key
                    )
                ).scalar_one_or_none()
                counts = [
                    connection.execute(delete(table).where(table.c.query_key == query_key))
                    for table in (CHECKPOINTS, PENDING, JOBS, QUERY_RECORDS, EXPORT_MARKS)
                ]
                deleted = _delete_unheld(connection, doomed)
            checkpoint, pending, jobs, records, _marks = (result.rowcount for result in counts)
            return ForgottenQuery(
                query_key,
                checkpoint > 0,
                pending,
                jobs,
                records,
                deleted,
                records_tracked=tracked is not False,
            )

        return await self._run("forgetting a saved query", work)

    async def export_mark(self, query_key: str) -> datetime | None:
        query = select(EXPORT_MARKS.c.next_added_since).where(EXPORT_MARKS.c.query_key == query_key)

        def work(engine: Engine) -> datetime | None:
            with engine.connect() as connection:
                mark: datetime | None = connection.execute(query).scalar_one_or_none()
                return mark

        return await self._run("reading an export mark", work)

    async def set_export_mark(self, query_key: str, next_added_since: datetime) -> None:
        values = {
            "query_key": query_key,
            "next_added_since": next_added_since,
            "marked_at": self._now(),
        }

        def work(engine: Engine) -> None:
            with writing(engine) as connection:
                replace_row(connection, EXPORT_MARKS, values, "query_key")

        await self._run("marking an export", work)

    async def query_record_counts(self) -> dict[str, int]:
        query = select(QUERY_RECORDS.c.query_key, func.count()).group_by(QUERY_RECORDS.c.query_key)

        def work(engine: Engine) -> dict[str, int]:
            with engine.connect() as connection:
                return {str(key): int(n) for key, n in connection.execute(query)}

        return await self._run("counting the records of saved queries", work)

    async def records_of(self, query_key: str, *, added_since: datetime | None = None) -> list[str]:
        query = (
            select(QUERY_RECORDS.c.pmid)
            .where(QUERY_RECORDS.c.query_key == query_key)
            .order_by(QUERY_RECORDS.c.pmid)
        )
        if added_since is not None:
            query = query.where(QUERY_RECORDS.c.added_at >= added_since)

        def work(engine: Engine) -> list[str]:
            with engine.connect() as connection:
                return [str(pmid) for pmid in connection.execute(query).scalars()]

        return await self._run("listing the records of a saved query", work)

    async def records_held_only_by(self, query_key: str) -> list[str]:
        mine = QUERY_RECORDS.alias("mine")
        others = QUERY_RECORDS.alias("others")
        shared = select(others.c.pmid).where(
            others.c.pmid == mine.c.pmid, others.c.query_key != query_key
        )
        query = (
            select(mine.c.pmid)
            .where(mine.c.query_key == query_key, ~shared.exists())
            .order_by(mine.c.pmid)
        )

        def work(engine: Engine) -> list[str]:
            with engine.connect() as connection:
                return [str(pmid) for pmid in connection.execute(query).scalars()]

        return await self._run("listing the records only one saved query holds", work)

    async def queries_holding(self, pmids: Sequence[str]) -> dict[str, list[str]]:
        wanted = unique(pmids)

        def work(engine: Engine) -> dict[str, list[str]]:
            held: dict[str, list[str]] = {}
            with engine.connect() as connection:
                for part in chunks(wanted):
                    query = select(QUERY_RECORDS.c.pmid, QUERY_RECORDS.c.query_key).where(
                        QUERY_RECORDS.c.pmid.in_(part)
                    )
                    for pmid, key in connection.execute(query):
                        held.setdefault(str(pmid), []).append(str(key))
            return {pmid: sorted(keys) for pmid, keys in held.items()}  # one order everywhere

        return await self._run("listing the saved queries holding records", work)

    async def records_held_by_none(self) -> list[str]:
        held = select(QUERY_RECORDS.c.pmid).where(QUERY_RECORDS.c.pmid == DOCS.c.pmid)
        query = select(DOCS.c.pmid).where(~held.exists()).order_by(DOCS.c.pmid)

        def work(engine: Engine) -> list[str]:
            with engine.connect() as connection:
                return [str(pmid) for pmid in connection.execute(query).scalars()]

        return await self._run("listing the records no saved query holds", work)

    async def delete_unheld(self, pmids: Sequence[str]) -> int:
        doomed = unique(pmids)

        def work(engine: Engine) -> int:
            with writing(engine) as connection:
                return _delete_unheld(connection, doomed)

        return await self._run("deleting the records no saved query holds", work)

    # -- PMIDs pending a retry --------------------------------------------------------------

    @staticmethod
    def _pending(connection: Connection, query_key: str) -> list[PendingPmid]:
        query = (
            select(PENDING)
            .where(PENDING.c.query_key == query_key)
            .order_by(PENDING.c.first_missed_at, PENDING.c.pmid)
        )
        return [pending_from_row(row) for row in connection.execute(query)]

    async def pending_pmids(self, query_key: str) -> list[PendingPmid]:
        """The PMIDs pending for `query_key`, the longest pending first (then by PMID)."""

        def work(engine: Engine) -> list[PendingPmid]:
            with engine.connect() as connection:
                return self._pending(connection, query_key)

        return await self._run("reading pending PMIDs", work)

    async def settle_pending(
        self, query_key: str, *, missed: Sequence[str], arrived: Sequence[str], at: datetime
    ) -> list[PendingPmid]:
        """Record `missed` (new, or one more miss) and drop `arrived` in one transaction
        (a PMID in both stays pending); returns what is pending for `query_key` now."""
        missed = unique(missed)
        still = set(missed)
        gone = [pmid for pmid in unique(arrived) if pmid not in still]

        def work(engine: Engine) -> list[PendingPmid]:
            with writing(engine) as connection:
                for part in chunks(gone):
                    connection.execute(
                        delete(PENDING).where(
                            PENDING.c.query_key == query_key, PENDING.c.pmid.in_(part)
                        )
                    )
                if missed:
                    statement = dialect_insert(connection, PENDING)
                    connection.execute(
                        statement.on_conflict_do_update(
                            index_elements=["query_key", "pmid"],
                            set_={
                                "misses": PENDING.c.misses + 1,
                                "last_missed_at": statement.excluded.last_missed_at,
                            },
                        ),
                        [
                            {
                                "query_key": query_key,
                                "pmid": pmid,
                                "first_missed_at": at,
                                "last_missed_at": at,
                                "misses": 1,
                            }
                            for pmid in missed
                        ],
                    )
                return self._pending(connection, query_key)

        return await self._run("recording pending PMIDs", work)

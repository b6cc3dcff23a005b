"""`MemorySavedQueryStore`: the SavedQueryStore port in memory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from biomcp.domain.watermarks import (
    WatermarkAudit,
    advance_watermark,
    covered_from,
    manual_watermark,
)
from biomcp.ports.saved_queries import Checkpoint, ForgottenQuery, PendingPmid
from biomcp.testing.memory.tables import MemoryDatabase, utc

__all__ = ["MemorySavedQueryStore"]


def _optional_utc(value: datetime | None) -> datetime | None:
    return utc(value) if value is not None else None


class MemorySavedQueryStore(MemoryDatabase):
    """Checkpoints, memberships, pending PMIDs and export marks in dicts."""

    async def get_checkpoint(self, query_key: str) -> Checkpoint:
        with self._transaction() as tables:
            return tables.checkpoints.get(query_key, Checkpoint(query_key))

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
        with self._transaction() as tables:
            row = tables.checkpoints.get(query_key, Checkpoint(query_key))
            new = _optional_utc(advance_watermark(row.last_edat, candidate))
            covers = covered_from(row.covers_from, row.last_scan_at is not None, window_start)
            checkpoint = Checkpoint(
                query_key,
                new,
                utc(scanned_at),
                _optional_utc(covers),
                term,
                row.records_tracked or read_history,
                row.fulltext,
            )
            tables.checkpoints[query_key] = checkpoint
            return checkpoint

    async def set_checkpoint(
        self, query_key: str, last_edat: datetime, *, actor: str, reason: str, at: datetime
    ) -> WatermarkAudit:
        with self._transaction() as tables:
            row = tables.checkpoints.get(query_key, Checkpoint(query_key))
            new, audit = manual_watermark(
                query_key, row.last_edat, utc(last_edat), actor=actor, reason=reason, at=utc(at)
            )
            tables.checkpoints[query_key] = replace(row, last_edat=_optional_utc(new))
            tables.audit.append(audit)
            return audit

    async def checkpoint_audit(self, query_key: str) -> list[WatermarkAudit]:
        with self._transaction() as tables:
            mine = [(a.at, i, a) for i, a in enumerate(tables.audit) if a.query_key == query_key]
        return [audit for _at, _i, audit in sorted(mine, key=lambda t: (t[0], t[1]), reverse=True)]

    async def set_fulltext(self, query_key: str, enabled: bool) -> None:
        with self._transaction() as tables:
            row = tables.checkpoints.get(query_key, Checkpoint(query_key))
            tables.checkpoints[query_key] = replace(row, fulltext=bool(enabled))

    async def list_checkpoints(self) -> list[Checkpoint]:
        with self._transaction() as tables:
            return [tables.checkpoints[key] for key in sorted(tables.checkpoints)]

    async def forget_query(
        self, query_key: str, *, delete_records: Sequence[str] = ()
    ) -> ForgottenQuery:
        with self._transaction() as tables:
            checkpoint = tables.checkpoints.pop(query_key, None)
            pending = tables.pending.pop(query_key, {})
            jobs = [j for j, job in tables.jobs.items() if job.query_key == query_key]
            for job_id in jobs:
                del tables.jobs[job_id]
            records = tables.held.pop(query_key, {})
            tables.export_marks.pop(query_key, None)
            deleted = tables.delete_unheld(list(dict.fromkeys(delete_records)))
        return ForgottenQuery(
            query_key,
            checkpoint is not None,
            len(pending),
            len(jobs),
            len(records),
            deleted,
            records_tracked=checkpoint is None or checkpoint.records_tracked,
        )

    async def query_record_counts(self) -> dict[str, int]:
        with self._transaction() as tables:
            return {key: len(records) for key, records in tables.held.items() if records}

    async def records_of(self, query_key: str, *, added_since: datetime | None = None) -> list[str]:
        since = _optional_utc(added_since)
        with self._transaction() as tables:
            records = tables.held.get(query_key, {})
            return sorted(p for p, at in records.items() if since is None or at >= since)

    async def records_held_only_by(self, query_key: str) -> list[str]:
        with self._transaction() as tables:
            others = [r for key, r in tables.held.items() if key != query_key]
            mine = tables.held.get(query_key, {})
            return sorted(p for p in mine if not any(p in records for records in others))

    async def queries_holding(self, pmids: Sequence[str]) -> dict[str, list[str]]:
        with self._transaction() as tables:
            found = {
                pmid: sorted(key for key, records in tables.held.items() if pmid in records)
                for pmid in dict.fromkeys(pmids)
            }
        return {pmid: keys for pmid, keys in found.items() if keys}

    async def records_held_by_none(self) -> list[str]:
        with self._transaction() as tables:
            return sorted(p for p in tables.documents if not tables.is_held(p))

    async def delete_unheld(self, pmids: Sequence[str]) -> int:
        with self._transaction() as tables:
            return tables.delete_unheld(list(dict.fromkeys(pmids)))

    async def export_mark(self, query_key: str) -> datetime | None:
        with self._transaction() as tables:
            return tables.export_marks.get(query_key)

    async def set_export_mark(self, query_key: str, next_added_since: datetime) -> None:
        with self._transaction() as tables:
            tables.export_marks[query_key] = utc(next_added_since)

    async def pending_pmids(self, query_key: str) -> list[PendingPmid]:
        with self._transaction() as tables:
            pending = tables.pending.get(query_key, {}).values()
            return sorted(pending, key=lambda p: (p.first_missed_at, p.pmid))

    async def settle_pending(
        self, query_key: str, *, missed: Sequence[str], arrived: Sequence[str], at: datetime
    ) -> list[PendingPmid]:
        moment = utc(at)
        still = set(missed)
        with self._transaction() as tables:
            pending = tables.pending.setdefault(query_key, {})
            for pmid in arrived:
                if pmid not in still:
                    pending.pop(pmid, None)
            for pmid in dict.fromkeys(missed):
                known = pending.get(pmid)
                pending[pmid] = (
                    replace(known, last_missed_at=moment, misses=known.misses + 1)
                    if known is not None
                    else PendingPmid(pmid, moment, moment, 1)
                )
        return await self.pending_pmids(query_key)

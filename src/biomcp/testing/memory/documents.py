"""`MemoryDocumentStore`: the DocumentStore port in memory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from biomcp.domain.retraction_time import retracted_at
from biomcp.domain.versioning import StoredVersion, UpsertAction, decide_version
from biomcp.ports.documents import (
    DocumentUpsert,
    StoredDocument,
    StoredScore,
    UpsertOutcome,
    UpsertSummary,
)
from biomcp.testing.memory.tables import MemoryDatabase, MemoryTables, utc

__all__ = ["MemoryDocumentStore"]


def _version(doc: StoredDocument) -> StoredVersion:
    return StoredVersion(doc.version, doc.content_hash, doc.record.lr)


def _scored_before(doc: StoredDocument, year: int) -> bool:
    scored_in = doc.quality.scored_in
    return scored_in is None or scored_in < year


def _hold(tables: MemoryTables, query_key: str, pmids: Sequence[str], now: datetime) -> int:
    """Record `query_key` as holding `pmids` (first time kept); how many are new to it."""
    records = tables.held.setdefault(query_key, {})
    new = [pmid for pmid in dict.fromkeys(pmids) if pmid not in records]
    records.update((pmid, now) for pmid in new)
    return len(new)


class MemoryDocumentStore(MemoryDatabase):
    """Stored documents in a dict, versioned by the domain's rule."""

    async def upsert_documents(
        self, docs: Sequence[DocumentUpsert], *, held_by: str | None = None
    ) -> UpsertSummary:
        if not docs:
            return UpsertSummary(0, 0, 0, None)
        now = self._now()
        with self._transaction() as tables:
            outcomes = [self._upsert_one(tables, doc, now) for doc in docs]
            batch = [doc.record.pmid for doc in docs]
            newly_held = _hold(tables, held_by, batch, now) if held_by is not None else 0
        edats = [utc(d.record.edat) for d in docs if d.record.edat is not None]
        actions = [o.action for o in outcomes]
        return UpsertSummary(
            inserted=actions.count(UpsertAction.INSERT),
            updated=actions.count(UpsertAction.UPDATE),
            skipped=actions.count(UpsertAction.SKIP),
            max_edat_seen=max(edats, default=None),
            outcomes=tuple(outcomes),
            newly_held=newly_held,
        )

    @staticmethod
    def _upsert_one(tables: MemoryTables, doc: DocumentUpsert, now: datetime) -> UpsertOutcome:
        pmid = doc.record.pmid
        stored = tables.documents.get(pmid)
        decision = decide_version(
            _version(stored) if stored else None, doc.content_hash, doc.record.lr
        )
        if decision.action is UpsertAction.SKIP:
            if stored is not None:
                tables.documents[pmid] = replace(stored, last_seen_at=now)
        else:
            tables.documents[pmid] = StoredDocument(
                record=doc.record,
                evidence=doc.evidence,
                quality=doc.quality,
                content_hash=doc.content_hash,
                version=decision.version,
                indexed_version=stored.indexed_version if stored is not None else 0,
                last_seen_at=now,
                retracted_at=retracted_at(
                    doc.record.is_retracted, stored.retracted_at if stored else None, now
                ),
            )
        return UpsertOutcome(pmid, decision.action, decision.version)

    async def get_document(self, pmid: str) -> StoredDocument | None:
        with self._transaction() as tables:
            return tables.documents.get(pmid)

    async def get_documents(self, pmids: Sequence[str]) -> dict[str, StoredDocument]:
        with self._transaction() as tables:
            return {p: tables.documents[p] for p in dict.fromkeys(pmids) if p in tables.documents}

    async def retracted_pmids(self, pmids: Sequence[str]) -> set[str]:
        found = await self.get_documents(pmids)
        return {pmid for pmid, doc in found.items() if doc.record.is_retracted}

    async def retracted_since(self, pmids: Sequence[str], since: datetime) -> set[str]:
        since = utc(since)
        found = await self.get_documents(pmids)
        return {
            pmid
            for pmid, doc in found.items()
            if doc.retracted_at is not None and doc.retracted_at >= since
        }

    async def documents_to_index(self, pmids: Sequence[str]) -> list[StoredDocument]:
        found = await self.get_documents(pmids)
        return [doc for doc in found.values() if doc.indexed_version < doc.version]

    async def mark_indexed(self, versions: dict[str, int]) -> None:
        with self._transaction() as tables:
            for pmid, version in versions.items():
                doc = tables.documents.get(pmid)
                if doc is not None and doc.indexed_version < version <= doc.version:
                    tables.documents[pmid] = replace(doc, indexed_version=version)

    async def count_documents(
        self, *, indexed: bool = False, scored_before: int | None = None
    ) -> int:
        with self._transaction() as tables:
            return sum(
                1
                for doc in tables.documents.values()
                if (not indexed or doc.indexed_version > 0)
                and (scored_before is None or _scored_before(doc, scored_before))
            )

    async def scores_before(
        self, year: int, after: str = "", limit: int = 500
    ) -> list[StoredScore]:
        with self._transaction() as tables:
            docs = sorted(
                (d for p, d in tables.documents.items() if p > after and _scored_before(d, year)),
                key=lambda d: d.record.pmid,
            )
        return [
            StoredScore(d.record.pmid, d.record.year, d.version, d.indexed_version, d.quality)
            for d in docs[:limit]
        ]

    async def set_quality(self, scores: Sequence[StoredScore]) -> int:
        stored = 0
        with self._transaction() as tables:
            for score in scores:
                doc = tables.documents.get(score.pmid)
                if doc is not None and doc.version == score.version:
                    tables.documents[score.pmid] = replace(doc, quality=score.quality)
                    stored += 1
        return stored

    async def document_pmids(self, after: str = "", limit: int = 1000) -> list[str]:
        with self._transaction() as tables:
            return sorted(p for p in tables.documents if p > after)[:limit]

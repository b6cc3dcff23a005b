"""The DocumentStore port: stored PubMed documents, their versions, scores and indexing state.

Invariants (spec 01): one row per PMID; its version starts at 1 and grows by one when the
content hash changes or LR advances (the domain's `decide_version`, applied inside the store's
transaction so two writers cannot both bump). Every method raises only `MetadataStoreError`s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from biomcp.domain.evidence import EvidenceClassification
from biomcp.domain.records import PubMedRecord, QualityBreakdown
from biomcp.domain.versioning import UpsertAction

__all__ = [
    "DocumentStore",
    "DocumentUpsert",
    "StoredDocument",
    "StoredScore",
    "UpsertOutcome",
    "UpsertSummary",
]


@dataclass(frozen=True, slots=True)
class DocumentUpsert:
    """A record with everything the domain derived from it, ready to store."""

    record: PubMedRecord
    evidence: EvidenceClassification
    quality: QualityBreakdown
    content_hash: str


@dataclass(frozen=True, slots=True)
class UpsertOutcome:
    pmid: str
    action: UpsertAction
    version: int


@dataclass(frozen=True, slots=True)
class UpsertSummary:
    inserted: int
    updated: int
    skipped: int
    max_edat_seen: datetime | None
    outcomes: tuple[UpsertOutcome, ...] = ()
    #: with `held_by`: how many of the PMIDs that saved query did not hold before
    newly_held: int = 0


@dataclass(frozen=True, slots=True)
class StoredDocument:
    """A stored PubMed document: the normalized record plus its derived values and versions.
    `indexed_version` is the version whose chunks are in the vector store (0: none yet).
    `retracted_at` is when the store first wrote the record retracted; it stays while the
    record stays retracted, and is None for a record that is not retracted."""

    record: PubMedRecord
    evidence: EvidenceClassification
    quality: QualityBreakdown
    content_hash: str
    version: int
    indexed_version: int
    last_seen_at: datetime
    retracted_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class StoredScore:
    """A stored document's quality score with what rescoring it needs: the record's
    publication year (`PubMedRecord.year`; None when undated) and the version it was scored
    at (a new score is stored only while the document is still at that version)."""

    pmid: str
    year: int | None
    version: int
    indexed_version: int
    quality: QualityBreakdown


class DocumentStore(Protocol):
    """Stored documents, read by PMID, written by the versioning rule."""

    async def upsert_documents(
        self, docs: Sequence[DocumentUpsert], *, held_by: str | None = None
    ) -> UpsertSummary:
        """Insert / update / skip each document by the versioning rule, in one transaction;
        with `held_by`, record in it that the saved query `held_by` holds each of them. A
        written document's `retracted_at` follows `domain.retraction_time.retracted_at`."""
        ...

    async def get_document(self, pmid: str) -> StoredDocument | None: ...

    async def get_documents(self, pmids: Sequence[str]) -> dict[str, StoredDocument]: ...

    async def retracted_pmids(self, pmids: Sequence[str]) -> set[str]:
        """Those of `pmids` whose stored record is retracted now (`PubMedRecord.is_retracted`);
        unknown PMIDs are absent."""
        ...

    async def retracted_since(self, pmids: Sequence[str], since: datetime) -> set[str]:
        """Those of `pmids` whose stored record is retracted now and was first written
        retracted at or after `since` (`StoredDocument.retracted_at`); unknown PMIDs are
        absent."""
        ...

    async def documents_to_index(self, pmids: Sequence[str]) -> list[StoredDocument]:
        """Those of `pmids` whose indexed version is behind their version."""
        ...

    async def mark_indexed(self, versions: dict[str, int]) -> None:
        """Record that `pmid`'s chunks of `version` are in the vector store."""
        ...

    async def count_documents(
        self, *, indexed: bool = False, scored_before: int | None = None
    ) -> int:
        """How many documents are stored (`indexed`: only those with chunks written;
        `scored_before`: only those `scores_before` that year would list)."""
        ...

    async def scores_before(
        self, year: int, after: str = "", limit: int = 500
    ) -> list[StoredScore]:
        """The scores of the documents whose quality was scored in a calendar year before
        `year`, or in an unrecorded one (`QualityBreakdown.scored_in` None), in ascending PMID
        order: the first `limit` after `after`."""
        ...

    async def set_quality(self, scores: Sequence[StoredScore]) -> int:
        """Store each score's quality as its document's, where the document is still at the
        score's version (one that moved on keeps its own); return how many were stored."""
        ...

    async def document_pmids(self, after: str = "", limit: int = 1000) -> list[str]:
        """The PMIDs of stored documents in ascending (string) order: the first `limit` after
        `after` (page through every document by passing the last one back)."""
        ...

"""Tiny builders of `PubMedRecord`s (sensible defaults, any field overridable) and of the
`StoredDocument`s a store would hold for them."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from biomcp.domain.evidence import classify_evidence
from biomcp.domain.quality import score_quality
from biomcp.domain.records import AbstractSection, Journal, MeshHeading, PubDate, PubMedRecord
from biomcp.domain.versioning import content_hash
from biomcp.ports.documents import StoredDocument

__all__ = ["abstract", "make_record", "mesh", "stored_document"]


def abstract(*texts: str) -> tuple[AbstractSection, ...]:
    """Unlabelled abstract sections, one per text."""
    return tuple(AbstractSection(text=t) for t in texts)


def mesh(*descriptors: str) -> tuple[MeshHeading, ...]:
    """MeSH headings from descriptor names."""
    return tuple(MeshHeading(descriptor=d) for d in descriptors)


def make_record(**overrides: Any) -> PubMedRecord:
    """A neutral record (a "Journal Article" with an unremarkable title, no abstract, no MeSH,
    published 2020 in a non-tier-1 journal); `overrides` replace any field. Convenience keys:
    `text=` (one unlabelled abstract section), `mesh_terms=` (descriptor names)."""
    fields: dict[str, Any] = {
        "pmid": "12345678",
        "title": "A study of something",
        "journal": Journal(title="Journal of examples", issn="1234-5679"),
        "publication_types": ("Journal Article",),
        "pdat": PubDate(2020),
    }
    if "text" in overrides:
        overrides["abstract"] = abstract(overrides.pop("text"))
    if "mesh_terms" in overrides:
        overrides["mesh"] = mesh(*overrides.pop("mesh_terms"))
    fields.update(overrides)
    return PubMedRecord(**fields)


def stored_document(
    record: PubMedRecord, *, indexed_version: int = 1, today: date = date(2026, 11, 22)
) -> StoredDocument:
    """`record` as stored at version 1: its evidence tier and quality score derived `today`."""
    evidence = classify_evidence(record)
    return StoredDocument(
        record=record,
        evidence=evidence,
        quality=score_quality(record, today, evidence=evidence),
        content_hash=content_hash(record),
        version=1,
        indexed_version=indexed_version,
        last_seen_at=datetime.combine(today, datetime.min.time(), UTC),
    )

"""Port values to table rows and back (plain dicts and SQLAlchemy `Row`s, no ORM session)."""

from __future__ import annotations

from dataclasses import asdict, fields
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Row, Table

from biomcp.adapters.sql.models import (
    CheckpointAuditRow,
    CheckpointRow,
    DocumentRow,
    ExportMarkRow,
    FullTextRow,
    PendingPmidRow,
    ProjectRow,
    QueryRecordRow,
    SyncJobRow,
)
from biomcp.adapters.sql.serialize import (
    quality_from_json,
    quality_to_json,
    record_from_json,
    record_to_json,
)
from biomcp.domain.design import STUDY_DESIGN_VALUES, DesignClassification, StudyDesign
from biomcp.domain.evidence import EvidenceClassification
from biomcp.domain.records import EvidenceType
from biomcp.domain.watermarks import WatermarkAudit
from biomcp.ports.documents import DocumentUpsert, StoredDocument, StoredScore
from biomcp.ports.jobs import JobProgress, SyncJob
from biomcp.ports.projects import ProjectInfo
from biomcp.ports.saved_queries import Checkpoint, PendingPmid

__all__ = [
    "AUDIT",
    "CHECKPOINTS",
    "DOCS",
    "FULLTEXT",
    "JOBS",
    "PENDING",
    "PROJECTS",
    "QUERY_RECORDS",
    "audit_from_row",
    "audit_values",
    "checkpoint_from_row",
    "document_from_row",
    "document_values",
    "job_from_row",
    "job_values",
    "pending_from_row",
    "progress_from_json",
    "progress_values",
    "project_from_row",
    "project_values",
    "score_from_row",
]


def _table(model: type[Any]) -> Table:
    table = model.__table__
    if not isinstance(table, Table):
        raise TypeError(f"{model.__name__} is not mapped to a table")
    return table


DOCS = _table(DocumentRow)
CHECKPOINTS = _table(CheckpointRow)
AUDIT = _table(CheckpointAuditRow)
JOBS = _table(SyncJobRow)
PROJECTS = _table(ProjectRow)
PENDING = _table(PendingPmidRow)
QUERY_RECORDS = _table(QueryRecordRow)
EXPORT_MARKS = _table(ExportMarkRow)
FULLTEXT = _table(FullTextRow)


def document_values(doc: DocumentUpsert, version: int, now: datetime) -> dict[str, Any]:
    """The `pubmed_docs` columns of `doc` at `version` (indexed_version and retracted_at
    excluded: the upsert decides the retraction moment from what is stored)."""
    record = doc.record
    design = doc.evidence.design
    return {
        "pmid": record.pmid,
        "title": record.title,
        "abstract": record.abstract_text or None,
        "journal": record.journal.title,
        "journal_iso": record.journal.iso_abbreviation,
        "issn": record.journal.issn,
        "eissn": record.journal.eissn,
        "pub_types": list(record.publication_types),
        "mesh": [heading.descriptor for heading in record.mesh],
        "pdat": record.pdat.iso() if record.pdat is not None else None,
        "edat": record.edat,
        "lr": record.lr,
        "pmcid": record.pmcid,
        "doi": record.doi,
        "evidence_type": doc.evidence.evidence_type.value,
        "evidence_rule": doc.evidence.rule,
        "study_design": design.design.value if design is not None else None,
        "design_rule": design.rule if design is not None else None,
        "has_numbers": doc.evidence.has_numbers,
        "has_biomarker": doc.evidence.has_biomarker,
        "quality_total": doc.quality.total,
        "quality_json": quality_to_json(doc.quality),
        "content_hash": doc.content_hash,
        "version": version,
        "last_seen_at": now,
        "record_json": record_to_json(record),
    }


def document_from_row(row: Row[Any]) -> StoredDocument:
    """Raises ValueError when the stored JSON is not a record this code can read."""
    return StoredDocument(
        record=record_from_json(row.record_json),
        evidence=EvidenceClassification(
            evidence_type=EvidenceType(row.evidence_type),
            rule=row.evidence_rule,
            has_numbers=bool(row.has_numbers),
            has_biomarker=bool(row.has_biomarker),
            design=_design(row.study_design, row.design_rule),
        ),
        quality=quality_from_json(row.quality_json),
        content_hash=row.content_hash,
        version=row.version,
        indexed_version=row.indexed_version,
        last_seen_at=row.last_seen_at,
        retracted_at=row.retracted_at,
    )


def score_from_row(row: Any) -> StoredScore:
    """A document's score from its pmid, pdat, edat, version, indexed_version and quality
    columns (the year as `PubMedRecord.year` gives it: the publication date's, else EDAT's).

    Raises ValueError on a malformed quality_json."""
    if row.pdat:
        year: int | None = int(row.pdat[:4])
    else:
        year = row.edat.year if row.edat is not None else None
    return StoredScore(
        pmid=row.pmid,
        year=year,
        version=row.version,
        indexed_version=row.indexed_version,
        quality=quality_from_json(row.quality_json),
    )


def _design(value: str | None, rule: str | None) -> DesignClassification | None:
    """The stored design; None when the row predates designs or holds one this code does not
    know (readers then derive it from the record)."""
    if value is None or rule is None or value not in STUDY_DESIGN_VALUES:
        return None
    return DesignClassification(StudyDesign(value), rule)


def checkpoint_from_row(query_key: str, row: Row[Any] | None) -> Checkpoint:
    if row is None:
        return Checkpoint(query_key)
    return Checkpoint(
        query_key,
        last_edat=row.last_edat,
        last_scan_at=row.last_scan_at,
        covers_from=row.covers_from,
        term=row.term,
        records_tracked=bool(row.records_tracked),
        fulltext=bool(row.fulltext),
    )


def pending_from_row(row: Row[Any]) -> PendingPmid:
    return PendingPmid(row.pmid, row.first_missed_at, row.last_missed_at, row.misses)


def audit_values(audit: WatermarkAudit) -> dict[str, Any]:
    return {
        "query_key": audit.query_key,
        "previous": audit.previous,
        "new": audit.new,
        "actor": audit.actor,
        "reason": audit.reason,
        "at": audit.at,
    }


def audit_from_row(row: Row[Any]) -> WatermarkAudit:
    return WatermarkAudit(
        query_key=row.query_key,
        previous=row.previous,
        new=row.new,
        actor=row.actor,
        reason=row.reason,
        at=row.at,
    )


def job_values(job: SyncJob) -> dict[str, Any]:
    return {
        "job_id": job.job_id,
        "query_key": job.query_key,
        "term": job.term,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
        "status": job.status,
        "counts": {
            "inserted": job.inserted,
            "updated": job.updated,
            "skipped": job.skipped,
            "pmids_processed": job.pmids_processed,
        },
        "max_edat_seen": job.max_edat_seen,
        "warnings": list(job.warnings),
        "error": job.error,
        "owner": job.owner,
        "progress": progress_values(job.progress) if job.progress is not None else None,
    }


def progress_values(progress: JobProgress) -> dict[str, Any]:
    """A job's progress as the JSON of `sync_jobs.progress`."""
    values = asdict(progress)
    at = progress.recorded_at
    values["recorded_at"] = at.astimezone(UTC).isoformat() if at is not None else None
    return values


def progress_from_json(values: dict[str, Any] | None) -> JobProgress | None:
    """The `JobProgress` of a `sync_jobs.progress` value (None when none was recorded)."""
    if not values:
        return None
    known = {f.name for f in fields(JobProgress)}
    kept = {k: v for k, v in values.items() if k in known}
    at = kept.get("recorded_at")
    kept["recorded_at"] = datetime.fromisoformat(at) if at else None
    return JobProgress(**kept)


def job_from_row(row: Row[Any]) -> SyncJob:
    counts: dict[str, int] = row.counts
    return SyncJob(
        job_id=row.job_id,
        query_key=row.query_key,
        term=row.term,
        started_at=row.started_at,
        finished_at=row.finished_at,
        status=row.status,
        inserted=counts.get("inserted", 0),
        updated=counts.get("updated", 0),
        skipped=counts.get("skipped", 0),
        pmids_processed=counts.get("pmids_processed", 0),
        max_edat_seen=row.max_edat_seen,
        warnings=tuple(row.warnings),
        error=row.error,
        owner=row.owner,
        progress=progress_from_json(row.progress),
    )


def project_values(project: ProjectInfo, created_at: datetime) -> dict[str, Any]:
    return {
        "project_id": project.project_id,
        "collection": project.collection,
        "model_id": project.model_id,
        "dim": project.dim,
        "hybrid": project.hybrid,
        "created_at": project.created_at or created_at,
        "metadata": dict(project.metadata),
    }


def project_from_row(row: Row[Any]) -> ProjectInfo:
    return ProjectInfo(
        project_id=row.project_id,
        collection=row.collection,
        model_id=row.model_id,
        dim=row.dim,
        hybrid=bool(row.hybrid),
        created_at=row.created_at,
        metadata=dict(row._mapping["metadata"]),
    )

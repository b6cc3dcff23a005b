"""The SQL schema (spec 03 section 9, plus audit, jobs and projects) as declarative models.

The Alembic revisions under `migrations/versions` create exactly this schema; a test compares
the two. Types are portable: JSON (JSONB on PostgreSQL) and timezone-aware datetimes that read
back as UTC on every backend.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Dialect,
    Double,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from biomcp.domain.records import EvidenceType

__all__ = [
    "Base",
    "CheckpointAuditRow",
    "CheckpointRow",
    "DocumentRow",
    "EmbeddingCacheRow",
    "FullTextRow",
    "JsonType",
    "NcbiBudgetStartRow",
    "NcbiCacheEntryRow",
    "PendingPmidRow",
    "ProjectRow",
    "QueryRecordRow",
    "SyncJobRow",
    "UTCDateTime",
]

# Named constraints: SQLite's batch migrations can only alter what they can name.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

_EVIDENCE_VALUES = ", ".join(f"'{t.value}'" for t in EvidenceType)

JsonType = JSON().with_variant(JSONB(), "postgresql")


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware datetime stored as UTC and always read back aware, in UTC.

    SQLite has no timezone type: values are written as naive UTC text, which also keeps their
    text order the time order.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.utcoffset() is None:
            raise ValueError(f"naive datetime where an aware one is required: {value!r}")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if not isinstance(value, datetime):
            raise TypeError(f"expected a datetime from the database, got {value!r}")
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        datetime: UTCDateTime(),
        dict[str, Any]: JsonType,
    }


class DocumentRow(Base):
    """One PubMed record: `record_json` holds it whole; the other columns serve filters."""

    __tablename__ = "pubmed_docs"
    __table_args__ = (
        CheckConstraint(f"evidence_type IN ({_EVIDENCE_VALUES})", name="evidence_type"),
        CheckConstraint("version >= 1", name="version_positive"),
        CheckConstraint("indexed_version >= 0 AND indexed_version <= version", name="indexed"),
    )

    pmid: Mapped[str] = mapped_column(String(16), primary_key=True)
    title: Mapped[str | None] = mapped_column(Text)
    abstract: Mapped[str | None] = mapped_column(Text)
    journal: Mapped[str | None] = mapped_column(Text)
    journal_iso: Mapped[str | None] = mapped_column(Text)
    issn: Mapped[str | None] = mapped_column(String(16))
    eissn: Mapped[str | None] = mapped_column(String(16))
    pub_types: Mapped[list[str]] = mapped_column(JsonType)
    mesh: Mapped[list[str]] = mapped_column(JsonType)
    pdat: Mapped[str | None] = mapped_column(String(16))
    edat: Mapped[datetime | None] = mapped_column(index=True)
    lr: Mapped[datetime | None]
    pmcid: Mapped[str | None] = mapped_column(String(32))
    doi: Mapped[str | None] = mapped_column(Text)
    evidence_type: Mapped[str] = mapped_column(String(16), index=True)
    evidence_rule: Mapped[str] = mapped_column(String(64))
    study_design: Mapped[str | None] = mapped_column(String(32), index=True)
    design_rule: Mapped[str | None] = mapped_column(String(64))
    has_numbers: Mapped[bool] = mapped_column(Boolean)
    has_biomarker: Mapped[bool] = mapped_column(Boolean)
    quality_total: Mapped[int] = mapped_column(Integer, index=True)
    quality_json: Mapped[dict[str, Any]]
    content_hash: Mapped[str] = mapped_column(String(128))
    version: Mapped[int] = mapped_column(Integer)
    indexed_version: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    last_seen_at: Mapped[datetime]
    record_json: Mapped[dict[str, Any]]
    #: When the record was first written retracted; NULL while it is not retracted.
    retracted_at: Mapped[datetime | None]


class CheckpointRow(Base):
    """The EDAT watermark of one query key."""

    __tablename__ = "checkpoints"

    query_key: Mapped[str] = mapped_column(String(255), primary_key=True)
    last_edat: Mapped[datetime | None]
    last_scan_at: Mapped[datetime | None]
    covers_from: Mapped[datetime | None]
    term: Mapped[str | None] = mapped_column(Text)
    #: False for a key synced before `query_records` existed, until a sync reads its history
    records_tracked: Mapped[bool] = mapped_column(Boolean, server_default=text("true"))
    #: Whether the key's syncs keep the PMC full text of its records
    fulltext: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))


class FullTextRow(Base):
    """What the last full-text check of one stored record found, and its article when one is
    kept (`fulltext_codec`). Every path deleting a document deletes its row in the same
    transaction. No foreign key: a SQLite batch migration of `pubmed_docs` would cascade."""

    __tablename__ = "fulltext"

    pmid: Mapped[str] = mapped_column(String(16), primary_key=True)
    status: Mapped[str] = mapped_column(String(32), index=True)
    checked_at: Mapped[datetime]
    pmcid: Mapped[str | None] = mapped_column(String(32))
    reason: Mapped[str | None] = mapped_column(Text)
    content_hash: Mapped[str | None] = mapped_column(String(128))
    chars: Mapped[int] = mapped_column(Integer)
    chunks: Mapped[int] = mapped_column(Integer)
    failures: Mapped[int] = mapped_column(Integer)
    #: The parsed article as zlib-compressed JSON; None when none is kept.
    article: Mapped[bytes | None] = mapped_column(LargeBinary)


class QueryRecordRow(Base):
    """A record a sync of `query_key` stored (or found stored already): which saved queries
    brought each record into the corpus."""

    __tablename__ = "query_records"
    __table_args__ = (Index("ix_query_records_pmid", "pmid"),)

    query_key: Mapped[str] = mapped_column(String(255), primary_key=True)
    pmid: Mapped[str] = mapped_column(String(16), primary_key=True)
    added_at: Mapped[datetime]


class ExportMarkRow(Base):
    """Where the next `export --new` of `query_key` starts: the `next_added_since` of its last
    one, written once that export was complete."""

    __tablename__ = "export_marks"

    query_key: Mapped[str] = mapped_column(String(255), primary_key=True)
    next_added_since: Mapped[datetime]
    marked_at: Mapped[datetime]


class PendingPmidRow(Base):
    """A PMID a sync of `query_key` found by ESearch and EFetch did not return: every later
    sync of the key asks for it again, until it arrives (the row is then deleted)."""

    __tablename__ = "sync_pending"

    query_key: Mapped[str] = mapped_column(String(255), primary_key=True)
    pmid: Mapped[str] = mapped_column(String(16), primary_key=True)
    first_missed_at: Mapped[datetime]
    last_missed_at: Mapped[datetime]
    misses: Mapped[int] = mapped_column(Integer)


class CheckpointAuditRow(Base):
    """One manual move of a watermark."""

    __tablename__ = "checkpoint_audit"
    __table_args__ = (Index("ix_checkpoint_audit_query_key_at", "query_key", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    query_key: Mapped[str] = mapped_column(String(255))
    previous: Mapped[datetime | None]
    new: Mapped[datetime]
    actor: Mapped[str] = mapped_column(Text)
    reason: Mapped[str] = mapped_column(Text)
    at: Mapped[datetime]


class SyncJobRow(Base):
    """The report of one sync run."""

    __tablename__ = "sync_jobs"
    __table_args__ = (Index("ix_sync_jobs_query_key_started_at", "query_key", "started_at"),)

    job_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    query_key: Mapped[str] = mapped_column(String(255))
    term: Mapped[str] = mapped_column(Text)
    started_at: Mapped[datetime] = mapped_column(index=True)
    finished_at: Mapped[datetime | None]
    status: Mapped[str] = mapped_column(String(32))
    counts: Mapped[dict[str, Any]]
    max_edat_seen: Mapped[datetime | None]
    warnings: Mapped[list[str]] = mapped_column(JsonType)
    error: Mapped[str | None] = mapped_column(Text)
    #: The process that runs the job (`SyncJobs`); None for a sync run without a queue.
    owner: Mapped[str | None] = mapped_column(String(64))
    #: The running job's last recorded progress (`JobProgress` fields); None before any.
    progress: Mapped[dict[str, Any] | None] = mapped_column(JsonType)


class ProjectRow(Base):
    """A project: a vector collection and the embedding model its vectors come from."""

    __tablename__ = "projects"

    project_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    collection: Mapped[str] = mapped_column(String(255), unique=True)
    model_id: Mapped[str] = mapped_column(Text)
    dim: Mapped[int] = mapped_column(Integer)
    hybrid: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime]
    # `metadata` is reserved on declarative classes; the column keeps the spec's name.
    meta: Mapped[dict[str, Any]] = mapped_column("metadata")


class NcbiBudgetStartRow(Base):
    """One NCBI request start of one identity, shared by every replica (`entrez.budget_sql`
    writes it with its own SQL; this model keeps the migrations in step)."""

    __tablename__ = "ncbi_budget_starts"
    __table_args__ = (Index("ix_ncbi_budget_starts_identity_started_at", "identity", "started_at"),)

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True
    )
    identity: Mapped[str] = mapped_column(String(64))
    started_at: Mapped[datetime]


class EmbeddingCacheRow(Base):
    """One cached vector, shared by every replica (`embeddings.cache_pg` writes it with its own
    SQL; this model keeps the migrations in step)."""

    __tablename__ = "embedding_cache"

    model_id: Mapped[str] = mapped_column(Text, primary_key=True)
    dim: Mapped[int] = mapped_column(Integer, primary_key=True)
    text_sha256: Mapped[bytes] = mapped_column(LargeBinary, primary_key=True)
    vector: Mapped[bytes] = mapped_column(LargeBinary)


class NcbiCacheEntryRow(Base):
    """One cached EFetch / EInfo answer, shared by every replica (`entrez.cache_pg` writes it
    with its own SQL; this model keeps the migrations in step)."""

    __tablename__ = "ncbi_cache_entries"

    ns: Mapped[str] = mapped_column(Text, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16), primary_key=True)
    key: Mapped[str] = mapped_column(Text, primary_key=True)
    body: Mapped[bytes] = mapped_column(LargeBinary)
    size: Mapped[int] = mapped_column(Integer)
    stored_at: Mapped[float] = mapped_column(Double, index=True)

"""Initial schema: documents, checkpoints and their audit, sync jobs, projects.

Revision ID: 0001
Revises:
Create Date: 2025-08-18
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def _when() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "pubmed_docs",
        sa.Column("pmid", sa.String(length=16), nullable=False),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("abstract", sa.Text(), nullable=True),
        sa.Column("journal", sa.Text(), nullable=True),
        sa.Column("journal_iso", sa.Text(), nullable=True),
        sa.Column("issn", sa.String(length=16), nullable=True),
        sa.Column("eissn", sa.String(length=16), nullable=True),
        sa.Column("pub_types", _json(), nullable=False),
        sa.Column("mesh", _json(), nullable=False),
        sa.Column("pdat", sa.String(length=16), nullable=True),
        sa.Column("edat", _when(), nullable=True),
        sa.Column("lr", _when(), nullable=True),
        sa.Column("pmcid", sa.String(length=32), nullable=True),
        sa.Column("doi", sa.Text(), nullable=True),
        sa.Column("evidence_type", sa.String(length=16), nullable=False),
        sa.Column("evidence_rule", sa.String(length=64), nullable=False),
        sa.Column("has_numbers", sa.Boolean(), nullable=False),
        sa.Column("has_biomarker", sa.Boolean(), nullable=False),
        sa.Column("quality_total", sa.Integer(), nullable=False),
        sa.Column("quality_json", _json(), nullable=False),
        sa.Column("content_hash", sa.String(length=128), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("indexed_version", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("last_seen_at", _when(), nullable=False),
        sa.Column("record_json", _json(), nullable=False),
        sa.CheckConstraint(
            "evidence_type IN ('clinical', 'preclinical', 'basic', 'other')",
            name=op.f("ck_pubmed_docs_evidence_type"),
        ),
        sa.CheckConstraint(
            "indexed_version >= 0 AND indexed_version <= version",
            name=op.f("ck_pubmed_docs_indexed"),
        ),
        sa.CheckConstraint("version >= 1", name=op.f("ck_pubmed_docs_version_positive")),
        sa.PrimaryKeyConstraint("pmid", name=op.f("pk_pubmed_docs")),
    )
    op.create_index(op.f("ix_pubmed_docs_edat"), "pubmed_docs", ["edat"])
    op.create_index(op.f("ix_pubmed_docs_evidence_type"), "pubmed_docs", ["evidence_type"])
    op.create_index(op.f("ix_pubmed_docs_quality_total"), "pubmed_docs", ["quality_total"])

    op.create_table(
        "checkpoints",
        sa.Column("query_key", sa.String(length=255), nullable=False),
        sa.Column("last_edat", _when(), nullable=True),
        sa.Column("last_scan_at", _when(), nullable=True),
        sa.PrimaryKeyConstraint("query_key", name=op.f("pk_checkpoints")),
    )

    op.create_table(
        "checkpoint_audit",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("query_key", sa.String(length=255), nullable=False),
        sa.Column("previous", _when(), nullable=True),
        sa.Column("new", _when(), nullable=False),
        sa.Column("actor", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("at", _when(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_checkpoint_audit")),
    )
    op.create_index("ix_checkpoint_audit_query_key_at", "checkpoint_audit", ["query_key", "at"])

    op.create_table(
        "sync_jobs",
        sa.Column("job_id", sa.String(length=128), nullable=False),
        sa.Column("query_key", sa.String(length=255), nullable=False),
        sa.Column("term", sa.Text(), nullable=False),
        sa.Column("started_at", _when(), nullable=False),
        sa.Column("finished_at", _when(), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("counts", _json(), nullable=False),
        sa.Column("max_edat_seen", _when(), nullable=True),
        sa.Column("warnings", _json(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("job_id", name=op.f("pk_sync_jobs")),
    )
    op.create_index(op.f("ix_sync_jobs_started_at"), "sync_jobs", ["started_at"])
    op.create_index("ix_sync_jobs_query_key_started_at", "sync_jobs", ["query_key", "started_at"])

    op.create_table(
        "projects",
        sa.Column("project_id", sa.String(length=128), nullable=False),
        sa.Column("collection", sa.String(length=255), nullable=False),
        sa.Column("model_id", sa.Text(), nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("hybrid", sa.Boolean(), nullable=False),
        sa.Column("created_at", _when(), nullable=False),
        sa.Column("metadata", _json(), nullable=False),
        sa.PrimaryKeyConstraint("project_id", name=op.f("pk_projects")),
        sa.UniqueConstraint("collection", name=op.f("uq_projects_collection")),
    )


def downgrade() -> None:
    op.drop_table("projects")
    op.drop_index("ix_sync_jobs_query_key_started_at", table_name="sync_jobs")
    op.drop_index(op.f("ix_sync_jobs_started_at"), table_name="sync_jobs")
    op.drop_table("sync_jobs")
    op.drop_index("ix_checkpoint_audit_query_key_at", table_name="checkpoint_audit")
    op.drop_table("checkpoint_audit")
    op.drop_table("checkpoints")
    op.drop_index(op.f("ix_pubmed_docs_quality_total"), table_name="pubmed_docs")
    op.drop_index(op.f("ix_pubmed_docs_evidence_type"), table_name="pubmed_docs")
    op.drop_index(op.f("ix_pubmed_docs_edat"), table_name="pubmed_docs")
    op.drop_table("pubmed_docs")

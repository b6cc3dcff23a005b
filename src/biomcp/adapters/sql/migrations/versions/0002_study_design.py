"""Study design kept with the evidence tier: `study_design` and `design_rule`.

Both are nullable: documents stored before this revision have none until a sync sees them
again or `biomcp index rebuild --rederive` derives them; readers derive the design from the
stored record meanwhile.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("pubmed_docs", sa.Column("study_design", sa.String(length=32), nullable=True))
    op.add_column("pubmed_docs", sa.Column("design_rule", sa.String(length=64), nullable=True))
    op.create_index(op.f("ix_pubmed_docs_study_design"), "pubmed_docs", ["study_design"])


def downgrade() -> None:
    op.drop_index(op.f("ix_pubmed_docs_study_design"), table_name="pubmed_docs")
    with op.batch_alter_table("pubmed_docs") as batch:
        batch.drop_column("design_rule")
        batch.drop_column("study_design")

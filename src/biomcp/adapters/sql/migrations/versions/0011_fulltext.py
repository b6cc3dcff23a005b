"""Full text in the corpus: `fulltext` holds each checked record's PMC full-text state and its
stored article; `checkpoints.fulltext` remembers which saved queries keep full text.

A key synced before this revision keeps abstracts only until a sync asks for full text.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "fulltext",
        sa.Column("pmid", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("pmcid", sa.String(length=32), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("content_hash", sa.String(length=128), nullable=True),
        sa.Column("chars", sa.Integer(), nullable=False),
        sa.Column("chunks", sa.Integer(), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("article", sa.LargeBinary(), nullable=True),
        sa.PrimaryKeyConstraint("pmid", name=op.f("pk_fulltext")),
    )
    op.create_index(op.f("ix_fulltext_status"), "fulltext", ["status"])
    with op.batch_alter_table("checkpoints") as batch:
        batch.add_column(
            sa.Column("fulltext", sa.Boolean(), server_default=sa.text("false"), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("checkpoints") as batch:
        batch.drop_column("fulltext")
    op.drop_index(op.f("ix_fulltext_status"), table_name="fulltext")
    op.drop_table("fulltext")

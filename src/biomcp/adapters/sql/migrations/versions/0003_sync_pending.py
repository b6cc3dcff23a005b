"""PMIDs a sync found and EFetch did not return (`sync_pending`), asked for again by each later
sync of their query key instead of holding its checkpoint.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sync_pending",
        sa.Column("query_key", sa.String(length=255), nullable=False),
        sa.Column("pmid", sa.String(length=16), nullable=False),
        sa.Column("first_missed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_missed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("misses", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("query_key", "pmid", name=op.f("pk_sync_pending")),
    )


def downgrade() -> None:
    op.drop_table("sync_pending")

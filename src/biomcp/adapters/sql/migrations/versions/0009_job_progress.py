"""A running job's progress in its record (`sync_jobs.progress`): every process can show how
far a sync run by another has come.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
    with op.batch_alter_table("sync_jobs") as batch:
        batch.add_column(sa.Column("progress", json, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sync_jobs") as batch:
        batch.drop_column("progress")

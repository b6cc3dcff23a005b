"""Which process runs each sync job (`sync_jobs.owner`): any process can tell a job whose
process died (its owner's lock is free) from one that still runs or waits in a queue.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("sync_jobs") as batch:
        batch.add_column(sa.Column("owner", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sync_jobs") as batch:
        batch.drop_column("owner")

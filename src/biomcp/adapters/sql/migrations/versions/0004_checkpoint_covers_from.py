"""The earliest Entrez date a query key's syncs have covered (`checkpoints.covers_from`), so
that the records a sync re-fetches because PubMed revised them stay inside the corpus's own
history: a key first synced `initial_days` back, or from a date an operator set, does not gain
every older record of its term that PubMed happens to revise. Existing rows read NULL, the
whole history, as they were synced.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("checkpoints") as batch:
        batch.add_column(sa.Column("covers_from", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("checkpoints") as batch:
        batch.drop_column("covers_from")

"""Two facts about a query key's history on its checkpoint:

- `covers_from`, the earliest Entrez date its syncs have covered, so that the records a sync
  re-fetches because PubMed revised them stay inside the corpus's own history (a key first
  synced `initial_days` back, or from a date an operator set, does not gain every older record
  of its term that PubMed happens to revise). Existing rows read NULL, the whole history, as
  they were synced.
- `term`, the term of its last completed sync, so that a sync with another term reads the
  key's history again for it instead of continuing from a checkpoint the new term never had.
  Existing rows take the term of their key's latest succeeded sync job.

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
        batch.add_column(sa.Column("term", sa.Text(), nullable=True))
    op.execute(
        "UPDATE checkpoints SET term = ("
        " SELECT j.term FROM sync_jobs j"
        " WHERE j.query_key = checkpoints.query_key AND j.status = 'succeeded'"
        " ORDER BY j.started_at DESC, j.job_id DESC LIMIT 1)"
        " WHERE last_scan_at IS NOT NULL"
    )


def downgrade() -> None:
    with op.batch_alter_table("checkpoints") as batch:
        batch.drop_column("term")
        batch.drop_column("covers_from")

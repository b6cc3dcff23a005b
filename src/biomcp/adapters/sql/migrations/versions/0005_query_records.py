"""Which saved queries brought each record (`query_records`), so a saved query's records can be
counted and, when it is forgotten, deleted with it where no other query holds them.

A key synced before this revision brought records nobody recorded: its checkpoint reads
`records_tracked` false until a sync reads its whole history again (`biomcp sync --rescan`),
and until then no record is deleted on the strength of another key's membership alone.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "query_records",
        sa.Column("query_key", sa.String(length=255), nullable=False),
        sa.Column("pmid", sa.String(length=16), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("query_key", "pmid", name=op.f("pk_query_records")),
    )
    op.create_index("ix_query_records_pmid", "query_records", ["pmid"])
    with op.batch_alter_table("checkpoints") as batch:
        batch.add_column(
            sa.Column(
                "records_tracked", sa.Boolean(), server_default=sa.text("true"), nullable=False
            )
        )
    # Every key synced so far brought records nobody recorded (a watermark set by hand and
    # never synced brought none).
    op.execute(
        "UPDATE checkpoints SET records_tracked = false WHERE last_scan_at IS NOT NULL"
        " OR query_key IN (SELECT query_key FROM sync_jobs)"
    )


def downgrade() -> None:
    with op.batch_alter_table("checkpoints") as batch:
        batch.drop_column("records_tracked")
    op.drop_index("ix_query_records_pmid", table_name="query_records")
    op.drop_table("query_records")

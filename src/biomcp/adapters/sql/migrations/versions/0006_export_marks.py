"""Where each saved query's next `biomcp export --new` starts (`export_marks`): a living review
exports what its query brought since its last screening without keeping the moment itself.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "export_marks",
        sa.Column("query_key", sa.String(length=255), nullable=False),
        sa.Column("next_added_since", sa.DateTime(timezone=True), nullable=False),
        sa.Column("marked_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("query_key", name=op.f("pk_export_marks")),
    )


def downgrade() -> None:
    op.drop_table("export_marks")

"""NCBI's request budget shared by replicas (`ncbi_budget_starts`): the recent request starts of
each NCBI identity, read and written by `biomcp.adapters.entrez.budget_sql` on PostgreSQL. On
SQLite the table exists unused (processes on one machine share a file instead).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "ncbi_budget_starts",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("identity", sa.String(length=64), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ncbi_budget_starts")),
    )
    op.create_index(
        "ix_ncbi_budget_starts_identity_started_at",
        "ncbi_budget_starts",
        ["identity", "started_at"],
    )


def downgrade() -> None:
    op.drop_index("ix_ncbi_budget_starts_identity_started_at", table_name="ncbi_budget_starts")
    op.drop_table("ncbi_budget_starts")

"""Caches shared by replicas: `embedding_cache` (vectors by model and text digest) and
`ncbi_cache_entries` (EFetch / EInfo answers), read and written by the `cache_pg` adapters on
PostgreSQL. On SQLite the tables exist unused (each machine keeps its cache files instead).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "embedding_cache",
        sa.Column("model_id", sa.Text(), nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("text_sha256", sa.LargeBinary(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("model_id", "dim", "text_sha256", name=op.f("pk_embedding_cache")),
    )
    op.create_table(
        "ncbi_cache_entries",
        sa.Column("ns", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("body", sa.LargeBinary(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("stored_at", sa.Double(), nullable=False),
        sa.PrimaryKeyConstraint("ns", "kind", "key", name=op.f("pk_ncbi_cache_entries")),
    )
    op.create_index("ix_ncbi_cache_entries_stored_at", "ncbi_cache_entries", ["stored_at"])


def downgrade() -> None:
    op.drop_index("ix_ncbi_cache_entries_stored_at", table_name="ncbi_cache_entries")
    op.drop_table("ncbi_cache_entries")
    op.drop_table("embedding_cache")

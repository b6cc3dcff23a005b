"""When each stored record was first written retracted: `pubmed_docs.retracted_at`.

The column is NULL while a record is not retracted. A record retracted before this revision
takes its `last_seen_at` as its retraction moment. That is the latest moment the store can
vouch for: the record was retracted by then, and an export of a saved query carried it on
that same moment before this revision. So an export after the upgrade still carries every
retraction it would have carried before, and none is lost to a user who has not seen it. A
retraction an export already carried may come once more, which screening tools drop by PMID.

Retraction is read from each stored record (a "Retracted Publication" publication type or a
"RetractionIn" notice), as `PubMedRecord.is_retracted` reads it. Only records whose stored
text mentions a retraction are read whole.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: PMIDs per UPDATE of the backfill.
_BATCH = 500

_DOCS = sa.table(
    "pubmed_docs",
    sa.column("pmid", sa.String()),
    sa.column("record_json", sa.JSON().with_variant(postgresql.JSONB(), "postgresql")),
    sa.column("last_seen_at", sa.DateTime(timezone=True)),
    sa.column("retracted_at", sa.DateTime(timezone=True)),
)


def _is_retracted(record: dict[str, Any]) -> bool:
    """`PubMedRecord.is_retracted` of a stored record, read from its JSON."""
    if "Retracted Publication" in record.get("publication_types", ()):
        return True
    return any(notice.get("kind") == "RetractionIn" for notice in record.get("notices", ()))


def upgrade() -> None:
    op.add_column("pubmed_docs", sa.Column("retracted_at", sa.DateTime(timezone=True)))
    connection = op.get_bind()
    mentions = sa.cast(_DOCS.c.record_json, sa.Text).like("%Retract%")
    rows = connection.execute(sa.select(_DOCS.c.pmid, _DOCS.c.record_json).where(mentions))
    retracted = [str(row.pmid) for row in rows if _is_retracted(row.record_json)]
    for start in range(0, len(retracted), _BATCH):
        connection.execute(
            sa.update(_DOCS)
            .where(_DOCS.c.pmid.in_(retracted[start : start + _BATCH]))
            .values(retracted_at=_DOCS.c.last_seen_at)
        )


def downgrade() -> None:
    with op.batch_alter_table("pubmed_docs") as batch:
        batch.drop_column("retracted_at")

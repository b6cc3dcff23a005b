"""`SqlDocumentStore`: the DocumentStore port in SQL (documents, versions, scores, indexing).

A batch of upserts runs in one transaction that locks what it decides on (`SELECT ... FOR
UPDATE` on PostgreSQL, `BEGIN IMMEDIATE` on SQLite), so two writers never both bump a version.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import (
    ColumnElement,
    Engine,
    bindparam,
    func,
    or_,
    select,
    update,
)

from biomcp.adapters.sql.database import SqlDatabase, unique
from biomcp.adapters.sql.engine import (
    chunks,
    writing,
)
from biomcp.adapters.sql.rows import (
    DOCS,
    document_from_row,
    score_from_row,
)
from biomcp.adapters.sql.serialize import quality_to_json, retracted_from_json
from biomcp.adapters.sql.upsert import upsert_batch
from biomcp.ports.documents import DocumentUpsert, StoredDocument, StoredScore, UpsertSummary

__all__ = ["SqlDocumentStore"]

#: `rag_get`'s query, built once: one document by its PMID.
_DOC_BY_PMID = select(DOCS).where(DOCS.c.pmid == bindparam("pmid"))
#: The calendar year a stored score's recency was counted in (NULL when not recorded).
_scored_in = DOCS.c.quality_json["scored_in"].as_integer()


def _scored_before(year: int) -> ColumnElement[bool]:
    return or_(_scored_in.is_(None), _scored_in < year)


def _read_document(engine: Engine, pmid: str) -> StoredDocument | None:
    with engine.connect() as connection:
        row = connection.execute(_DOC_BY_PMID, {"pmid": pmid}).first()
    return document_from_row(row) if row is not None else None


class SqlDocumentStore(SqlDatabase):
    """Stored PubMed documents in SQL (`DocumentStore`)."""

    # -- documents --------------------------------------------------------------------------

    async def upsert_documents(
        self, docs: Sequence[DocumentUpsert], *, held_by: str | None = None
    ) -> UpsertSummary:
        """Insert / update / skip each document by the domain's versioning rule, all in one
        transaction; a skipped document still has its `last_seen_at` refreshed. A PMID given
        twice is decided twice, in order. Outcomes come in input order. With `held_by`, the
        same transaction records that saved query as holding each of them."""
        if not docs:
            return UpsertSummary(0, 0, 0, None)
        now = self._now()
        return await self._run(
            "storing documents", lambda engine: upsert_batch(engine, docs, now, held_by)
        )

    async def get_document(self, pmid: str) -> StoredDocument | None:
        """The stored document, or None for an unknown PMID (one prebuilt point query)."""
        return await self._point_read("reading a document", lambda e: _read_document(e, pmid))

    def get_document_blocking(self, pmid: str) -> StoredDocument | None:
        """`get_document`'s query on the caller's thread, blocking (for callers that pick
        their own thread, and for measuring where the query should run)."""
        return self._call("reading a document", lambda e: _read_document(e, pmid))

    async def get_documents(self, pmids: Sequence[str]) -> dict[str, StoredDocument]:
        """The stored documents among `pmids`, by PMID (unknown ones are absent)."""

        def work(engine: Engine) -> dict[str, StoredDocument]:
            found: dict[str, StoredDocument] = {}
            with engine.connect() as connection:
                for part in chunks(unique(pmids)):
                    rows = connection.execute(select(DOCS).where(DOCS.c.pmid.in_(part)))
                    found.update((row.pmid, document_from_row(row)) for row in rows)
            return found

        return await self._run("reading documents", work) if pmids else {}

    async def retracted_pmids(self, pmids: Sequence[str]) -> set[str]:
        """Those of `pmids` whose stored record is retracted now."""

        def work(engine: Engine) -> set[str]:
            found: set[str] = set()
            with engine.connect() as connection:
                for part in chunks(unique(pmids)):
                    query = select(DOCS.c.pmid, DOCS.c.record_json).where(DOCS.c.pmid.in_(part))
                    found.update(
                        str(row.pmid)
                        for row in connection.execute(query)
                        if retracted_from_json(row.record_json)
                    )
            return found

        return await self._run("reading retraction flags", work) if pmids else set()

    async def retracted_since(self, pmids: Sequence[str], since: datetime) -> set[str]:
        """Those of `pmids` first written retracted at or after `since` (the column alone:
        it is NULL for every record that is not retracted)."""

        def work(engine: Engine) -> set[str]:
            found: set[str] = set()
            with engine.connect() as connection:
                for part in chunks(unique(pmids)):
                    query = select(DOCS.c.pmid).where(
                        DOCS.c.pmid.in_(part), DOCS.c.retracted_at >= since
                    )
                    found.update(str(pmid) for pmid in connection.execute(query).scalars())
            return found

        return await self._run("reading retraction times", work) if pmids else set()

    async def documents_to_index(self, pmids: Sequence[str]) -> list[StoredDocument]:
        """Those of `pmids` whose indexed version is behind their version, in input order."""

        def work(engine: Engine) -> list[StoredDocument]:
            wanted = unique(pmids)
            found: dict[str, StoredDocument] = {}
            with engine.connect() as connection:
                for part in chunks(wanted):
                    query = select(DOCS).where(
                        DOCS.c.pmid.in_(part), DOCS.c.indexed_version < DOCS.c.version
                    )
                    found.update(
                        (row.pmid, document_from_row(row)) for row in connection.execute(query)
                    )
            return [found[pmid] for pmid in wanted if pmid in found]

        return await self._run("reading documents to index", work) if pmids else []

    async def mark_indexed(self, versions: dict[str, int]) -> None:
        """Record that `pmid`'s chunks of `version` are in the vector store. The indexed
        version only moves forward and never past the stored version; unknown PMIDs are
        ignored."""

        def work(engine: Engine) -> None:
            statement = (
                update(DOCS)
                .where(
                    DOCS.c.pmid == bindparam("k_pmid"),
                    DOCS.c.indexed_version < bindparam("k_version"),
                    DOCS.c.version >= bindparam("k_version"),
                )
                .values(indexed_version=bindparam("k_version"))
            )
            params = [{"k_pmid": p, "k_version": v} for p, v in versions.items()]
            with writing(engine) as connection:
                connection.execute(statement, params)

        if versions:
            await self._run("marking documents indexed", work)

    async def count_documents(
        self, *, indexed: bool = False, scored_before: int | None = None
    ) -> int:
        query = select(func.count()).select_from(DOCS)
        if indexed:
            query = query.where(DOCS.c.indexed_version > 0)
        if scored_before is not None:
            query = query.where(_scored_before(scored_before))

        def work(engine: Engine) -> int:
            with engine.connect() as connection:
                return int(connection.execute(query).scalar_one())

        return await self._run("counting documents", work)

    async def document_pmids(self, after: str = "", limit: int = 1000) -> list[str]:
        query = select(DOCS.c.pmid).where(DOCS.c.pmid > after).order_by(DOCS.c.pmid).limit(limit)

        def work(engine: Engine) -> list[str]:
            with engine.connect() as connection:
                return [str(pmid) for pmid in connection.execute(query).scalars()]

        return await self._run("listing documents", work)

    async def scores_before(
        self, year: int, after: str = "", limit: int = 500
    ) -> list[StoredScore]:
        """The port's contract; reads the score columns only, not the records."""
        query = (
            select(
                DOCS.c.pmid,
                DOCS.c.pdat,
                DOCS.c.edat,
                DOCS.c.version,
                DOCS.c.indexed_version,
                DOCS.c.quality_json,
            )
            .where(DOCS.c.pmid > after, _scored_before(year))
            .order_by(DOCS.c.pmid)
            .limit(limit)
        )

        def work(engine: Engine) -> list[StoredScore]:
            with engine.connect() as connection:
                return [score_from_row(row) for row in connection.execute(query)]

        return await self._run("listing quality scores", work)

    async def set_quality(self, scores: Sequence[StoredScore]) -> int:
        """The port's contract, in one transaction."""
        statement = (
            update(DOCS)
            .where(DOCS.c.pmid == bindparam("k_pmid"), DOCS.c.version == bindparam("k_version"))
            .values(quality_total=bindparam("k_total"), quality_json=bindparam("k_quality"))
        )
        params = [
            {
                "k_pmid": score.pmid,
                "k_version": score.version,
                "k_total": score.quality.total,
                "k_quality": quality_to_json(score.quality),
            }
            for score in scores
        ]

        def work(engine: Engine) -> int:
            with writing(engine) as connection:
                return sum(connection.execute(statement, [p]).rowcount for p in params)

        return await self._run("storing quality scores", work) if params else 0

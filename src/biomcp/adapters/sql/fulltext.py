"""`SqlFullTextStore`: the FullTextStore port in SQL (full-text states and stored articles).

A write reads which of its PMIDs have a stored document, holding those rows (`FOR KEY SHARE`
on PostgreSQL; SQLite's `BEGIN IMMEDIATE` already excludes other writers), so a document
deleted meanwhile takes its full-text row with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Connection, Engine, func, select

from biomcp.adapters.sql.database import SqlDatabase, unique
from biomcp.adapters.sql.engine import chunks, dialect_insert, writing
from biomcp.adapters.sql.fulltext_codec import decode_article, encode_article
from biomcp.adapters.sql.rows import DOCS, FULLTEXT
from biomcp.domain.fulltext import FullTextArticle
from biomcp.domain.fulltext_policy import CORPUS_FULLTEXT_STATUSES, CorpusFullTextStatus
from biomcp.ports.fulltext import FullTextState, FullTextWrite
from biomcp.ports.store_errors import MetadataStoreError

__all__ = ["SqlFullTextStore", "checked_writes"]

_STATE_COLUMNS = [c for c in FULLTEXT.c if c.key != "article"]
#: What a write does to the stored article.
_KEEP, _REPLACE, _DROP = "keep", "replace", "drop"


def checked_writes(writes: Sequence[FullTextWrite]) -> dict[str, FullTextWrite]:
    """`writes` folded by PMID in order: the last state wins, and the article is the last
    one given unless a later write drops it.

    Raises:
        MetadataStoreError: a write has an unknown status, or both an article and
            `drop_article`.
    """
    folded: dict[str, FullTextWrite] = {}
    for write in writes:
        if write.state.status not in CORPUS_FULLTEXT_STATUSES:
            raise MetadataStoreError(
                f"unknown full-text status {write.state.status!r} for PMID {write.state.pmid}"
            )
        if write.article is not None and write.drop_article:
            raise MetadataStoreError(
                f"a full-text write for PMID {write.state.pmid} both gives and drops its article"
            )
        earlier = folded.get(write.state.pmid)
        if earlier is not None and write.article is None and not write.drop_article:
            write = FullTextWrite(write.state, earlier.article, earlier.drop_article)
        folded[write.state.pmid] = write
    return folded


def _state_values(state: FullTextState) -> dict[str, Any]:
    return {
        "pmid": state.pmid,
        "status": state.status,
        "checked_at": state.checked_at,
        "pmcid": state.pmcid,
        "reason": state.reason,
        "content_hash": state.content_hash,
        "chars": state.chars,
        "chunks": state.chunks,
        "failures": state.failures,
    }


def _state_from_row(row: Any) -> FullTextState:
    return FullTextState(
        pmid=row.pmid,
        status=cast(CorpusFullTextStatus, row.status),
        checked_at=row.checked_at,
        pmcid=row.pmcid,
        reason=row.reason,
        content_hash=row.content_hash,
        chars=row.chars,
        chunks=row.chunks,
        failures=row.failures,
    )


def _stored_documents(connection: Connection, pmids: list[str]) -> set[str]:
    found: set[str] = set()
    for part in chunks(pmids):
        query = (
            select(DOCS.c.pmid)
            .where(DOCS.c.pmid.in_(part))
            .with_for_update(read=True, key_share=True)
        )
        found.update(str(pmid) for pmid in connection.execute(query).scalars())
    return found


def _write(connection: Connection, rows: dict[str, list[dict[str, Any]]]) -> None:
    """Upsert each kind's rows: `replace` and `drop` set the article column, `keep` leaves a
    stored article as it is."""
    for kind, values in rows.items():
        if not values:
            continue
        statement = dialect_insert(connection, FULLTEXT)
        changed = [c.key for c in _STATE_COLUMNS if c.key != "pmid"]
        if kind != _KEEP:
            changed.append("article")
        connection.execute(
            statement.on_conflict_do_update(
                index_elements=["pmid"],
                set_={key: statement.excluded[key] for key in changed},
            ),
            values,
        )


class SqlFullTextStore(SqlDatabase):
    """Full-text states and articles in SQL (`FullTextStore`)."""

    async def fulltext_states(self, pmids: Sequence[str]) -> dict[str, FullTextState]:
        """The states of those of `pmids` that were ever checked."""

        def work(engine: Engine) -> dict[str, FullTextState]:
            found: dict[str, FullTextState] = {}
            with engine.connect() as connection:
                for part in chunks(unique(pmids)):
                    query = select(*_STATE_COLUMNS).where(FULLTEXT.c.pmid.in_(part))
                    found.update(
                        (row.pmid, _state_from_row(row)) for row in connection.execute(query)
                    )
            return found

        return await self._run("reading full-text states", work) if pmids else {}

    async def fulltext_articles(self, pmids: Sequence[str]) -> dict[str, FullTextArticle]:
        """The stored articles of those of `pmids` that have one (one that cannot be read
        counts as none)."""

        def work(engine: Engine) -> dict[str, FullTextArticle]:
            found: dict[str, FullTextArticle] = {}
            with engine.connect() as connection:
                for part in chunks(unique(pmids)):
                    query = select(FULLTEXT.c.pmid, FULLTEXT.c.article).where(
                        FULLTEXT.c.pmid.in_(part), FULLTEXT.c.article.is_not(None)
                    )
                    for pmid, data in connection.execute(query):
                        article = decode_article(bytes(data))
                        if article is not None:
                            found[str(pmid)] = article
            return found

        return await self._run("reading full-text articles", work) if pmids else {}

    async def record_fulltext(self, writes: Sequence[FullTextWrite]) -> None:
        """Apply `writes` in one transaction; a PMID without a stored document is skipped.
        A PMID written twice ends as the writes in order leave it."""
        folded = checked_writes(writes)

        def work(engine: Engine) -> None:
            rows: dict[str, list[dict[str, Any]]] = {_KEEP: [], _REPLACE: [], _DROP: []}
            encoded: dict[str, bytes] = {
                pmid: encode_article(write.article)
                for pmid, write in folded.items()
                if write.article is not None
            }
            with writing(engine) as connection:
                stored = _stored_documents(connection, list(folded))
                for pmid, write in folded.items():
                    if pmid not in stored:
                        continue
                    values = _state_values(write.state)
                    values["article"] = encoded.get(pmid)
                    kind = _REPLACE if pmid in encoded else _DROP if write.drop_article else _KEEP
                    rows[kind].append(values)
                _write(connection, rows)

        if folded:
            await self._run("storing full-text states", work)

    async def fulltext_status_counts(self, pmids: Sequence[str] | None = None) -> dict[str, int]:
        """How many records have each status, among `pmids` (None: every record checked);
        statuses no record has are absent."""
        by_status = select(FULLTEXT.c.status, func.count()).group_by(FULLTEXT.c.status)

        def work(engine: Engine) -> dict[str, int]:
            counts: dict[str, int] = {}
            with engine.connect() as connection:
                parts = [None] if pmids is None else list(chunks(unique(pmids)))
                for part in parts:
                    query = (
                        by_status if part is None else by_status.where(FULLTEXT.c.pmid.in_(part))
                    )
                    for status, n in connection.execute(query):
                        counts[str(status)] = counts.get(str(status), 0) + int(n)
            return counts

        if pmids is not None and not pmids:
            return {}
        return await self._run("counting full-text statuses", work)

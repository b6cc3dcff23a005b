"""The document upsert: versioning decided by the domain, applied in one locked transaction.

One SELECT (per 500 PMIDs) reads what is stored, locking the rows on PostgreSQL (SQLite's
`BEGIN IMMEDIATE` already excludes other writers); `decide_version` rules on each document,
and `retracted_at` on the retraction moment of each written one; then one executemany INSERT,
one executemany UPDATE and one UPDATE of `last_seen_at` for the skipped write the outcome. A
skipped document keeps its retraction moment: its content, notices included, is unchanged.
Two writers inserting the same new PMID at once on PostgreSQL collide on the primary key: the
loser retries the whole batch, and then sees the winner's row.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, bindparam, insert, select, update
from sqlalchemy import exc as sa_exc

from biomcp.adapters.sql.engine import chunks, dialect_insert, writing
from biomcp.adapters.sql.rows import DOCS, QUERY_RECORDS, document_values
from biomcp.adapters.sql.serialize import to_utc
from biomcp.domain.retraction_time import retracted_at
from biomcp.domain.versioning import StoredVersion, UpsertAction, decide_version
from biomcp.ports.documents import DocumentUpsert, UpsertOutcome, UpsertSummary

__all__ = ["upsert_batch"]

_ATTEMPTS = 3
_UPDATED_COLUMNS = [c.key for c in DOCS.c if c.key not in ("pmid", "indexed_version")]
_UPDATE = (
    update(DOCS)
    .where(DOCS.c.pmid == bindparam("k_pmid"))
    .values({key: bindparam(f"v_{key}", type_=DOCS.c[key].type) for key in _UPDATED_COLUMNS})
)


def _max_edat(docs: Sequence[DocumentUpsert]) -> datetime | None:
    seen = [to_utc(d.record.edat) for d in docs if d.record.edat is not None]
    return max(seen, default=None)


def _stored_versions(
    connection: Connection, pmids: list[str]
) -> tuple[dict[str, StoredVersion], dict[str, datetime | None]]:
    """The stored version and retraction moment of each of `pmids` that is stored, locked."""
    stored: dict[str, StoredVersion] = {}
    retracted: dict[str, datetime | None] = {}
    for part in chunks(pmids):
        query = (
            select(DOCS.c.pmid, DOCS.c.version, DOCS.c.content_hash, DOCS.c.lr, DOCS.c.retracted_at)
            .where(DOCS.c.pmid.in_(part))
            .with_for_update()
        )
        for row in connection.execute(query):
            stored[row.pmid] = StoredVersion(row.version, row.content_hash, row.lr)
            retracted[row.pmid] = row.retracted_at
    return stored, retracted


def _hold(connection: Connection, query_key: str, pmids: Sequence[str], now: datetime) -> int:
    """Record that `query_key` holds `pmids` (a membership already recorded stays as it is,
    with its first time); how many it did not hold before."""
    held: set[str] = set()
    for part in chunks(pmids):
        query = select(QUERY_RECORDS.c.pmid).where(
            QUERY_RECORDS.c.query_key == query_key, QUERY_RECORDS.c.pmid.in_(part)
        )
        held.update(connection.execute(query).scalars())
    new = [pmid for pmid in pmids if pmid not in held]
    if new:  # a sync holds its key's lock: nothing else adds the key's memberships meanwhile
        statement = dialect_insert(connection, QUERY_RECORDS).on_conflict_do_nothing(
            index_elements=["query_key", "pmid"]
        )
        connection.execute(
            statement, [{"query_key": query_key, "pmid": pmid, "added_at": now} for pmid in new]
        )
    return len(new)


def _apply(
    engine: Engine, docs: Sequence[DocumentUpsert], now: datetime, held_by: str | None
) -> UpsertSummary:
    with writing(engine) as connection:
        stored, retracted = _stored_versions(
            connection, list(dict.fromkeys(d.record.pmid for d in docs))
        )
        inserts: dict[str, dict[str, Any]] = {}
        updates: dict[str, dict[str, Any]] = {}
        seen_only: dict[str, None] = {}
        outcomes: list[UpsertOutcome] = []
        for doc in docs:
            pmid = doc.record.pmid
            decision = decide_version(stored.get(pmid), doc.content_hash, doc.record.lr)
            outcomes.append(UpsertOutcome(pmid, decision.action, decision.version))
            if decision.action is UpsertAction.SKIP:
                seen_only[pmid] = None
                continue
            moment = retracted_at(doc.record.is_retracted, retracted.get(pmid), now)
            retracted[pmid] = moment
            values = {**document_values(doc, decision.version, now), "retracted_at": moment}
            # A PMID repeated in the batch: its later decision replaces the pending write.
            if pmid in inserts or pmid not in stored:
                inserts[pmid] = values
            else:
                updates[pmid] = values
            stored[pmid] = StoredVersion(decision.version, doc.content_hash, doc.record.lr)
        if inserts:
            rows = [{**values, "indexed_version": 0} for values in inserts.values()]
            connection.execute(insert(DOCS), rows)
        if updates:
            params = [
                {"k_pmid": pmid, **{f"v_{k}": values[k] for k in _UPDATED_COLUMNS}}
                for pmid, values in updates.items()
            ]
            connection.execute(_UPDATE, params)
        touched = [p for p in seen_only if p not in inserts and p not in updates]
        for part in chunks(touched):
            connection.execute(update(DOCS).where(DOCS.c.pmid.in_(part)).values(last_seen_at=now))
        newly_held = _hold(connection, held_by, list(stored), now) if held_by is not None else 0
    actions = [o.action for o in outcomes]
    return UpsertSummary(
        inserted=actions.count(UpsertAction.INSERT),
        updated=actions.count(UpsertAction.UPDATE),
        skipped=actions.count(UpsertAction.SKIP),
        max_edat_seen=_max_edat(docs),
        outcomes=tuple(outcomes),
        newly_held=newly_held,
    )


def upsert_batch(
    engine: Engine, docs: Sequence[DocumentUpsert], now: datetime, held_by: str | None = None
) -> UpsertSummary:
    """Store `docs` by the versioning rule in one transaction (module docstring); with
    `held_by`, record in it that that saved query holds each of them."""
    for attempt in range(1, _ATTEMPTS + 1):
        try:
            return _apply(engine, docs, now, held_by)
        except sa_exc.IntegrityError:
            if attempt == _ATTEMPTS:
                raise
    raise AssertionError("unreachable")  # pragma: no cover

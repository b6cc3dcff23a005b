"""`SqlMetadataStore`: the MetadataStore port on SQLAlchemy 2, SQLite (default) or PostgreSQL.

The port is async, SQLAlchemy's engine synchronous: each call runs its work in a worker thread
(`asyncio.to_thread`) on one engine per store, created on first use. Writes run in one
transaction each; read-decide-write sequences lock what they decide on (`SELECT ... FOR UPDATE`
on PostgreSQL, `BEGIN IMMEDIATE` on SQLite), so two writers never both bump a version or both
move a watermark from the same starting point.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    bindparam,
    delete,
    func,
    or_,
    select,
    text,
    update,
)
from sqlalchemy import exc as sa_exc

from biomcp.adapters.sql.engine import (
    chunks,
    dialect_insert,
    make_engine,
    parse_url,
    redact,
    replace_row,
    resolve_url,
    sqlite_path,
    writing,
)
from biomcp.adapters.sql.errors import translated, unavailable_on_error
from biomcp.adapters.sql.locks import AdvisoryQueryLock, FileQueryLock
from biomcp.adapters.sql.migrate import prepare_schema
from biomcp.adapters.sql.readonly import WritableFirst, open_sqlite
from biomcp.adapters.sql.rows import (
    AUDIT,
    CHECKPOINTS,
    DOCS,
    EXPORT_MARKS,
    JOBS,
    PENDING,
    PROJECTS,
    QUERY_RECORDS,
    audit_from_row,
    audit_values,
    checkpoint_from_row,
    document_from_row,
    job_from_row,
    job_values,
    pending_from_row,
    project_from_row,
    project_values,
    score_from_row,
)
from biomcp.adapters.sql.serialize import quality_to_json, retracted_from_json
from biomcp.adapters.sql.upsert import upsert_batch
from biomcp.domain.watermarks import (
    WatermarkAudit,
    advance_watermark,
    covered_from,
    manual_watermark,
)
from biomcp.ports.clock import Clock
from biomcp.ports.metadata import (
    Checkpoint,
    DocumentUpsert,
    ForgottenQuery,
    MetadataStoreError,
    PendingPmid,
    StoredDocument,
    StoredScore,
    StoreUnavailableError,
    SyncJob,
    UpsertSummary,
)
from biomcp.ports.projects import ProjectInfo

__all__ = ["SqlMetadataStore"]

T = TypeVar("T")

#: `rag_get`'s query, built once: one document by its PMID.
_DOC_BY_PMID = select(DOCS).where(DOCS.c.pmid == bindparam("pmid"))
#: The calendar year a stored score's recency was counted in (NULL when not recorded).
_scored_in = DOCS.c.quality_json["scored_in"].as_integer()


#: The most findings `quick_check` reports (SQLite stops looking after them).
_QUICK_CHECK_LIMIT = 20


def _scored_before(year: int) -> ColumnElement[bool]:
    return or_(_scored_in.is_(None), _scored_in < year)


def _read_document(engine: Engine, pmid: str) -> StoredDocument | None:
    with engine.connect() as connection:
        row = connection.execute(_DOC_BY_PMID, {"pmid": pmid}).first()
    return document_from_row(row) if row is not None else None


def _delete_unheld(connection: Connection, pmids: Sequence[str]) -> int:
    """Delete the documents of `pmids` no saved query holds now; how many went."""
    deleted = 0
    for part in chunks(pmids):
        held = select(QUERY_RECORDS.c.pmid).where(QUERY_RECORDS.c.pmid.in_(part))
        statement = delete(DOCS).where(DOCS.c.pmid.in_(part), DOCS.c.pmid.not_in(held))
        deleted += connection.execute(statement).rowcount
    return deleted


def _unique(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


class SqlMetadataStore(AbstractAsyncContextManager["SqlMetadataStore"]):
    """The metadata store on SQLite or PostgreSQL.

    Args:
        url: a SQLAlchemy URL (`sqlite:///path`, `postgresql+psycopg://...`; `postgresql://`
            means psycopg 3). None: the SQLite file `biomcp.sqlite3` under `data_dir`.
        data_dir: the folder of the default SQLite file (default: the user data directory of
            `bio-mcp`); created on first use.
        auto_migrate: migrate the schema to head on first use. Default: on for SQLite (the
            embedded store upgrades itself), off for PostgreSQL, where first use only checks
            that the schema is at head and `biomcp db upgrade` migrates.
        clock: where `last_seen_at` and project creation times come from (default: the system
            clock in UTC).

    Nothing connects until the first call (or `open()`). Use as `async with` or call
    `aclose()`. Every method raises only `MetadataStoreError`s; the constructor raises
    `StoreUnavailableError` on a malformed or unsupported URL (in-memory SQLite included).
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        data_dir: Path | None = None,
        auto_migrate: bool | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._url = parse_url(resolve_url(url, data_dir))
        self._backend = self._url.get_backend_name()
        path = sqlite_path(self._url)
        if self._backend == "sqlite" and path is None:
            raise StoreUnavailableError("in-memory SQLite is not supported: give a file path")
        self._sqlite_file = Path(os.path.abspath(path)) if path is not None else None
        self._auto_migrate = self._backend == "sqlite" if auto_migrate is None else auto_migrate
        self._clock = clock
        self._engine: Engine | None = None
        self._opening = threading.Lock()

    def __repr__(self) -> str:
        return f"SqlMetadataStore({redact(self._url)!r})"

    @property
    def url(self) -> str:
        """The database URL, password hidden."""
        return redact(self._url)

    @property
    def backend(self) -> str:
        """`sqlite` or `postgresql`."""
        return self._backend

    @property
    def sqlite_file(self) -> Path | None:
        """The SQLite database file (None on PostgreSQL)."""
        return self._sqlite_file

    def _now(self) -> datetime:
        return self._clock.now() if self._clock is not None else datetime.now(UTC)

    def _open_engine(self) -> Engine:
        with self._opening:
            if self._engine is None:
                if self._sqlite_file is None:
                    self._engine = self._open_read_write()
                else:  # a full disk or a read-only folder still serves reads
                    self._engine = open_sqlite(self._sqlite_file, self._open_read_write)
            return self._engine

    def _open_read_write(self) -> Engine:
        with unavailable_on_error(f"opening {self.url}"):
            engine = make_engine(self._url)
            try:
                prepare_schema(engine, migrate=self._auto_migrate)
            except BaseException:
                engine.dispose()
                raise
        return engine

    def _call(self, what: str, work: Callable[[Engine], T]) -> T:
        with translated(what):
            return work(self._open_engine())

    async def _run(self, what: str, work: Callable[[Engine], T]) -> T:
        return await asyncio.to_thread(self._call, what, work)

    async def _point_read(self, what: str, work: Callable[[Engine], T]) -> T:
        """A read of one row by its key. On an open SQLite engine it runs on the event loop:
        in WAL mode a reader never waits for a writer, and the read (tens of microseconds) is
        cheaper than the hop to a worker thread and back, which dominated `rag_get`. Anything
        else (the first open and its migration, PostgreSQL's network round trip) goes to a
        worker thread as usual."""
        if self._engine is not None and self._backend == "sqlite":
            return self._call(what, work)
        return await self._run(what, work)

    # -- lifecycle --------------------------------------------------------------------------

    async def open(self) -> None:
        """Connect and migrate (SQLite) or check the schema (PostgreSQL) now, not on first use.

        Raises:
            StoreUnavailableError: when the database cannot be reached, opened or migrated.
        """
        await self._run(f"opening {self.url}", lambda engine: None)

    async def aclose(self) -> None:
        """Close the pooled connections; the store reopens on its next use."""

        def close() -> None:
            with self._opening:
                engine, self._engine = self._engine, None
            if engine is not None:
                engine.dispose()

        await asyncio.to_thread(close)

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def ping(self) -> None:
        """Raise StoreUnavailableError unless the database answers `SELECT 1`."""

        def work() -> None:
            with (
                unavailable_on_error("pinging the database"),
                self._open_engine().connect() as connection,
            ):
                connection.execute(text("SELECT 1"))

        await asyncio.to_thread(work)

    async def quick_check(self) -> list[str]:
        """What SQLite's `PRAGMA quick_check` finds wrong in the database file (at most
        `_QUICK_CHECK_LIMIT` findings); empty when it finds nothing. PostgreSQL checks its own
        pages: nothing to report there."""
        if self._backend != "sqlite":
            return []

        def work(engine: Engine) -> list[str]:
            try:
                with engine.connect() as connection:
                    rows = connection.exec_driver_sql(
                        f"PRAGMA quick_check({_QUICK_CHECK_LIMIT})"
                    ).all()
            except sa_exc.DatabaseError as exc:
                if isinstance(exc, sa_exc.OperationalError):  # locked, unreadable: not damage
                    raise
                return [f"the check stopped: {exc.orig}"]  # "database disk image is malformed"
            found = [str(row[0]) for row in rows]
            return [] if found == ["ok"] else found

        return await self._run("checking the database's integrity", work)

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
                for part in chunks(_unique(pmids)):
                    rows = connection.execute(select(DOCS).where(DOCS.c.pmid.in_(part)))
                    found.update((row.pmid, document_from_row(row)) for row in rows)
            return found

        return await self._run("reading documents", work) if pmids else {}

    async def retracted_pmids(self, pmids: Sequence[str]) -> set[str]:
        """Those of `pmids` whose stored record is retracted now."""

        def work(engine: Engine) -> set[str]:
            found: set[str] = set()
            with engine.connect() as connection:
                for part in chunks(_unique(pmids)):
                    query = select(DOCS.c.pmid, DOCS.c.record_json).where(DOCS.c.pmid.in_(part))
                    found.update(
                        str(row.pmid)
                        for row in connection.execute(query)
                        if retracted_from_json(row.record_json)
                    )
            return found

        return await self._run("reading retraction flags", work) if pmids else set()

    async def documents_to_index(self, pmids: Sequence[str]) -> list[StoredDocument]:
        """Those of `pmids` whose indexed version is behind their version, in input order."""

        def work(engine: Engine) -> list[StoredDocument]:
            wanted = _unique(pmids)
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

    # -- checkpoints ------------------------------------------------------------------------

    async def get_checkpoint(self, query_key: str) -> Checkpoint:
        """The watermark of `query_key` (all None when it has none yet)."""

        def work(engine: Engine) -> Checkpoint:
            with engine.connect() as connection:
                query = select(CHECKPOINTS).where(CHECKPOINTS.c.query_key == query_key)
                return checkpoint_from_row(query_key, connection.execute(query).one_or_none())

        return await self._run("reading a checkpoint", work)

    @staticmethod
    def _lock_checkpoint(connection: Connection, query_key: str) -> Any:
        """Create the key's row when missing, then lock it for this transaction."""
        connection.execute(
            dialect_insert(connection, CHECKPOINTS)
            .values(query_key=query_key)
            .on_conflict_do_nothing(index_elements=["query_key"])
        )
        query = select(CHECKPOINTS).where(CHECKPOINTS.c.query_key == query_key)
        return connection.execute(query.with_for_update()).one()

    async def advance_checkpoint(
        self,
        query_key: str,
        candidate: datetime | None,
        scanned_at: datetime,
        *,
        window_start: datetime | None,
        term: str | None,
        read_history: bool = False,
    ) -> Checkpoint:
        """Automatic move: the watermark becomes max(current, candidate), never less;
        `last_scan_at` becomes `scanned_at`; `covers_from` follows `covered_from`;
        `records_tracked` becomes true with `read_history` and never false."""

        def work(engine: Engine) -> Checkpoint:
            with writing(engine) as connection:
                row = self._lock_checkpoint(connection, query_key)
                new = advance_watermark(row.last_edat, candidate)
                covers = covered_from(row.covers_from, row.last_scan_at is not None, window_start)
                tracked = bool(row.records_tracked) or read_history
                connection.execute(
                    update(CHECKPOINTS)
                    .where(CHECKPOINTS.c.query_key == query_key)
                    .values(
                        last_edat=new,
                        last_scan_at=scanned_at,
                        covers_from=covers,
                        term=term,
                        records_tracked=tracked,
                    )
                )
            return Checkpoint(query_key, new, scanned_at, covers, term, tracked)

        return await self._run("advancing a checkpoint", work)

    async def set_checkpoint(
        self, query_key: str, last_edat: datetime, *, actor: str, reason: str, at: datetime
    ) -> WatermarkAudit:
        """Manual move (any direction), written with its audit entry in one transaction."""

        def work(engine: Engine) -> WatermarkAudit:
            with writing(engine) as connection:
                row = self._lock_checkpoint(connection, query_key)
                new, audit = manual_watermark(
                    query_key, row.last_edat, last_edat, actor=actor, reason=reason, at=at
                )
                connection.execute(
                    update(CHECKPOINTS)
                    .where(CHECKPOINTS.c.query_key == query_key)
                    .values(last_edat=new)
                )
                connection.execute(AUDIT.insert().values(audit_values(audit)))
            return audit

        return await self._run("setting a checkpoint", work)

    async def checkpoint_audit(self, query_key: str) -> list[WatermarkAudit]:
        """The manual moves of `query_key`, newest first."""

        def work(engine: Engine) -> list[WatermarkAudit]:
            query = (
                select(AUDIT)
                .where(AUDIT.c.query_key == query_key)
                .order_by(AUDIT.c.at.desc(), AUDIT.c.id.desc())
            )
            with engine.connect() as connection:
                return [audit_from_row(row) for row in connection.execute(query)]

        return await self._run("reading checkpoint audit", work)

    async def list_checkpoints(self) -> list[Checkpoint]:
        """Every checkpoint, by query key."""

        def work(engine: Engine) -> list[Checkpoint]:
            query = select(CHECKPOINTS).order_by(CHECKPOINTS.c.query_key)
            with engine.connect() as connection:
                return [checkpoint_from_row(r.query_key, r) for r in connection.execute(query)]

        return await self._run("listing checkpoints", work)

    async def forget_query(
        self, query_key: str, *, delete_records: Sequence[str] = ()
    ) -> ForgottenQuery:
        """Delete the checkpoint, pending PMIDs, sync jobs, record memberships and export mark
        of `query_key` in one transaction, with the documents of `delete_records` no other key
        holds (read in the transaction: a key that took one in the meantime keeps it); its
        audit trail stays."""
        doomed = _unique(delete_records)

        def work(engine: Engine) -> ForgottenQuery:
            with writing(engine) as connection:
                tracked = connection.execute(
                    select(CHECKPOINTS.c.records_tracked).where(
                        CHECKPOINTS.c.query_key == query_key
                    )
                ).scalar_one_or_none()
                counts = [
                    connection.execute(delete(table).where(table.c.query_key == query_key))
                    for table in (CHECKPOINTS, PENDING, JOBS, QUERY_RECORDS, EXPORT_MARKS)
                ]
                deleted = _delete_unheld(connection, doomed)
            checkpoint, pending, jobs, records, _marks = (result.rowcount for result in counts)
            return ForgottenQuery(
                query_key,
                checkpoint > 0,
                pending,
                jobs,
                records,
                deleted,
                records_tracked=tracked is not False,
            )

        return await self._run("forgetting a saved query", work)

    async def export_mark(self, query_key: str) -> datetime | None:
        query = select(EXPORT_MARKS.c.next_added_since).where(EXPORT_MARKS.c.query_key == query_key)

        def work(engine: Engine) -> datetime | None:
            with engine.connect() as connection:
                mark: datetime | None = connection.execute(query).scalar_one_or_none()
                return mark

        return await self._run("reading an export mark", work)

    async def set_export_mark(self, query_key: str, next_added_since: datetime) -> None:
        values = {
            "query_key": query_key,
            "next_added_since": next_added_since,
            "marked_at": self._now(),
        }

        def work(engine: Engine) -> None:
            with writing(engine) as connection:
                replace_row(connection, EXPORT_MARKS, values, "query_key")

        await self._run("marking an export", work)

    async def query_record_counts(self) -> dict[str, int]:
        query = select(QUERY_RECORDS.c.query_key, func.count()).group_by(QUERY_RECORDS.c.query_key)

        def work(engine: Engine) -> dict[str, int]:
            with engine.connect() as connection:
                return {str(key): int(n) for key, n in connection.execute(query)}

        return await self._run("counting the records of saved queries", work)

    async def records_of(self, query_key: str, *, added_since: datetime | None = None) -> list[str]:
        query = (
            select(QUERY_RECORDS.c.pmid)
            .where(QUERY_RECORDS.c.query_key == query_key)
            .order_by(QUERY_RECORDS.c.pmid)
        )
        if added_since is not None:
            query = query.where(QUERY_RECORDS.c.added_at >= added_since)

        def work(engine: Engine) -> list[str]:
            with engine.connect() as connection:
                return [str(pmid) for pmid in connection.execute(query).scalars()]

        return await self._run("listing the records of a saved query", work)

    async def records_held_only_by(self, query_key: str) -> list[str]:
        mine = QUERY_RECORDS.alias("mine")
        others = QUERY_RECORDS.alias("others")
        shared = select(others.c.pmid).where(
            others.c.pmid == mine.c.pmid, others.c.query_key != query_key
        )
        query = (
            select(mine.c.pmid)
            .where(mine.c.query_key == query_key, ~shared.exists())
            .order_by(mine.c.pmid)
        )

        def work(engine: Engine) -> list[str]:
            with engine.connect() as connection:
                return [str(pmid) for pmid in connection.execute(query).scalars()]

        return await self._run("listing the records only one saved query holds", work)

    async def queries_holding(self, pmids: Sequence[str]) -> dict[str, list[str]]:
        wanted = _unique(pmids)

        def work(engine: Engine) -> dict[str, list[str]]:
            held: dict[str, list[str]] = {}
            with engine.connect() as connection:
                for part in chunks(wanted):
                    query = select(QUERY_RECORDS.c.pmid, QUERY_RECORDS.c.query_key).where(
                        QUERY_RECORDS.c.pmid.in_(part)
                    )
                    for pmid, key in connection.execute(query):
                        held.setdefault(str(pmid), []).append(str(key))
            return {pmid: sorted(keys) for pmid, keys in held.items()}  # one order everywhere

        return await self._run("listing the saved queries holding records", work)

    async def records_held_by_none(self) -> list[str]:
        held = select(QUERY_RECORDS.c.pmid).where(QUERY_RECORDS.c.pmid == DOCS.c.pmid)
        query = select(DOCS.c.pmid).where(~held.exists()).order_by(DOCS.c.pmid)

        def work(engine: Engine) -> list[str]:
            with engine.connect() as connection:
                return [str(pmid) for pmid in connection.execute(query).scalars()]

        return await self._run("listing the records no saved query holds", work)

    async def delete_unheld(self, pmids: Sequence[str]) -> int:
        doomed = _unique(pmids)

        def work(engine: Engine) -> int:
            with writing(engine) as connection:
                return _delete_unheld(connection, doomed)

        return await self._run("deleting the records no saved query holds", work)

    # -- PMIDs pending a retry --------------------------------------------------------------

    @staticmethod
    def _pending(connection: Connection, query_key: str) -> list[PendingPmid]:
        query = (
            select(PENDING)
            .where(PENDING.c.query_key == query_key)
            .order_by(PENDING.c.first_missed_at, PENDING.c.pmid)
        )
        return [pending_from_row(row) for row in connection.execute(query)]

    async def pending_pmids(self, query_key: str) -> list[PendingPmid]:
        """The PMIDs pending for `query_key`, the longest pending first (then by PMID)."""

        def work(engine: Engine) -> list[PendingPmid]:
            with engine.connect() as connection:
                return self._pending(connection, query_key)

        return await self._run("reading pending PMIDs", work)

    async def settle_pending(
        self, query_key: str, *, missed: Sequence[str], arrived: Sequence[str], at: datetime
    ) -> list[PendingPmid]:
        """Record `missed` (new, or one more miss) and drop `arrived` in one transaction
        (a PMID in both stays pending); returns what is pending for `query_key` now."""
        missed = _unique(missed)
        still = set(missed)
        gone = [pmid for pmid in _unique(arrived) if pmid not in still]

        def work(engine: Engine) -> list[PendingPmid]:
            with writing(engine) as connection:
                for part in chunks(gone):
                    connection.execute(
                        delete(PENDING).where(
                            PENDING.c.query_key == query_key, PENDING.c.pmid.in_(part)
                        )
                    )
                if missed:
                    statement = dialect_insert(connection, PENDING)
                    connection.execute(
                        statement.on_conflict_do_update(
                            index_elements=["query_key", "pmid"],
                            set_={
                                "misses": PENDING.c.misses + 1,
                                "last_missed_at": statement.excluded.last_missed_at,
                            },
                        ),
                        [
                            {
                                "query_key": query_key,
                                "pmid": pmid,
                                "first_missed_at": at,
                                "last_missed_at": at,
                                "misses": 1,
                            }
                            for pmid in missed
                        ],
                    )
                return self._pending(connection, query_key)

        return await self._run("recording pending PMIDs", work)

    def query_lock(
        self, query_key: str, *, timeout_s: float = 0.0
    ) -> AbstractAsyncContextManager[None]:
        """Hold the lock of `query_key` across processes (and within this one) for the block.

        Raises (on entering):
            LockTimeoutError: when another holder keeps it past `timeout_s` seconds.
        """
        if self._sqlite_file is not None:
            lock = FileQueryLock(self._sqlite_file, query_key, timeout_s)
            return WritableFirst(self._open_engine, lock)
        return AdvisoryQueryLock(self._open_engine, query_key, timeout_s)

    # -- jobs -------------------------------------------------------------------------------

    async def record_job(self, job: SyncJob) -> None:
        """Insert or replace the job by id."""

        def work(engine: Engine) -> None:
            values = job_values(job)
            with writing(engine) as connection:
                replace_row(connection, JOBS, values, "job_id")

        await self._run("recording a sync job", work)

    async def get_job(self, job_id: str) -> SyncJob | None:
        def work(engine: Engine) -> SyncJob | None:
            with engine.connect() as connection:
                row = connection.execute(select(JOBS).where(JOBS.c.job_id == job_id)).first()
            return job_from_row(row) if row is not None else None

        return await self._run("reading a sync job", work)

    async def list_jobs(self, query_key: str | None = None, limit: int = 50) -> list[SyncJob]:
        """The latest `limit` jobs (of `query_key`, or of every key), newest start first."""

        def work(engine: Engine) -> list[SyncJob]:
            query = select(JOBS).order_by(JOBS.c.started_at.desc(), JOBS.c.job_id.desc())
            if query_key is not None:
                query = query.where(JOBS.c.query_key == query_key)
            with engine.connect() as connection:
                return [job_from_row(row) for row in connection.execute(query.limit(limit))]

        return await self._run("listing sync jobs", work) if limit > 0 else []

    # -- projects ---------------------------------------------------------------------------

    async def register_project(self, project: ProjectInfo) -> ProjectInfo:
        """Create the project, or return the stored one when its id exists (the stored model
        wins: the caller checks for an embedding mismatch).

        Raises:
            MetadataStoreError: when another project already uses the collection.
        """
        now = self._now()

        def work(engine: Engine) -> ProjectInfo:
            with writing(engine) as connection:
                connection.execute(
                    dialect_insert(connection, PROJECTS)
                    .values(project_values(project, now))
                    .on_conflict_do_nothing(index_elements=["project_id"])
                )
                query = select(PROJECTS).where(PROJECTS.c.project_id == project.project_id)
                return project_from_row(connection.execute(query).one())

        try:
            return await self._run("registering a project", work)
        except MetadataStoreError as exc:
            if isinstance(exc.__cause__, sa_exc.IntegrityError):
                raise MetadataStoreError(
                    f"collection {project.collection!r} already belongs to another project"
                ) from exc.__cause__
            raise

    async def get_project(self, project_id: str) -> ProjectInfo | None:
        def work(engine: Engine) -> ProjectInfo | None:
            query = select(PROJECTS).where(PROJECTS.c.project_id == project_id)
            with engine.connect() as connection:
                row = connection.execute(query).first()
            return project_from_row(row) if row is not None else None

        return await self._run("reading a project", work)

    async def set_project_model(self, project_id: str, model_id: str, dim: int) -> ProjectInfo:
        def work(engine: Engine) -> ProjectInfo:
            with writing(engine) as connection:
                connection.execute(
                    update(PROJECTS)
                    .where(PROJECTS.c.project_id == project_id)
                    .values(model_id=model_id, dim=dim)
                )
                query = select(PROJECTS).where(PROJECTS.c.project_id == project_id)
                row = connection.execute(query).first()
            if row is None:
                raise MetadataStoreError(f"no project {project_id!r}")
            return project_from_row(row)

        return await self._run("changing a project's model", work)

    async def list_projects(self) -> list[ProjectInfo]:
        """Every project, by id."""

        def work(engine: Engine) -> list[ProjectInfo]:
            query = select(PROJECTS).order_by(PROJECTS.c.project_id)
            with engine.connect() as connection:
                return [project_from_row(row) for row in connection.execute(query)]

        return await self._run("listing projects", work)

"""The saved query: a key, the PubMed term its syncs use, and what it brought to the corpus.

This module is the concept's home. A saved query is a key with a checkpoint or a sync job:
the jobs table records every sync's term, so a key's latest job says what a later sync of it
reuses (`SyncDelta.saved_term`). Here live the rules for keys (`new_query_key` to write
under, `read_key` to read by), the list of saved queries, the corpus overview, the records a
query holds, its checkpoint and audit trail, its pending PMIDs, and forgetting and pruning.
Syncing is `usecases.sync`; its jobs are `usecases.jobs`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from biomcp.domain.watermarks import WatermarkAudit, query_key_problem
from biomcp.ports.clock import Clock
from biomcp.ports.jobs import SyncJob
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.saved_queries import Checkpoint, ForgottenQuery, PendingPmid
from biomcp.ports.vectors import CollectionNotFoundError, VectorStore
from biomcp.usecases.errors import InvalidRequestError, NotFoundError
from biomcp.usecases.indexing import INDEX_LOCK
from biomcp.usecases.payloads import iso_utc, parse_iso_utc

__all__ = [
    "OVERVIEW_MAX_QUERIES",
    "RECENT_JOBS",
    "PrunedRecords",
    "SavedQueries",
    "SavedQuery",
    "SyncRequest",
    "corpus_overview",
    "new_query_key",
    "read_key",
    "records_of_query",
    "saved_queries",
]


#: How many of the latest sync jobs are read to find the saved queries without a checkpoint.
RECENT_JOBS = 500


@dataclass(frozen=True, slots=True)
class SavedQuery:
    """A saved query: its key, its checkpoint (None before a sync stored anything) and its
    latest sync job (None for a checkpoint set by hand; its `term` is what a sync reuses)."""

    query_key: str
    checkpoint: Checkpoint | None
    last_job: SyncJob | None


async def saved_queries(metadata: MetadataStore) -> list[SavedQuery]:
    """Every saved query, by key: each key with a checkpoint or one of the `RECENT_JOBS`
    latest sync jobs (a first sync that failed leaves a job and no checkpoint), with its
    latest job.

    Raises:
        MetadataStoreError: from the store.
    """
    checkpoints = {c.query_key: c for c in await metadata.list_checkpoints()}
    latest: dict[str, SyncJob] = {}
    for job in sorted(await metadata.list_jobs(limit=RECENT_JOBS), key=lambda j: j.started_at):
        latest[job.query_key] = job
    for key in checkpoints.keys() - latest.keys():  # synced before the latest jobs, or never
        jobs = await metadata.list_jobs(key, limit=1)
        if jobs:
            latest[key] = jobs[0]
    return [
        SavedQuery(key, checkpoints.get(key), latest.get(key))
        for key in sorted(checkpoints.keys() | latest.keys())
    ]


#: How many saved queries an overview lists (the first by key; `queries_total` counts all).
OVERVIEW_MAX_QUERIES = 200


async def corpus_overview(
    metadata: MetadataStore, vectors: VectorStore, collection: str
) -> dict[str, Any]:
    """What the corpus holds: its records and chunks, how many records have each full-text
    status, and every saved query (key, term, checkpoint, latest sync's status, records it
    holds, PMIDs pending, whether it keeps full text), at most `OVERVIEW_MAX_QUERIES` of them.

    Raises:
        MetadataStoreError, VectorStoreError: from the stores.
    """
    saved = await saved_queries(metadata)
    held = await metadata.query_record_counts()
    queries = []
    for query in saved[:OVERVIEW_MAX_QUERIES]:
        job, mark = query.last_job, query.checkpoint
        queries.append(
            {
                "query_key": query.query_key,
                "term": job.term if job else None,
                "last_edat": iso_utc(mark.last_edat) if mark else None,
                "last_sync": job.status if job else None,
                "records": held.get(query.query_key, 0),
                "pending_pmids": len(await metadata.pending_pmids(query.query_key)),
                "fulltext": bool(mark and mark.fulltext),
            }
        )
    chunks = await vectors.count(collection) if collection in await vectors.collections() else 0
    return {
        "records": await metadata.count_documents(),
        "chunks": chunks,
        "queries_total": len(saved),
        "fulltext": await metadata.fulltext_status_counts(),
        "queries": queries,
    }


async def records_of_query(
    metadata: MetadataStore,
    query_key: str,
    *,
    purpose: str,
    added_since: datetime | None = None,
) -> list[str]:
    """The PMIDs the saved query `query_key` holds (those it first recorded at or after
    `added_since`, when given: maybe none), for a caller that will `purpose` (a verb phrase
    for the error: "search within it").

    Raises:
        InvalidRequestError: an empty key; a key synced before its records were recorded (the
            rescan that fixes it is named).
        NotFoundError: no saved query `query_key` holds records (the keys that do are named).
    """
    key = query_key.strip()
    if not key:
        raise InvalidRequestError("query_key is empty: name a saved query, or leave it out")
    checkpoint = await metadata.get_checkpoint(key)
    if not checkpoint.records_tracked:
        raise InvalidRequestError(
            f"{key!r} was synced before bio-mcp recorded which query brought each record: "
            f"rescan it once (biomcp sync -k {key} --rescan) to {purpose}",
            details={"query_key": key},
        )
    pmids = await metadata.records_of(key, added_since=added_since)
    if not pmids:
        known = sorted(await metadata.query_record_counts())
        if key in known:  # it holds records, none of them added since `added_since`
            return pmids
        hint = (
            f"saved queries holding records: {', '.join(known[:20])}"
            if known
            else "sync a PubMed query first (pubmed_sync_delta)"
        )
        raise NotFoundError(
            f"no saved query {key!r} holds records; {hint}",
            details={"query_key": key, "saved_queries": known[:50]},
        )
    return pmids


@dataclass(frozen=True, slots=True)
class PrunedRecords:
    """What pruning found: `records` no saved query held, `deleted` of them from SQL (one a
    sync took meanwhile stays) and `chunks_deleted` from the vector store (0 on a dry run)."""

    records: int
    deleted: int
    chunks_deleted: int


class SavedQueries:
    """The saved queries: their keys, checkpoints, pending PMIDs and the records they hold,
    listed, overviewed, forgotten and pruned. Syncs move checkpoints forward only; a manual
    set may move one backward (to re-sync a period) and is written to the audit trail."""

    def __init__(
        self,
        metadata: MetadataStore,
        *,
        clock: Clock,
        vectors: Callable[[], VectorStore] | None = None,
        collection: str = "PubMedChunk",
        lock_timeout_s: float = 600.0,
    ) -> None:
        self._metadata = metadata
        self._clock = clock
        self._vectors = vectors  # opened only to delete a query's records
        self._collection = collection
        self._lock_timeout_s = lock_timeout_s

    async def every(self) -> list[SavedQuery]:
        """Every saved query, by key (`saved_queries`)."""
        return await saved_queries(self._metadata)

    async def overview(self) -> dict[str, Any]:
        """What the corpus holds and every saved query (`corpus_overview`).

        Raises:
            InvalidRequestError: no vector store was configured.
        """
        vectors = self._vector_store()
        return await corpus_overview(self._metadata, vectors(), self._collection)

    async def checkpoints(self) -> list[Checkpoint]:
        """Every saved query's checkpoint, by key."""
        found = await self._metadata.list_checkpoints()
        return sorted(found, key=lambda c: c.query_key)

    async def get(self, query_key: str) -> Checkpoint:
        key = read_key(query_key)
        return await self._metadata.get_checkpoint(key)

    async def holding(self, pmids: list[str]) -> dict[str, list[str]]:
        """For each of `pmids`, the saved queries that hold it (a PMID none holds is absent)."""
        return await self._metadata.queries_holding(pmids)

    async def unheld_count(self) -> int:
        """How many stored records no saved query holds (`prune` deletes them)."""
        return len(await self._metadata.records_held_by_none())

    async def pending(self, query_key: str) -> list[PendingPmid]:
        """The PMIDs a sync of `query_key` found and EFetch has not returned yet (every sync of
        the key asks for them again), the longest pending first."""
        return await self._metadata.pending_pmids(read_key(query_key))

    async def record_counts(self) -> dict[str, int]:
        """How many records each saved query holds (a key holding none is absent; a key with
        `records_tracked` false may hold more than it counts)."""
        return await self._metadata.query_record_counts()

    async def get_payload(self, query_key: str) -> dict[str, Any]:
        checkpoint = await self.get(query_key)
        return {"query_key": checkpoint.query_key, "last_edat": iso_utc(checkpoint.last_edat)}

    async def set(
        self,
        query_key: str,
        last_edat: str | datetime,
        *,
        actor: str = "manual",
        reason: str = "manual set",
    ) -> WatermarkAudit:
        """Move the watermark of `query_key` to `last_edat` (any direction), audited.

        Raises:
            InvalidRequestError: a key that is empty, too long or not printable
                (`query_key_problem`), or a timestamp that is not ISO 8601 or lies in the future.
        """
        key = new_query_key(query_key)
        when = (
            parse_iso_utc(last_edat, field="last_edat") if isinstance(last_edat, str) else last_edat
        )
        if when.tzinfo is None:
            raise InvalidRequestError("last_edat must carry a timezone (UTC)")
        now = self._clock.now()
        if when > now:
            raise InvalidRequestError(
                f"last_edat {iso_utc(when)} is in the future (now {iso_utc(now)}): a watermark "
                "past now would skip every record published until then"
            )
        return await self._metadata.set_checkpoint(key, when, actor=actor, reason=reason, at=now)

    async def audit(self, query_key: str) -> list[WatermarkAudit]:
        return await self._metadata.checkpoint_audit(read_key(query_key))

    async def forget(self, query_key: str, *, records: bool = False) -> ForgottenQuery:
        """Forget the saved query `query_key`: its checkpoint, pending PMIDs, sync jobs, export
        mark and the record of which records it holds go, so `sync --all` and the overview no longer
        list it; its audit trail stays. The records it brought stay in the corpus (every key
        shares it) unless `records`: then those no other saved query holds are deleted, from
        the vector store and then from SQL. Taken under the key's sync lock, so a running sync
        of it is never cut short.

        Raises:
            InvalidRequestError: an empty key; `records` while another saved query's records
                are not all recorded (synced before bio-mcp recorded them: it may hold some
                of this key's without saying so).
            LockTimeoutError: a sync of the key is running (or, with `records`, no sync
                finished writing chunks within the lock timeout).
        """
        key = read_key(query_key)
        async with self._metadata.query_lock(key, timeout_s=0):
            if not records:
                return await self._metadata.forget_query(key)
            return await self._forget_with_records(key)

    async def _forget_with_records(self, key: str) -> ForgottenQuery:
        vectors = self._vector_store()
        await self._refuse_untracked(
            f"cannot tell which records only {key!r} holds",
            f"or forget {key!r} without deleting its records",
            but=key,
        )
        # Under the index lock no sync writes chunks: none can index a record while its
        # chunks go. Chunks first: a failure before SQL's transaction leaves every record
        # stored and the key saved, and forgetting it again finishes the job (a record left
        # without chunks is indexed again by the next sync that fetches it).
        async with self._metadata.query_lock(INDEX_LOCK, timeout_s=self._lock_timeout_s):
            doomed = await self._metadata.records_held_only_by(key)
            chunks = await self._delete_chunks(vectors(), doomed)
            gone = await self._metadata.forget_query(key, delete_records=doomed)
        return replace(gone, chunks_deleted=chunks)

    async def prune(self, *, dry_run: bool = False) -> PrunedRecords:
        """Delete the stored records no saved query holds (their key was forgotten without
        `records`), from the vector store and then from SQL; with `dry_run`, only count them.

        Raises:
            InvalidRequestError: a saved query's records are not all recorded (synced before
                bio-mcp recorded them: its records would look held by none); no vector store.
            LockTimeoutError: no sync finished writing chunks within the lock timeout.
        """
        vectors = None if dry_run else self._vector_store()
        await self._refuse_untracked("cannot tell which records no saved query holds")
        if vectors is None:
            return PrunedRecords(len(await self._metadata.records_held_by_none()), 0, 0)
        # As forgetting with records: under the index lock, chunks first, then SQL, where a
        # record a sync took in the meantime stays (its chunks come back at a later sync).
        async with self._metadata.query_lock(INDEX_LOCK, timeout_s=self._lock_timeout_s):
            doomed = await self._metadata.records_held_by_none()
            chunks = await self._delete_chunks(vectors(), doomed)
            deleted = await self._metadata.delete_unheld(doomed)
        return PrunedRecords(len(doomed), deleted, chunks)

    async def _refuse_untracked(self, problem: str, other_way: str = "", *, but: str = "") -> None:
        """Refuse to delete records while a saved query (other than `but`) was synced before
        bio-mcp recorded which query brought each record: it may hold some without saying so.

        Raises:
            InvalidRequestError: naming those saved queries and the rescan.
        """
        marks = await self._metadata.list_checkpoints()
        untracked = sorted(
            c.query_key for c in marks if not c.records_tracked and c.query_key != but
        )
        if untracked:
            shown = ", ".join(untracked[:10])
            raise InvalidRequestError(
                f"{problem}: the saved queries {shown} were synced before bio-mcp recorded "
                "which query brought each record, and may hold some of them. Rescan them "
                f"first (biomcp sync -k KEY --rescan){', ' + other_way if other_way else ''}",
                details={"untracked_queries": untracked[:50]},
            )

    def _vector_store(self) -> Callable[[], VectorStore]:
        """The vector store's provider (not opened yet).

        Raises:
            InvalidRequestError: none was configured.
        """
        if self._vectors is None:
            raise InvalidRequestError("deleting records needs the vector store: none configured")
        return self._vectors

    async def _delete_chunks(self, vectors: VectorStore, pmids: list[str]) -> int:
        if not pmids:
            return 0
        try:
            return await vectors.delete_documents(self._collection, [f"pmid:{p}" for p in pmids])
        except CollectionNotFoundError:  # nothing was ever indexed
            return 0


@dataclass(frozen=True, slots=True)
class SyncRequest:
    """A sync's arguments, checked once (`check`): the key to write under, the term, the
    overlap in days, and whether the key keeps full text."""

    query_key: str
    term: str
    overlap_days: int = 5
    #: Keep the PMC full text of the key's records from now on (True), stop (False), or do
    #: as the key's last choice (None).
    fulltext: bool | None = None

    @classmethod
    def check(
        cls, query_key: str, term: str, overlap_days: int = 5, *, fulltext: bool | None = None
    ) -> SyncRequest:
        """The key and term stripped, and checked.

        Raises:
            InvalidRequestError: a key that is empty, too long or not printable
                (`query_key_problem`), an empty term, or a negative overlap.
        """
        key, text = new_query_key(query_key), term.strip()
        if not text:
            raise InvalidRequestError("term is empty: give a PubMed query")
        if overlap_days < 0:
            raise InvalidRequestError(f"overlap_days must be >= 0, got {overlap_days}")
        return cls(key, text, overlap_days, fulltext)


def read_key(query_key: str) -> str:
    """A key to read by: any non-empty key, so keys stored before the printable rule still
    answer."""
    key = query_key.strip()
    if not key:
        raise InvalidRequestError("query_key is empty: name the saved query, e.g. glp1_v1")
    return key


def new_query_key(query_key: str) -> str:
    """A key to write under (a watermark set, a sync): stripped, and within the domain's rule.

    Raises:
        InvalidRequestError: the key is empty, too long or has a non-printable character.
    """
    key = query_key.strip()
    problem = query_key_problem(key)
    if problem is not None:
        raise InvalidRequestError(problem, details={"field": "query_key"})
    return key

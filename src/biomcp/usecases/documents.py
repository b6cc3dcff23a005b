"""GetDocument and Checkpoints: reading documents and moving watermarks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from biomcp.domain.watermarks import WatermarkAudit, query_key_problem
from biomcp.ports.clock import Clock
from biomcp.ports.metadata import Checkpoint, ForgottenQuery, MetadataStore, PendingPmid
from biomcp.ports.vectors import CollectionNotFoundError, VectorStore
from biomcp.usecases.errors import InvalidRequestError, NotFoundError
from biomcp.usecases.payloads import document_payload, iso_utc, parse_doc_id, parse_iso_utc

__all__ = ["INDEX_LOCK", "Checkpoints", "GetDocument", "PrunedRecords", "new_query_key"]

#: The lock every sync holds while it writes chunks (query keys are user names: this one
#: cannot collide with a saved query's key in practice). Deleting a query's records takes it
#: too, so no sync writes the chunks of a record while they are deleted.
INDEX_LOCK = "__biomcp_index__"


@dataclass(frozen=True, slots=True)
class PrunedRecords:
    """What pruning found: `records` no saved query held, `deleted` of them from SQL (one a
    sync took meanwhile stays) and `chunks_deleted` from the vector store (0 on a dry run)."""

    records: int
    deleted: int
    chunks_deleted: int


class GetDocument:
    """`rag.get` and `resource://pubmed/paper/{pmid}`: one payload for both."""

    def __init__(self, metadata: MetadataStore) -> None:
        self._metadata = metadata

    async def run(self, doc_id: str) -> dict[str, Any]:
        """The stored document `doc_id` (`pmid:<digits>` or bare digits).

        Raises:
            InvalidRequestError: a malformed id.
            NotFoundError: the PMID is not in the corpus.
        """
        pmid = parse_doc_id(doc_id)
        doc = await self._metadata.get_document(pmid)
        if doc is None:
            raise NotFoundError(
                f"pmid:{pmid} is not in the corpus: sync a query that covers it "
                "(pubmed_sync_delta), or read it live from PubMed",
                details={"doc_id": f"pmid:{pmid}"},
            )
        return document_payload(doc)


class Checkpoints:
    """The watermarks of saved queries. Syncs move them forward only; a manual set may move
    one backward (to re-sync a period) and is written to the audit trail."""

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

    async def get(self, query_key: str) -> Checkpoint:
        key = _key(query_key)
        return await self._metadata.get_checkpoint(key)

    async def pending(self, query_key: str) -> list[PendingPmid]:
        """The PMIDs a sync of `query_key` found and EFetch has not returned yet (every sync of
        the key asks for them again), the longest pending first."""
        return await self._metadata.pending_pmids(_key(query_key))

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
        return await self._metadata.checkpoint_audit(_key(query_key))

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
        key = _key(query_key)
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


def _key(query_key: str) -> str:
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

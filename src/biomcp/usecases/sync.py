"""SyncDelta: one incremental sync of a saved PubMed query (DESIGN.md, "one sync").

1. Take the query key's lock (two syncs of one key never interleave; syncs of different keys
   run together, and serialize only while writing chunks, step 5).
2. Window = [last EDAT - overlap, today]; with no checkpoint, `initial_days` back (None or 0:
   the whole history). When the term differs from the one the key was last synced with
   (`changed_term`), the window is the key's whole history instead (`Checkpoint.covers_from`):
   continuing from a checkpoint reached with another term would never fetch the new term's
   older records. The PMIDs pending for the earlier term that the new one does not find are
   pending no more (`_drop_pending`). A `rescan` reads that history again too.
3. Enumerate every PMID of the window (the client bisects past the 9,999 cap), and add the
   key's pending PMIDs (found by an earlier sync, not returned by its EFetch) and the records
   PubMed revised since the last sync (`follow_revisions`): the PMIDs matching the term whose
   modification date (`mdat`, LR) falls in [last scan - overlap, today]. An EDAT window sees a
   record only in its first days, before MEDLINE indexing adds its MeSH terms and publication
   types (weeks to months later), and before corrections; without this a stored record would
   keep its unindexed copy (its design and tier read without MeSH), and a query on indexing
   fields ([mh], [pt], [majr]) would never see records that match only once indexed. The
   ESearch is limited to the history the key's syncs cover (`within_history`): a key first
   synced `initial_days` back, or from a watermark an operator set, keeps to that history. They
   flow through steps 4-8 with the window's records (a revised record gets version + 1; an
   unchanged one is skipped); a first sync has no last scan and needs none.
4. Fetch in batches; classify, score and hash each record; upsert the batch in one transaction
   (insert / update with version + 1 / skip), which also records that the key holds each
   record (`query_records`: what `biomcp checkpoint delete --records` deletes with it).
5. Chunk the documents whose indexed version is behind, embed the chunk texts, upsert the
   chunks by their stable uuid, delete the chunks a new version no longer has, and record the
   indexed version. A replay of an unchanged window finds nothing behind: no embedding call
   and no vector write. Steps 4 and 5 are a pipeline of three stages, each on its own batch
   (`_pipeline`): fetch + store + chunk, embed, then write under the index lock (which reads
   what is behind again, so the chunks prepared outside it are used only for the version
   still behind).
6. Re-check the stored PMIDs outside the window for retractions since their sync (by PMID,
   one ESearch per batch, or against every retracted publication PubMed lists, whichever
   takes fewer requests: `usecases.retractions`), and re-fetch, store and index those PubMed
   now lists as retracted, so their flag and notice are current. A failed re-check is a
   warning: it neither fails the sync nor holds the checkpoint (the next sync re-checks again).
   Then bring up to date the stored scores whose recency the calendar moved
   (`usecases.rescoring`: a score counted in an earlier year, in SQL and on the chunks of its
   document, without a new version); a failure there is a warning too.
7. Settle the pending PMIDs (`_settle_pending`): a PMID ESearch found and EFetch did not
   return (NCBI's answers now and then lag for a record in flux) is recorded as pending, with
   a warning, and every later sync asks for it again until it arrives; one that arrived and
   was indexed is pending no more. Holding the checkpoint for it instead would make every
   later sync fetch a window that only grows, for a record that may take weeks to appear.
   Past `max_pending` per key the checkpoint is held for the newly missed instead. A pending
   PMID missed again that ESearch no longer finds either was removed from PubMed: it is
   pending no more (`usecases.pending`).
8. Only when every record of the window is stored and indexed (or pending), advance the
   checkpoint (monotonic) to the largest EDAT among them. A failure anywhere leaves the
   checkpoint where it was, and the next run redoes what is missing (documents stay "behind"
   until indexed).
9. Record the job (running, then succeeded or failed) and return the report.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime

from biomcp.domain.chunking import ChunkingConfig
from biomcp.domain.design import classify_design
from biomcp.domain.evidence import classify_evidence
from biomcp.domain.quality import QualityConfig, score_quality
from biomcp.domain.records import PubMedRecord
from biomcp.domain.versioning import content_hash
from biomcp.domain.watermarks import reads_history, window_start
from biomcp.ports.clock import Clock
from biomcp.ports.embeddings import Embedder
from biomcp.ports.entrez import EntrezClient, EntrezError, FetchResult
from biomcp.ports.metadata import (
    RECENT_JOBS,
    Checkpoint,
    DocumentUpsert,
    MetadataStore,
    PendingPmid,
    StoredDocument,
    SyncJob,
)
from biomcp.ports.vectors import VectorStore
from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.indexing import EMBED_BATCH, INDEX_LOCK, ChunkIndexer, PreparedChunks
from biomcp.usecases.pending import sample, settle_pending
from biomcp.usecases.rescoring import rescore_stale
from biomcp.usecases.retractions import RECHECK_BATCH, find_retracted, stored_pmids
from biomcp.usecases.saved_queries import new_query_key
from biomcp.usecases.sync_report import ProgressCallback, SyncProgress, SyncReport, new_job_id
from biomcp.usecases.sync_terms import (
    WindowBasis,
    changed_term,
    term_changed_warning,
    term_warning,
    within_history,
)

__all__ = [
    "ProgressCallback",
    "SyncConfig",
    "SyncDelta",
    "SyncProgress",
    "SyncReport",
    "WindowBasis",
    "changed_term",
    "derive_document",
    "new_job_id",
    "within_history",
]

#: How many PMIDs a query key keeps pending at most (see step 7 of the module docstring).
MAX_PENDING = 1_000

#: The earliest EDAT a whole-history window asks for (PubMed's oldest records are from 1781).
HISTORY_START = date(1700, 1, 1)


@dataclass(frozen=True, slots=True)
class SyncConfig:
    """How syncs run. `chunking` None follows the embedder's window (`chunking_for_window`)."""

    collection: str = "PubMedChunk"
    initial_days: int | None = None
    batch_size: int = 500
    embed_batch_size: int = EMBED_BATCH
    lock_timeout_s: float = 600.0
    chunking: ChunkingConfig | None = None
    quality: QualityConfig = field(default_factory=QualityConfig)
    recheck_retractions: bool = True
    #: Also fetch the records of the term PubMed revised since the last sync (step 3).
    follow_revisions: bool = True
    recheck_batch_size: int = RECHECK_BATCH
    max_pending: int = MAX_PENDING

    def __post_init__(self) -> None:
        if self.batch_size < 1 or self.embed_batch_size < 1 or self.recheck_batch_size < 1:
            raise ValueError("batch sizes must be >= 1")
        if self.max_pending < 0:
            raise ValueError("max_pending must be >= 0")
        if self.initial_days is not None and self.initial_days < 0:
            raise ValueError("initial_days must be >= 0")


async def _notify(progress: ProgressCallback | None, run: _Run) -> None:
    if progress is None:
        return
    result = progress(run.progress())
    if inspect.isawaitable(result):
        await result


@dataclass(slots=True)
class _Run:
    """Mutable tallies of one run."""

    query_key: str
    started: float
    total: int = 0
    inserted: int = 0
    updated: int = 0
    skipped: int = 0
    processed: int = 0
    new_to_query: int = 0
    chunks_written: int = 0
    chunks_deleted: int = 0
    texts_embedded: int = 0
    max_edat_seen: datetime | None = None
    indexed_max_edat: datetime | None = None
    complete: bool = True
    warnings: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    rechecked: int = 0
    newly_retracted: list[str] = field(default_factory=list)
    #: PMIDs asked for and not returned by EFetch (nor reported deleted or a book).
    missing: list[str] = field(default_factory=list)
    #: PMIDs done with: stored and indexed, or reported deleted or a book.
    settled: set[str] = field(default_factory=set)
    pending: tuple[str, ...] = ()
    pending_arrived: tuple[str, ...] = ()
    pending_gone: tuple[str, ...] = ()
    rescored: int = 0
    #: Whether the records stored are the key's (its window's), recorded as it holding them.
    holds: bool = True

    def timed(self, stage: str, since: float) -> None:
        self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - since

    def progress(self) -> SyncProgress:
        return SyncProgress(
            self.query_key,
            self.total,
            self.processed,
            self.texts_embedded,
            time.perf_counter() - self.started,
            self.inserted,
            self.updated,
            self.skipped,
            self.max_edat_seen,
        )


@dataclass(frozen=True, slots=True)
class _Batch:
    """A fetched batch, stored, with the chunks (and, once embedded, the vectors) of its
    documents that were behind."""

    fetched: FetchResult
    prepared: PreparedChunks


async def _together(*stages: Awaitable[None]) -> None:
    """Run `stages` side by side until all end. The first to fail cancels the others and its
    error is raised once they have stopped; cancelling this cancels them all."""
    tasks = [asyncio.ensure_future(stage) for stage in stages]
    done: set[asyncio.Future[None]] = set()
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for task in tasks:
        if task in done and not task.cancelled() and (error := task.exception()) is not None:
            raise error


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


class SyncDelta:
    """Runs syncs. One instance serves every query key; runs of different keys may overlap."""

    def __init__(
        self,
        entrez: EntrezClient,
        metadata: MetadataStore,
        vectors: VectorStore,
        embedder: Embedder,
        *,
        clock: Clock,
        config: SyncConfig | None = None,
    ) -> None:
        self._entrez = entrez
        self._metadata = metadata
        self._clock = clock
        self.config = config or SyncConfig()
        self.indexer = ChunkIndexer(
            vectors,
            embedder,
            collection=self.config.collection,
            chunking=self.config.chunking,
            embed_batch_size=self.config.embed_batch_size,
        )

    @property
    def chunking(self) -> ChunkingConfig:
        """The chunk budget in force: the configured one, else the embedder's window's."""
        return self.indexer.chunking

    async def run(
        self,
        query_key: str,
        term: str | None,
        overlap_days: int = 5,
        *,
        progress: ProgressCallback | None = None,
        job_id: str | None = None,
        rescan: bool = False,
        owner: str | None = None,
    ) -> SyncReport:
        """Sync `term` under `query_key` (see the module docstring); `term` None syncs the
        key's saved term (`saved_term`). `job_id` names the job (default: one made from the
        start time); `owner` is recorded with it (`SyncJob.owner`). `rescan` reads the key's
        whole history (`Checkpoint.covers_from`) again instead of continuing from its
        checkpoint: records missed or dropped since come back, and a key synced before its
        records were recorded has them all recorded.

        Raises:
            InvalidRequestError: an empty key or term, a negative overlap, or no term for a
                key never synced.
            LockTimeoutError: another sync of the key held the lock past the configured wait
                (it names the holder).
            EntrezError, MetadataStoreError, VectorStoreError, EmbeddingError: a step failed;
                the checkpoint did not move and the job is recorded as failed.
        """
        if term is None:
            term = await self.saved_term(query_key)
        query_key, term = self.check_arguments(query_key, term, overlap_days)
        async with self._metadata.query_lock(query_key, timeout_s=self.config.lock_timeout_s):
            await self._interrupt_orphans(query_key)
            started_at = self._clock.now()
            job_id = job_id or new_job_id(started_at)
            job = SyncJob(job_id, query_key, term, started_at, None, "running", owner=owner)
            await self._metadata.record_job(job)
            try:
                report = await self._sync(
                    job_id, query_key, term, overlap_days, progress, rescan=rescan
                )
            except BaseException as exc:
                # A cancelled sync (a server shutting down) stopped; it did not fail.
                cancelled = isinstance(exc, asyncio.CancelledError)
                failed = SyncJob(
                    job_id,
                    query_key,
                    term,
                    started_at,
                    self._clock.now(),
                    "interrupted" if cancelled else "failed",
                    error=f"{type(exc).__name__}: {exc}"[:2000],
                    owner=owner,
                )
                await asyncio.shield(self._record_quietly(failed))
                raise
            await self._metadata.record_job(
                SyncJob(
                    job_id,
                    query_key,
                    term,
                    started_at,
                    self._clock.now(),
                    "succeeded",
                    inserted=report.inserted,
                    updated=report.updated,
                    skipped=report.skipped,
                    pmids_processed=report.pmids_processed,
                    max_edat_seen=report.max_edat_seen,
                    warnings=report.warnings,
                    owner=owner,
                )
            )
            return report

    async def saved_term(self, query_key: str) -> str:
        """The term `query_key` was last synced with (its latest sync job's, whatever became
        of it): a saved query is its key and that term.

        Raises:
            InvalidRequestError: a malformed key, or a key never synced (no term to reuse).
        """
        query_key = new_query_key(query_key)
        jobs = await self._metadata.list_jobs(query_key, limit=1)
        if not jobs or not jobs[0].term.strip():
            raise InvalidRequestError(
                f"query key {query_key!r} has never been synced: give its PubMed term the "
                "first time (later syncs reuse it)",
                details={"field": "term"},
            )
        return jobs[0].term

    @staticmethod
    def check_arguments(query_key: str, term: str, overlap_days: int) -> tuple[str, str]:
        """The key and term, stripped.

        Raises:
            InvalidRequestError: a key that is empty, too long or not printable
                (`query_key_problem`), an empty term, or a negative overlap.
        """
        query_key, term = new_query_key(query_key), term.strip()
        if not term:
            raise InvalidRequestError("term is empty: give a PubMed query")
        if overlap_days < 0:
            raise InvalidRequestError(f"overlap_days must be >= 0, got {overlap_days}")
        return query_key, term

    async def _interrupt_orphans(self, query_key: str) -> None:
        """Under the key's lock no other sync of the key runs: a job of the key still marked
        running belongs to a process that died (killed, crashed) and is `interrupted`."""
        for job in await self._metadata.list_jobs(query_key, limit=RECENT_JOBS):
            if job.status == "running":
                await self._metadata.record_job(
                    replace(
                        job,
                        status="interrupted",
                        finished_at=self._clock.now(),
                        error="the process running this sync stopped before it finished",
                    )
                )

    async def _record_quietly(self, job: SyncJob) -> None:
        # The original failure is what the caller must see.
        with contextlib.suppress(Exception):
            await self._metadata.record_job(job)

    async def _sync(
        self,
        job_id: str,
        query_key: str,
        term: str,
        overlap_days: int,
        progress: ProgressCallback | None,
        *,
        rescan: bool = False,
    ) -> SyncReport:
        run = _Run(query_key, time.perf_counter())
        checkpoint = await self._metadata.get_checkpoint(query_key)
        now = self._clock.now()
        previous_term = changed_term(checkpoint, term)
        scanned = checkpoint.last_scan_at is not None
        if previous_term is not None:
            # The checkpoint belongs to another term: read the key's history again for this one.
            start, basis = checkpoint.covers_from, WindowBasis.TERM_CHANGED
            run.warnings.append(term_changed_warning(previous_term, term, start))
        elif rescan and scanned:
            start, basis = checkpoint.covers_from, WindowBasis.RESCAN
        else:
            start = window_start(checkpoint.last_edat, overlap_days, now, self.config.initial_days)
            basis = (
                WindowBasis.CHECKPOINT
                if checkpoint.last_edat is not None
                else WindowBasis.INITIAL_DAYS
                if start is not None
                else WindowBasis.WHOLE_HISTORY
            )
        mindate = start.astimezone(UTC).date() if start is not None else HISTORY_START
        maxdate = now.astimezone(UTC).date()

        began = time.perf_counter()
        found = await self._entrez.esearch_delta(term, mindate, maxdate, "edat")
        run.warnings.extend(term_warning(w) for w in found.warnings)
        if not found.complete:
            run.complete = False
            run.warnings.append(
                "the window could not be enumerated completely; the checkpoint stays where it "
                "was (narrow the query to sync the rest)"
            )
        # A window over the key's whole history holds every revised record already.
        revised = (
            await self._revisions(run, term, checkpoint, overlap_days, maxdate)
            if basis not in (WindowBasis.TERM_CHANGED, WindowBasis.RESCAN)
            else ()
        )
        pending = await self._metadata.pending_pmids(query_key)
        run.timed("search", began)
        window = set(found.pmids)
        if basis is WindowBasis.TERM_CHANGED:
            pending = await self._drop_pending(run, pending, window, now)
        extra = [p for p in revised if p not in window]
        window.update(extra)
        pmids = [*found.pmids, *extra, *(p.pmid for p in pending if p.pmid not in window)]
        run.total = len(pmids)
        await _notify(progress, run)

        size = self.config.batch_size
        batches = [pmids[o : o + size] for o in range(0, len(pmids), size)]
        await self._pipeline(run, batches, progress)
        await self._settle_pending(run, pending)

        if self.config.recheck_retractions:
            await self._recheck_retractions(run, frozenset(pmids))
        await self._rescore(run)

        final = checkpoint.last_edat
        advanced = False
        if run.complete:
            # An EDAT past now (clock skew, or NCBI's Eastern-time stamps read as UTC) would
            # make the next window skip records: the watermark never passes the scan time.
            candidate = run.indexed_max_edat
            if candidate is not None and candidate > now:
                candidate = now
            moved = await self._metadata.advance_checkpoint(
                query_key,
                candidate,
                now,
                window_start=start,
                term=term,
                read_history=reads_history(checkpoint.covers_from, scanned, start),
            )
            advanced = moved.last_edat != checkpoint.last_edat
            final = moved.last_edat
        return SyncReport(
            job_id=job_id,
            query_key=query_key,
            inserted=run.inserted,
            updated=run.updated,
            skipped=run.skipped,
            pmids_processed=run.processed,
            max_edat_seen=run.max_edat_seen,
            warnings=tuple(run.warnings),
            pmids_found=len(found.pmids),
            chunks_written=run.chunks_written,
            chunks_deleted=run.chunks_deleted,
            texts_embedded=run.texts_embedded,
            checkpoint=final,
            checkpoint_advanced=advanced,
            window_start=start,
            timings={k: round(v, 4) for k, v in run.timings.items()},
            retractions_rechecked=run.rechecked,
            newly_retracted=tuple(run.newly_retracted),
            pending=run.pending,
            pending_arrived=run.pending_arrived,
            pending_gone=run.pending_gone,
            term=term,
            rescored=run.rescored,
            revisions_found=len(extra),
            window_basis=basis.value,
            previous_term=previous_term,
            new_to_query=run.new_to_query,
        )

    async def _drop_pending(
        self, run: _Run, pending: Sequence[PendingPmid], window: set[str], now: datetime
    ) -> list[PendingPmid]:
        """A sync with a changed term: the PMIDs pending for the earlier term that the new
        term's window does not find are pending no more (the new term's own are in its
        window). Returns those still pending."""
        dropped = [p.pmid for p in pending if p.pmid not in window]
        if dropped:
            await self._metadata.settle_pending(run.query_key, missed=[], arrived=dropped, at=now)
            run.warnings.append(
                f"{len(dropped)} PMIDs pending for the earlier term ({sample(dropped)}) are "
                "not found by this one: they are pending no more"
            )
        return [p for p in pending if p.pmid in window]

    async def _settle_pending(self, run: _Run, pending: Sequence[PendingPmid]) -> None:
        """Step 7 of the module docstring (`usecases.pending`)."""
        settled = await settle_pending(
            self._metadata,
            self._entrez,
            run.query_key,
            pending,
            missing=run.missing,
            settled=run.settled,
            limit=self.config.max_pending,
            batch=self.config.recheck_batch_size,
            at=self._clock.now(),
        )
        run.warnings.extend(settled.warnings)
        if settled.hold_checkpoint:
            run.complete = False
        run.pending = settled.pending
        run.pending_arrived = settled.arrived
        run.pending_gone = settled.gone

    async def _recheck_retractions(self, run: _Run, window: frozenset[str]) -> None:
        """Re-check the stored PMIDs outside the window (those in it were just fetched) for
        retractions; re-fetch, store and index the ones whose stored copy is not flagged (or
        not indexed) yet. Any failure becomes a warning: the sync's own records are stored and
        indexed already, and the next sync re-checks again."""
        began = time.perf_counter()
        try:
            pmids = await stored_pmids(self._metadata, exclude=window)
            if not pmids:
                return
            check = await find_retracted(
                self._entrez,
                pmids,
                today=self._clock.now().date(),
                batch=self.config.recheck_batch_size,
            )
            run.rechecked = check.checked
            stored = await self._metadata.get_documents(list(check.retracted))
            stale = [
                pmid
                for pmid, doc in stored.items()
                if not doc.record.is_retracted or doc.indexed_version < doc.version
            ]
            if not stale:
                return
            fetched = await self._entrez.efetch(sorted(stale))
            # A scratch tally: the re-fetched records are not the window's, so they neither
            # hold nor move the checkpoint, nor become the key's records.
            scratch = _Run(run.query_key, run.started, holds=False)
            await self._batch(scratch, fetched)
            run.chunks_written += scratch.chunks_written
            run.chunks_deleted += scratch.chunks_deleted
            run.texts_embedded += scratch.texts_embedded
            run.warnings.extend(scratch.warnings)
            if scratch.missing:
                run.warnings.append(
                    f"{len(scratch.missing)} records PubMed lists as retracted were not "
                    f"returned by EFetch (e.g. {sample(scratch.missing)}); the next sync "
                    "re-checks them"
                )
            # What the store holds now (an older copy replayed would not have replaced it).
            now_stored = await self._metadata.get_documents(stale)
            run.newly_retracted.extend(
                pmid
                for pmid in sorted(now_stored)
                if now_stored[pmid].record.is_retracted and not stored[pmid].record.is_retracted
            )
            if run.newly_retracted:
                shown = ", ".join(f"pmid:{p}" for p in run.newly_retracted[:20])
                run.warnings.append(
                    f"{len(run.newly_retracted)} stored records were retracted since their last "
                    f"sync and are now flagged (left out of rag_search by default): {shown} "
                    f"({check.checked} stored PMIDs re-checked)"
                )
        except Exception as exc:  # a cancellation (BaseException) still stops the sync
            reason = f"{type(exc).__name__}: {exc}"[:300]
            run.warnings.append(
                f"the retraction re-check failed ({reason}); the next sync re-checks again"
            )
        finally:
            run.timed("retractions", began)

    async def _revisions(
        self, run: _Run, term: str, checkpoint: Checkpoint, overlap_days: int, today: date
    ) -> tuple[str, ...]:
        """The PMIDs of `term` PubMed revised since the key's last scan, less the overlap
        (step 3 of the module docstring); none on a first sync or with `follow_revisions`
        off. An ESearch that fails is a warning and holds the checkpoint (and so the last
        scan: the next sync asks for the same days again); the window's own records are synced
        either way. An enumeration cut by the ESearch cap is a warning only."""
        if not self.config.follow_revisions or checkpoint.last_scan_at is None:
            return ()
        # The last scan less the overlap, as the EDAT window's start is computed (an overlap
        # reaching before year 1 is the whole history).
        since = window_start(checkpoint.last_scan_at, overlap_days, checkpoint.last_scan_at, None)
        start = min(since.astimezone(UTC).date(), today) if since is not None else HISTORY_START
        try:
            found = await self._entrez.esearch_delta(
                within_history(term, checkpoint.covers_from), start, today, "mdat"
            )
        except EntrezError as exc:
            run.complete = False
            reason = f"{type(exc).__name__}: {exc}"[:300]
            run.warnings.append(
                f"could not ask PubMed for the records revised since {start.isoformat()} "
                f"({reason}); the checkpoint stays where it was and the next sync asks again"
            )
            return ()
        if not found.complete:
            # A day with more revised records than ESearch returns (PubMed's yearly MeSH
            # update touches most of MEDLINE): asking again would meet the same cap, and
            # holding the checkpoint for it would grow every later window. Those found are
            # fetched; the warning says how to refresh the rest.
            capped = "; ".join(str(w) for w in found.warnings if w.source == "client")
            run.warnings.append(
                f"PubMed revised more records of this query since {start.isoformat()} than "
                f"ESearch can list ({capped or 'a day over the cap'}); the "
                f"{len(found.pmids)} listed are synced. To refresh every record, move the "
                "checkpoint back (corpus_checkpoint_set / biomcp checkpoint set) and sync again"
            )
        return found.pmids

    async def _rescore(self, run: _Run) -> None:
        """Bring the stored scores counted in an earlier calendar year up to date (step 6 of
        the module docstring). A failure is a warning: the next sync tries again."""
        began = time.perf_counter()
        try:
            outcome = await rescore_stale(
                self._metadata,
                self.indexer,
                INDEX_LOCK,
                today=self._clock.now().date(),
                config=self.config.quality,
                lock_timeout_s=self.config.lock_timeout_s,
            )
            run.rescored = outcome.rescored
            run.chunks_written += outcome.chunks_updated
        except Exception as exc:  # a cancellation (BaseException) still stops the sync
            reason = f"{type(exc).__name__}: {exc}"[:300]
            run.warnings.append(
                f"updating the recency of stored quality scores failed ({reason}); the next "
                "sync tries again"
            )
        finally:
            run.timed("rescore", began)

    async def _fetch(self, run: _Run, pmids: Sequence[str]) -> FetchResult:
        began = time.perf_counter()
        fetched = await self._entrez.efetch(pmids)
        run.timed("fetch", began)  # overlaps the previous batch's indexing: not on the path
        return fetched

    async def _pipeline(
        self, run: _Run, batches: Sequence[Sequence[str]], progress: ProgressCallback | None
    ) -> None:
        """The batches through three stages that run side by side, each on its own batch, in
        order (see `_store`, `_embed_ahead` and `_write`): while batch k is written under the
        index lock, batch k+1 is embedded and batch k+2 fetched, derived and stored. Embedding
        is the slow stage; the others run beside it. Stages hand batches on through queues of
        one, so at most a few batches are in flight. The first stage that fails stops the
        others (nothing half-written: a stored batch not yet written is indexed by the next
        sync) and its error is raised; a cancellation stops all three."""
        stored: asyncio.Queue[_Batch | None] = asyncio.Queue(maxsize=1)
        embedded: asyncio.Queue[_Batch | None] = asyncio.Queue(maxsize=1)

        async def store() -> None:
            # EFetch of the next batch runs while this one is derived and stored. A fetch
            # writes nothing, so a prefetch dropped by an error or a cancellation loses nothing.
            ahead: asyncio.Task[FetchResult] | None = None
            try:
                for index, pmids in enumerate(batches):
                    fetching = ahead or asyncio.ensure_future(self._fetch(run, pmids))
                    fetched = await fetching
                    ahead = (
                        asyncio.ensure_future(self._fetch(run, batches[index + 1]))
                        if index + 1 < len(batches)
                        else None
                    )
                    await stored.put(await self._store(run, fetched))
            finally:
                if ahead is not None and not ahead.done():
                    ahead.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await ahead
            await stored.put(None)

        async def embed() -> None:
            while (batch := await stored.get()) is not None:
                await self._embed_ahead(run, batch)
                await embedded.put(batch)
            await embedded.put(None)

        async def write() -> None:
            while (batch := await embedded.get()) is not None:
                await self._write(run, batch)
                await _notify(progress, run)

        await _together(store(), embed(), write())

    async def _batch(self, run: _Run, fetched: FetchResult) -> None:
        """One fetched batch through the three stages, one after the other."""
        batch = await self._store(run, fetched)
        await self._embed_ahead(run, batch)
        await self._write(run, batch)

    async def _store(self, run: _Run, fetched: FetchResult) -> _Batch:
        """Stage 1: derive and store the fetched records, then chunk those whose indexed
        version is behind (read outside the index lock: `_write` reads it again inside)."""
        run.missing.extend(fetched.missing)
        run.settled.update(fetched.deleted_pmids, fetched.book_pmids)
        if fetched.deleted_pmids:
            run.warnings.append(f"deleted PMIDs skipped: {', '.join(fetched.deleted_pmids[:20])}")
        if fetched.book_pmids:
            run.warnings.append(f"book records skipped: {', '.join(fetched.book_pmids[:20])}")
        run.warnings.extend(fetched.problems[:20])

        began = time.perf_counter()
        today = self._clock.now().date()
        docs = [self._derive(record, today) for record in fetched.records]
        run.timed("derive", began)

        began = time.perf_counter()
        summary = await self._metadata.upsert_documents(
            docs, held_by=run.query_key if run.holds else None
        )
        run.inserted += summary.inserted
        run.updated += summary.updated
        run.skipped += summary.skipped
        run.new_to_query += summary.newly_held
        run.processed += len(docs)
        run.max_edat_seen = _later(run.max_edat_seen, summary.max_edat_seen)
        behind = await self._metadata.documents_to_index([r.pmid for r in fetched.records])
        run.timed("store", began)

        prepared = self.indexer.prepare(behind)
        run.timings["chunk"] = run.timings.get("chunk", 0.0) + prepared.timings["chunk"]
        return _Batch(fetched, prepared)

    async def _embed_ahead(self, run: _Run, batch: _Batch) -> None:
        """Stage 2: embed the chunks of the batch (no lock held, nothing written)."""
        await self.indexer.embed_prepared(batch.prepared)
        run.timings["embed"] = run.timings.get("embed", 0.0) + batch.prepared.timings["embed"]

    async def _write(self, run: _Run, batch: _Batch) -> None:
        """Stage 3, under the index lock: what is behind, read again, is written (with the
        chunks and vectors prepared for it) and recorded as indexed.

        Syncs of different keys may share documents. Indexing runs under one store-wide lock
        and re-reads what is behind inside it, so a sync never writes the chunks of a version
        another sync has already replaced (nor deletes the newer version's chunks)."""
        records = batch.fetched.records
        pmids = [r.pmid for r in records]
        async with self._metadata.query_lock(INDEX_LOCK, timeout_s=self.config.lock_timeout_s):
            began = time.perf_counter()
            behind = await self._metadata.documents_to_index(pmids)
            run.timed("store", began)
            behind += await self._lost(run, records, behind)
            failed = await self._index(run, behind, batch.prepared) if behind else set()
        for record in records:
            if record.pmid not in failed:
                run.indexed_max_edat = _later(run.indexed_max_edat, record.edat)
                run.settled.add(record.pmid)

    async def _lost(
        self, run: _Run, records: Sequence[PubMedRecord], behind: Sequence[StoredDocument]
    ) -> list[StoredDocument]:
        """Documents SQL holds as indexed whose chunks are missing from the vector store (it
        was deleted or damaged): they are indexed again, through the embedding cache. The
        fetched records give the expected chunks; SQL is read only for the lost ones."""
        began = time.perf_counter()
        queued = {d.record.pmid for d in behind}
        wanted = self.indexer.chunk_uuids([r for r in records if r.pmid not in queued])
        missing = await self.indexer.missing_chunks(wanted)
        stored = await self._metadata.get_documents(list(missing)) if missing else {}
        lost = [d for d in stored.values() if d.indexed_version > 0]
        run.timed("verify", began)
        if lost:
            run.warnings.append(
                f"{len(lost)} documents were missing from the vector store and were indexed again"
            )
        return lost

    def _derive(self, record: PubMedRecord, today: date) -> DocumentUpsert:
        return derive_document(record, today, self.config.quality)

    def derive(self, record: PubMedRecord) -> DocumentUpsert:
        """`record` derived today under this sync's rules (what a sync would store)."""
        return self._derive(record, self._clock.now().date())

    async def _index(
        self, run: _Run, docs: Sequence[StoredDocument], prepared: PreparedChunks
    ) -> set[str]:
        """Write `docs` (chunked and embedded ahead in `prepared`, or here for what it lacks);
        return the PMIDs whose chunks were refused."""
        outcome = await self.indexer.index(docs, prepared)
        for stage, seconds in outcome.timings.items():
            run.timings[stage] = run.timings.get(stage, 0.0) + seconds
        run.texts_embedded += outcome.texts_embedded
        run.chunks_written += outcome.chunks_written
        run.chunks_deleted += outcome.chunks_deleted
        if outcome.refused:
            run.complete = False
            sample = "; ".join(list(outcome.refused.values())[:3])
            run.warnings.append(
                f"the vector store refused {len(outcome.refused)} chunks of "
                f"{len(outcome.failed)} documents ({sample}); the next sync retries them"
            )
        began = time.perf_counter()
        await self._metadata.mark_indexed(
            {d.record.pmid: d.version for d in docs if d.record.pmid not in outcome.failed}
        )
        run.timed("index", began)
        return outcome.failed


def derive_document(record: PubMedRecord, today: date, quality: QualityConfig) -> DocumentUpsert:
    """`record` with what the domain derives from it under the rules in force: its study
    design, the tier that follows it, its quality score, and its content hash."""
    design = classify_design(record)  # once: the tier and the score both follow it
    evidence = classify_evidence(record, design)
    breakdown = score_quality(record, today, quality, evidence, design)
    return DocumentUpsert(record, evidence, breakdown, content_hash(record))

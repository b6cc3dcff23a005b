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
9. For a key that keeps full text (`Checkpoint.fulltext`, set by a sync asked to), check the
   PMC full text of its due records and index it (`usecases.fulltext_sync`). A record's full
   text is retried from its own state, so this step never holds the checkpoint; a store
   failure here is a warning.
10. Record the job (running, then succeeded or failed) and return the report.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import replace
from datetime import UTC, date, datetime

from biomcp.domain.chunking import ChunkingConfig
from biomcp.domain.records import PubMedRecord
from biomcp.domain.watermarks import reads_history, window_start
from biomcp.ports.clock import Clock
from biomcp.ports.documents import DocumentUpsert
from biomcp.ports.embeddings import Embedder, EmbeddingError
from biomcp.ports.entrez import EntrezClient, WindowEnumeration
from biomcp.ports.jobs import RECENT_JOBS, SyncJob
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.saved_queries import Checkpoint, PendingPmid
from biomcp.ports.store_errors import MetadataStoreError
from biomcp.ports.vectors import VectorStore, VectorStoreError
from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.fulltext_sync import FullTextOutcome, FullTextSync
from biomcp.usecases.indexing import ChunkIndexer
from biomcp.usecases.saved_queries import SyncRequest, new_query_key
from biomcp.usecases.sync_pipeline import BatchPipeline
from biomcp.usecases.sync_report import (
    ProgressCallback,
    SyncProgress,
    SyncReport,
    new_job_id,
    record_whole,
)
from biomcp.usecases.sync_run import HISTORY_START, SyncConfig, SyncRun, notify
from biomcp.usecases.sync_terms import (
    WindowBasis,
    changed_term,
    term_changed_warning,
    term_warning,
)
from biomcp.usecases.sync_upkeep import SyncUpkeep

__all__ = [
    "ProgressCallback",
    "SyncConfig",
    "SyncDelta",
    "SyncProgress",
    "SyncReport",
    "WindowBasis",
]


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
            fulltext=metadata,
            sentence_vectors=self.config.sentence_vectors,
        )
        self.fulltext = FullTextSync(
            entrez, metadata, self.indexer, clock=clock, config=self.config.fulltext
        )
        self._pipeline = BatchPipeline(
            entrez, metadata, metadata, self.indexer, clock=clock, config=self.config
        )
        self._upkeep = SyncUpkeep(entrez, metadata, self._pipeline, clock=clock, config=self.config)

    @property
    def chunking(self) -> ChunkingConfig:
        """The chunk budget in force: the configured one, else the embedder's window's."""
        return self.indexer.chunking

    def derive(self, record: PubMedRecord) -> DocumentUpsert:
        """`record` derived today under this sync's rules (what a sync would store)."""
        return self._pipeline.derive(record)

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
        fulltext: bool | None = None,
    ) -> SyncReport:
        """Sync `term` under `query_key` (see the module docstring); `term` None syncs the
        key's saved term (`saved_term`). `fulltext` True makes the key keep its records' PMC
        full text from now on, False stops it, None keeps the key's choice. `job_id` names the
        job (default: one made from the start time); `owner` is recorded with it
        (`SyncJob.owner`). `rescan` reads the key's whole history (`Checkpoint.covers_from`)
        again instead of continuing from its checkpoint: records missed or dropped since come
        back, and a key synced before its records were recorded has them all recorded.

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
        request = SyncRequest.check(query_key, term, overlap_days, fulltext=fulltext)
        return await self.run_request(
            request, progress=progress, job_id=job_id, rescan=rescan, owner=owner
        )

    async def run_request(
        self,
        request: SyncRequest,
        *,
        progress: ProgressCallback | None = None,
        job_id: str | None = None,
        rescan: bool = False,
        owner: str | None = None,
    ) -> SyncReport:
        """`run` for arguments already checked (`SyncRequest.check`): the key is not read
        again. Raises as `run` does, less the argument errors."""
        query_key, term = request.query_key, request.term
        async with self._metadata.query_lock(query_key, timeout_s=self.config.lock_timeout_s):
            await self._interrupt_orphans(query_key)
            started_at = self._clock.now()
            job_id = job_id or new_job_id(started_at)
            job = SyncJob(job_id, query_key, term, started_at, None, "running", owner=owner)
            await record_whole(self._metadata, job)
            try:
                report = await self._sync(job_id, request, progress, rescan=rescan)
            except BaseException as exc:
                # A cancelled sync (a server shutting down) stopped; it did not fail.
                cancelled = isinstance(exc, asyncio.CancelledError)
                failed = replace(
                    job,
                    finished_at=self._clock.now(),
                    status="interrupted" if cancelled else "failed",
                    error=f"{type(exc).__name__}: {exc}"[:2000],
                )
                await asyncio.shield(self._record_quietly(failed))
                raise
            await record_whole(
                self._metadata,
                replace(
                    job,
                    finished_at=self._clock.now(),
                    status="succeeded",
                    inserted=report.inserted,
                    updated=report.updated,
                    skipped=report.skipped,
                    pmids_processed=report.pmids_processed,
                    max_edat_seen=report.max_edat_seen,
                    warnings=report.warnings,
                ),
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

    def _window(
        self,
        run: SyncRun,
        checkpoint: Checkpoint,
        request: SyncRequest,
        now: datetime,
        rescan: bool,
    ) -> tuple[datetime | None, WindowBasis, str | None]:
        """Where the EDAT window starts, why, and the term the key was synced with before
        when it changed (step 2 of the module docstring)."""
        previous_term = changed_term(checkpoint, request.term)
        if previous_term is not None:
            # The checkpoint belongs to another term: read the key's history again for this one.
            start = checkpoint.covers_from
            run.warnings.append(term_changed_warning(previous_term, request.term, start))
            return start, WindowBasis.TERM_CHANGED, previous_term
        if rescan and checkpoint.last_scan_at is not None:
            return checkpoint.covers_from, WindowBasis.RESCAN, None
        start = window_start(
            checkpoint.last_edat, request.overlap_days, now, self.config.initial_days
        )
        if checkpoint.last_edat is not None:
            return start, WindowBasis.CHECKPOINT, None
        basis = WindowBasis.INITIAL_DAYS if start is not None else WindowBasis.WHOLE_HISTORY
        return start, basis, None

    async def _sync(
        self,
        job_id: str,
        request: SyncRequest,
        progress: ProgressCallback | None,
        *,
        rescan: bool = False,
    ) -> SyncReport:
        query_key, term = request.query_key, request.term
        run = SyncRun(query_key, time.perf_counter())
        checkpoint = await self._metadata.get_checkpoint(query_key)
        now = self._clock.now()
        start, basis, previous_term = self._window(run, checkpoint, request, now, rescan)
        mindate = start.astimezone(UTC).date() if start is not None else HISTORY_START
        maxdate = now.astimezone(UTC).date()

        found, extra, pending, pmids = await self._enumerate(
            run, request, checkpoint, (mindate, maxdate), basis, now
        )
        run.total = len(pmids)
        await notify(progress, run)
        size = self.config.batch_size
        await self._pipeline.run(
            run, [pmids[o : o + size] for o in range(0, len(pmids), size)], progress
        )
        await self._upkeep.settle_pending(run, pending)
        if self.config.recheck_retractions:
            await self._upkeep.recheck_retractions(run, frozenset(pmids))
        await self._upkeep.rescore(run)

        final, advanced = await self._advance(run, checkpoint, request, start, now)
        fulltext = await self._fulltext_step(run, request, checkpoint, pmids)
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
            fulltext=fulltext,
        )

    async def _fulltext_step(
        self, run: SyncRun, request: SyncRequest, checkpoint: Checkpoint, pmids: list[str]
    ) -> FullTextOutcome | None:
        """Step 9: remember the key's full-text choice, and keep its full text if it says so."""
        keep = checkpoint.fulltext if request.fulltext is None else request.fulltext
        if request.fulltext is not None and request.fulltext != checkpoint.fulltext:
            await self._metadata.set_fulltext(request.query_key, request.fulltext)
        if not keep:
            return None
        try:
            held = await self._metadata.records_of(request.query_key)
            outcome = await self.fulltext.run(held, touched=pmids)
        except (MetadataStoreError, VectorStoreError, EmbeddingError) as exc:
            run.warnings.append(
                f"full text was not brought up to date ({exc}); the next sync retries"
            )
            return None
        for stage, seconds in outcome.timings.items():
            run.timings[f"fulltext_{stage}"] = seconds
        run.warnings.extend(outcome.warnings)
        failed = outcome.statuses.get("failed", 0)
        if failed:
            run.warnings.append(
                f"the full text of {failed} records could not be fetched; "
                "the next sync retries them"
            )
        return outcome

    async def _enumerate(
        self,
        run: SyncRun,
        request: SyncRequest,
        checkpoint: Checkpoint,
        dates: tuple[date, date],
        basis: WindowBasis,
        now: datetime,
    ) -> tuple[WindowEnumeration, list[str], list[PendingPmid], list[str]]:
        """Step 3: the window's PMIDs, the revised ones beyond it, and the pending ones; returns
        what ESearch found, the revised extras, what is still pending and every PMID to sync."""
        query_key, term = request.query_key, request.term
        mindate, maxdate = dates
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
            await self._upkeep.revisions(run, term, checkpoint, request.overlap_days, maxdate)
            if basis not in (WindowBasis.TERM_CHANGED, WindowBasis.RESCAN)
            else ()
        )
        pending = await self._metadata.pending_pmids(query_key)
        run.timed("search", began)
        window = set(found.pmids)
        if basis is WindowBasis.TERM_CHANGED:
            pending = await self._upkeep.drop_pending(run, pending, window, now)
        extra = [p for p in revised if p not in window]
        window.update(extra)
        pmids = [*found.pmids, *extra, *(p.pmid for p in pending if p.pmid not in window)]

        return found, extra, pending, pmids

    async def _advance(
        self,
        run: SyncRun,
        checkpoint: Checkpoint,
        request: SyncRequest,
        start: datetime | None,
        now: datetime,
    ) -> tuple[datetime | None, bool]:
        """Step 8: move the checkpoint when every record of the window is in; returns the
        watermark and whether it moved."""
        query_key, term = request.query_key, request.term
        final, advanced = checkpoint.last_edat, False
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
                read_history=reads_history(
                    checkpoint.covers_from, checkpoint.last_scan_at is not None, start
                ),
            )
            advanced = moved.last_edat != checkpoint.last_edat
            final = moved.last_edat
        return final, advanced

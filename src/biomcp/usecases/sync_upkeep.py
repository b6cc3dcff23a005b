"""The upkeep steps of a sync: revisions to follow, pending PMIDs, retractions, rescoring.

Each keeps a saved query's records current beyond its EDAT window (steps 3, 6 and 7 of
`usecases.sync`). A failed re-check or rescore is a warning; the next sync tries again.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, date, datetime

from biomcp.domain.watermarks import window_start
from biomcp.ports.clock import Clock
from biomcp.ports.entrez import EntrezClient, EntrezError
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.saved_queries import Checkpoint, PendingPmid
from biomcp.usecases.indexing import INDEX_LOCK
from biomcp.usecases.pending import sample, settle_pending
from biomcp.usecases.rescoring import rescore_stale
from biomcp.usecases.retractions import find_retracted, stored_pmids
from biomcp.usecases.sync_pipeline import BatchPipeline
from biomcp.usecases.sync_run import HISTORY_START, SyncConfig, SyncRun
from biomcp.usecases.sync_terms import within_history

__all__ = ["SyncUpkeep"]


class SyncUpkeep:
    """The steps of a sync that look past its window, over the stores and NCBI."""

    def __init__(
        self,
        entrez: EntrezClient,
        metadata: MetadataStore,
        pipeline: BatchPipeline,
        *,
        clock: Clock,
        config: SyncConfig,
    ) -> None:
        self._entrez = entrez
        self._metadata = metadata
        self._pipeline = pipeline
        self._clock = clock
        self.config = config

    async def drop_pending(
        self, run: SyncRun, pending: Sequence[PendingPmid], window: set[str], now: datetime
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

    async def settle_pending(self, run: SyncRun, pending: Sequence[PendingPmid]) -> None:
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

    async def recheck_retractions(self, run: SyncRun, window: frozenset[str]) -> None:
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
            scratch = SyncRun(run.query_key, run.started, holds=False)
            await self._pipeline.batch(scratch, fetched)
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

    async def revisions(
        self, run: SyncRun, term: str, checkpoint: Checkpoint, overlap_days: int, today: date
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

    async def rescore(self, run: SyncRun) -> None:
        """Bring the stored scores counted in an earlier calendar year up to date (step 6 of
        the module docstring). A failure is a warning: the next sync tries again."""
        began = time.perf_counter()
        try:
            outcome = await rescore_stale(
                self._metadata,
                self._pipeline.indexer,
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

"""Steps 4 and 5 of a sync: fetch, store, chunk, embed and write batches of records.

`BatchPipeline.run` runs three stages side by side, each on its own batch; `batch` runs one
batch through them in turn (the retraction re-check uses it).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from biomcp.domain.design import classify_design
from biomcp.domain.evidence import classify_evidence
from biomcp.domain.quality import QualityConfig, score_quality
from biomcp.domain.records import PubMedRecord
from biomcp.domain.versioning import content_hash
from biomcp.ports.clock import Clock
from biomcp.ports.documents import DocumentStore, DocumentUpsert, StoredDocument
from biomcp.ports.entrez import EntrezClient, FetchResult
from biomcp.ports.jobs import JobLog
from biomcp.usecases.indexing import INDEX_LOCK, ChunkIndexer, PreparedChunks
from biomcp.usecases.sync_report import ProgressCallback
from biomcp.usecases.sync_run import SyncConfig, SyncRun, later, notify, together

__all__ = ["BatchPipeline", "derive_document"]


@dataclass(frozen=True, slots=True)
class _Batch:
    """A fetched batch, stored, with the chunks (and, once embedded, the vectors) of its
    documents that were behind."""

    fetched: FetchResult
    prepared: PreparedChunks


class BatchPipeline:
    """Fetches, stores and indexes batches of PMIDs for a sync run."""

    def __init__(
        self,
        entrez: EntrezClient,
        documents: DocumentStore,
        locks: JobLog,
        indexer: ChunkIndexer,
        *,
        clock: Clock,
        config: SyncConfig,
    ) -> None:
        self._entrez = entrez
        self._documents = documents
        self._locks = locks
        self.indexer = indexer
        self._clock = clock
        self.config = config

    async def _fetch(self, run: SyncRun, pmids: Sequence[str]) -> FetchResult:
        began = time.perf_counter()
        fetched = await self._entrez.efetch(pmids)
        run.timed("fetch", began)  # overlaps the previous batch's indexing: not on the path
        return fetched

    async def run(
        self, run: SyncRun, batches: Sequence[Sequence[str]], progress: ProgressCallback | None
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
                await notify(progress, run)

        await together(store(), embed(), write())

    async def batch(self, run: SyncRun, fetched: FetchResult) -> None:
        """One fetched batch through the three stages, one after the other."""
        batch = await self._store(run, fetched)
        await self._embed_ahead(run, batch)
        await self._write(run, batch)

    async def _store(self, run: SyncRun, fetched: FetchResult) -> _Batch:
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
        summary = await self._documents.upsert_documents(
            docs, held_by=run.query_key if run.holds else None
        )
        run.inserted += summary.inserted
        run.updated += summary.updated
        run.skipped += summary.skipped
        run.new_to_query += summary.newly_held
        run.processed += len(docs)
        run.max_edat_seen = later(run.max_edat_seen, summary.max_edat_seen)
        behind = await self._documents.documents_to_index([r.pmid for r in fetched.records])
        run.timed("store", began)

        prepared = self.indexer.prepare(behind)
        run.timings["chunk"] = run.timings.get("chunk", 0.0) + prepared.timings["chunk"]
        return _Batch(fetched, prepared)

    async def _embed_ahead(self, run: SyncRun, batch: _Batch) -> None:
        """Stage 2: embed the chunks of the batch (no lock held, nothing written)."""
        await self.indexer.embed_prepared(batch.prepared)
        run.timings["embed"] = run.timings.get("embed", 0.0) + batch.prepared.timings["embed"]

    async def _write(self, run: SyncRun, batch: _Batch) -> None:
        """Stage 3, under the index lock: what is behind, read again, is written (with the
        chunks and vectors prepared for it) and recorded as indexed.

        Syncs of different keys may share documents. Indexing runs under one store-wide lock
        and re-reads what is behind inside it, so a sync never writes the chunks of a version
        another sync has already replaced (nor deletes the newer version's chunks)."""
        records = batch.fetched.records
        pmids = [r.pmid for r in records]
        async with self._locks.query_lock(INDEX_LOCK, timeout_s=self.config.lock_timeout_s):
            began = time.perf_counter()
            behind = await self._documents.documents_to_index(pmids)
            run.timed("store", began)
            behind += await self._lost(run, records, behind)
            failed = await self._index(run, behind, batch.prepared) if behind else set()
        for record in records:
            if record.pmid not in failed:
                run.indexed_max_edat = later(run.indexed_max_edat, record.edat)
                run.settled.add(record.pmid)

    async def _lost(
        self, run: SyncRun, records: Sequence[PubMedRecord], behind: Sequence[StoredDocument]
    ) -> list[StoredDocument]:
        """Documents SQL holds as indexed whose chunks are missing from the vector store (it
        was deleted or damaged): they are indexed again, through the embedding cache. The
        fetched records give the expected chunks; SQL is read only for the lost ones."""
        began = time.perf_counter()
        queued = {d.record.pmid for d in behind}
        wanted = self.indexer.chunk_uuids([r for r in records if r.pmid not in queued])
        missing = await self.indexer.missing_chunks(wanted)
        stored = await self._documents.get_documents(list(missing)) if missing else {}
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
        self, run: SyncRun, docs: Sequence[StoredDocument], prepared: PreparedChunks
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
        await self._documents.mark_indexed(
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

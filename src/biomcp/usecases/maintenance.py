"""Index maintenance: check that the vector store holds what SQL says it does, and rebuild it.

SQL is the source of truth for documents; the vector store is derived from it. `verify` pages
through every stored document, re-chunks it (no embedding) and asks the store which of the
expected chunks it holds, adds the store's own findings about its files (damage it repaired
counts too: it was damage) and the metadata database's integrity check. `rebuild`
re-chunks and re-indexes every document through `ChunkIndexer`, the path syncs take, so with
the embedding cache in front of the embedder a rebuild of an unchanged corpus embeds nothing.
Both run under the store-wide index lock syncs take, so neither races a sync's writes.
`verify` also counts stored chunks that lack the sentence vectors the settings
in force give them (a corpus synced before they were kept): not damage, but a search ranks
those chunks by their own vector alone until a rebuild adds them.
`status` is the cheap signal probes use: a store holding fewer documents than SQL says are
indexed has lost some. `drift` says whether stored tiers, designs and scores are still what the
rules in force give (an upgrade changed a rule: its new hash scheme lets `rebuild(rederive=True)`
or the next sync store them again).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from biomcp.domain.records import PubMedRecord, QualityBreakdown
from biomcp.ports.documents import DocumentUpsert, StoredScore
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.store_errors import LockTimeoutError, MetadataStoreError
from biomcp.ports.vectors import CollectionNotFoundError, VectorStoreUnavailableError
from biomcp.usecases.indexing import INDEX_LOCK, ChunkIndexer

__all__ = ["DerivationDrift", "IndexCheck", "IndexMaintenance", "IndexStatus", "RebuildReport"]

Progress = Callable[[int, int], Awaitable[None] | None]
_SAMPLE = 20


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """Documents SQL holds as indexed against the documents the vector store holds."""

    indexed_documents: int
    stored_documents: int
    collection_exists: bool

    @property
    def needs_rebuild(self) -> bool:
        return self.stored_documents < self.indexed_documents

    def describe(self) -> str:
        if not self.needs_rebuild:
            return "ok"
        where = "" if self.collection_exists else " (the collection is missing)"
        return (
            f"the vector store holds {self.stored_documents} of the {self.indexed_documents} "
            f"indexed documents{where}: run `biomcp index rebuild`"
        )


@dataclass(slots=True)
class IndexCheck:
    """What `verify` found. `ok` when every document's chunks are there, the store's files
    are sound and needed no repair, and the metadata database passes its integrity check."""

    documents: int = 0
    chunks_expected: int = 0
    chunks_missing: int = 0
    documents_incomplete: int = 0
    sample_incomplete: list[str] = field(default_factory=list)
    #: stored chunks that should carry sentence vectors and do not (a search ranks them by
    #: the chunk's own vector); not damage, so `ok` does not count them
    chunks_without_sentences: int = 0
    documents_without_sentences: int = 0
    store_problems: list[str] = field(default_factory=list)
    #: damage the vector store found and repaired (each names the collection and the file)
    repaired: list[str] = field(default_factory=list)
    #: what the metadata database's integrity check found
    metadata_problems: list[str] = field(default_factory=list)
    collection_exists: bool = True
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return (
            not self.chunks_missing
            and not self.store_problems
            and not self.repaired
            and not self.metadata_problems
            and self.collection_exists
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "documents": self.documents,
            "chunks_expected": self.chunks_expected,
            "chunks_missing": self.chunks_missing,
            "documents_incomplete": self.documents_incomplete,
            "sample_incomplete": [f"pmid:{p}" for p in self.sample_incomplete],
            "chunks_without_sentences": self.chunks_without_sentences,
            "documents_without_sentences": self.documents_without_sentences,
            "store_problems": list(self.store_problems),
            "repaired": list(self.repaired),
            "metadata_problems": list(self.metadata_problems),
            "collection_exists": self.collection_exists,
            "seconds": round(self.seconds, 3),
        }


@dataclass(slots=True)
class RebuildReport:
    reset: bool = False
    documents: int = 0
    rederived: int = 0
    rescored: int = 0
    chunks_written: int = 0
    chunks_deleted: int = 0
    texts_embedded: int = 0
    refused: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "reset": self.reset,
            "documents": self.documents,
            "rederived": self.rederived,
            "rescored": self.rescored,
            "chunks_written": self.chunks_written,
            "chunks_deleted": self.chunks_deleted,
            "texts_embedded": self.texts_embedded,
            "refused": self.refused,
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True, slots=True)
class DerivationDrift:
    """Of `checked` stored documents, how many the rules in force would classify differently
    (tier, its rule or the study design) and how many they would score differently (recency
    aside: it ages with the years, not with the rules)."""

    checked: int
    classification: int
    quality: int
    #: up to a few PMIDs whose classification would change
    examples: tuple[str, ...] = ()
    #: of every stored document, those whose score counts recency from an earlier calendar
    #: year (the next sync brings them up to date: `usecases.rescoring`)
    recency: int = 0

    @property
    def stale(self) -> bool:
        return bool(self.classification or self.quality)


class IndexMaintenance:
    """Verify and rebuild the corpus collection of `indexer` from `metadata`."""

    def __init__(
        self,
        metadata: MetadataStore,
        indexer: ChunkIndexer,
        *,
        derive: Callable[[PubMedRecord], DocumentUpsert] | None = None,
        page: int = 500,
        lock_timeout_s: float = 600.0,
    ) -> None:
        """`derive`: what a sync stores for a record (tier, design, quality, hash) under the
        rules in force; `rebuild(rederive=True)` needs it."""
        self._metadata = metadata
        self._derive = derive
        self._indexer = indexer
        self._vectors = indexer.vectors
        self._page = page
        self._lock_timeout_s = lock_timeout_s

    @property
    def collection(self) -> str:
        return self._indexer.collection

    async def status(self) -> IndexStatus:
        """The cheap check (two counts).

        Raises:
            MetadataStoreError, VectorStoreError: from the adapters.
        """
        indexed = await self._metadata.count_documents(indexed=True)
        if self.collection not in await self._vectors.collections():
            return IndexStatus(indexed, 0, False)
        stats = await self._vectors.stats(self.collection)
        return IndexStatus(indexed, stats.documents, True)

    async def drift(self, limit: int = 2_000) -> DerivationDrift:
        """Derive up to `limit` stored documents again (the first by PMID; pure computation,
        nothing is written) and count those whose stored tier, design or score differ.

        Raises:
            ValueError: without a `derive` function.
            MetadataStoreError: from the store.
        """
        if self._derive is None:
            raise ValueError("drift() needs the derive function")
        checked = classification = quality = 0
        examples: list[str] = []
        year: int | None = None
        after = ""
        while checked < limit and (
            pmids := await self._metadata.document_pmids(after, min(self._page, limit - checked))
        ):
            after = pmids[-1]
            for doc in (await self._metadata.get_documents(pmids)).values():
                fresh = self._derive(doc.record)
                year = fresh.quality.scored_in
                checked += 1
                stored, now = doc.evidence, fresh.evidence
                design = stored.design.design if stored.design else None
                if (stored.evidence_type, stored.rule, design) != (
                    now.evidence_type,
                    now.rule,
                    now.design.design if now.design else None,
                ):
                    classification += 1
                    if len(examples) < 5:
                        examples.append(doc.record.pmid)
                if _scored(doc.quality) != _scored(fresh.quality):
                    quality += 1
        recency = await self._metadata.count_documents(scored_before=year) if year else 0
        return DerivationDrift(checked, classification, quality, tuple(examples), recency)

    async def verify(self, progress: Progress | None = None) -> IndexCheck:
        """The metadata database's integrity, every stored document's chunks against the
        store, and the store's own files (what it repaired in them included).

        Raises:
            MetadataStoreError, VectorStoreError, LockTimeoutError: from the adapters.
        """
        began = time.perf_counter()
        check = IndexCheck()
        check.metadata_problems = await self._metadata.quick_check()
        try:
            await self._check_chunks(check, progress)
        except LockTimeoutError:
            raise
        except MetadataStoreError as exc:
            if not check.metadata_problems:
                raise
            # The damage the integrity check found stopped the reading: the report says so.
            check.metadata_problems.append(f"reading the documents failed: {exc}")
        check.seconds = time.perf_counter() - began
        return check

    async def _check_chunks(self, check: IndexCheck, progress: Progress | None) -> None:
        """Into `check`: the store's own findings and every stored document's chunks."""
        total = await self._metadata.count_documents()
        async with self._metadata.query_lock(INDEX_LOCK, timeout_s=self._lock_timeout_s):
            usable = True
            try:
                found = await self._vectors.verify(self.collection)
                check.store_problems, check.repaired = list(found.problems), list(found.repaired)
            except CollectionNotFoundError:
                check.collection_exists = usable = False
            except VectorStoreUnavailableError as exc:  # files that cannot even be opened
                check.store_problems = [str(exc)]
                usable = False
            after = ""
            while pmids := await self._metadata.document_pmids(after, self._page):
                after = pmids[-1]
                docs = await self._metadata.get_documents(pmids)
                expected = self._indexer.expected_chunks([doc.record for doc in docs.values()])
                wanted = expected.uuids
                missing = await self._indexer.missing_chunks(wanted) if usable else wanted
                for pmid, uuids in missing.items():
                    check.documents_incomplete += 1
                    check.chunks_missing += len(uuids)
                    if len(check.sample_incomplete) < _SAMPLE:
                        check.sample_incomplete.append(pmid)
                if usable:
                    await self._check_sentences(check, expected.with_sentences, missing)
                check.chunks_expected += sum(len(uuids) for uuids in wanted.values())
                check.documents += len(docs)
                await _notify(progress, check.documents, total)

    async def _check_sentences(
        self, check: IndexCheck, sentences: dict[str, list[str]], missing: dict[str, list[str]]
    ) -> None:
        """Into `check`: of the chunks that should carry sentence vectors (`sentences`, by
        pmid), the stored ones that lack them (a chunk missing altogether counts as missing
        only)."""
        gone = {u for uuids in missing.values() for u in uuids}
        wanted = {pmid: [u for u in uuids if u not in gone] for pmid, uuids in sentences.items()}
        for uuids in (await self._indexer.lacking_sentences(wanted)).values():
            check.documents_without_sentences += 1
            check.chunks_without_sentences += len(uuids)

    async def rebuild(
        self, progress: Progress | None = None, *, reset: bool = False, rederive: bool = False
    ) -> RebuildReport:
        """Re-chunk and re-index every stored document (unchanged chunks are re-embedded
        through whatever cache fronts the embedder) and record them as indexed. With `reset`,
        or when the collection's files cannot be opened at all, the collection is dropped
        first and refilled from SQL. With `rederive`, each stored record's tier, study design
        and quality are first derived again under the rules in force and stored (a record
        derived under older rules gets a new version, as a sync that saw it would give it;
        an unchanged one keeps its version and gets its score counted today: `rescored`).

        Raises:
            ValueError: `rederive` without a `derive` function.
            EmbeddingError, MetadataStoreError, VectorStoreError, LockTimeoutError.
        """
        if rederive and self._derive is None:
            raise ValueError("rebuild(rederive=True) needs the derive function")
        began = time.perf_counter()
        report = RebuildReport()
        total = await self._metadata.count_documents()
        async with self._metadata.query_lock(INDEX_LOCK, timeout_s=self._lock_timeout_s):
            if not reset:
                try:
                    await self._vectors.verify(self.collection)
                except CollectionNotFoundError:
                    pass
                except VectorStoreUnavailableError:
                    reset = True
            if reset:
                await self._vectors.drop_collection(self.collection)
                self._indexer.forget_schema()
                report.reset = True
            after = ""
            while pmids := await self._metadata.document_pmids(after, self._page):
                after = pmids[-1]
                docs = list((await self._metadata.get_documents(pmids)).values())
                if rederive and self._derive is not None:
                    derived = [self._derive(doc.record) for doc in docs]
                    summary = await self._metadata.upsert_documents(derived)
                    report.rederived += summary.updated
                    # An unchanged record keeps its version, but its score is counted again
                    # too (recency moves with the calendar, weights with the settings).
                    rescored = await self._metadata.set_quality(
                        [
                            StoredScore(
                                d.record.pmid,
                                d.record.year,
                                d.version,
                                d.indexed_version,
                                fresh.quality,
                            )
                            for d, fresh in zip(docs, derived, strict=True)
                            if fresh.quality != d.quality
                        ]
                    )
                    report.rescored += rescored
                    if summary.updated or rescored:
                        docs = list((await self._metadata.get_documents(pmids)).values())
                outcome = await self._indexer.index(docs)
                await self._metadata.mark_indexed(
                    {d.record.pmid: d.version for d in docs if d.record.pmid not in outcome.failed}
                )
                report.documents += len(docs)
                report.chunks_written += outcome.chunks_written
                report.chunks_deleted += outcome.chunks_deleted
                report.texts_embedded += outcome.texts_embedded
                report.refused += len(outcome.refused)
                await _notify(progress, report.documents, total)
        report.seconds = time.perf_counter() - began
        return report


def _scored(quality: QualityBreakdown) -> tuple[int, ...]:
    """The score's components that only its rules move (recency also moves with the years:
    a stored score keeps the recency of the day it was derived, spec 01's versions)."""
    return (quality.design, quality.journal, quality.human, quality.sample_size)


async def _notify(progress: Progress | None, done: int, total: int) -> None:
    if progress is None:
        return
    result = progress(done, total)
    if result is not None:
        await result

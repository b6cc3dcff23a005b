"""What one sync run works with: its settings (`SyncConfig`) and its tallies (`SyncRun`).

The sync's steps (`usecases.sync`, `sync_pipeline`, `sync_upkeep`) share these.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from datetime import date, datetime

from biomcp.domain.chunking import ChunkingConfig
from biomcp.domain.quality import QualityConfig
from biomcp.usecases.fulltext_sync import FullTextConfig
from biomcp.usecases.indexing import EMBED_BATCH
from biomcp.usecases.retractions import RECHECK_BATCH
from biomcp.usecases.sync_report import ProgressCallback, SyncProgress

__all__ = [
    "HISTORY_START",
    "MAX_PENDING",
    "SyncConfig",
    "SyncRun",
    "later",
    "notify",
    "together",
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
    #: Embed each chunk's sentences besides the chunk (`ChunkIndexer`).
    sentence_vectors: bool = True
    recheck_batch_size: int = RECHECK_BATCH
    max_pending: int = MAX_PENDING
    #: Bounds of the full-text step of keys that keep full text (`usecases.fulltext_sync`).
    fulltext: FullTextConfig = field(default_factory=FullTextConfig)

    def __post_init__(self) -> None:
        if self.batch_size < 1 or self.embed_batch_size < 1 or self.recheck_batch_size < 1:
            raise ValueError("batch sizes must be >= 1")
        if self.max_pending < 0:
            raise ValueError("max_pending must be >= 0")
        if self.initial_days is not None and self.initial_days < 0:
            raise ValueError("initial_days must be >= 0")


async def notify(progress: ProgressCallback | None, run: SyncRun) -> None:
    if progress is None:
        return
    result = progress(run.progress())
    if inspect.isawaitable(result):
        await result


@dataclass(slots=True)
class SyncRun:
    """The mutable tallies of one run."""

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


async def together(*stages: Awaitable[None]) -> None:
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


def later(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)

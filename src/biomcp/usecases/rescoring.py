"""Quality scores the calendar moved: recency brought up to date in SQL and on the chunks.

A score's recency counts the record's age in calendar years from the day it was scored (spec
03 section 5: <= 5 years 2, <= 10 years 1). A record synced once is not fetched again unless
PubMed revises it, so without this its stored score would keep the recency of its first year
for ever: a 2021 paper scored in 2026 (recency 2) is six years old in 2027 (recency 1). The
record's content did not change, so neither does its version (spec 01 moves versions on
content and LR only); its score does, and so does the `quality_total` its chunks carry into
the rerank.

`rescore_recency` runs at the end of every sync (and finds nothing most days): it reads the
scores counted in an earlier calendar year (`DocumentStore.scores_before`, score columns only,
a page at a time), counts their recency again (`domain.quality.rescore_recency`), rewrites the
chunks of the indexed documents whose total moved (their stored vectors and text as they are,
only `quality_total` new: nothing is chunked or embedded), then stores the new scores, each
only while its document is still at the version read. Every page runs under the index lock,
so no sync writes those chunks meanwhile. A crash between the chunk writes and the SQL write
leaves the old scores in SQL, which the next run rescores again (the chunk writes repeat, the
same values).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date

from biomcp.domain.quality import QualityConfig, rescore_recency
from biomcp.ports.documents import StoredScore
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.vectors import CollectionNotFoundError
from biomcp.usecases.indexing import ChunkIndexer

__all__ = ["PAGE", "RescoreOutcome", "rescore_stale"]

#: Scores read, rescored and stored per step (under the index lock).
PAGE = 500


@dataclass(frozen=True, slots=True)
class RescoreOutcome:
    """What one pass did: scores `checked` (counted in an earlier year), `rescored` (their
    total or recency moved), `chunks_updated` (chunks given the new total)."""

    checked: int = 0
    rescored: int = 0
    chunks_updated: int = 0


async def rescore_stale(
    metadata: MetadataStore,
    indexer: ChunkIndexer,
    lock_name: str,
    *,
    today: date,
    config: QualityConfig,
    lock_timeout_s: float,
    page: int = PAGE,
) -> RescoreOutcome:
    """Bring every score counted before `today`'s year up to date (module docstring).

    Raises:
        MetadataStoreError, VectorStoreError: from the adapters (what was stored stays: each
            page is complete on its own).
    """
    checked = rescored = updated = 0
    after = ""
    while True:
        async with metadata.query_lock(lock_name, timeout_s=lock_timeout_s):
            scores = await metadata.scores_before(today.year, after=after, limit=page)
            if not scores:
                break
            after = scores[-1].pmid
            new = [
                replace(s, quality=rescore_recency(s.quality, s.year, today, config))
                for s in scores
            ]
            moved = [
                n
                for n, s in zip(new, scores, strict=True)
                if (n.quality.total, n.quality.recency) != (s.quality.total, s.quality.recency)
            ]
            written, refused = await _update_chunks(metadata, indexer, moved)
            await metadata.set_quality([n for n in new if n.pmid not in refused])
        checked += len(scores)
        rescored += len(moved)
        updated += written
    return RescoreOutcome(checked=checked, rescored=rescored, chunks_updated=updated)


async def _update_chunks(
    metadata: MetadataStore, indexer: ChunkIndexer, moved: Sequence[StoredScore]
) -> tuple[int, set[str]]:
    """Give the chunks of the `moved` documents that are indexed at their version the new
    total; return how many chunks were written and the PMIDs whose chunks were refused."""
    indexed = {s.pmid: s for s in moved if s.indexed_version == s.version}
    if not indexed:
        return 0, set()
    docs = await metadata.get_documents(list(indexed))
    wanted = indexer.chunk_uuids([d.record for d in docs.values()])
    uuids = [u for pmid_uuids in wanted.values() for u in pmid_uuids]
    vectors = indexer.vectors
    try:
        stored = await vectors.fetch_chunks(indexer.collection, uuids)
    except CollectionNotFoundError:
        return 0, set()
    chunks = [
        replace(chunk, quality_total=float(indexed[pmid].quality.total))
        for chunk in stored
        if (pmid := chunk.pmid) in indexed
    ]
    if not chunks:
        return 0, set()
    report = await vectors.upsert_chunks(indexer.collection, chunks)
    refused_uuids = {error.uuid for error in report.errors}
    refused = {c.pmid for c in chunks if c.uuid in refused_uuids and c.pmid is not None}
    return report.upserted, refused

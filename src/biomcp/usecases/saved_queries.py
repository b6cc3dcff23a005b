"""Saved queries: a query key and the PubMed term its syncs use, and what the corpus holds.

A saved query is a key with a checkpoint or a sync job: the jobs table records every sync's
term, so a key's latest job says what a later sync of it reuses (`SyncDelta.saved_term`). The
info resource, `corpus_overview`, `biomcp checkpoint list` and `biomcp sync --all` read them
from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from biomcp.ports.metadata import Checkpoint, MetadataStore, SyncJob
from biomcp.ports.vectors import VectorStore
from biomcp.usecases.payloads import iso_utc

__all__ = [
    "OVERVIEW_MAX_QUERIES",
    "RECENT_JOBS",
    "SavedQuery",
    "corpus_overview",
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
    """What the corpus holds: its records and chunks, and every saved query (key, term,
    checkpoint, latest sync's status, records it holds, PMIDs pending), at most
    `OVERVIEW_MAX_QUERIES` of them.

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
            }
        )
    chunks = await vectors.count(collection) if collection in await vectors.collections() else 0
    return {
        "records": await metadata.count_documents(),
        "chunks": chunks,
        "queries_total": len(saved),
        "queries": queries,
    }

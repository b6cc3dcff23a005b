"""`AsyncCorpus`: every library operation as a coroutine, under its plain name."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from collections.abc import Callable, Collection, Coroutine, Mapping, Sequence
from dataclasses import asdict
from datetime import datetime
from types import TracebackType
from typing import IO, Any, Self, TypeVar, cast, overload

from biomcp.entrypoints.library.filters import RENAMED_FILTERS, names, renamed, search_filters
from biomcp.entrypoints.library.live import AsyncPubMed
from biomcp.entrypoints.library.payloads import (
    ChunksStored,
    CollectionInspection,
    CorpusOverview,
    Document,
    FoundChunks,
    ProjectList,
    SyncJobStatus,
)
from biomcp.entrypoints.library.results import (
    CheckpointMove,
    CheckpointState,
    CheckpointSummary,
    ForgetReport,
    ProjectCreated,
    PruneReport,
)
from biomcp.entrypoints.library.running import CorpusClosedError, CorpusLoop
from biomcp.entrypoints.services import Services
from biomcp.entrypoints.settings import Settings
from biomcp.usecases.export import ExportSummary
from biomcp.usecases.paper_results import GroupBy, SearchOutcome
from biomcp.usecases.payloads import parse_iso_utc
from biomcp.usecases.search import SearchHit
from biomcp.usecases.search_filters import with_source
from biomcp.usecases.sync import SyncProgress, SyncReport

__all__ = ["AsyncCorpus", "CorpusClosedError"]

T = TypeVar("T")


class AsyncCorpus:
    """The evidence corpus, for async code: sync saved PubMed queries, search, read documents,
    export, move checkpoints, keep project collections.

    Build it with `open_async_corpus()`; use it with `async with`, or await `close()`. The work
    runs on the corpus's private event loop, so any loop or thread may await its calls.
    """

    def __init__(self, services: Services) -> None:
        self._services = services
        self._loop = CorpusLoop()
        self._pubmed = AsyncPubMed(services, self._run)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._state()}>"

    def _state(self) -> str:
        settings = self._services.settings
        return (
            f"{'closed' if self._loop.closed else 'open'}: "
            f"data_dir={str(settings.biomcp_data_dir)!r}, "
            f"vectors={settings.biomcp_vector_backend}, embeddings={settings.biomcp_embeddings}"
        )

    @property
    def settings(self) -> Settings:
        return self._services.settings

    @property
    def services(self) -> Services:
        """The use cases underneath (for what the library does not wrap)."""
        return self._services

    @property
    def closed(self) -> bool:
        return self._loop.closed

    @property
    def pubmed(self) -> AsyncPubMed:
        """PubMed itself, asked now: `await corpus.pubmed.search("asthma[mh]")`, `fetch`,
        `related`, `cite`, `fulltext`, `mesh`, `ids` and `match`."""
        return self._pubmed

    # -- running on the private loop ------------------------------------------------------------

    def _submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule `coro` on the private loop; refused once closed or from that loop."""
        return self._loop.submit(coro)

    async def _run(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        return await self._loop.run(make)

    # -- the corpus ------------------------------------------------------------------------------

    async def sync(
        self,
        query_key: str,
        term: str | None = None,
        overlap_days: int = 5,
        progress: Callable[[SyncProgress], None] | None = None,
        *,
        rescan: bool = False,
        fulltext: bool | None = None,
    ) -> SyncReport:
        """Sync the records of `term` under `query_key`, incrementally (the Entrez-date window
        since its checkpoint, minus `overlap_days`); without `term`, the term the key was last
        synced with. `progress` is called with a `SyncProgress` after enumeration and after
        every batch, from the corpus's loop thread. `rescan` reads the key's whole history
        again instead of continuing from its checkpoint. `fulltext` True keeps the PMC full
        text of the key's records from now on (`report.fulltext` says what it did), False
        stops it, None keeps the key's choice.

        `report.as_payload()` is the `pubmed.sync_delta` response."""
        return await self._run(
            lambda: self._services.sync.run(
                query_key, term, overlap_days, progress=progress, rescan=rescan, fulltext=fulltext
            )
        )

    @overload
    async def search(
        self,
        query: str,
        top_k: int = 20,
        quality_bias: bool = True,
        *,
        evidence_type: Collection[str] | str | None = None,
        year_min: int | None = None,
        year_max: int | None = None,
        min_quality: float | None = None,
        journals: Collection[str] | str | None = None,
        doc_ids: Collection[str] | None = None,
        include_retracted: bool = False,
        study_design: Collection[str] | str | None = None,
        query_key: str | None = None,
        trial_id: str | None = None,
        source: str | None = None,
        group_by: None = None,
    ) -> list[SearchHit]: ...

    @overload
    async def search(
        self,
        query: str,
        top_k: int = 20,
        quality_bias: bool = True,
        *,
        evidence_type: Collection[str] | str | None = None,
        year_min: int | None = None,
        year_max: int | None = None,
        min_quality: float | None = None,
        journals: Collection[str] | str | None = None,
        doc_ids: Collection[str] | None = None,
        include_retracted: bool = False,
        study_design: Collection[str] | str | None = None,
        query_key: str | None = None,
        trial_id: str | None = None,
        source: str | None = None,
        group_by: GroupBy,
    ) -> SearchOutcome: ...

    @renamed(RENAMED_FILTERS)
    async def search(
        self,
        query: str,
        top_k: int = 20,
        quality_bias: bool = True,
        *,
        evidence_type: Collection[str] | str | None = None,
        year_min: int | None = None,
        year_max: int | None = None,
        min_quality: float | None = None,
        journals: Collection[str] | str | None = None,
        doc_ids: Collection[str] | None = None,
        include_retracted: bool = False,
        study_design: Collection[str] | str | None = None,
        query_key: str | None = None,
        trial_id: str | None = None,
        source: str | None = None,
        group_by: GroupBy | None = None,
    ) -> list[SearchHit] | SearchOutcome:
        """The best `top_k` chunks for `query`, best first (hybrid BM25 + vector search,
        reranked by quality unless `quality_bias=False`). The keyword filters, named as the
        `rag_search` tool names them, narrow the candidates: evidence types (`evidence_type`:
        `"clinical"`, ...), publication years, the lowest quality total, journal titles,
        document ids, study designs (`study_design`: `"rct"`, `"systematic_review"`, ...:
        `StudyDesign`), the records one saved query synced (`query_key`), the records
        naming a trial registry id (`trial_id`: `"NCT01234567"`..., or `"any"`), the chunks
        of abstracts or of PMC full text (`source`: `"abstract"`, `"fulltext"`). Retracted
        papers are left out unless `include_retracted` (their hits then say `retracted`).
        `hit.as_payload()` is one `rag.search` result. With `group_by` (`"chunk"` or
        `"paper"`) the answer is a `SearchOutcome`: the chunks, or the best `top_k` papers
        (`outcome.papers`, each with its best chunks), and whether nothing passed the
        relevance floor (`outcome.nothing_relevant`, None when no floor applies). The old
        names `evidence_types` and `study_designs` still work, with a `DeprecationWarning`."""
        filters = with_source(
            search_filters(evidence_type, year_min, year_max, min_quality, journals, doc_ids),
            source,
        )
        search = self._services.search
        options: dict[str, Any] = {
            "filters": filters,
            "include_retracted": include_retracted,
            "study_designs": names(study_design),
            "query_key": query_key,
            "trial_id": trial_id,
        }
        if group_by is None:
            return await self._run(lambda: search.run(query, top_k, quality_bias, **options))
        return await self._run(
            lambda: search.search(query, top_k, quality_bias, group_by=group_by, **options)
        )

    async def get(self, doc_id: str | int) -> Document:
        """The stored document `doc_id` (`"pmid:123"`, `"123"` or `123`): the `rag.get` payload
        (title, abstract, journal, dates, evidence type, quality breakdown, version...)."""
        found = await self._run(lambda: self._services.documents.run(str(doc_id)))
        return cast("Document", found)

    @renamed(RENAMED_FILTERS)
    async def export(
        self,
        target: str | os.PathLike[str] | IO[str],
        *,
        format: str = "ris",
        query_key: str | None = None,
        evidence_type: Collection[str] | str | None = None,
        year_min: int | None = None,
        year_max: int | None = None,
        min_quality: float | None = None,
        journals: Collection[str] | str | None = None,
        study_design: Collection[str] | str | None = None,
        include_retracted: bool = False,
        added_since: datetime | str | None = None,
        new: bool = False,
    ) -> ExportSummary:
        """Write the stored records (those the saved query `query_key` synced, else all) to
        `target`, a path (written complete or not at all) or an open text stream, as `format`:
        `"ris"` (Zotero, EndNote, Covidence, Rayyan), `"bibtex"`, `"csv"` (one row per record
        with its evidence tier, study design and quality), `"jsonl"` (one `get` payload per
        line) or `"pmids"`. The filters are `search`'s; retracted records are left out unless
        `include_retracted`; `added_since` (a datetime or ISO 8601 text, with `query_key`)
        keeps the records the query brought at or after it. With `query_key`, the summary's
        `next_added_since` is the `added_since` of the next export (a living review's next
        screening), which repeats no record unless a sync was running (`sync_running`) and
        loses none. `new=True` (with `query_key`, without `added_since`) starts where the
        key's last `new` export ended and, once this one is complete, marks where the next
        one starts. `summary.as_payload()` is the CLI's `--json` summary.

        Raises:
            InvalidRequestError: an unknown format, evidence type or study design; a key
                synced before its records were recorded; `added_since` without `query_key`,
                or not ISO 8601.
            NotFoundError: no saved query `query_key` holds records.
            OSError: `target` cannot be written.
        """
        filters = search_filters(evidence_type, year_min, year_max, min_quality, journals, None)

        async def run() -> ExportSummary:
            from biomcp.entrypoints.exporting import export_to

            since = (
                parse_iso_utc(added_since, field="added_since")
                if isinstance(added_since, str)
                else added_since
            )
            return await export_to(
                self._services,
                target,
                format=format,
                query_key=query_key,
                filters=filters,
                study_designs=names(study_design),
                include_retracted=include_retracted,
                added_since=since,
                new=new,
            )

        return await self._run(run)

    # -- project collections (spec 02) ---------------------------------------------------------

    async def create_project(self, project_id: str, *, hybrid: bool = True) -> ProjectCreated:
        """Create a project on this corpus's embedding model (an existing one is kept)."""
        return await self._run(lambda: self._create_project(project_id, hybrid))

    async def _create_project(self, project_id: str, hybrid: bool) -> ProjectCreated:
        made = await self._services.projects.create_project(project_id, hybrid=hybrid)
        return ProjectCreated(made.project_id, made.collection, made.model_id, made.hybrid)

    async def list_projects(self) -> ProjectList:
        """`{"projects": [...]}`: every project, as the `list_projects` tool answers."""
        return cast("ProjectList", await self._run(self._services.projects.list_projects))

    async def store_chunks(
        self, project_id: str, items: Sequence[Mapping[str, Any]]
    ) -> ChunksStored:
        """Store 1-500 items (`{"id", "text", "metadata"?, "embedding"?}`) in a project, all
        or none; the `store_chunks` tool's answer."""
        stored = await self._run(lambda: self._services.projects.store_chunks(project_id, items))
        return cast("ChunksStored", stored)

    async def find_chunks(
        self,
        project_id: str,
        query: str,
        *,
        top_k: int | None = None,
        filters: Mapping[str, Any] | None = None,
        full_text: bool = False,
        hybrid: bool = False,
    ) -> FoundChunks:
        """Search a project's chunks: vector search, or BM25 + vector with `hybrid`; the
        `find_chunks` / `query_hybrid` tool's answer."""
        projects = self._services.projects
        search = projects.query_hybrid if hybrid else projects.find_chunks
        found = await self._run(
            lambda: search(project_id, query, top_k=top_k, filters=filters, full_text=full_text)
        )
        return cast("FoundChunks", found)

    async def inspect_collection(self, project_id: str, sample: int = 0) -> CollectionInspection:
        """A project's collection: size, model, payload keys, indexes, up to 5 samples."""
        found = await self._run(
            lambda: self._services.projects.inspect_collection(project_id, sample)
        )
        return cast("CollectionInspection", found)

    # -- saved queries ---------------------------------------------------------------------------

    async def sync_status(self, job_id: str) -> SyncJobStatus:
        """The state of sync job `job_id` (from any process): `status` (running, succeeded,
        failed, interrupted), `progress` while running, `report` once done, `error`."""
        return cast("SyncJobStatus", await self._run(lambda: self._services.jobs.status(job_id)))

    async def checkpoint(self, query_key: str) -> CheckpointState:
        """The checkpoint of `query_key` (`last_edat` None before the first sync)."""
        return await self._run(lambda: self._checkpoint(query_key))

    async def _checkpoint(self, query_key: str) -> CheckpointState:
        found = await self._services.saved_queries.get(query_key)
        return CheckpointState(found.query_key, found.last_edat)

    async def set_checkpoint(
        self,
        query_key: str,
        last_edat: str | datetime,
        *,
        reason: str = "manual set (library)",
        actor: str = "library",
    ) -> CheckpointMove:
        """Move the checkpoint of `query_key` to `last_edat` (ISO 8601 UTC text or an aware
        datetime), forward or backward (a backfill); the move is audited with `actor` and
        `reason`."""
        return await self._run(lambda: self._set_checkpoint(query_key, last_edat, reason, actor))

    async def _set_checkpoint(
        self, query_key: str, last_edat: str | datetime, reason: str, actor: str
    ) -> CheckpointMove:
        audit = await self._services.saved_queries.set(
            query_key, last_edat, actor=actor, reason=reason
        )
        return CheckpointMove(audit.query_key, audit.previous, audit.new, audit.moved_backward)

    async def forget_query(self, query_key: str, *, records: bool = False) -> ForgetReport:
        """Forget the saved query `query_key`: its checkpoint, pending PMIDs and sync jobs.
        The records it brought stay in the corpus, unless `records` deletes those no other
        saved query holds.

        Raises:
            InvalidRequestError: an empty key; `records` while another saved query was
                synced before bio-mcp recorded its records (rescan it first).
            LockTimeoutError: a sync of the key is running (in any process).
        """
        return await self._run(lambda: self._forget_query(query_key, records))

    async def _forget_query(self, query_key: str, records: bool) -> ForgetReport:
        gone = await self._services.saved_queries.forget(query_key, records=records)
        return ForgetReport(**asdict(gone))

    async def prune_records(self, *, dry_run: bool = False) -> PruneReport:
        """Delete the stored records no saved query holds (those of queries forgotten without
        `records`), from search and from SQL; `dry_run` only counts them.

        Raises:
            InvalidRequestError: a saved query was synced before bio-mcp recorded which query
                brought each record (rescan it first).
        """
        return await self._run(lambda: self._prune(dry_run))

    async def _prune(self, dry_run: bool) -> PruneReport:
        pruned = await self._services.saved_queries.prune(dry_run=dry_run)
        return PruneReport(dry_run, **asdict(pruned))

    async def checkpoints(self) -> list[CheckpointSummary]:
        """Every saved query's checkpoint, by key."""
        return await self._run(self._checkpoints)

    async def _checkpoints(self) -> list[CheckpointSummary]:
        saved = self._services.saved_queries
        found = await saved.checkpoints()
        counts = await saved.record_counts()
        return [
            CheckpointSummary(
                c.query_key,
                c.last_edat,
                c.last_scan_at,
                c.covers_from,
                counts.get(c.query_key, 0),
                c.records_tracked,
            )
            for c in found
        ]

    async def overview(self) -> CorpusOverview:
        """What the corpus holds: `records`, `chunks` and every saved query (`query_key`,
        `term`, `last_edat`, `last_sync` status, `pending_pmids`): the `corpus_overview`
        tool's answer."""
        return cast("CorpusOverview", await self._run(self._services.saved_queries.overview))

    # -- lifecycle -----------------------------------------------------------------------------

    async def close(self) -> None:
        """Close the stores and stop the loop thread (idempotent)."""
        if self._loop.in_loop_thread:
            raise RuntimeError("close() was called from the corpus's own loop")
        await asyncio.to_thread(self._shutdown)

    def _shutdown(self) -> None:
        """`close`, blocking the calling thread."""
        self._loop.shutdown(self._services.aclose)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

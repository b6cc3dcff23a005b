"""The library facade: the corpus from plain Python (a script or a notebook).

    import biomcp

    with biomcp.open_corpus(biomcp_embeddings="hashing") as corpus:
        report = corpus.sync("asthma_v1", "asthma[mh] AND randomized controlled trial[pt]")
        for hit in corpus.search("inhaled corticosteroids exacerbations", top_k=5):
            print(hit.score, hit.doc_id, hit.text)
        corpus.get(hit.doc_id)["title"]

`Corpus` holds the same services as the server and the CLI (`container.build_services`) and
runs every call on a private event loop in a background thread, so its synchronous methods
work in plain scripts and inside a running event loop alike (Jupyter runs one). The `a...`
variants (`sync_async`, `asearch`, `aget`, ...) await the same work from async code; sync and async
calls may be mixed, because every adapter lives on the one private loop.

Failures raise the typed errors of the layers below: `biomcp.usecases.errors.NotFoundError`,
`InvalidRequestError`, and the ports' `EntrezError`, `MetadataStoreError`, `VectorStoreError`,
`EmbeddingError`. `biomcp.entrypoints.errors.classify(exc)` names spec 01's code of any of them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import threading
import warnings
import weakref
from collections.abc import Callable, Collection, Coroutine, Mapping, Sequence
from dataclasses import asdict
from datetime import datetime
from types import TracebackType
from typing import IO, Any, Self, TypeVar

from biomcp.entrypoints.services import Services, build_services
from biomcp.entrypoints.settings import Settings, load_settings, old_names, unknown_variables
from biomcp.ports.vectors import SearchFilters
from biomcp.usecases.payloads import iso_utc, parse_iso_utc
from biomcp.usecases.search import SearchHit
from biomcp.usecases.sync import SyncProgress, SyncReport

__all__ = ["Corpus", "CorpusClosedError", "open_corpus"]

T = TypeVar("T")


class CorpusClosedError(RuntimeError):
    """A call on a `Corpus` after `close()`."""


class _LoopThread:
    """An event loop running forever in a daemon thread; coroutines are submitted to it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._serve, name="biomcp-corpus-loop", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            try:
                self.loop.run_until_complete(self.loop.shutdown_default_executor())
            finally:
                self.loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    @property
    def in_loop_thread(self) -> bool:
        return threading.current_thread() is self.thread

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        if not self.in_loop_thread:
            self.thread.join(timeout=10)


def _stop_loop(runner: _LoopThread) -> None:
    # Finalizer of a Corpus that was never closed: release the thread (adapters are dropped).
    with contextlib.suppress(RuntimeError):  # the loop closed concurrently
        runner.stop()


class Corpus:
    """The evidence corpus: sync saved PubMed queries, search, read documents, move checkpoints.

    Build it with `open_corpus()`. Use it as a context manager, or call `close()`.
    """

    def __init__(self, services: Services) -> None:
        self._services = services
        self._runner = _LoopThread()
        self._closed = False
        self._lock = threading.Lock()
        self._finalizer = weakref.finalize(self, _stop_loop, self._runner)

    def __repr__(self) -> str:
        settings = self._services.settings
        state = "closed" if self._closed else "open"
        return (
            f"<Corpus {state}: data_dir={str(settings.biomcp_data_dir)!r}, "
            f"vectors={settings.biomcp_vector_backend}, embeddings={settings.biomcp_embeddings}>"
        )

    @property
    def settings(self) -> Settings:
        return self._services.settings

    @property
    def services(self) -> Services:
        """The use cases underneath (for what the facade does not wrap)."""
        return self._services

    @property
    def closed(self) -> bool:
        return self._closed

    # -- running on the private loop ------------------------------------------------------------

    def _submit(self, make: Callable[[], Coroutine[Any, Any, T]]) -> concurrent.futures.Future[T]:
        with self._lock:
            if self._closed:
                raise CorpusClosedError("this corpus is closed: open a new one with open_corpus()")
            if self._runner.in_loop_thread:
                raise RuntimeError(
                    "a Corpus method was called from its own loop (e.g. in a sync progress "
                    "callback); call it from your code instead"
                )
            return self._runner.submit(make())

    def _call(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        future = self._submit(make)
        try:
            return future.result()
        except BaseException:
            # Ctrl-C in a notebook: cancel the work on the loop too (its cleanup still runs).
            future.cancel()
            raise

    async def _acall(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        return await asyncio.wrap_future(self._submit(make))

    # -- sync ----------------------------------------------------------------------------------

    def sync(
        self,
        query_key: str,
        term: str | None = None,
        overlap_days: int = 5,
        progress: Callable[[SyncProgress], None] | None = None,
        *,
        rescan: bool = False,
    ) -> SyncReport:
        """Sync the records of `term` under `query_key`, incrementally (the Entrez-date window
        since its checkpoint, minus `overlap_days`); without `term`, the term the key was last
        synced with. `progress` is called with a `SyncProgress` after enumeration and after
        every batch, from the corpus's loop thread. `rescan` reads the key's whole history
        again instead of continuing from its checkpoint.

        `report.as_payload()` is the `pubmed.sync_delta` response."""
        return self._call(
            lambda: self._services.sync.run(
                query_key, term, overlap_days, progress=progress, rescan=rescan
            )
        )

    async def sync_async(
        self,
        query_key: str,
        term: str | None = None,
        overlap_days: int = 5,
        progress: Callable[[SyncProgress], None] | None = None,
        *,
        rescan: bool = False,
    ) -> SyncReport:
        """`sync` for async code (`async` itself is a keyword)."""
        return await self._acall(
            lambda: self._services.sync.run(
                query_key, term, overlap_days, progress=progress, rescan=rescan
            )
        )

    # -- search --------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        top_k: int = 20,
        quality_bias: bool = True,
        *,
        evidence_types: Collection[str] | str | None = None,
        year_min: int | None = None,
        year_max: int | None = None,
        min_quality: float | None = None,
        journals: Collection[str] | str | None = None,
        doc_ids: Collection[str] | None = None,
        include_retracted: bool = False,
        study_designs: Collection[str] | str | None = None,
        query_key: str | None = None,
    ) -> list[SearchHit]:
        """The best `top_k` chunks for `query`, best first (hybrid BM25 + vector search,
        reranked by quality unless `quality_bias=False`). The keyword filters narrow the
        candidates: evidence types (`"clinical"`, ...), publication years, the lowest quality
        total, journal titles, document ids, study designs (`"rct"`, `"systematic_review"`,
        ...: `StudyDesign`), the records one saved query synced (`query_key`). Retracted
        papers are left out unless `include_retracted` (their hits then say `retracted`).
        `hit.as_payload()` is one `rag.search` result."""
        filters = _filters(evidence_types, year_min, year_max, min_quality, journals, doc_ids)
        return self._call(
            lambda: self._services.search.run(
                query,
                top_k,
                quality_bias,
                filters=filters,
                include_retracted=include_retracted,
                study_designs=_names(study_designs),
                query_key=query_key,
            )
        )

    async def asearch(
        self,
        query: str,
        top_k: int = 20,
        quality_bias: bool = True,
        *,
        evidence_types: Collection[str] | str | None = None,
        year_min: int | None = None,
        year_max: int | None = None,
        min_quality: float | None = None,
        journals: Collection[str] | str | None = None,
        doc_ids: Collection[str] | None = None,
        include_retracted: bool = False,
        study_designs: Collection[str] | str | None = None,
        query_key: str | None = None,
    ) -> list[SearchHit]:
        """`search` for async code."""
        filters = _filters(evidence_types, year_min, year_max, min_quality, journals, doc_ids)
        return await self._acall(
            lambda: self._services.search.run(
                query,
                top_k,
                quality_bias,
                filters=filters,
                include_retracted=include_retracted,
                study_designs=_names(study_designs),
                query_key=query_key,
            )
        )

    # -- documents -----------------------------------------------------------------------------

    def get(self, doc_id: str | int) -> dict[str, Any]:
        """The stored document `doc_id` (`"pmid:123"`, `"123"` or `123`): the `rag.get` payload
        (title, abstract, journal, dates, evidence type, quality breakdown, version...)."""
        return self._call(lambda: self._services.documents.run(str(doc_id)))

    async def aget(self, doc_id: str | int) -> dict[str, Any]:
        """`get` for async code."""
        return await self._acall(lambda: self._services.documents.run(str(doc_id)))

    def export(
        self,
        target: str | os.PathLike[str] | IO[str],
        *,
        format: str = "ris",
        query_key: str | None = None,
        evidence_types: Collection[str] | str | None = None,
        year_min: int | None = None,
        year_max: int | None = None,
        min_quality: float | None = None,
        journals: Collection[str] | str | None = None,
        study_designs: Collection[str] | str | None = None,
        include_retracted: bool = False,
        added_since: datetime | str | None = None,
        new: bool = False,
    ) -> dict[str, Any]:
        """Write the stored records (those the saved query `query_key` synced, else all) to
        `target`, a path (written complete or not at all) or an open text stream, as `format`:
        `"ris"` (Zotero, EndNote, Covidence, Rayyan), `"bibtex"`, `"csv"` (one row per record
        with its evidence tier, study design and quality), `"jsonl"` (one `get` payload per
        line) or `"pmids"`. The filters are `search`'s; retracted records are left out unless
        `include_retracted`; `added_since` (a datetime or ISO 8601 text, with `query_key`)
        keeps the records the query brought at or after it. Returns `{"format", "query_key",
        "added_since", "considered", "exported", "filtered_out", "retracted_left_out",
        "next_added_since", "sync_running", "new"}`: with `query_key`, `next_added_since` is the
        `added_since` of the next export (a living review's next screening), which repeats no
        record unless a sync was running (`sync_running`) and loses none. `new=True` (with
        `query_key`, without `added_since`) starts where the key's last `new` export ended
        and, once this one is complete, marks where the next one starts.

        Raises:
            InvalidRequestError: an unknown format, evidence type or study design; a key
                synced before its records were recorded; `added_since` without `query_key`,
                or not ISO 8601.
            NotFoundError: no saved query `query_key` holds records.
            OSError: `target` cannot be written.
        """
        filters = _filters(evidence_types, year_min, year_max, min_quality, journals, None)

        async def run() -> dict[str, Any]:
            from biomcp.entrypoints.exporting import export_to

            since = (
                parse_iso_utc(added_since, field="added_since")
                if isinstance(added_since, str)
                else added_since
            )
            summary = await export_to(
                self._services,
                target,
                format=format,
                query_key=query_key,
                filters=filters,
                study_designs=_names(study_designs),
                include_retracted=include_retracted,
                added_since=since,
                new=new,
            )
            return summary.as_payload()

        return self._call(run)

    # -- project collections (spec 02) ---------------------------------------------------------

    def create_project(self, project_id: str, *, hybrid: bool = True) -> dict[str, Any]:
        """Create a project on this corpus's embedding model (an existing one is kept):
        `{"id", "collection", "embed_model", "hybrid_enabled"}`."""
        return self._call(lambda: self._create_project(project_id, hybrid))

    async def _create_project(self, project_id: str, hybrid: bool) -> dict[str, Any]:
        made = await self._services.projects.create_project(project_id, hybrid=hybrid)
        return {
            "id": made.project_id,
            "collection": made.collection,
            "embed_model": made.model_id,
            "hybrid_enabled": made.hybrid,
        }

    def list_projects(self) -> dict[str, Any]:
        """`{"projects": [...]}`: every project, as the `list_projects` tool answers."""
        return self._call(self._services.projects.list_projects)

    def store_chunks(self, project_id: str, items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Store 1-500 items (`{"id", "text", "metadata"?, "embedding"?}`) in a project, all
        or none; the `store_chunks` tool's answer."""
        return self._call(lambda: self._services.projects.store_chunks(project_id, items))

    async def astore_chunks(
        self, project_id: str, items: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        """`store_chunks` for async code."""
        return await self._acall(lambda: self._services.projects.store_chunks(project_id, items))

    def find_chunks(
        self,
        project_id: str,
        query: str,
        *,
        top_k: int | None = None,
        filters: Mapping[str, Any] | None = None,
        full_text: bool = False,
        hybrid: bool = False,
    ) -> dict[str, Any]:
        """Search a project's chunks: vector search, or BM25 + vector with `hybrid`; the
        `find_chunks` / `query_hybrid` tool's answer."""
        search = (
            self._services.projects.query_hybrid if hybrid else self._services.projects.find_chunks
        )
        return self._call(
            lambda: search(project_id, query, top_k=top_k, filters=filters, full_text=full_text)
        )

    def inspect_collection(self, project_id: str, sample: int = 0) -> dict[str, Any]:
        """A project's collection: size, model, payload keys, indexes, up to 5 samples."""
        return self._call(lambda: self._services.projects.inspect_collection(project_id, sample))

    # -- checkpoints ---------------------------------------------------------------------------

    def sync_status(self, job_id: str) -> dict[str, Any]:
        """The state of sync job `job_id` (from any process): `status` (running, succeeded,
        failed, interrupted), `progress` while running, `report` once done, `error`."""
        return self._call(lambda: self._services.jobs.status(job_id))

    async def async_status(self, job_id: str) -> dict[str, Any]:
        """`sync_status` for async code."""
        return await self._acall(lambda: self._services.jobs.status(job_id))

    def checkpoint(self, query_key: str) -> dict[str, Any]:
        """`{"query_key", "last_edat"}` (ISO 8601 UTC, or None before the first sync)."""
        return self._call(lambda: self._services.saved_queries.get_payload(query_key))

    async def acheckpoint(self, query_key: str) -> dict[str, Any]:
        """`checkpoint` for async code."""
        return await self._acall(lambda: self._services.saved_queries.get_payload(query_key))

    def set_checkpoint(
        self,
        query_key: str,
        last_edat: str | datetime,
        *,
        reason: str = "manual set (library)",
        actor: str = "library",
    ) -> dict[str, Any]:
        """Move the checkpoint of `query_key` to `last_edat` (ISO 8601 UTC text or an aware
        datetime), forward or backward (a backfill); the move is audited with `actor` and
        `reason`. Returns `{"ok", "query_key", "previous_edat", "last_edat", "moved_backward"}`.
        """
        return self._call(lambda: self._set_checkpoint(query_key, last_edat, reason, actor))

    async def aset_checkpoint(
        self,
        query_key: str,
        last_edat: str | datetime,
        *,
        reason: str = "manual set (library)",
        actor: str = "library",
    ) -> dict[str, Any]:
        """`set_checkpoint` for async code."""
        return await self._acall(lambda: self._set_checkpoint(query_key, last_edat, reason, actor))

    async def _set_checkpoint(
        self, query_key: str, last_edat: str | datetime, reason: str, actor: str
    ) -> dict[str, Any]:
        audit = await self._services.saved_queries.set(
            query_key, last_edat, actor=actor, reason=reason
        )
        return {
            "ok": True,
            "query_key": audit.query_key,
            "previous_edat": iso_utc(audit.previous),
            "last_edat": iso_utc(audit.new),
            "moved_backward": audit.moved_backward,
        }

    def forget_query(self, query_key: str, *, records: bool = False) -> dict[str, Any]:
        """Forget the saved query `query_key`: its checkpoint, pending PMIDs and sync jobs.
        The records it brought stay in the corpus, unless `records` deletes those no other
        saved query holds. Returns `{"ok", "query_key", "checkpoint", "pending", "jobs",
        "records", "records_deleted", "chunks_deleted", "records_tracked"}`: whether it had a
        checkpoint, how many of the others went, how many records it held and how many of
        them were deleted (with how many chunks), and whether its records were all recorded.

        Raises:
            InvalidRequestError: an empty key; `records` while another saved query was
                synced before bio-mcp recorded its records (rescan it first).
            LockTimeoutError: a sync of the key is running (in any process).
        """
        return self._call(lambda: self._forget_query(query_key, records))

    async def _forget_query(self, query_key: str, records: bool) -> dict[str, Any]:
        gone = await self._services.saved_queries.forget(query_key, records=records)
        return {"ok": True, **asdict(gone)}

    def prune_records(self, *, dry_run: bool = False) -> dict[str, Any]:
        """Delete the stored records no saved query holds (those of queries forgotten without
        `records`), from search and from SQL; `dry_run` only counts them. Returns `{"ok",
        "dry_run", "records", "deleted", "chunks_deleted"}`.

        Raises:
            InvalidRequestError: a saved query was synced before bio-mcp recorded which query
                brought each record (rescan it first).
        """
        return self._call(lambda: self._prune(dry_run))

    async def _prune(self, dry_run: bool) -> dict[str, Any]:
        pruned = await self._services.saved_queries.prune(dry_run=dry_run)
        return {"ok": True, "dry_run": dry_run, **asdict(pruned)}

    def checkpoints(self) -> list[dict[str, Any]]:
        """Every saved query's checkpoint, by key."""
        return self._call(self._checkpoints)

    async def _checkpoints(self) -> list[dict[str, Any]]:
        found = await self._services.saved_queries.checkpoints()
        counts = await self._services.saved_queries.record_counts()
        return [
            {
                "query_key": c.query_key,
                "last_edat": iso_utc(c.last_edat),
                "last_scan_at": iso_utc(c.last_scan_at),
                "covers_from": iso_utc(c.covers_from),
                "records": counts.get(c.query_key, 0),
                "records_tracked": c.records_tracked,
            }
            for c in found
        ]

    def overview(self) -> dict[str, Any]:
        """What the corpus holds: `records`, `chunks` and every saved query (`query_key`,
        `term`, `last_edat`, `last_sync` status, `pending_pmids`): the `corpus_overview`
        tool's answer."""
        return self._call(self._overview)

    async def _overview(self) -> dict[str, Any]:
        return await self._services.saved_queries.overview()

    # -- lifecycle -----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the stores and stop the loop thread (idempotent)."""
        with self._lock:
            if self._closed:
                return
            if self._runner.in_loop_thread:
                raise RuntimeError("close() was called from the corpus's own loop")
            self._closed = True
            future = self._runner.submit(self._services.aclose())
        try:
            future.result(timeout=60)
        finally:
            self._finalizer()

    async def aclose(self) -> None:
        """`close` for async code (the wait runs in a worker thread)."""
        await asyncio.to_thread(self.close)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _names(value: Collection[str] | str | None) -> frozenset[str] | None:
    if value is None:
        return None
    items = [value] if isinstance(value, str) else list(value)
    return frozenset(item.strip() for item in items if item.strip()) or None


def _filters(
    evidence_types: Collection[str] | str | None,
    year_min: int | None,
    year_max: int | None,
    min_quality: float | None,
    journals: Collection[str] | str | None,
    doc_ids: Collection[str] | None,
) -> SearchFilters | None:
    types = _names(evidence_types)
    filters = SearchFilters(
        evidence_types=frozenset(t.casefold() for t in types) if types else None,
        year_min=year_min,
        year_max=year_max,
        min_quality=min_quality,
        journals=_names(journals),
        doc_ids=_names(doc_ids),
    )
    return None if filters == SearchFilters() else filters


def open_corpus(settings: Settings | None = None, **overrides: Any) -> Corpus:
    """The corpus configured by `settings` (default: the environment and `.env`, like the
    server and the CLI), with `overrides` winning: keyword arguments named like the settings'
    fields, e.g. `open_corpus(biomcp_data_dir="corpus/", biomcp_embeddings="hashing")`.
    Nothing connects until the first call. An environment variable that looks meant for
    bio-mcp but is no setting (`BIOMCP_EMBEDDER`) is named in a `UserWarning`.

    Raises:
        TypeError: an override that names no setting.
        pydantic.ValidationError: a bad value (it names the field and what it accepts).
    """
    fields = Settings.model_fields
    renamed = old_names()
    values = {renamed.get(k.lower(), k.lower()): value for k, value in overrides.items()}
    unknown = sorted(name for name in values if name not in fields)
    if unknown:
        raise TypeError(
            f"open_corpus() got unknown settings {', '.join(unknown)}; known: "
            f"{', '.join(sorted(fields))}"
        )
    if settings is None:
        for warning in unknown_variables(os.environ):
            warnings.warn(warning, UserWarning, stacklevel=2)
        settings = load_settings(**values)
    elif values:
        settings = type(settings).model_validate({**settings.model_dump(), **values})
    return Corpus(build_services(settings))

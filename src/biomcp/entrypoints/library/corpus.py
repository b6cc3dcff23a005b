"""`Corpus`: the blocking twin of `AsyncCorpus`, for scripts and notebooks.

Each method forwards to the `AsyncCorpus` method of the same name and signature, whose
coroutine runs on the corpus's private loop while the calling thread waits; that works in
plain scripts and inside a running event loop alike (Jupyter runs one). `corpus.aio` is the
`AsyncCorpus` underneath, for the awaitable calls on the same stores.
"""

from __future__ import annotations

import functools
import inspect
import os
import warnings
from collections.abc import Callable, Collection, Coroutine, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import IO, Any, Self, TypeVar, cast, overload

from biomcp.entrypoints.library.async_corpus import AsyncCorpus
from biomcp.entrypoints.library.filters import RENAMED_FILTERS, renamed
from biomcp.entrypoints.library.live import PubMed
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
from biomcp.entrypoints.services import Services
from biomcp.entrypoints.settings import Settings
from biomcp.usecases.export import ExportSummary
from biomcp.usecases.paper_results import GroupBy, SearchOutcome
from biomcp.usecases.search import SearchHit
from biomcp.usecases.sync import SyncProgress, SyncReport

__all__ = ["DEPRECATED_ALIASES", "Corpus"]

T = TypeVar("T")

#: The names the async calls had on `Corpus`, and the `AsyncCorpus` method each one awaits.
DEPRECATED_ALIASES = {
    "acheckpoint": "checkpoint",
    "aclose": "close",
    "aget": "get",
    "aset_checkpoint": "set_checkpoint",
    "astore_chunks": "store_chunks",
    "async_status": "sync_status",
    "asearch": "search",
    "sync_async": "sync",
}


def _deprecated(old: str) -> Callable[..., Any]:
    new = DEPRECATED_ALIASES[old]

    @functools.wraps(getattr(AsyncCorpus, new))
    async def alias(self: Corpus, *args: Any, **kwargs: Any) -> Any:
        warnings.warn(
            f"Corpus.{old}() is deprecated: use `await corpus.aio.{new}(...)`",
            DeprecationWarning,
            stacklevel=2,
        )
        return await getattr(self.aio, new)(*args, **kwargs)

    alias.__name__, alias.__qualname__ = old, f"Corpus.{old}"
    alias.__doc__ = f"Deprecated: `await corpus.aio.{new}(...)`."
    return alias


def _twin_docs(cls: type[Corpus]) -> type[Corpus]:
    """Give each forwarding method the docstring of its `AsyncCorpus` twin."""
    for name, member in vars(cls).items():
        twin = getattr(AsyncCorpus, name, None)
        if inspect.isfunction(member) and member.__doc__ is None and twin is not None:
            member.__doc__ = twin.__doc__
    return cls


@_twin_docs
class Corpus:
    """The evidence corpus: sync saved PubMed queries, search, read documents, export, move
    checkpoints, keep project collections.

    Build it with `open_corpus()`. Use it as a context manager, or call `close()`.
    """

    def __init__(self, services: Services) -> None:
        self._aio = AsyncCorpus(services)
        self._pubmed = PubMed(self._aio.pubmed, self._run)

    def __repr__(self) -> str:
        return f"<Corpus {self._aio._state()}>"

    @property
    def aio(self) -> AsyncCorpus:
        """The same corpus with awaitable calls (`await corpus.aio.search(...)`)."""
        return self._aio

    @property
    def settings(self) -> Settings:
        return self._aio.settings

    @property
    def services(self) -> Services:
        """The use cases underneath (for what the library does not wrap)."""
        return self._aio.services

    @property
    def closed(self) -> bool:
        return self._aio.closed

    @property
    def pubmed(self) -> PubMed:
        """PubMed itself, asked now: `corpus.pubmed.search("asthma[mh]")`, `fetch`,
        `related`, `cite`, `fulltext`, `mesh`, `ids` and `match`."""
        return self._pubmed

    def _run(self, call: Coroutine[Any, Any, T]) -> T:
        future = self._aio._submit(call)
        try:
            return future.result()
        except BaseException:
            # Ctrl-C in a notebook: cancel the work on the loop too (its cleanup still runs).
            future.cancel()
            raise

    def sync(
        self,
        query_key: str,
        term: str | None = None,
        overlap_days: int = 5,
        progress: Callable[[SyncProgress], None] | None = None,
        *,
        rescan: bool = False,
        fulltext: bool | None = None,
    ) -> SyncReport:
        return self._run(
            self._aio.sync(
                query_key, term, overlap_days, progress, rescan=rescan, fulltext=fulltext
            )
        )

    @overload
    def search(
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
    def search(
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
    def search(
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
        # One call for both overloads: too many optional arguments for mypy to split the union.
        search = cast(
            "Callable[..., Coroutine[Any, Any, list[SearchHit] | SearchOutcome]]", self._aio.search
        )
        return self._run(
            search(
                query,
                top_k,
                quality_bias,
                evidence_type=evidence_type,
                year_min=year_min,
                year_max=year_max,
                min_quality=min_quality,
                journals=journals,
                doc_ids=doc_ids,
                include_retracted=include_retracted,
                study_design=study_design,
                query_key=query_key,
                trial_id=trial_id,
                source=source,
                group_by=group_by,
            )
        )

    def get(self, doc_id: str | int) -> Document:
        return self._run(self._aio.get(doc_id))

    @renamed(RENAMED_FILTERS)
    def export(
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
        return self._run(
            self._aio.export(
                target,
                format=format,
                query_key=query_key,
                evidence_type=evidence_type,
                year_min=year_min,
                year_max=year_max,
                min_quality=min_quality,
                journals=journals,
                study_design=study_design,
                include_retracted=include_retracted,
                added_since=added_since,
                new=new,
            )
        )

    def create_project(self, project_id: str, *, hybrid: bool = True) -> ProjectCreated:
        return self._run(self._aio.create_project(project_id, hybrid=hybrid))

    def list_projects(self) -> ProjectList:
        return self._run(self._aio.list_projects())

    def store_chunks(self, project_id: str, items: Sequence[Mapping[str, Any]]) -> ChunksStored:
        return self._run(self._aio.store_chunks(project_id, items))

    def find_chunks(
        self,
        project_id: str,
        query: str,
        *,
        top_k: int | None = None,
        filters: Mapping[str, Any] | None = None,
        full_text: bool = False,
        hybrid: bool = False,
    ) -> FoundChunks:
        return self._run(
            self._aio.find_chunks(
                project_id, query, top_k=top_k, filters=filters, full_text=full_text, hybrid=hybrid
            )
        )

    def inspect_collection(self, project_id: str, sample: int = 0) -> CollectionInspection:
        return self._run(self._aio.inspect_collection(project_id, sample))

    def sync_status(self, job_id: str) -> SyncJobStatus:
        return self._run(self._aio.sync_status(job_id))

    def checkpoint(self, query_key: str) -> CheckpointState:
        return self._run(self._aio.checkpoint(query_key))

    def set_checkpoint(
        self,
        query_key: str,
        last_edat: str | datetime,
        *,
        reason: str = "manual set (library)",
        actor: str = "library",
    ) -> CheckpointMove:
        return self._run(self._aio.set_checkpoint(query_key, last_edat, reason=reason, actor=actor))

    def forget_query(self, query_key: str, *, records: bool = False) -> ForgetReport:
        return self._run(self._aio.forget_query(query_key, records=records))

    def prune_records(self, *, dry_run: bool = False) -> PruneReport:
        return self._run(self._aio.prune_records(dry_run=dry_run))

    def checkpoints(self) -> list[CheckpointSummary]:
        return self._run(self._aio.checkpoints())

    def overview(self) -> CorpusOverview:
        return self._run(self._aio.overview())

    def close(self) -> None:
        # Not through `_run`: closing stops the loop the other calls run on.
        self._aio._shutdown()

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
        await self._aio.close()

    acheckpoint = _deprecated("acheckpoint")
    aclose = _deprecated("aclose")
    aget = _deprecated("aget")
    aset_checkpoint = _deprecated("aset_checkpoint")
    astore_chunks = _deprecated("astore_chunks")
    async_status = _deprecated("async_status")
    asearch = _deprecated("asearch")
    sync_async = _deprecated("sync_async")

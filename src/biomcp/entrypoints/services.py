"""The composition root: `Services`, the adapters and use cases of one process, from `Settings`.

What the server, the CLI and the library hold. Each adapter and use case is built on first use
and kept (`cached_property`); `aclose()` closes exactly the adapters it built, newest first, once.
Tests hand in adapters by keyword (`Services(settings, vectors=store)`); those are never closed
here. A plain class, not a dependency-injection container: every backend is picked by one setting
read once and built lazily, which a cached attribute says in fewer lines than providers do.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from functools import cached_property
from typing import Any, TypeVar

from biomcp import __version__
from biomcp.domain.relevance import floor_for
from biomcp.entrypoints import backends
from biomcp.entrypoints.projects_file import read_projects_file
from biomcp.entrypoints.settings import Settings
from biomcp.ports.clock import Clock
from biomcp.ports.embeddings import Embedder
from biomcp.ports.entrez import EntrezClient
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.vectors import Fusion, VectorStore
from biomcp.usecases.diagnostics import Diagnostics
from biomcp.usecases.documents import GetDocument
from biomcp.usecases.export import ExportRecords
from biomcp.usecases.fulltext_sync import FullTextConfig
from biomcp.usecases.jobs import SyncJobs
from biomcp.usecases.live import ClientStatus, LiveConfig, LivePubMed
from biomcp.usecases.maintenance import IndexMaintenance
from biomcp.usecases.projects import ProjectCollections, ProjectLimits
from biomcp.usecases.saved_queries import SavedQueries
from biomcp.usecases.search import SearchConfig, SearchCorpus
from biomcp.usecases.sync import SyncConfig, SyncDelta

__all__ = ["Services", "build_services"]

_log = logging.getLogger("biomcp.services")

_T = TypeVar("_T")


class Services:
    """The use cases of one process, the adapters under them, and the means to warm them up,
    check them and release them."""

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Clock | None = None,
        metadata: MetadataStore | None = None,
        vectors: VectorStore | None = None,
        embedder: Embedder | None = None,
        entrez: EntrezClient | None = None,
    ) -> None:
        """`settings` pick and configure the adapters; an adapter given here is used instead
        of building one (`entrez` serves both the syncs and the live tools) and is not closed."""
        self.settings = settings
        given = {
            "clock": clock,
            "metadata": metadata,
            "vectors": vectors,
            "embedder": embedder,
            "ncbi": entrez,
            "entrez": entrez,
        }
        self._given = {name: value for name, value in given.items() if value is not None}
        vars(self).update(self._given)  # what `cached_property` would have stored
        self._closers: list[Callable[[], object]] = []
        self._warming: asyncio.Task[None] | None = None
        self._building: Future[VectorStore] | None = None
        self._begin_lock = threading.Lock()

    def _opened(self, item: _T, close: Callable[[], object] | None = None) -> _T:
        """Remember how to close `item` (default: its `aclose`, if any), newest last."""
        closer = close or getattr(item, "aclose", None)
        if closer is not None:
            self._closers.append(closer)
        return item

    # --- adapters --------------------------------------------------------------------------

    @cached_property
    def clock(self) -> Clock:
        return backends.build_clock()

    @cached_property
    def ncbi(self) -> EntrezClient:
        """NCBI itself; syncs use it directly, as they must see records as PubMed has them now."""
        return self._opened(backends.build_ncbi(self.settings))

    @cached_property
    def entrez(self) -> EntrezClient:
        """What the live tools use: NCBI behind the response cache, unless the cache is off."""
        ncbi = self.ncbi
        cache = backends.build_entrez_cache(self.settings, ncbi)
        if cache is None:
            return ncbi
        return self._opened(cache, cache.close)  # its own store; NCBI closes on its own

    @cached_property
    def metadata(self) -> MetadataStore:
        return self._opened(backends.build_metadata(self.settings, self.clock))

    @cached_property
    def vectors(self) -> VectorStore:
        return self._opened(backends.build_vectors(self.settings))

    @cached_property
    def embedder(self) -> Embedder:
        """The configured model, behind the embedding cache unless BIOMCP_EMBEDDING_CACHE=0."""
        model = self._opened(backends.build_embedder(self.settings))
        if not self.settings.biomcp_embedding_cache:
            return model
        cache = backends.build_embedding_cache(self.settings, model)
        return self._opened(cache, cache.close)  # its own store; the model closes itself

    # --- use cases -------------------------------------------------------------------------

    @cached_property
    def sync(self) -> SyncDelta:
        s = self.settings
        config = SyncConfig(
            collection=s.biomcp_collection,
            initial_days=s.biomcp_sync_initial_days or None,
            batch_size=s.biomcp_sync_batch_size,
            lock_timeout_s=s.biomcp_sync_lock_timeout_s,
            follow_revisions=s.biomcp_sync_revisions,
            sentence_vectors=s.biomcp_sentence_vectors,
            fulltext=FullTextConfig(
                max_chars=s.biomcp_fulltext_max_chars,
                recheck_days=s.biomcp_fulltext_recheck_days,
                per_sync=s.biomcp_fulltext_per_sync,
                lock_timeout_s=s.biomcp_sync_lock_timeout_s,
            ),
        )
        return SyncDelta(
            self.ncbi, self.metadata, self.vectors, self.embedder, clock=self.clock, config=config
        )

    @cached_property
    def search(self) -> SearchCorpus:
        s = self.settings
        vectors, embedder = self.vectors, self.embedder
        config = SearchConfig(
            collection=s.biomcp_collection,
            alpha=s.biomcp_search_alpha,
            fusion=Fusion(s.biomcp_search_fusion),
            oversample=s.biomcp_search_oversample,
            floor=floor_for(embedder.model_id, s.biomcp_relevance_floor),
        )
        return SearchCorpus(vectors, embedder, config=config, metadata=self.metadata)

    @cached_property
    def documents(self) -> GetDocument:
        return GetDocument(self.metadata)

    @cached_property
    def export(self) -> ExportRecords:
        return ExportRecords(self.metadata, clock=self.clock)

    @cached_property
    def saved_queries(self) -> SavedQueries:
        return SavedQueries(
            self.metadata,
            clock=self.clock,
            vectors=lambda: self.vectors,  # opened only when a query's records are deleted
            collection=self.settings.biomcp_collection,
            lock_timeout_s=self.settings.biomcp_sync_lock_timeout_s,
        )

    @cached_property
    def diagnostics(self) -> Diagnostics:
        return Diagnostics(
            self.metadata,
            lambda: self.vectors,
            lambda: self.entrez,
            collection=self.settings.biomcp_collection,
            embedder=lambda: self.embedder,
        )

    @cached_property
    def live(self) -> LivePubMed:
        s = self.settings
        client = backends.entrez_settings(s)
        config = LiveConfig(
            base_url=client.base_url,
            tool=client.tool,
            email=client.email,
            api_key_in_use=bool(client.api_key),
            request_delay_ms=client.request_delay_ms,
            post_threshold=client.post_threshold,
            server_name="bio-mcp",
            server_version=__version__,
            collection=s.biomcp_collection,
            cache_ttl_s=s.biomcp_ncbi_cache_ttl_s,
            cache_max_mb=s.biomcp_ncbi_cache_max_mb,
            deadline_s=s.ncbi_total_deadline_ms / 1000,
        )
        status = _client_status(self.ncbi)
        return LivePubMed(
            self.entrez, config=config, metadata=self.metadata, vectors=self.vectors, status=status
        )

    @cached_property
    def maintenance(self) -> IndexMaintenance:
        sync = self.sync
        return IndexMaintenance(
            self.metadata,
            sync.indexer,
            derive=sync.derive,
            lock_timeout_s=self.settings.biomcp_sync_lock_timeout_s,
        )

    @cached_property
    def jobs(self) -> SyncJobs:
        jobs = SyncJobs(
            self.sync,
            self.metadata,
            clock=self.clock,
            max_running=self.settings.biomcp_sync_max_running,
        )
        return self._opened(jobs)  # after the stores it writes to: its jobs stop first

    @cached_property
    def projects(self) -> ProjectCollections:
        path = self.settings.projects_file
        return ProjectCollections(
            self.metadata,
            self.vectors,
            self.embedder,
            limits=self.project_limits,
            configured=lambda: read_projects_file(path),
            sentence_vectors=self.settings.biomcp_sentence_vectors,
        )

    @property
    def project_limits(self) -> ProjectLimits:
        """The project tools' limits, from the settings alone (builds no store)."""
        s = self.settings
        return ProjectLimits(
            top_k_max=s.biomcp_project_top_k_max,
            top_k_default=min(6, s.biomcp_project_top_k_max),
            max_chars_per_chunk=s.biomcp_project_max_chars,
            alpha=s.biomcp_search_alpha,
            store_timeout_s=s.biomcp_project_store_timeout_s,
            find_timeout_s=s.biomcp_project_find_timeout_s,
            hybrid_timeout_s=s.biomcp_project_hybrid_timeout_s,
            inspect_timeout_s=s.biomcp_project_inspect_timeout_s,
            list_timeout_s=s.biomcp_project_list_timeout_s,
        )

    # --- warm-up, readiness, closing -------------------------------------------------------

    def start_warm_up(self) -> None:
        """Start loading what the first search needs, in the background (see `warm_up`). A
        server calls this at start-up, so it answers `initialize` and `tools/list` at once and
        its first `rag_search` rarely waits for the model."""
        if self._warming is None:
            self._warming = asyncio.get_running_loop().create_task(self._warm())

    def begin_warm_up(self) -> None:
        """Start the warm-up's building and loading now, in a thread of its own: callable from
        any thread and before any event loop runs (the stdio server calls it when the first
        message arrives, while it is still importing the MCP SDK). `start_warm_up` then waits
        for that thread instead of building again. Only the adapters are built there: the
        layers import downwards only, so its imports cannot wait in a cycle on the SDK's."""
        with self._begin_lock:
            if self._building is not None:
                return
            building: Future[VectorStore] = Future()
            self._building = building

        def run() -> None:
            try:
                building.set_result(self._build_warm())
            except BaseException as exc:  # handed to whoever awaits the warm-up
                building.set_exception(exc)

        threading.Thread(target=run, name="biomcp-warm-up", daemon=True).start()

    def _build_warm(self) -> VectorStore:
        load = getattr(self.embedder, "load", None)
        if load is not None:
            load()
        vectors = self.vectors
        self.metadata  # noqa: B018 - SQLAlchemy's import alone is a few tenths of a second
        return vectors

    async def ready(self) -> None:
        """Wait for the warm-up, when one was started. Every call that uses the stores or the
        embedder waits here first: nothing builds an adapter (or imports its libraries) while
        the warm-up does, so two threads never import one module at once. The warm-up goes on
        if the caller is cancelled."""
        warming = self._warming
        if warming is None or warming.done():
            return
        if warming.get_loop() is not asyncio.get_running_loop():
            return  # started on another event loop (a finished `asyncio.run`): nothing to join
        await asyncio.shield(warming)

    async def warm_up(self) -> None:
        """Load the embedding model (when the embedder has one to load) and open the corpus's
        vector collection: the adapters are built and the model loaded in a worker thread,
        then the collection is opened. Failures are only logged: the call that needs the
        model or the store reports them in its own answer."""
        self.start_warm_up()
        await self.ready()

    async def _warm(self) -> None:
        settings = self.settings
        try:
            if self._building is not None:
                vectors = await asyncio.wrap_future(self._building)
            else:
                vectors = await asyncio.to_thread(self._build_warm)
            await self.metadata.ping()  # opens the database (and checks its schema)
            collection = settings.biomcp_collection
            has_corpus = collection in await vectors.collections()
            chunks = await vectors.count(collection) if has_corpus else 0
            records = await self.metadata.count_documents()
        except Exception as exc:  # logged; the first real call reports it to its caller
            _log.warning(
                "warm-up stopped early (the first call that needs it will fail too; "
                "`biomcp doctor` checks the install): %s: %s",
                type(exc).__name__,
                exc,
            )
            return
        # One line for the client's server log: what this server runs on (no secret, no URL).
        embedder = self.embedder
        metadata = "sqlite" if settings.biomcp_database_url is None else "sql database"
        _log.info(
            "ready: %d records, %d chunks (%s + %s vectors, data folder %s); embeddings %s, %s",
            records,
            chunks,
            metadata,
            settings.biomcp_vector_backend,
            settings.biomcp_data_dir,
            embedder.model_id,
            getattr(embedder, "runtime", type(embedder).__name__),
        )

    def built(self, name: str) -> Any:
        """The part `name` (`ncbi`, `jobs`...) if this process has built it, else None.
        Asking never builds it."""
        return vars(self).get(name) if name in _BUILT else None

    async def readiness(self) -> dict[str, str]:
        """`ok` or the reason, per check: what `/readyz` reports. The warm-up is waited for,
        and each check answers, within a bound (see `Diagnostics.readiness`)."""
        return await self.diagnostics.readiness(warm_up=self.ready)

    async def aclose(self) -> None:
        """Close the adapters built so far (each once, newest first), once the warm-up (if
        any) has finished building them; the next use builds afresh."""
        await self.ready()
        if self._building is not None:  # begun in its thread, perhaps never awaited
            try:
                await asyncio.wrap_future(self._building)
            except Exception as exc:  # the warm-up's failure was its own to report
                _log.debug("warm-up had failed: %s", exc)
        closers, self._closers = self._closers, []
        for close in reversed(closers):
            try:
                done = close()
                if inspect.isawaitable(done):
                    await done
            except Exception as exc:  # closing the rest matters more
                _log.debug("closing %r failed: %s", close, exc)
        for name in _BUILT.difference(self._given):
            vars(self).pop(name, None)


#: The attributes built on first use (and forgotten on close, unless they were given).
_BUILT = frozenset(
    name for name, value in vars(Services).items() if isinstance(value, cached_property)
)


def _client_status(ncbi: EntrezClient) -> Callable[[], ClientStatus]:
    """The E-utilities client's figures, read when asked (defaults for a client without any)."""

    def status() -> ClientStatus:
        stats: Any = getattr(ncbi, "stats", None)
        if stats is None:
            return ClientStatus()
        return ClientStatus(
            requests=stats.requests,
            retries=stats.retries,
            last_success_at=stats.last_success_at,
            last_error=stats.last_error,
            queue_length=getattr(ncbi, "queue_length", 0),
        )

    return status


def build_services(settings: Settings | None = None) -> Services:
    """The services for `settings` (default: from the environment). Connects to nothing."""
    return Services(settings or Settings())

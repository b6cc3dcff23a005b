"""What the server, the CLI and the library hold: `Services`, the use cases of one process over
a `Container`, with the background warm-up, a readiness check and `aclose()`, which closes
exactly the adapters that were created.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field

from biomcp.entrypoints.container import Container, close_adapters, project_limits
from biomcp.entrypoints.settings import Settings
from biomcp.ports.clock import Clock
from biomcp.ports.entrez import EntrezClient
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.vectors import VectorStore
from biomcp.usecases.diagnostics import Diagnostics
from biomcp.usecases.documents import GetDocument
from biomcp.usecases.export import ExportRecords
from biomcp.usecases.jobs import SyncJobs
from biomcp.usecases.live import LivePubMed
from biomcp.usecases.maintenance import IndexMaintenance
from biomcp.usecases.projects import ProjectCollections, ProjectLimits
from biomcp.usecases.saved_queries import SavedQueries
from biomcp.usecases.search import SearchCorpus
from biomcp.usecases.sync import SyncDelta

__all__ = ["Services", "build_services"]

_log = logging.getLogger("biomcp.services")


@dataclass
class Services:
    """The use cases of one process, and the means to check and release what they hold."""

    settings: Settings
    container: Container
    _warming: asyncio.Task[None] | None = field(default=None, init=False, repr=False)
    _building: Future[VectorStore] | None = field(default=None, init=False, repr=False)
    _begin_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def sync(self) -> SyncDelta:
        return self.container.sync()

    @property
    def projects(self) -> ProjectCollections:
        return self.container.projects()

    @property
    def project_limits(self) -> ProjectLimits:
        """The project tools' limits, from the settings alone (builds no store)."""
        return project_limits(self.settings)

    @property
    def search(self) -> SearchCorpus:
        return self.container.search()

    @property
    def documents(self) -> GetDocument:
        return self.container.documents()

    @property
    def export(self) -> ExportRecords:
        return self.container.export()

    @property
    def diagnostics(self) -> Diagnostics:
        return self.container.diagnostics()

    @property
    def saved_queries(self) -> SavedQueries:
        return self.container.saved_queries()

    @property
    def live(self) -> LivePubMed:
        return self.container.live()

    @property
    def metadata(self) -> MetadataStore:
        return self.container.metadata()

    @property
    def vectors(self) -> VectorStore:
        return self.container.vectors()

    @property
    def entrez(self) -> EntrezClient:
        return self.container.entrez()

    @property
    def clock(self) -> Clock:
        return self.container.clock()

    @property
    def maintenance(self) -> IndexMaintenance:
        return self.container.maintenance()

    @property
    def jobs(self) -> SyncJobs:
        return self.container.jobs()

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
        embedder = self.container.embedder()
        load = getattr(embedder, "load", None)
        if load is not None:
            load()
        vectors: VectorStore = self.container.vectors()
        self.container.metadata()  # SQLAlchemy's import alone is a few tenths of a second
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
        embedder = self.container.embedder()
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

    async def readiness(self) -> dict[str, str]:
        """`ok` or the reason, per store: what `/readyz` reports (after the warm-up)."""
        await self.ready()
        return await self.diagnostics.readiness()

    async def aclose(self) -> None:
        """Close the adapters that were created (each once, newest first), once the warm-up
        (if any) has finished building them."""
        await self.ready()
        if self._building is not None:  # begun in its thread, perhaps never awaited
            try:
                await asyncio.wrap_future(self._building)
            except Exception as exc:  # the warm-up's failure was its own to report
                _log.debug("warm-up had failed: %s", exc)
        await close_adapters(self.container)


def build_services(settings: Settings | None = None) -> Services:
    """The services for `settings` (default: from the environment). Connects to nothing."""
    settings = settings or Settings()
    container = Container(settings=settings)
    return Services(settings, container)

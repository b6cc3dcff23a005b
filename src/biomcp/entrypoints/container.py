"""The composition root: the only module that names concrete adapters.

`Container` (dependency-injector) turns one `Settings` into the adapters and use cases. The
adapters connect lazily, so building the container touches no network, database or model;
`close_adapters` closes exactly the adapters that were created. What the server, the CLI and
the library hold is `services.Services`, over a container.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from dependency_injector import containers, providers

from biomcp import __version__
from biomcp.adapters.clock import SystemClock
from biomcp.entrypoints.projects_file import read_projects_file
from biomcp.entrypoints.settings import Settings
from biomcp.ports.clock import Clock
from biomcp.ports.embeddings import Embedder
from biomcp.ports.entrez import EntrezClient
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.projects import ProjectRegistry
from biomcp.ports.vectors import Fusion, VectorStore
from biomcp.usecases.diagnostics import Diagnostics
from biomcp.usecases.documents import GetDocument
from biomcp.usecases.export import ExportRecords
from biomcp.usecases.jobs import SyncJobs
from biomcp.usecases.live import ClientStatus, LiveConfig, LivePubMed
from biomcp.usecases.maintenance import IndexMaintenance
from biomcp.usecases.projects import ProjectCollections, ProjectLimits
from biomcp.usecases.saved_queries import SavedQueries
from biomcp.usecases.search import SearchConfig, SearchCorpus
from biomcp.usecases.sync import SyncConfig, SyncDelta

if TYPE_CHECKING:
    from biomcp.adapters.embeddings import CachingEmbedder
    from biomcp.adapters.entrez.client import HttpEntrezClient
    from biomcp.adapters.sql import SqlMetadataStore

_log = logging.getLogger("biomcp.services")

# The adapters are imported by the factories that build them, not here: a server answers
# `initialize` and `tools/list` without loading SQLAlchemy, faiss, tantivy or the HTTP client
# (benchmarks/startup.py), and a process builds only what it uses.

__all__ = [
    "Container",
    "EvaluationIndex",
    "SchemaState",
    "close_adapters",
    "database_schema",
    "migrate_database",
    "project_limits",
]

_T = TypeVar("_T")


class _Opened:
    """The adapters created so far, in creation order (closed in reverse)."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    def add(self, item: _T) -> _T:
        self.items.append(item)
        return item


def _ncbi(settings: Settings, opened: _Opened) -> HttpEntrezClient:
    from biomcp.adapters.entrez.client import EntrezSettings, HttpEntrezClient

    return opened.add(HttpEntrezClient(EntrezSettings.from_env(settings.ncbi_environ())))


def _entrez(settings: Settings, ncbi: HttpEntrezClient, opened: _Opened) -> EntrezClient:
    """The client the live tools use: NCBI behind the EFetch / EInfo response cache, unless
    BIOMCP_NCBI_CACHE_TTL_S or BIOMCP_NCBI_CACHE_MAX_MB is 0."""
    if settings.biomcp_ncbi_cache_ttl_s <= 0 or settings.biomcp_ncbi_cache_max_mb <= 0:
        return ncbi
    from biomcp.adapters.entrez.cache import CachingEntrezClient

    return opened.add(
        CachingEntrezClient(
            ncbi,
            settings.biomcp_data_dir / "ncbi-cache.sqlite3",
            ttl_s=settings.biomcp_ncbi_cache_ttl_s,
            max_bytes=settings.biomcp_ncbi_cache_max_mb * 1024 * 1024,
            namespace=settings.ncbi_eutils_base_url,
        )
    )


def _live(
    settings: Settings,
    entrez: EntrezClient,
    ncbi: HttpEntrezClient,
    metadata: MetadataStore,
    vectors: VectorStore,
) -> LivePubMed:
    client = ncbi.settings

    def status() -> ClientStatus:
        stats = ncbi.stats
        return ClientStatus(
            requests=stats.requests,
            retries=stats.retries,
            last_success_at=stats.last_success_at,
            last_error=stats.last_error,
            queue_length=ncbi.queue_length,
        )

    config = LiveConfig(
        base_url=client.base_url,
        tool=client.tool,
        email=client.email,
        api_key_in_use=bool(client.api_key),
        request_delay_ms=client.request_delay_ms,
        post_threshold=client.post_threshold,
        server_name="bio-mcp",
        server_version=__version__,
        collection=settings.biomcp_collection,
        cache_ttl_s=settings.biomcp_ncbi_cache_ttl_s,
        cache_max_mb=settings.biomcp_ncbi_cache_max_mb,
        deadline_s=settings.ncbi_total_deadline_ms / 1000,
    )
    return LivePubMed(entrez, config=config, metadata=metadata, vectors=vectors, status=status)


def _metadata(settings: Settings, clock: Clock, opened: _Opened) -> SqlMetadataStore:
    """The SQL store: the metadata port and the project registry port."""
    from biomcp.adapters.sql import SqlMetadataStore

    return opened.add(
        SqlMetadataStore(
            settings.biomcp_database_url, data_dir=settings.biomcp_data_dir, clock=clock
        )
    )


def _vectors(settings: Settings, opened: _Opened) -> VectorStore:
    if settings.biomcp_vector_backend == "weaviate":
        from biomcp.adapters.vectors.weaviate_store import WeaviateVectorStore

        key = settings.weaviate_api_key
        return opened.add(
            WeaviateVectorStore(
                settings.weaviate_url,
                grpc_port=settings.weaviate_grpc_port,
                api_key=key.get_secret_value() if key else None,
                corpus_collection=settings.biomcp_collection,
            )
        )
    from biomcp.adapters.vectors import EmbeddedVectorStore

    return opened.add(EmbeddedVectorStore(settings.biomcp_data_dir / "vectors"))


def _embedder(settings: Settings, opened: _Opened) -> Embedder:
    from biomcp.adapters.embeddings import CachingEmbedder, HashingEmbedder

    inner: Embedder
    if settings.biomcp_embeddings == "openai":
        from biomcp.adapters.embeddings.openai import OpenAIEmbedder

        key = settings.openai_api_key
        inner = OpenAIEmbedder(
            settings.biomcp_openai_model,
            api_key=key.get_secret_value() if key is not None else "",
            base_url=settings.openai_base_url,
            dimensions=settings.biomcp_openai_dimensions,
        )
    elif settings.hashing_embeddings:
        inner = HashingEmbedder(max_tokens=256)
    elif settings.biomcp_embeddings == "onnx":
        from biomcp.adapters.embeddings.onnx import OnnxEmbedder

        inner = OnnxEmbedder(
            settings.biomcp_onnx_model_path,
            threads=settings.biomcp_embed_threads,
            precision=settings.biomcp_onnx_precision,
            fused_cache=settings.biomcp_data_dir / "cache" / "models",
        )
    else:
        from biomcp.adapters.embeddings.hf import HfEmbedder

        inner = HfEmbedder(
            settings.biomcp_hf_model,
            device=settings.biomcp_hf_device,
            quantize=settings.biomcp_hf_quantize and settings.biomcp_hf_device == "cpu",
        )
    opened.add(inner)
    if not settings.biomcp_embedding_cache:
        return inner
    return opened.add(CachingEmbedder(inner, settings.biomcp_data_dir / "embeddings.sqlite3"))


def _maintenance(settings: Settings, metadata: MetadataStore, sync: SyncDelta) -> IndexMaintenance:
    return IndexMaintenance(
        metadata,
        sync.indexer,
        derive=sync.derive,
        lock_timeout_s=settings.biomcp_sync_lock_timeout_s,
    )


def _jobs(
    settings: Settings, sync: SyncDelta, metadata: MetadataStore, clock: Clock, opened: _Opened
) -> SyncJobs:
    # Registered after the stores it writes to: closed (its jobs stopped) before them.
    return opened.add(
        SyncJobs(sync, metadata, clock=clock, max_running=settings.biomcp_sync_max_running)
    )


def _sync_config(settings: Settings) -> SyncConfig:
    return SyncConfig(
        collection=settings.biomcp_collection,
        initial_days=settings.biomcp_sync_initial_days or None,
        batch_size=settings.biomcp_sync_batch_size,
        lock_timeout_s=settings.biomcp_sync_lock_timeout_s,
        follow_revisions=settings.biomcp_sync_revisions,
    )


def _search_config(settings: Settings) -> SearchConfig:
    return SearchConfig(
        collection=settings.biomcp_collection,
        alpha=settings.biomcp_search_alpha,
        fusion=Fusion(settings.biomcp_search_fusion),
        oversample=settings.biomcp_search_oversample,
    )


def project_limits(settings: Settings) -> ProjectLimits:
    return ProjectLimits(
        top_k_max=settings.biomcp_project_top_k_max,
        top_k_default=min(6, settings.biomcp_project_top_k_max),
        max_chars_per_chunk=settings.biomcp_project_max_chars,
        alpha=settings.biomcp_search_alpha,
        store_timeout_s=settings.biomcp_project_store_timeout_s,
        find_timeout_s=settings.biomcp_project_find_timeout_s,
        hybrid_timeout_s=settings.biomcp_project_hybrid_timeout_s,
        inspect_timeout_s=settings.biomcp_project_inspect_timeout_s,
        list_timeout_s=settings.biomcp_project_list_timeout_s,
    )


def _projects(
    settings: Settings, registry: ProjectRegistry, vectors: VectorStore, embedder: Embedder
) -> ProjectCollections:
    path = settings.projects_file
    return ProjectCollections(
        registry,
        vectors,
        embedder,
        limits=project_limits(settings),
        configured=lambda: read_projects_file(path),
    )


class Container(containers.DeclarativeContainer):
    """Providers of every adapter and use case, from `settings`."""

    settings = providers.Dependency(instance_of=Settings)
    opened = providers.Singleton(_Opened)
    clock = providers.Singleton(SystemClock)

    #: NCBI itself; syncs use it directly, as they must see records as PubMed has them now.
    ncbi = providers.Singleton(_ncbi, settings, opened)
    entrez = providers.Singleton(_entrez, settings, ncbi, opened)
    metadata = providers.Singleton(_metadata, settings, clock, opened)
    vectors = providers.Singleton(_vectors, settings, opened)
    embedder = providers.Singleton(_embedder, settings, opened)

    sync = providers.Singleton(
        SyncDelta,
        ncbi,
        metadata,
        vectors,
        embedder,
        clock=clock,
        config=providers.Callable(_sync_config, settings),
    )
    search = providers.Singleton(
        SearchCorpus,
        vectors,
        embedder,
        config=providers.Callable(_search_config, settings),
        metadata=metadata,
    )
    documents = providers.Singleton(GetDocument, metadata)
    export = providers.Singleton(ExportRecords, metadata, clock=clock)
    saved_queries = providers.Singleton(
        SavedQueries,
        metadata,
        clock=clock,
        vectors=vectors.provider,  # opened only when a query's records are deleted
        collection=providers.Callable(lambda s: s.biomcp_collection, settings),
        lock_timeout_s=providers.Callable(lambda s: s.biomcp_sync_lock_timeout_s, settings),
    )
    live = providers.Singleton(_live, settings, entrez, ncbi, metadata, vectors)
    diagnostics = providers.Singleton(
        Diagnostics,
        metadata,
        vectors.provider,
        entrez.provider,
        collection=providers.Callable(lambda s: s.biomcp_collection, settings),
    )
    maintenance = providers.Singleton(_maintenance, settings, metadata, sync)
    jobs = providers.Singleton(_jobs, settings, sync, metadata, clock, opened)
    projects = providers.Singleton(_projects, settings, metadata, vectors, embedder)


async def close_adapters(container: Container) -> None:
    """Close the adapters `container` created (each once, newest first) and forget them."""
    opened: _Opened = container.opened()
    for item in reversed(opened.items):
        close = getattr(item, "aclose", None)
        if close is not None:
            try:
                await close()
            except Exception:  # noqa: S112 - closing the rest matters more
                continue
    opened.items.clear()
    container.reset_singletons()


class EvaluationIndex:
    """What `biomcp eval beir` indexes into: a throwaway embedded store in `root` and the
    configured embedder (never the corpus's embedding cache), behind a persistent cache at
    `cache_path` when one is given, so a second run embeds nothing."""

    def __init__(self, settings: Settings, root: Path, cache_path: Path | None) -> None:
        from biomcp.adapters.embeddings import CachingEmbedder
        from biomcp.adapters.vectors import EmbeddedVectorStore

        self._plain = Container(
            settings=settings.model_copy(update={"biomcp_embedding_cache": False})
        )
        self.vectors: VectorStore = EmbeddedVectorStore(root / "vectors")
        embedder: Embedder = self._plain.embedder()
        self._cache: CachingEmbedder | None = (
            CachingEmbedder(embedder, cache_path) if cache_path is not None else None
        )
        self.embedder: Embedder = self._cache if self._cache is not None else embedder

    @property
    def cache_stats(self) -> dict[str, int] | None:
        """Hits and misses of the embedding cache so far (None without a cache)."""
        if self._cache is None:
            return None
        return {"hits": self._cache.hits, "misses": self._cache.misses}

    async def aclose(self) -> None:
        try:
            await self.vectors.aclose()
        finally:
            try:
                if self._cache is not None:
                    await self._cache.aclose()
            finally:
                await close_adapters(self._plain)


@dataclass(frozen=True, slots=True)
class SchemaState:
    """The metadata database's schema: its URL (password redacted), its revision (None before
    the first migration) and the newest revision this bio-mcp ships."""

    database: str
    current: str | None
    head: str


def _database_url(url: str | None, data_dir: Path) -> tuple[str, str]:
    from biomcp.adapters.sql.engine import parse_url, redact, resolve_url

    target = resolve_url(url, data_dir, use_env=True)
    return target, redact(parse_url(target))


def migrate_database(url: str | None, data_dir: Path) -> SchemaState:
    """Migrate the metadata database (`url`, else the configured one) to the newest revision.

    Raises:
        MetadataStoreError: the database cannot be reached or migrated.
    """
    from biomcp.adapters.sql import upgrade

    target, shown = _database_url(url, data_dir)
    head = upgrade(target)
    return SchemaState(shown, head, head)


def database_schema(url: str | None, data_dir: Path) -> SchemaState:
    """Where the metadata database's schema stands.

    Raises:
        MetadataStoreError: the database cannot be reached.
    """
    from biomcp.adapters.sql import current_revision, head_revision

    target, shown = _database_url(url, data_dir)
    return SchemaState(shown, current_revision(target), head_revision())

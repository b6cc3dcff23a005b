"""The adapters, each built from the settings: the only entry-point module that names them.

Each builder imports its adapter when called, so a process loads only the backends it uses and
a server answers `initialize` and `tools/list` without SQLAlchemy, faiss, tantivy or the HTTP
client (benchmarks/startup.py). The adapters connect lazily: building one touches no network,
database or model. `services.Services` calls these and closes what it built.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from biomcp.entrypoints.settings import Settings
from biomcp.ports.clock import Clock
from biomcp.ports.embeddings import Embedder
from biomcp.ports.entrez import EntrezClient
from biomcp.ports.vectors import VectorStore

if TYPE_CHECKING:
    from biomcp.adapters.backup import StoreBackup
    from biomcp.adapters.embeddings import CachingEmbedder
    from biomcp.adapters.entrez.cache import CachingEntrezClient
    from biomcp.adapters.entrez.client import EntrezSettings, HttpEntrezClient
    from biomcp.adapters.sql import SqlMetadataStore

__all__ = [
    "EvaluationIndex",
    "SchemaState",
    "build_backup",
    "build_clock",
    "build_embedder",
    "build_embedding_cache",
    "build_entrez_cache",
    "build_metadata",
    "build_ncbi",
    "build_vectors",
    "database_schema",
    "entrez_settings",
    "export_collection",
    "import_collection",
    "migrate_database",
]


def build_clock() -> Clock:
    from biomcp.adapters.clock import SystemClock

    return SystemClock()


def entrez_settings(settings: Settings) -> EntrezSettings:
    """The E-utilities client's values, from the typed `NCBI_*` settings."""
    from biomcp.adapters.entrez.client import EntrezSettings

    default = EntrezSettings()
    key = settings.ncbi_api_key
    shared = settings.biomcp_ncbi_shared_budget
    # Replicas over PostgreSQL share the budget in it; processes on one machine, a file.
    database = settings.biomcp_database_url or ""
    on_postgres = shared and database.lower().startswith(("postgresql", "postgres:"))
    return EntrezSettings(
        base_url=settings.ncbi_eutils_base_url,
        idconv_base_url=settings.ncbi_idconv_base_url,
        api_key=key.get_secret_value().strip() if key is not None else None,
        tool=(settings.ncbi_tool_identifier or "").strip() or default.tool,
        email=(settings.ncbi_admin_email or "").strip() or None,
        request_delay_ms=settings.ncbi_request_delay_ms,
        max_retries=settings.ncbi_max_retries,
        max_response_bytes=settings.ncbi_max_response_mb * 1024 * 1024,
        budget_dir=settings.biomcp_data_dir if shared and not on_postgres else None,
        budget_database_url=database if on_postgres else None,
    )


def build_ncbi(settings: Settings) -> HttpEntrezClient:
    """NCBI itself, over HTTP."""
    from biomcp.adapters.entrez.client import HttpEntrezClient

    return HttpEntrezClient(entrez_settings(settings))


def _shared_cache_database(settings: Settings) -> str | None:
    """The PostgreSQL database that holds the caches replicas share (BIOMCP_SHARED_CACHES);
    None when each process keeps its cache files in the data folder."""
    database = settings.biomcp_database_url or ""
    on_postgres = database.lower().startswith(("postgresql", "postgres:"))
    return database if settings.biomcp_shared_caches and on_postgres else None


def build_entrez_cache(settings: Settings, ncbi: EntrezClient) -> CachingEntrezClient | None:
    """The EFetch / EInfo response cache in front of `ncbi`: in the PostgreSQL database when
    shared, else a file in the data folder; None when BIOMCP_NCBI_CACHE_TTL_S or
    BIOMCP_NCBI_CACHE_MAX_MB is 0."""
    if settings.biomcp_ncbi_cache_ttl_s <= 0 or settings.biomcp_ncbi_cache_max_mb <= 0:
        return None
    from biomcp.adapters.entrez.cache import CachingEntrezClient, EntrezCacheStore

    ttl_s, max_bytes = settings.biomcp_ncbi_cache_ttl_s, settings.biomcp_ncbi_cache_max_mb << 20
    database = _shared_cache_database(settings)
    store: EntrezCacheStore | Path = settings.biomcp_data_dir / "ncbi-cache.sqlite3"
    if database is not None:
        from biomcp.adapters.entrez.cache_pg import PgEntrezCache

        store = PgEntrezCache(database, ttl_s=ttl_s, max_bytes=max_bytes)
    return CachingEntrezClient(
        ncbi, store, ttl_s=ttl_s, max_bytes=max_bytes, namespace=settings.ncbi_eutils_base_url
    )


def build_metadata(settings: Settings, clock: Clock) -> SqlMetadataStore:
    """The SQL store: the metadata ports and the project registry."""
    from biomcp.adapters.sql import SqlMetadataStore

    return SqlMetadataStore(
        settings.biomcp_database_url, data_dir=settings.biomcp_data_dir, clock=clock
    )


def build_vectors(settings: Settings) -> VectorStore:
    """Weaviate when BIOMCP_VECTOR_BACKEND says so, else the embedded store in the data folder."""
    if settings.biomcp_vector_backend == "weaviate":
        from biomcp.adapters.vectors.weaviate_cluster import ReplicationPolicy
        from biomcp.adapters.vectors.weaviate_store import WeaviateVectorStore

        key = settings.weaviate_api_key
        return WeaviateVectorStore(
            settings.weaviate_url,
            grpc_port=settings.weaviate_grpc_port,
            api_key=key.get_secret_value() if key else None,
            corpus_collection=settings.biomcp_collection,
            replication=ReplicationPolicy(
                factor=settings.weaviate_replication_factor,
                async_replication=settings.weaviate_async_replication,
                read_consistency=settings.weaviate_read_consistency,
                write_consistency=settings.weaviate_write_consistency,
            ),
            query_timeout_s=settings.weaviate_timeout_s,
        )
    from biomcp.adapters.vectors import EmbeddedVectorStore

    return EmbeddedVectorStore(settings.biomcp_data_dir / "vectors")


def build_embedder(settings: Settings) -> Embedder:
    """The configured embedder (BIOMCP_EMBEDDINGS), without the embedding cache."""
    if settings.biomcp_embeddings == "openai":
        from biomcp.adapters.embeddings.openai import OpenAIEmbedder

        key = settings.openai_api_key
        return OpenAIEmbedder(
            settings.biomcp_openai_model,
            api_key=key.get_secret_value() if key is not None else "",
            base_url=settings.openai_base_url,
            dimensions=settings.biomcp_openai_dimensions,
        )
    if settings.hashing_embeddings:
        from biomcp.adapters.embeddings import HashingEmbedder

        return HashingEmbedder(max_tokens=256)
    if settings.biomcp_embeddings == "onnx":
        from biomcp.adapters.embeddings.onnx import OnnxEmbedder

        return OnnxEmbedder(
            settings.biomcp_onnx_model_path,
            threads=settings.biomcp_embed_threads,
            precision=settings.biomcp_onnx_precision,
            fused_cache=settings.biomcp_data_dir / "cache" / "models",
        )
    from biomcp.adapters.embeddings.hf import HfEmbedder

    return HfEmbedder(
        settings.biomcp_hf_model,
        device=settings.biomcp_hf_device,
        quantize=settings.biomcp_hf_quantize and settings.biomcp_hf_device == "cpu",
    )


def build_embedding_cache(settings: Settings, inner: Embedder) -> CachingEmbedder:
    """The corpus's embedding cache (BIOMCP_EMBEDDING_CACHE) in front of `inner`: in the
    PostgreSQL database when shared, else a file in the data folder."""
    from biomcp.adapters.embeddings import CachingEmbedder

    database = _shared_cache_database(settings)
    if database is None:
        return CachingEmbedder(inner, settings.biomcp_data_dir / "embeddings.sqlite3")
    from biomcp.adapters.embeddings.cache_pg import PgEmbeddingCache

    return CachingEmbedder(inner, PgEmbeddingCache(database))


async def export_collection(store: VectorStore, collection: str, path: Path) -> int:
    """Write `collection` of `store` whole to the file `path` (`adapters/vectors/export.py`)."""
    from biomcp.adapters.vectors.export import export_collection as export

    return await export(store, collection, path)


async def import_collection(store: VectorStore, path: Path) -> tuple[str, int]:
    """Write the collection in the file `path` back into `store`; its name and size."""
    from biomcp.adapters.vectors.export import import_collection as load

    return await load(store, path)


def build_backup(settings: Settings) -> StoreBackup:
    """`biomcp backup|restore`'s copier of the configured metadata and vector stores."""
    from biomcp import __version__
    from biomcp.adapters.backup import StoreBackup

    return StoreBackup(
        database_url=settings.biomcp_database_url,
        data_dir=settings.biomcp_data_dir,
        vector_backend=settings.biomcp_vector_backend,
        corpus_collection=settings.biomcp_collection,
        version=__version__,
    )


class EvaluationIndex:
    """What `biomcp eval beir` indexes into, with the configured embedder (never the corpus's
    embedding cache), behind a persistent cache at `cache_path` when one is given, so a second
    run embeds nothing.

    The store is a throwaway embedded one in `root`, or with `store="weaviate"` a collection of
    its own in the configured Weaviate, dropped on close. Each store is then measured on the
    same chunks and vectors."""

    def __init__(
        self, settings: Settings, root: Path, cache_path: Path | None, *, store: str = "embedded"
    ) -> None:
        from biomcp.adapters.embeddings import CachingEmbedder
        from biomcp.adapters.vectors import EmbeddedVectorStore

        self.store = store
        if store == "weaviate":
            weaviate = settings.model_copy(update={"biomcp_vector_backend": "weaviate"})
            self.vectors: VectorStore = build_vectors(weaviate)
            self.collection = f"BeirEval{uuid.uuid4().hex[:12]}"
        else:
            self.vectors = EmbeddedVectorStore(root / "vectors")
            self.collection = "BeirEval"
        self._model = build_embedder(settings)
        self._cache: CachingEmbedder | None = (
            CachingEmbedder(self._model, cache_path) if cache_path is not None else None
        )
        self.embedder: Embedder = self._cache if self._cache is not None else self._model

    @property
    def cache_stats(self) -> dict[str, int] | None:
        """Hits and misses of the embedding cache so far (None without a cache)."""
        if self._cache is None:
            return None
        return {"hits": self._cache.hits, "misses": self._cache.misses}

    async def aclose(self) -> None:
        """Drop a Weaviate collection of its own, then close the store, the cache's file and
        the model, each once."""
        try:
            try:
                if self.store == "weaviate":
                    await self.vectors.drop_collection(self.collection)
            finally:
                await self.vectors.aclose()
        finally:
            try:
                if self._cache is not None:
                    self._cache.close()
            finally:
                close = getattr(self._model, "aclose", None)
                if close is not None:
                    await close()


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

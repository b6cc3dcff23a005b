"""The Weaviate VectorStore (weaviate-client v4, async), for several replicas sharing a corpus.

* Vectors are client-supplied (a self-provided named vector `default`, HNSW, cosine distance).
* A port collection name maps to a Weaviate class name: the corpus keeps its configured class
  (`PubMedChunk`); other names are made valid class names (`project:x-1` -> `Project_x_1`).
  The collection's embedding model and dimension live in the class description as JSON.
* Hybrid search runs Weaviate's two arms as two server queries, concurrently (`bm25` on
  `text`, `near_vector` on the named vector), each taking max(limit * 5, 100) candidates
  after filtering, and fuses them with the domain's fusion functions: exactly what the
  embedded store does, so both stores have one ranking semantics and one contract suite.
  Weaviate's server-side `hybrid` normalizes over candidate sets it sizes itself, which made
  fused scores differ between the stores. `bm25` is Weaviate's raw BM25 score; `sim` is the
  cosine computed from the returned object vector, exact for every hit whichever arm found it.
* BM25 indexes only `text`, with the `word` tokenizer (lower-cased alphanumeric runs) and
  Weaviate's defaults k1 = 1.2, b = 0.75.
* Connection is lazy (first call). Every exception the client lets out of a port method
  becomes the port's error in one place (`_translating`): the client's own errors, and the
  transport failures of its HTTP and gRPC channels it does not wrap (a server killed
  mid-call: `httpx.ReadError`, a gRPC `UNAVAILABLE`), which are `VectorStoreUnavailableError`.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import math
import re
import uuid
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any, ParamSpec, TypeVar
from urllib.parse import urlparse

import grpc  # type: ignore[import-untyped]  # no stubs; installed with weaviate-client
import httpx
import weaviate
import weaviate.classes as wvc
from weaviate.classes.query import Filter, MetadataQuery
from weaviate.exceptions import WeaviateBaseError, WeaviateConnectionError

from biomcp.domain.fusion import candidate_count, ranked_fusion, relative_score_fusion
from biomcp.ports.vectors import (
    ChunkRecord,
    CollectionNotFoundError,
    CollectionStats,
    EmbeddingMismatchError,
    Fusion,
    InvalidVectorError,
    ObjectError,
    SearchFilters,
    StoreCheck,
    UpsertReport,
    VectorHit,
    VectorStoreError,
    VectorStoreUnavailableError,
)

__all__ = ["WeaviateVectorStore", "class_name"]

_VECTOR = "default"
_PROPERTIES = (
    "doc_id", "chunk_id", "text", "section", "year", "evidence_type", "quality_total",
    "journal", "pub_types", "edat", "lr", "source_url", "has_numbers", "metadata_json",
)  # fmt: skip
# Facets are one TEXT_ARRAY property of exact "key=value" strings (keys never hold "=").
_FACETS = "facets"
#: Documents per `delete_documents` request (their chunks, a few each, far below the objects
#: one delete may match).
_DELETE_DOCS = 200
#: What the client raises: its own errors, and its channels' that it lets through unwrapped.
_CLIENT_ERRORS = (WeaviateBaseError, httpx.HTTPError, grpc.RpcError, OSError)
#: Transport failures: the server is down, unreachable or went away mid-call.
_TRANSPORT_ERRORS = (WeaviateConnectionError, httpx.TransportError, OSError)
_RETRYABLE_GRPC = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})

P = ParamSpec("P")
R = TypeVar("R")
C = TypeVar("C", bound=type)


def class_name(collection: str) -> str:
    """A valid Weaviate class name for a port collection name."""
    cleaned = re.sub(r"[^0-9A-Za-z_]", "_", collection.strip()) or "Collection"
    if not cleaned[0].isalpha():
        cleaned = "C" + cleaned
    return cleaned[0].upper() + cleaned[1:]


def _check_vector(vector: Sequence[float], dim: int) -> list[float]:
    values = [float(v) for v in vector]
    if len(values) != dim:
        raise InvalidVectorError(f"vector has {len(values)} dimensions, the collection {dim}")
    if not all(math.isfinite(v) for v in values):
        raise InvalidVectorError("vector holds NaN or infinity")
    norm = math.sqrt(sum(v * v for v in values))
    if abs(norm - 1.0) > 1e-3:
        raise InvalidVectorError(f"vector is not unit length (norm {norm:.4f})")
    return values


def _matches_nothing(filters: SearchFilters | None) -> bool:
    """An empty allowed set (no evidence type, no journal, no doc id) admits no chunk."""
    if filters is None:
        return False
    sets = (filters.evidence_types, filters.journals, filters.doc_ids)
    facets_empty = any(not values for _, values in filters.facets or ())
    return facets_empty or any(s is not None and not s for s in sets)


def _facet(key: str, value: str) -> str:
    return f"{key}={value}"


def _filters(filters: SearchFilters | None) -> Any:
    if filters is None:
        return None
    parts: list[Any] = []
    if filters.evidence_types is not None:
        parts.append(
            Filter.by_property("evidence_type").contains_any(sorted(filters.evidence_types))
        )
    if filters.year_min is not None:
        parts.append(Filter.by_property("year").greater_or_equal(filters.year_min))
    if filters.year_max is not None:
        parts.append(Filter.by_property("year").less_or_equal(filters.year_max))
    if filters.min_quality is not None:
        parts.append(Filter.by_property("quality_total").greater_or_equal(filters.min_quality))
    if filters.journals is not None:
        journals = sorted(j.casefold() for j in filters.journals)
        parts.append(Filter.by_property("journal_key").contains_any(journals))
    if filters.doc_ids is not None:
        parts.append(Filter.by_property("doc_id").contains_any(sorted(filters.doc_ids)))
    for key, values in filters.facets or ():
        wanted = sorted(_facet(key, value) for value in values)
        parts.append(Filter.by_property(_FACETS).contains_any(wanted))
    if not parts:
        return None
    return Filter.all_of(parts) if len(parts) > 1 else parts[0]


def _translating(method: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """`method` with every client exception raised as the port's error (`from` it)."""

    @functools.wraps(method)
    async def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await method(*args, **kwargs)
        except _CLIENT_ERRORS as exc:
            raise _translate(exc) from exc

    return call


def _translating_port(cls: C) -> C:
    """`cls` with `_translating` around each of its public coroutine methods (the port)."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and inspect.iscoroutinefunction(member):
            setattr(cls, name, _translating(member))
    return cls


@_translating_port
class WeaviateVectorStore:
    """VectorStore on a Weaviate server (>= 1.27). `url` like `http://127.0.0.1:8080`."""

    def __init__(
        self,
        url: str,
        *,
        grpc_port: int = 50051,
        api_key: str | None = None,
        corpus_collection: str = "PubMedChunk",
    ) -> None:
        self._url = urlparse(url)
        self._grpc_port = grpc_port
        self._api_key = api_key
        self._corpus = corpus_collection
        self._client: weaviate.WeaviateAsyncClient | None = None
        self._lock = asyncio.Lock()
        self._dims: dict[str, int] = {}

    # --- plumbing ------------------------------------------------------------------------

    async def _connect(self) -> weaviate.WeaviateAsyncClient:
        async with self._lock:
            if self._client is None:
                secure = self._url.scheme == "https"
                host = self._url.hostname or "127.0.0.1"
                try:
                    client = weaviate.use_async_with_custom(
                        http_host=host,
                        http_port=self._url.port or (443 if secure else 80),
                        http_secure=secure,
                        grpc_host=host,
                        grpc_port=self._grpc_port,
                        grpc_secure=secure,
                        auth_credentials=(
                            wvc.init.Auth.api_key(self._api_key) if self._api_key else None
                        ),
                    )
                except (ValueError, WeaviateBaseError) as exc:  # bad host / port combination
                    raise VectorStoreUnavailableError(
                        f"cannot use Weaviate at {self._url.geturl()} (gRPC port "
                        f"{self._grpc_port}): {exc}"
                    ) from exc
                try:
                    await client.connect()
                except _CLIENT_ERRORS as exc:
                    await client.close()
                    raise VectorStoreUnavailableError(
                        f"cannot reach Weaviate at {self._url.geturl()}: {type(exc).__name__}"
                    ) from exc
                self._client = client
            return self._client

    def _name(self, collection: str) -> str:
        return self._corpus if collection == self._corpus else class_name(collection)

    async def _collection(self, collection: str) -> Any:
        client = await self._connect()
        name = self._name(collection)
        exists = await client.collections.exists(name)
        if not exists:
            raise CollectionNotFoundError(f"no collection {collection!r} (class {name})")
        return client.collections.use(name)

    async def _manifest(self, collection: str) -> dict[str, Any]:
        handle = await self._collection(collection)
        config = await handle.config.get()
        try:
            manifest = json.loads(config.description or "{}")
        except json.JSONDecodeError:
            manifest = {}
        if isinstance(manifest, dict) and "dim" in manifest:
            self._dims[collection] = int(manifest["dim"])
            return manifest
        return {}

    async def _dim(self, collection: str) -> int:
        if collection not in self._dims:
            manifest = await self._manifest(collection)
            if "dim" not in manifest:
                raise VectorStoreError(f"collection {collection!r} has no bio-mcp manifest")
        return self._dims[collection]

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    # --- schema --------------------------------------------------------------------------

    async def ensure_schema(
        self, collection: str, *, dim: int, model_id: str, allow_model_change: bool = False
    ) -> None:
        client = await self._connect()
        name = self._name(collection)
        if await client.collections.exists(name):
            manifest = await self._manifest(collection)
            same = manifest.get("model_id") == model_id and manifest.get("dim") == dim
            if same:
                await self._add_missing_properties(client.collections.get(name))
                self._dims[collection] = dim
                return
            if not allow_model_change:
                stored = f"{manifest.get('model_id')} ({manifest.get('dim')}-d)"
                raise EmbeddingMismatchError(collection, stored, f"{model_id} ({dim}-d)")
            await client.collections.delete(name)
        await client.collections.create(
            name,
            description=json.dumps({"model_id": model_id, "dim": dim, "collection": collection}),
            vector_config=wvc.config.Configure.Vectors.self_provided(
                name=_VECTOR,
                vector_index_config=wvc.config.Configure.VectorIndex.hnsw(
                    distance_metric=wvc.config.VectorDistances.COSINE
                ),
            ),
            inverted_index_config=wvc.config.Configure.inverted_index(bm25_b=0.75, bm25_k1=1.2),
            properties=_schema_properties(),
        )
        self._dims[collection] = dim

    async def _add_missing_properties(self, handle: Any) -> None:
        """A collection made before a property existed (facets) gains it."""
        config = await handle.config.get()
        have = {p.name for p in config.properties}
        for missing in (p for p in _schema_properties() if p.name not in have):
            await handle.config.add_property(missing)

    async def sample(self, collection: str, n: int) -> list[VectorHit]:
        handle = await self._collection(collection)
        if n <= 0:
            return []
        found = await handle.query.fetch_objects(limit=n, return_properties=list(_PROPERTIES))
        return [_hit(obj, 0.0, None, None) for obj in found.objects]

    async def collections(self) -> list[str]:
        client = await self._connect()
        configs = await client.collections.list_all(simple=True)
        names: list[str] = []
        for name, config in configs.items():
            try:
                manifest = json.loads(config.description or "{}")
            except json.JSONDecodeError:
                continue
            if isinstance(manifest, dict) and "collection" in manifest:
                names.append(str(manifest["collection"]))
            elif name == self._corpus:
                names.append(name)
        return sorted(names)

    # --- writes --------------------------------------------------------------------------

    async def upsert_chunks(self, collection: str, chunks: Sequence[ChunkRecord]) -> UpsertReport:
        handle = await self._collection(collection)
        dim = await self._dim(collection)
        errors: list[ObjectError] = []
        objects: list[Any] = []
        for chunk in chunks:
            try:
                vector = _check_vector(chunk.vector, dim)
            except InvalidVectorError as exc:
                errors.append(ObjectError(chunk.uuid, str(exc)))
                continue
            objects.append(
                wvc.data.DataObject(
                    uuid=chunk.uuid, properties=_properties(chunk), vector={_VECTOR: vector}
                )
            )
        if not objects:
            return UpsertReport(0, tuple(errors))
        result = await handle.data.insert_many(objects)
        for index, error in result.errors.items():
            errors.append(ObjectError(str(objects[index].uuid), str(error.message)))
        return UpsertReport(len(objects) - len(result.errors), tuple(errors))

    async def delete_chunks(
        self, collection: str, doc_id: str, *, keep: Collection[str] = ()
    ) -> int:
        handle = await self._collection(collection)
        where = Filter.by_property("doc_id").equal(doc_id)
        for chunk_id in sorted(keep):
            where = where & Filter.by_property("chunk_id").not_equal(chunk_id)
        result = await handle.data.delete_many(where=where)
        return int(result.successful)

    async def delete_documents(self, collection: str, doc_ids: Collection[str]) -> int:
        handle = await self._collection(collection)
        wanted = sorted(set(doc_ids))
        deleted = 0
        for start in range(0, len(wanted), _DELETE_DOCS):
            part = wanted[start : start + _DELETE_DOCS]
            result = await handle.data.delete_many(
                where=Filter.by_property("doc_id").contains_any(part)
            )
            deleted += int(result.successful)
        return deleted

    # --- reads ---------------------------------------------------------------------------

    async def existing_uuids(self, collection: str, uuids: Collection[str]) -> set[str]:
        objects = await self._objects_by_id(collection, uuids, return_properties=[])
        return {str(o.uuid) for o in objects}

    async def fetch_chunks(self, collection: str, uuids: Collection[str]) -> list[ChunkRecord]:
        objects = await self._objects_by_id(
            collection, uuids, include_vector=True, return_properties=[*_PROPERTIES, _FACETS]
        )
        return [_record(obj) for obj in objects]

    async def _objects_by_id(
        self, collection: str, uuids: Collection[str], **fetch: Any
    ) -> list[Any]:
        """The stored objects among `uuids` (ids that are not UUIDs cannot be stored), fetched
        200 ids per query with `fetch` passed on to `fetch_objects`."""
        handle = await self._collection(collection)
        wanted = sorted(u for u in set(uuids) if _is_uuid(u))
        found: list[Any] = []
        for start in range(0, len(wanted), 200):
            batch = wanted[start : start + 200]
            response = await handle.query.fetch_objects(
                filters=Filter.by_id().contains_any(batch), limit=len(batch), **fetch
            )
            found.extend(response.objects)
        return found

    async def count(self, collection: str) -> int:
        handle = await self._collection(collection)
        result = await handle.aggregate.over_all(total_count=True)
        return int(result.total_count or 0)

    async def drop_collection(self, collection: str) -> None:
        client = await self._connect()
        name = self._name(collection)
        if await client.collections.exists(name):
            await client.collections.delete(name)
        self._dims.pop(collection, None)

    async def verify(self, collection: str) -> StoreCheck:
        """Weaviate keeps and checks its own files: only the collection's existence is ours."""
        await self._manifest(collection)
        return StoreCheck()

    async def stats(self, collection: str) -> CollectionStats:
        manifest = await self._manifest(collection)
        handle = await self._collection(collection)
        total = await handle.aggregate.over_all(total_count=True)
        groups = await handle.aggregate.over_all(
            group_by=wvc.aggregate.GroupByAggregate(prop="doc_id", limit=1_000_000),
            total_count=True,
        )
        return CollectionStats(
            name=collection,
            count=int(total.total_count or 0),
            dim=int(manifest.get("dim", 0)),
            model_id=str(manifest.get("model_id", "")),
            documents=len(groups.groups),
        )

    async def hybrid_search(
        self,
        collection: str,
        text: str,
        vector: Sequence[float] | None,
        *,
        limit: int = 20,
        alpha: float = 0.5,
        fusion: Fusion = Fusion.RELATIVE_SCORE,
        filters: SearchFilters | None = None,
    ) -> list[VectorHit]:
        if not 0.0 <= alpha <= 1.0 or math.isnan(alpha):
            raise VectorStoreError(f"alpha must be within [0, 1], got {alpha}")
        handle = await self._collection(collection)
        dim = await self._dim(collection)
        query_vector = _check_vector(vector, dim) if vector is not None else None
        if limit <= 0 or _matches_nothing(filters):
            return []
        where = _filters(filters)
        k = candidate_count(limit)
        weight = 0.0 if query_vector is None else alpha
        metadata = MetadataQuery(score=True, distance=True)

        async def keyword_arm() -> list[Any]:
            if weight >= 1.0:
                return []
            response = await handle.query.bm25(
                query=text, query_properties=["text"], limit=k, filters=where,
                return_metadata=metadata,
            )  # fmt: skip
            return list(response.objects)

        async def vector_arm() -> list[Any]:
            if query_vector is None or weight <= 0.0:
                return []
            response = await handle.query.near_vector(
                near_vector=query_vector, target_vector=_VECTOR, limit=k, filters=where,
                return_metadata=metadata,
            )  # fmt: skip
            return list(response.objects)

        keyword, dense = await asyncio.gather(keyword_arm(), vector_arm())
        objects = {str(o.uuid): o for o in [*keyword, *dense]}
        bm25 = {str(o.uuid): float(o.metadata.score or 0.0) for o in keyword}
        # Cosine distance on unit vectors: similarity = 1 - distance (no vectors shipped).
        sims: dict[str, float | None] = {
            str(o.uuid): 1.0 - float(o.metadata.distance)
            for o in dense
            if o.metadata.distance is not None
        }
        vec_arm = [(str(o.uuid), sims.get(str(o.uuid)) or 0.0) for o in dense]
        fuse = ranked_fusion if fusion is Fusion.RANKED else relative_score_fusion
        fused = fuse(vec_arm, list(bm25.items()), weight)[:limit]
        if query_vector is not None:
            # Keyword-only hits of the final page still report their similarity: fetch just
            # their vectors (at most `limit`, instead of every candidate's).
            missing = [u for u, _ in fused if u not in sims]
            if missing:
                sims.update(await self._similarities(handle, query_vector, missing))
        return [_hit(objects[u], score, bm25.get(u), sims.get(u)) for u, score in fused]

    async def _similarities(
        self, handle: Any, query: list[float], uuids: list[str]
    ) -> dict[str, float | None]:
        response = await handle.query.fetch_objects(
            filters=Filter.by_id().contains_any(uuids),
            limit=len(uuids),
            include_vector=True,
        )
        return {str(o.uuid): _cosine(query, o.vector) for o in response.objects}


def _schema_properties() -> list[Any]:
    prop, dt, tok = wvc.config.Property, wvc.config.DataType, wvc.config.Tokenization

    def field(name: str, data_type: Any = dt.TEXT) -> Any:
        # Exact-match properties: filterable, never part of the BM25 text.
        return prop(name=name, data_type=data_type, tokenization=tok.FIELD, index_searchable=False)

    return [
        field("doc_id"),
        field("chunk_id"),
        prop(name="text", data_type=dt.TEXT, tokenization=tok.WORD, index_searchable=True),
        field("section"),
        prop(name="year", data_type=dt.INT),
        field("evidence_type"),
        prop(name="quality_total", data_type=dt.NUMBER),
        field("journal"),
        field("journal_key"),
        field("pub_types", dt.TEXT_ARRAY),
        field("edat"),
        field("lr"),
        field("source_url"),
        prop(name="has_numbers", data_type=dt.BOOL),
        prop(
            name="metadata_json",
            data_type=dt.TEXT,
            index_searchable=False,
            index_filterable=False,
        ),
        field(_FACETS, dt.TEXT_ARRAY),
    ]


def _properties(chunk: ChunkRecord) -> dict[str, Any]:
    values: dict[str, Any] = {
        "doc_id": chunk.doc_id,
        "chunk_id": chunk.chunk_id,
        "text": chunk.text,
        "section": chunk.section,
        "year": chunk.year,
        "evidence_type": chunk.evidence_type,
        "quality_total": chunk.quality_total,
        "journal": chunk.journal,
        "journal_key": chunk.journal.casefold() if chunk.journal else None,
        "pub_types": list(chunk.pub_types),
        "edat": chunk.edat,
        "lr": chunk.lr,
        "source_url": chunk.source_url,
        "has_numbers": chunk.has_numbers,
        "metadata_json": json.dumps(dict(chunk.metadata), sort_keys=True),
        _FACETS: sorted(_facet(k, v) for k, values in chunk.facets.items() for v in values),
    }
    return {k: v for k, v in values.items() if v is not None}


def _cosine(query: list[float] | None, stored: Any) -> float | None:
    if query is None or stored is None:
        return None
    vector = stored.get(_VECTOR) if isinstance(stored, dict) else stored
    if not vector:
        return None
    return float(sum(a * b for a, b in zip(query, vector, strict=False)))


def _hit(obj: Any, score: float, bm25: float | None, sim: float | None) -> VectorHit:
    props = obj.properties
    try:
        extra = json.loads(props.get("metadata_json") or "{}")
    except json.JSONDecodeError:
        extra = {}
    return VectorHit(
        uuid=str(obj.uuid),
        doc_id=str(props.get("doc_id", "")),
        chunk_id=str(props.get("chunk_id", "")),
        score=score,
        bm25=bm25,
        sim=sim,
        text=props.get("text"),
        section=props.get("section"),
        evidence_type=props.get("evidence_type"),
        quality_total=props.get("quality_total"),
        year=props.get("year"),
        journal=props.get("journal"),
        has_numbers=props.get("has_numbers"),
        metadata=extra if isinstance(extra, dict) else {},
    )


def _record(obj: Any) -> ChunkRecord:
    """A stored object as the record it was written from."""
    props = obj.properties
    vector = obj.vector.get(_VECTOR) if isinstance(obj.vector, dict) else obj.vector
    facets: dict[str, list[str]] = {}
    for entry in props.get(_FACETS) or ():
        key, _, value = str(entry).partition("=")
        facets.setdefault(key, []).append(value)
    hit = _hit(obj, 0.0, None, None)
    return ChunkRecord(
        uuid=hit.uuid,
        doc_id=hit.doc_id,
        chunk_id=hit.chunk_id,
        text=hit.text or "",
        vector=list(vector or ()),
        section=hit.section,
        year=hit.year,
        evidence_type=hit.evidence_type,
        quality_total=hit.quality_total,
        journal=hit.journal,
        pub_types=tuple(props.get("pub_types") or ()),
        edat=props.get("edat"),
        lr=props.get("lr"),
        source_url=props.get("source_url"),
        has_numbers=hit.has_numbers,
        metadata=hit.metadata,
        facets={k: tuple(v) for k, v in facets.items()},
    )


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except (ValueError, TypeError, AttributeError):
        return False
    return True


def _translate(exc: Exception) -> VectorStoreError:
    """The port's error for a client exception: a transport failure is unavailability."""
    lost = isinstance(exc, _TRANSPORT_ERRORS) or (
        isinstance(exc, grpc.RpcError)
        and callable(code := getattr(exc, "code", None))
        and code() in _RETRYABLE_GRPC
    )
    if lost:
        return VectorStoreUnavailableError(f"Weaviate unreachable: {type(exc).__name__}")
    message = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
    return VectorStoreError(f"Weaviate error: {message}")

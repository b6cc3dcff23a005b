"""The Weaviate VectorStore (weaviate-client v4, async), for several replicas sharing a corpus.

* Vectors are client-supplied (a self-provided named vector `default`, HNSW, cosine distance).
* A port collection name maps to a Weaviate class name: the corpus keeps its configured class
  (`PubMedChunk`); other names are made valid class names (`project:x-1` -> `Project_x_1`).
  The collection's embedding model and dimension live in the class description as JSON.
* `search_arms` runs Weaviate's two arms as two server queries, concurrently (`bm25` on
  `text`, `near_vector` on the named vector), and returns them unfused: the ranking above the
  stores fuses them as it does the embedded store's arms. Weaviate's server-side `hybrid`
  normalizes over candidate sets it sizes itself, which made fused scores differ between the
  stores. `bm25` is Weaviate's raw BM25 score; `hits` computes the cosine from the object's
  stored vector.
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
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any, ParamSpec, TypeVar
from urllib.parse import urlparse

import grpc  # type: ignore[import-untyped]  # no stubs; installed with weaviate-client
import httpx
import weaviate
import weaviate.classes as wvc
from weaviate.classes.query import Filter, MetadataQuery
from weaviate.exceptions import WeaviateBaseError, WeaviateConnectionError

from biomcp.adapters.vectors.weaviate_objects import (
    FACETS,
    PROPERTIES,
    VECTOR,
    class_name,
    cosine,
    hit_of,
    is_uuid,
    matches_nothing,
    properties_of,
    record_of,
    schema_properties,
    where_filter,
)
from biomcp.ports.vectors import (
    ArmHit,
    Arms,
    ChunkRecord,
    CollectionNotFoundError,
    CollectionStats,
    EmbeddingMismatchError,
    InvalidVectorError,
    ObjectError,
    SearchFilters,
    StoreCheck,
    UpsertReport,
    VectorHit,
    VectorStoreError,
    VectorStoreUnavailableError,
    check_unit_vector,
)

__all__ = ["WeaviateVectorStore"]

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

    #: A batch is written object by object: part of it may be taken.
    atomic_batches = False

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
                name=VECTOR,
                vector_index_config=wvc.config.Configure.VectorIndex.hnsw(
                    distance_metric=wvc.config.VectorDistances.COSINE
                ),
            ),
            inverted_index_config=wvc.config.Configure.inverted_index(bm25_b=0.75, bm25_k1=1.2),
            properties=schema_properties(),
        )
        self._dims[collection] = dim

    async def _add_missing_properties(self, handle: Any) -> None:
        """A collection made before a property existed (facets) gains it."""
        config = await handle.config.get()
        have = {p.name for p in config.properties}
        for missing in (p for p in schema_properties() if p.name not in have):
            await handle.config.add_property(missing)

    async def sample(self, collection: str, n: int) -> list[VectorHit]:
        handle = await self._collection(collection)
        if n <= 0:
            return []
        found = await handle.query.fetch_objects(limit=n, return_properties=list(PROPERTIES))
        return [hit_of(obj, 0.0, None, None) for obj in found.objects]

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
                vector = check_unit_vector(chunk.vector, dim)
            except InvalidVectorError as exc:
                errors.append(ObjectError(chunk.uuid, str(exc)))
                continue
            objects.append(
                wvc.data.DataObject(
                    uuid=chunk.uuid, properties=properties_of(chunk), vector={VECTOR: vector}
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
            collection, uuids, include_vector=True, return_properties=[*PROPERTIES, FACETS]
        )
        return [record_of(obj) for obj in objects]

    async def _objects_by_id(
        self, collection: str, uuids: Collection[str], **fetch: Any
    ) -> list[Any]:
        """The stored objects among `uuids` (ids that are not UUIDs cannot be stored), fetched
        200 ids per query with `fetch` passed on to `fetch_objects`."""
        handle = await self._collection(collection)
        wanted = sorted(u for u in set(uuids) if is_uuid(u))
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

    async def search_arms(
        self,
        collection: str,
        text: str,
        vector: Sequence[float] | None,
        *,
        keyword_limit: int,
        vector_limit: int,
        filters: SearchFilters | None = None,
    ) -> Arms:
        """Two server queries, run concurrently: `bm25` on `text` (its raw score) and
        `near_vector` on the named vector (cosine = 1 - distance)."""
        handle = await self._collection(collection)
        dim = await self._dim(collection)
        query = None if vector is None else check_unit_vector(vector, dim)
        if matches_nothing(filters):
            return Arms()
        where = where_filter(filters)
        metadata = MetadataQuery(score=True, distance=True)

        async def keyword_arm() -> tuple[ArmHit, ...]:
            if keyword_limit <= 0:
                return ()
            response = await handle.query.bm25(
                query=text, query_properties=["text"], limit=keyword_limit, filters=where,
                return_metadata=metadata,
            )  # fmt: skip
            return tuple(
                ArmHit(str(o.uuid), float(o.metadata.score or 0.0)) for o in response.objects
            )

        async def vector_arm() -> tuple[ArmHit, ...]:
            if query is None or vector_limit <= 0:
                return ()
            response = await handle.query.near_vector(
                near_vector=query, target_vector=VECTOR, limit=vector_limit, filters=where,
                return_metadata=metadata,
            )  # fmt: skip
            # Cosine distance on unit vectors: similarity = 1 - distance.
            return tuple(
                ArmHit(str(o.uuid), 1.0 - float(o.metadata.distance))
                for o in response.objects
                if o.metadata.distance is not None
            )

        keyword, dense = await asyncio.gather(keyword_arm(), vector_arm())
        return Arms(keyword=keyword, vector=dense)

    async def hits(
        self, collection: str, uuids: Collection[str], *, vector: Sequence[float] | None = None
    ) -> list[VectorHit]:
        """The objects of `uuids`; with `vector`, their vectors too (for the cosine)."""
        query = None if vector is None else check_unit_vector(vector, await self._dim(collection))
        objects = await self._objects_by_id(
            collection, uuids, include_vector=query is not None, return_properties=list(PROPERTIES)
        )
        return [hit_of(o, 0.0, None, cosine(query, o.vector)) for o in objects]


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

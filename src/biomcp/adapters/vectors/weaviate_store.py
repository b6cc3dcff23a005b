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
* BM25 searches `terms`: each chunk's text as the embedded store's analyzer turns it into
  terms (`lexical_analysis.py`), with k1 = 1.2, b = 0.75 and no stopword list of Weaviate's
  own (the query's terms are already without stopwords). A collection made before `terms`
  is searched on `text`, split into lower-cased words, and says so once per process: its
  manifest names no analyzer (`weaviate_objects.keyword_query`). The first `ensure_schema`
  of a write derives its terms in place (`weaviate_terms`) and names today's analyzer.
  Other processes read the manifest again within `_RECHECK_S` and search the terms from then.
* Connection is lazy (first call). Every exception the client lets out of a port method
  becomes the port's error in one place (`weaviate_connection.failing_over_port`).
* Several nodes (`weaviate_cluster.py`): a call whose node fails is repeated on the next node
  (every call is a read or an idempotent write). Reads refuse to answer when a shard may have
  no live copy, rather than answer from the shards that remain.
* The collections known to exist are remembered per process: a search asks Weaviate's schema
  nothing. A call that fails for another reason forgets them and is repeated once, so a
  collection dropped or rebuilt by another process is seen again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import weaviate.classes as wvc
from weaviate.classes.config import ConsistencyLevel
from weaviate.classes.query import Filter, MetadataQuery

from biomcp.adapters.vectors.lexical_analysis import ANALYZER
from biomcp.adapters.vectors.sentence_blobs import best_cosines, encode
from biomcp.adapters.vectors.weaviate_cluster import (
    Completeness,
    ReplicationPolicy,
    parse_nodes,
    quiet_batch_errors,
)
from biomcp.adapters.vectors.weaviate_connection import CLIENT_ERRORS, NodePool, failing_over_port
from biomcp.adapters.vectors.weaviate_objects import (
    FACETS,
    PROPERTIES,
    SENTENCES,
    VECTOR,
    class_name,
    cosine,
    hit_of,
    is_uuid,
    keyword_query,
    matches_nothing,
    properties_of,
    record_of,
    schema_properties,
    sentence_blob,
    where_filter,
)
from biomcp.adapters.vectors.weaviate_terms import derive_terms
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
    check_sentence_vectors,
    check_unit_vector,
)

__all__ = ["WeaviateVectorStore"]

#: Documents per `delete_documents` request (their chunks, a few each, far below the objects
#: one delete may match).
_DELETE_DOCS = 200
#: Objects per page when `stats` walks a collection.
_PAGE = 5_000
#: Seconds before a collection whose manifest names an older analyzer is read again: a write
#: in another process may have derived today's terms since.
_RECHECK_S = 30.0
_log = logging.getLogger("biomcp.vectors")


@failing_over_port
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
        replication: ReplicationPolicy | None = None,
        query_timeout_s: float = 10.0,
    ) -> None:
        """`url`: one node, or several comma-separated (see `parse_nodes`)."""
        try:
            nodes = parse_nodes(url, grpc_port)
        except ValueError as exc:
            raise VectorStoreUnavailableError(f"cannot use Weaviate: {exc}") from exc
        self._pool = NodePool(
            nodes,
            api_key=api_key,
            query_timeout_s=query_timeout_s,
            connect_errors=CLIENT_ERRORS,
        )
        self._policy = replication or ReplicationPolicy()
        self._corpus = corpus_collection
        self._dims: dict[str, int] = {}
        self._factors: dict[str, int] = {}
        #: The analyzer each collection's manifest names (None: made before `terms`).
        self._analyzers: dict[str, str | None] = {}
        #: When each collection's analyzer was read (`time.monotonic`).
        self._analyzer_read: dict[str, float] = {}
        self._known: set[str] = set()
        self._completeness = Completeness()
        self.schema_reads = 0
        quiet_batch_errors()

    # --- plumbing ------------------------------------------------------------------------

    async def _connect(self) -> Any:
        return await self._pool.client()

    def _forget(self) -> bool:
        """Forget what is known of the schema; True when anything was."""
        known = bool(self._known or self._dims or self._factors)
        self._known.clear()
        self._dims.clear()
        self._factors.clear()
        self._analyzers.clear()
        self._completeness.forget()
        return known

    def _name(self, collection: str) -> str:
        return self._corpus if collection == self._corpus else class_name(collection)

    async def _collection(self, collection: str, *, write: bool = False) -> Any:
        """The collection's handle at the consistency level of a read or a write. Its existence
        is asked once per process, then remembered (see `_forget`)."""
        client = await self._connect()
        name = self._name(collection)
        if name not in self._known:
            self.schema_reads += 1
            if not await client.collections.exists(name):
                raise CollectionNotFoundError(f"no collection {collection!r} (class {name})")
            self._known.add(name)
        level = self._policy.write_consistency if write else self._policy.read_consistency
        return client.collections.use(name).with_consistency_level(ConsistencyLevel(level))

    async def _whole(self, collection: str) -> Any:
        """The collection's handle for a read that must see every shard (else raise)."""
        handle = await self._collection(collection)
        factor = self._factors.get(collection)
        if factor is None:
            await self._manifest(collection)
            factor = self._factors.get(collection, 1)
        await self._completeness.check(await self._connect(), collection, factor)
        return handle

    async def _manifest(self, collection: str) -> dict[str, Any]:
        handle = await self._collection(collection)
        config = await handle.config.get()
        self._factors[collection] = int(getattr(config.replication_config, "factor", 1) or 1)
        try:
            manifest = json.loads(config.description or "{}")
        except json.JSONDecodeError:
            manifest = {}
        if isinstance(manifest, dict) and "dim" in manifest:
            self._dims[collection] = int(manifest["dim"])
            self._note_analyzer(collection, manifest.get("analyzer"))
            return manifest
        return {}

    def _note_analyzer(self, collection: str, analyzer: object) -> None:
        """Remember the analyzer of `collection`; say once when it is not today's."""
        known = analyzer if isinstance(analyzer, str) else None
        if known != ANALYZER and collection not in self._analyzers:
            _log.warning(
                "collection %r was indexed %s: its keyword search matches words as written, "
                "without stemming or spelling variants, until the next write to it (a sync, "
                "store_chunks) derives its terms again from the stored text",
                collection,
                "before keyword terms" if known is None else f"by the analyzer {known}",
            )
        self._analyzers[collection] = known
        self._analyzer_read[collection] = time.monotonic()

    def _analyzer_unsure(self, collection: str) -> bool:
        """Whether to read the manifest before a search: never read, or read naming an older
        analyzer more than `_RECHECK_S` ago."""
        if collection not in self._analyzers:
            return True
        if self._analyzers[collection] == ANALYZER:
            return False
        return time.monotonic() - self._analyzer_read.get(collection, 0.0) >= _RECHECK_S

    async def _dim(self, collection: str) -> int:
        if collection not in self._dims:
            manifest = await self._manifest(collection)
            if "dim" not in manifest:
                raise VectorStoreError(f"collection {collection!r} has no bio-mcp manifest")
        return self._dims[collection]

    async def aclose(self) -> None:
        await self._pool.aclose()
        self._forget()

    # --- schema --------------------------------------------------------------------------

    async def ensure_schema(
        self, collection: str, *, dim: int, model_id: str, allow_model_change: bool = False
    ) -> None:
        """Create the collection with the replication policy, or check the one there: the
        same model, the properties of today, and the policy where Weaviate can change it."""
        client = await self._connect()
        name = self._name(collection)
        self.schema_reads += 1
        if await client.collections.exists(name):
            manifest = await self._manifest(collection)
            same = manifest.get("model_id") == model_id and manifest.get("dim") == dim
            if same:
                handle = client.collections.use(name)
                config = await handle.config.get()
                await self._add_missing_properties(handle, config)
                await self._apply_replication(handle, config, collection)
                self._dims[collection] = dim
                self._known.add(name)
                if manifest.get("analyzer") != ANALYZER:
                    await self._refresh_terms(collection, manifest)
                return
            if not allow_model_change:
                stored = f"{manifest.get('model_id')} ({manifest.get('dim')}-d)"
                raise EmbeddingMismatchError(collection, stored, f"{model_id} ({dim}-d)")
            self._known.discard(name)
            await client.collections.delete(name)
        policy = self._policy
        await client.collections.create(
            name,
            description=json.dumps(
                {"model_id": model_id, "dim": dim, "collection": collection, "analyzer": ANALYZER}
            ),
            vector_config=wvc.config.Configure.Vectors.self_provided(
                name=VECTOR,
                vector_index_config=wvc.config.Configure.VectorIndex.hnsw(
                    distance_metric=wvc.config.VectorDistances.COSINE
                ),
            ),
            inverted_index_config=wvc.config.Configure.inverted_index(
                bm25_b=0.75, bm25_k1=1.2, stopwords_preset=wvc.config.StopwordsPreset.NONE
            ),
            replication_config=wvc.config.Configure.replication(
                factor=policy.factor, async_enabled=policy.async_enabled
            ),
            properties=schema_properties(),
        )
        self._dims[collection] = dim
        self._factors[collection] = policy.factor
        self._analyzers[collection] = ANALYZER
        self._known.add(name)

    async def _refresh_terms(self, collection: str, manifest: dict[str, Any]) -> None:
        """Derive the keyword terms of a collection indexed before today's analyzer, in place
        (`weaviate_terms`), then name the analyzer in its manifest."""
        handle = await self._collection(collection, write=True)
        patched = await derive_terms(handle)
        await handle.config.update(description=json.dumps({**manifest, "analyzer": ANALYZER}))
        self._analyzers[collection] = ANALYZER
        _log.info(
            "collection %r: keyword terms derived again for %d chunks (analyzer %s)",
            collection, patched, ANALYZER,
        )  # fmt: skip

    async def _add_missing_properties(self, handle: Any, config: Any) -> None:
        """A collection made before a property existed (facets) gains it."""
        have = {p.name for p in config.properties}
        for missing in (p for p in schema_properties() if p.name not in have):
            await handle.config.add_property(missing)

    async def _apply_replication(self, handle: Any, config: Any, collection: str) -> None:
        """Bring an existing collection to the policy where Weaviate allows it (async
        replication); say plainly where it does not (the replication factor)."""
        policy, current = self._policy, config.replication_config
        factor = int(getattr(current, "factor", 1) or 1)
        self._factors[collection] = factor
        if bool(getattr(current, "async_enabled", False)) != policy.async_enabled and factor > 1:
            await handle.config.update(
                replication_config=wvc.config.Reconfigure.replication(
                    async_enabled=policy.async_enabled
                )
            )
        if factor != policy.factor:
            _log.warning(
                "collection %r keeps %d cop%s of each shard, not the %d set: Weaviate does not "
                "change a collection's replication factor in place; rebuild it to apply it "
                "(biomcp index rebuild --reset)",
                collection, factor, "y" if factor == 1 else "ies", policy.factor,
            )  # fmt: skip

    async def sample(self, collection: str, n: int) -> list[VectorHit]:
        handle = await self._whole(collection)
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
        handle = await self._collection(collection, write=True)
        dim = await self._dim(collection)
        errors: list[ObjectError] = []
        objects: list[Any] = []
        for chunk in chunks:
            try:
                vector = check_unit_vector(chunk.vector, dim)
                sentences = encode(check_sentence_vectors(chunk.sentence_vectors, dim))
            except InvalidVectorError as exc:
                errors.append(ObjectError(chunk.uuid, str(exc)))
                continue
            objects.append(
                wvc.data.DataObject(
                    uuid=chunk.uuid,
                    properties=properties_of(chunk, sentences),
                    vector={VECTOR: vector},
                )
            )
        if not objects:
            return UpsertReport(0, tuple(errors))
        result = await handle.data.insert_many(objects)
        for index, error in result.errors.items():
            errors.append(ObjectError(str(objects[index].uuid), str(error.message)))
        if result.errors:  # the client's own record of them holds every vector: dropped
            first = next(iter(result.errors.values()))
            _log.warning(
                "Weaviate refused %d of %d objects in %r; the first: %s",
                len(result.errors), len(objects), collection, str(first.message)[:300],
            )  # fmt: skip
        return UpsertReport(len(objects) - len(result.errors), tuple(errors))

    async def delete_chunks(
        self, collection: str, doc_id: str, *, keep: Collection[str] = ()
    ) -> int:
        handle = await self._collection(collection, write=True)
        where = Filter.by_property("doc_id").equal(doc_id)
        for chunk_id in sorted(keep):
            where = where & Filter.by_property("chunk_id").not_equal(chunk_id)
        result = await handle.data.delete_many(where=where)
        return int(result.successful)

    async def delete_documents(self, collection: str, doc_ids: Collection[str]) -> int:
        handle = await self._collection(collection, write=True)
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

    async def sentence_scores(
        self, collection: str, uuids: Collection[str], vector: Sequence[float]
    ) -> dict[str, float]:
        """The sentence blobs of `uuids`, scored here against `vector`."""
        dim = await self._dim(collection)
        query = np.asarray(check_unit_vector(vector, dim), dtype=np.float32)
        objects = await self._objects_by_id(collection, uuids, return_properties=[SENTENCES])
        blobs = {str(obj.uuid): sentence_blob(obj.properties) for obj in objects}
        return best_cosines(blobs, dim, query)

    async def fetch_chunks(self, collection: str, uuids: Collection[str]) -> list[ChunkRecord]:
        objects = await self._objects_by_id(
            collection,
            uuids,
            include_vector=True,
            return_properties=[*PROPERTIES, FACETS, SENTENCES],
        )
        return [record_of(obj) for obj in objects]

    async def page_chunks(
        self, collection: str, *, after: str | None = None, limit: int = 500
    ) -> list[ChunkRecord]:
        handle = await self._whole(collection)
        if limit <= 0:
            return []
        response = await handle.query.fetch_objects(
            after=after,
            limit=limit,
            include_vector=True,
            return_properties=[*PROPERTIES, FACETS, SENTENCES],
        )
        return sorted((record_of(obj) for obj in response.objects), key=lambda r: r.uuid)

    async def _objects_by_id(
        self, collection: str, uuids: Collection[str], **fetch: Any
    ) -> list[Any]:
        """The stored objects among `uuids` (ids that are not UUIDs cannot be stored), fetched
        200 ids per query with `fetch` passed on to `fetch_objects`."""
        handle = await self._whole(collection)
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
        handle = await self._whole(collection)
        result = await handle.aggregate.over_all(total_count=True)
        return int(result.total_count or 0)

    async def drop_collection(self, collection: str) -> None:
        client = await self._connect()
        name = self._name(collection)
        self._known.discard(name)
        if await client.collections.exists(name):
            await client.collections.delete(name)
        self._dims.pop(collection, None)
        self._factors.pop(collection, None)
        self._analyzers.pop(collection, None)
        self._analyzer_read.pop(collection, None)

    async def verify(self, collection: str) -> StoreCheck:
        """Weaviate keeps and checks its own files: the collection's existence is ours, and
        whether its keyword terms are today's."""
        await self._manifest(collection)
        analyzer = self._analyzers.get(collection)
        if analyzer == ANALYZER:
            return StoreCheck()
        made = "before keyword terms" if analyzer is None else f"by the analyzer {analyzer}"
        return StoreCheck(
            (
                f"the collection was indexed {made}: keyword search matches words as written "
                "until the next write to it (a sync, store_chunks) derives its terms again",
            )
        )

    async def stats(self, collection: str) -> CollectionStats:
        """Counts by walking the collection page by page, each page one bounded query. An
        aggregate grouped by document is one query whose time grows with the corpus."""
        manifest = await self._manifest(collection)
        handle = await self._whole(collection)
        count, documents = 0, set()
        async for obj in handle.iterator(return_properties=["doc_id"], cache_size=_PAGE):
            count += 1
            documents.add(obj.properties.get("doc_id"))
        return CollectionStats(
            name=collection,
            count=count,
            dim=int(manifest.get("dim", 0)),
            model_id=str(manifest.get("model_id", "")),
            documents=len(documents),
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
        """Two server queries, run concurrently: `bm25` on `terms` (its raw score) and
        `near_vector` on the named vector (cosine = 1 - distance). Each returns ids and its
        score only: `hits` reads the properties of the few chunks the ranking keeps."""
        handle = await self._whole(collection)
        dim = await self._dim(collection)
        query = None if vector is None else check_unit_vector(vector, dim)
        if matches_nothing(filters):
            return Arms()
        if self._analyzer_unsure(collection):
            await self._manifest(collection)
        keywords, searched = keyword_query(text, self._analyzers.get(collection))
        where = where_filter(filters)

        async def keyword_arm() -> tuple[ArmHit, ...]:
            if keyword_limit <= 0 or not keywords:
                return ()
            response = await handle.query.bm25(
                query=keywords, query_properties=[searched], limit=keyword_limit, filters=where,
                return_metadata=MetadataQuery(score=True), return_properties=[],
            )  # fmt: skip
            return tuple(
                ArmHit(str(o.uuid), float(o.metadata.score or 0.0)) for o in response.objects
            )

        async def vector_arm() -> tuple[ArmHit, ...]:
            if query is None or vector_limit <= 0:
                return ()
            response = await handle.query.near_vector(
                near_vector=query, target_vector=VECTOR, limit=vector_limit, filters=where,
                return_metadata=MetadataQuery(distance=True), return_properties=[],
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

"""The VectorStore port: chunk collections that find candidates by BM25 and by vector.

A collection holds chunks of one embedding model and dimension: the corpus collection
(`BIOMCP_COLLECTION`, default `PubMedChunk`) and one per project. A store finds: each arm's
ranked candidates with their raw scores (`search_arms`), and the chunks of given ids with
their exact cosine to a query (`hits`). Fusing and ranking them is one rule above the stores
(`biomcp.usecases.ranking`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple, Protocol

__all__ = [
    "MAX_SENTENCE_VECTORS",
    "NORM_TOLERANCE",
    "ArmHit",
    "Arms",
    "ChunkRecord",
    "CollectionNotFoundError",
    "CollectionStats",
    "EmbeddingMismatchError",
    "Fusion",
    "InvalidVectorError",
    "ObjectError",
    "SearchFilters",
    "StoreCheck",
    "UpsertReport",
    "VectorHit",
    "VectorStore",
    "VectorStoreBusyError",
    "VectorStoreError",
    "VectorStoreUnavailableError",
    "check_sentence_vectors",
    "check_unit_vector",
]

#: How far from 1 a vector's norm may be.
NORM_TOLERANCE = 1e-3
#: The most sentence vectors one chunk may carry.
MAX_SENTENCE_VECTORS = 64


# --- errors --------------------------------------------------------------------------------


class VectorStoreError(Exception):
    """Base of every error a VectorStore raises."""


class VectorStoreUnavailableError(VectorStoreError):
    """The store cannot be reached or opened (server down, files unreadable)."""


class VectorStoreBusyError(VectorStoreError):
    """Another writer (another process, most often) held the collection for longer than the
    write wait. Retryable: the holder releases it when its write ends or when it dies.
    `holder` says who it is (pid, program, since), when known; never a path."""

    def __init__(self, message: str, *, holder: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.holder = holder


class CollectionNotFoundError(VectorStoreError):
    """The collection does not exist: call `ensure_schema` first."""


class InvalidVectorError(VectorStoreError):
    """A vector has the wrong dimension, is not unit length, or holds NaN / infinity."""


class EmbeddingMismatchError(VectorStoreError):
    """The collection was filled by another embedding model (or dimension); mixing vectors of
    two models makes similarity meaningless. Pass `allow_model_change=True` to migrate."""

    def __init__(self, collection: str, stored: str, requested: str) -> None:
        super().__init__(
            f"collection {collection!r} holds vectors of {stored}; refusing {requested} "
            "(re-embed the collection, or pass the migration flag to replace it)"
        )
        self.collection = collection
        self.stored = stored
        self.requested = requested


# --- values --------------------------------------------------------------------------------


class Fusion(StrEnum):
    RELATIVE_SCORE = "relative_score"
    RANKED = "ranked"


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    """One chunk to store. `uuid` is the stable key (`uuid5(ns, f"{doc_id}:{chunk_id}")` for
    PubMed chunks); `doc_id` is `pmid:<digits>` for the corpus, any id within a project.
    `metadata` is a JSON object (nested values allowed) returned with every hit; `facets` are
    the keyword values a `SearchFilters.facets` filter matches (tags, citekey, source...).
    `sentence_vectors` let a search score the chunk by its best sentence
    (`VectorStore.sentence_scores`)."""

    uuid: str
    doc_id: str
    chunk_id: str
    text: str
    vector: Sequence[float]
    section: str | None = None
    year: int | None = None
    evidence_type: str | None = None
    quality_total: float | None = None
    journal: str | None = None
    pub_types: tuple[str, ...] = ()
    edat: str | None = None
    lr: str | None = None
    source_url: str | None = None
    has_numbers: bool | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    facets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: The unit vectors of the chunk's sentences, same model as `vector` (empty: none kept,
    #: as for a chunk of one sentence). Stores may keep them at half precision.
    sentence_vectors: tuple[Sequence[float], ...] = ()

    @property
    def pmid(self) -> str | None:
        return self.doc_id.removeprefix("pmid:") if self.doc_id.startswith("pmid:") else None


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """Conjunctive filters; None means "any". `journals` match case-insensitively. `facets`:
    (key, values) pairs; a chunk passes when, for every key, one of its facet values under
    that key is among `values` (exact match). `exclude_facets`: (key, values) pairs; a chunk
    is dropped when, under any key, one of its facet values is among `values` (a chunk
    without that key passes)."""

    evidence_types: frozenset[str] | None = None
    year_min: int | None = None
    year_max: int | None = None
    min_quality: float | None = None
    journals: frozenset[str] | None = None
    doc_ids: frozenset[str] | None = None
    facets: tuple[tuple[str, frozenset[str]], ...] | None = None
    exclude_facets: tuple[tuple[str, frozenset[str]], ...] | None = None


@dataclass(frozen=True, slots=True)
class VectorHit:
    """One search result: both arms' raw scores (`bm25`, `sim` = cosine similarity; None when
    the chunk came from the other arm only) and the fused `score`."""

    uuid: str
    doc_id: str
    chunk_id: str
    score: float
    bm25: float | None = None
    sim: float | None = None
    text: str | None = None
    section: str | None = None
    evidence_type: str | None = None
    quality_total: float | None = None
    year: int | None = None
    journal: str | None = None
    has_numbers: bool | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


class ArmHit(NamedTuple):
    """One candidate of one arm: its chunk's uuid and the arm's raw score (BM25, or cosine
    similarity)."""

    uuid: str
    score: float


@dataclass(frozen=True, slots=True)
class Arms:
    """What each arm of a hybrid search found, best first: `keyword` by BM25 score, `vector`
    by cosine similarity (from the store's vector index: approximate membership, exact
    scores)."""

    keyword: tuple[ArmHit, ...] = ()
    vector: tuple[ArmHit, ...] = ()


def check_unit_vector(vector: Sequence[float], dim: int) -> list[float]:
    """The vector as floats, or InvalidVectorError saying why it is not a unit vector of
    `dim` dimensions (every store checks vectors with this one rule)."""
    try:
        values = [float(v) for v in vector]
    except (TypeError, ValueError) as exc:
        raise InvalidVectorError(f"vector is not a sequence of numbers ({exc})") from None
    if len(values) != dim:
        raise InvalidVectorError(
            f"vector has {len(values)} dimensions, the collection holds {dim}-d vectors"
        )
    if not all(math.isfinite(v) for v in values):
        raise InvalidVectorError("vector holds NaN or infinity")
    norm = math.sqrt(sum(v * v for v in values))
    if abs(norm - 1.0) > NORM_TOLERANCE:
        raise InvalidVectorError(f"vector is not unit length (norm {norm:.6f})")
    return values


def check_sentence_vectors(vectors: Sequence[Sequence[float]], dim: int) -> list[list[float]]:
    """The sentence vectors as floats, or InvalidVectorError saying which one is not a unit
    vector of `dim` dimensions, or that there are more than `MAX_SENTENCE_VECTORS`."""
    if len(vectors) > MAX_SENTENCE_VECTORS:
        raise InvalidVectorError(
            f"{len(vectors)} sentence vectors; a chunk carries at most {MAX_SENTENCE_VECTORS}"
        )
    checked = []
    for i, vector in enumerate(vectors):
        try:
            checked.append(check_unit_vector(vector, dim))
        except InvalidVectorError as exc:
            raise InvalidVectorError(f"sentence vector {i}: {exc}") from None
    return checked


@dataclass(frozen=True, slots=True)
class ObjectError:
    uuid: str
    message: str


@dataclass(frozen=True, slots=True)
class UpsertReport:
    upserted: int
    errors: tuple[ObjectError, ...] = ()


@dataclass(frozen=True, slots=True)
class CollectionStats:
    name: str
    count: int
    dim: int
    model_id: str
    documents: int


@dataclass(frozen=True, slots=True)
class StoreCheck:
    """What `VectorStore.verify` found in a collection's files."""

    #: damage still there (a checksum that fails, a derived index out of step with the rows)
    problems: tuple[str, ...] = ()
    #: damage found and repaired by this process since the last `verify`, each naming the
    #: collection, the file and what was done (a snapshot failing its checksum rebuilt)
    repaired: tuple[str, ...] = ()


# --- the port ------------------------------------------------------------------------------


class VectorStore(Protocol):
    """Chunk collections with hybrid search. All methods raise only `VectorStoreError`s."""

    @property
    def atomic_batches(self) -> bool:
        """Whether `upsert_chunks` writes the chunks it does not refuse in one transaction
        (all or none of them); when False a batch may be taken in part, and a caller that
        needs all or nothing reads back what it replaces to undo it."""
        ...

    async def ensure_schema(
        self, collection: str, *, dim: int, model_id: str, allow_model_change: bool = False
    ) -> None:
        """Create `collection` if missing. An existing collection must have been filled with
        the same `model_id` and `dim`, else EmbeddingMismatchError, unless
        `allow_model_change` (then its chunks are dropped and it takes the new model)."""
        ...

    async def upsert_chunks(self, collection: str, chunks: Sequence[ChunkRecord]) -> UpsertReport:
        """Insert or replace chunks by uuid (idempotent). A chunk with an invalid vector (its
        own or one of its sentence vectors) is reported in `errors` and not written; the
        others are.

        Raises:
            CollectionNotFoundError, VectorStoreUnavailableError.
        """
        ...

    async def delete_chunks(
        self, collection: str, doc_id: str, *, keep: Collection[str] = ()
    ) -> int:
        """Delete the chunks of `doc_id` whose chunk id is not in `keep`; returns how many."""
        ...

    async def delete_documents(self, collection: str, doc_ids: Collection[str]) -> int:
        """Delete every chunk of each of `doc_ids` (unknown ones are skipped); returns how many
        chunks went. One call for many documents (forgetting a saved query's records).

        Raises:
            CollectionNotFoundError, VectorStoreUnavailableError.
        """
        ...

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
        """The best `keyword_limit` chunks by BM25 over `text` and the `vector_limit` chunks
        nearest `vector`, each after filtering. An arm with limit 0 (or, for the vector arm,
        no `vector`) is not run; `vector` is checked whenever given.

        Raises:
            InvalidVectorError: a query vector of the wrong dimension or not unit length.
            CollectionNotFoundError, VectorStoreUnavailableError.
        """
        ...

    async def hits(
        self, collection: str, uuids: Collection[str], *, vector: Sequence[float] | None = None
    ) -> list[VectorHit]:
        """The stored chunks of `uuids` as hits (score 0, `bm25` None), in no set order; uuids
        not stored are left out. With `vector`, each hit's `sim` is its exact cosine to it.

        Raises:
            InvalidVectorError: a query vector of the wrong dimension or not unit length.
            CollectionNotFoundError, VectorStoreUnavailableError.
        """
        ...

    async def sentence_scores(
        self, collection: str, uuids: Collection[str], vector: Sequence[float]
    ) -> dict[str, float]:
        """uuid -> the highest cosine of the chunk's sentence vectors to `vector`, for each of
        `uuids` stored with sentence vectors (the others are left out).

        Raises:
            InvalidVectorError: a query vector of the wrong dimension or not unit length.
            CollectionNotFoundError, VectorStoreUnavailableError.
        """
        ...

    async def existing_uuids(self, collection: str, uuids: Collection[str]) -> set[str]:
        """Which of `uuids` are stored (lets a sync skip re-embedding unchanged chunks)."""
        ...

    async def fetch_chunks(self, collection: str, uuids: Collection[str]) -> list[ChunkRecord]:
        """The stored chunks of `uuids` whole (vector, metadata, facets included), in no set
        order; uuids not stored are left out. Lets a caller put back what it replaced.

        Raises:
            CollectionNotFoundError, VectorStoreUnavailableError.
        """
        ...

    async def page_chunks(
        self, collection: str, *, after: str | None = None, limit: int = 500
    ) -> list[ChunkRecord]:
        """Up to `limit` stored chunks whole, in uuid order, each with a uuid after `after`
        (from the first when None). Paging on the last uuid walks a collection once.

        Raises:
            CollectionNotFoundError, VectorStoreUnavailableError.
        """
        ...

    async def count(self, collection: str) -> int: ...

    async def drop_collection(self, collection: str) -> None:
        """Remove `collection` and everything in it, a damaged one included (nothing happens
        when it does not exist). Other processes find it gone on their next call.

        Raises:
            VectorStoreUnavailableError, VectorStoreBusyError.
        """
        ...

    async def verify(self, collection: str) -> StoreCheck:
        """Problems the store finds in its own files for `collection`, and the damage it
        repaired since the last `verify` (repairs happen at open, each logged as a warning);
        both empty when the store keeps no files of its own (a server).

        Raises:
            CollectionNotFoundError, VectorStoreUnavailableError.
        """
        ...

    async def stats(self, collection: str) -> CollectionStats: ...

    async def sample(self, collection: str, n: int) -> list[VectorHit]:
        """Up to `n` stored chunks (score 0), the same ones on every call while nothing is
        written; for showing what a collection holds.

        Raises:
            CollectionNotFoundError, VectorStoreUnavailableError.
        """
        ...

    async def collections(self) -> list[str]: ...

    async def aclose(self) -> None: ...

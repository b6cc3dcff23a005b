"""SearchCorpus: hybrid search over the corpus with the quality-biased rerank (spec 03 §7).

The query is embedded; `usecases.ranking` fuses the store's BM25 and vector arms, oversampled
(`top_k * oversample` fused candidates; relative-score fusion by default, `alpha` weighting the
vector arm, as Weaviate does), and with `quality_bias` reranks each candidate's fused score by
quality, section and the question's intent. The raw cosine similarity and BM25 score of each
arm are still reported (`sim`, `bm25`). The rerank then moves each of the best papers towards
its nearest neighbour's score (`neighbour_smoothed`, `SearchConfig.neighbour_share`; 0 turns it
off), reading their chunks' stored vectors. Without `quality_bias`, `score` is the fused score.

Retracted papers are left out unless `include_retracted` asks for them (then their hits carry
`retracted: true`). The flag is read from the metadata store at search time, not from the
vector store, so a paper retracted after it was indexed drops out without re-embedding; the
vector search is asked for more candidates while retracted ones keep the page short.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace

from biomcp.domain.fusion import SENTENCE_SHARE
from biomcp.domain.neighbours import NEIGHBOUR_SHARE
from biomcp.domain.relevance import RelevanceFloor
from biomcp.domain.rerank import RerankWeights
from biomcp.ports.embeddings import Embedder
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.vectors import (
    CollectionNotFoundError,
    EmbeddingMismatchError,
    Fusion,
    SearchFilters,
    VectorHit,
    VectorStore,
)
from biomcp.usecases.errors import InvalidRequestError, NotFoundError
from biomcp.usecases.indexing import ANCHOR, SECTION_PATH, SOURCE_FACET, STUDY_DESIGN
from biomcp.usecases.paper_results import (
    CHUNKS_PER_PAPER,
    GROUPINGS,
    GroupBy,
    SearchOutcome,
    group_by_paper,
)
from biomcp.usecases.ranking import (
    Reranked,
    hybrid_search,
    neighbour_chunks,
    neighbour_smoothed,
    quality_rerank,
)
from biomcp.usecases.saved_queries import records_of_query
from biomcp.usecases.search_filters import check_filters, with_designs, with_trial_id
from biomcp.usecases.search_hits import SearchHit

__all__ = ["MAX_PAPER_CHUNKS", "PAPER_OVERSAMPLE", "SearchConfig", "SearchCorpus", "SearchHit"]

MAX_TOP_K = 100
#: The most records a search within one saved query (`query_key`) filters on: its PMIDs go to
#: the vector store as one filter.
MAX_QUERY_RECORDS = 100_000
#: Vector searches one query may make while retracted papers are left out of its candidates.
_MAX_ROUNDS = 4
#: Chunks a paper search ranks per paper asked for, and the most it ranks.
PAPER_OVERSAMPLE = 5
MAX_PAPER_CHUNKS = 500
_EMPTY_QUERY = "query is empty: ask a question or give keywords"


@dataclass(frozen=True, slots=True)
class SearchConfig:
    collection: str = "PubMedChunk"
    alpha: float = 0.6  # BIOMCP_SEARCH_ALPHA's default (measured: see settings)
    fusion: Fusion = Fusion.RELATIVE_SCORE
    oversample: int = 2
    #: The share of the vector weight that ranks chunks by their best sentence (`ranking`).
    sentence_share: float = SENTENCE_SHARE
    weights: RerankWeights = field(default_factory=RerankWeights)
    #: The share of a paper's score taken from its nearest neighbour's (0: no smoothing).
    neighbour_share: float = NEIGHBOUR_SHARE
    #: None: no search is judged for relevance (`domain.relevance`).
    floor: RelevanceFloor | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {self.alpha}")
        if not 0.0 <= self.sentence_share <= 1.0:
            raise ValueError(f"sentence_share must be in [0, 1], got {self.sentence_share}")
        if not 0.0 <= self.neighbour_share <= 1.0:
            raise ValueError(f"neighbour_share must be in [0, 1], got {self.neighbour_share}")
        if self.oversample < 1:
            raise ValueError(f"oversample must be >= 1, got {self.oversample}")


@dataclass(frozen=True, slots=True)
class _Scope:
    """What narrows a search's candidates (`run`'s keyword arguments)."""

    filters: SearchFilters | None
    include_retracted: bool
    study_designs: Collection[str] | None
    query_key: str | None
    trial_id: str | None


class SearchCorpus:
    def __init__(
        self,
        vectors: VectorStore,
        embedder: Embedder,
        *,
        config: SearchConfig | None = None,
        metadata: MetadataStore | None = None,
    ) -> None:
        """`metadata` None: no retraction filter (every hit is reported not retracted)."""
        self._vectors = vectors
        self._embedder = embedder
        self._metadata = metadata
        self.config = config or SearchConfig()
        self._model_checked = False

    async def check_model(self) -> None:
        """Refuse to search a corpus embedded by another model (or dimension): the query
        vector would be compared with vectors of another space, and the ranking would be
        noise. Once it holds, it is not checked again in this process; a mismatch is checked
        again on every search, so a corpus re-embedded meanwhile is accepted without a restart.

        Raises:
            EmbeddingMismatchError: the collection's vectors are not this embedder's.
            CollectionNotFoundError: nothing has been indexed yet.
        """
        if self._model_checked:
            return
        stats = await self._vectors.stats(self.config.collection)
        wanted = (self._embedder.model_id, self._embedder.dim)
        if (stats.model_id, stats.dim) != wanted:
            raise EmbeddingMismatchError(
                self.config.collection,
                f"{stats.model_id} ({stats.dim}-d)",
                f"{wanted[0]} ({wanted[1]}-d)",
            )
        self._model_checked = True

    async def run(
        self,
        query: str,
        top_k: int = 20,
        quality_bias: bool = True,
        *,
        filters: SearchFilters | None = None,
        include_retracted: bool = False,
        study_designs: Collection[str] | None = None,
        query_key: str | None = None,
        trial_id: str | None = None,
    ) -> list[SearchHit]:
        """The best `top_k` chunks for `query`, best first (retracted papers left out unless
        `include_retracted`; only chunks of `study_designs` when given: `StudyDesign` values;
        only the records the saved query `query_key` brought, when given; only records naming
        the registry id `trial_id`, or any registry id when it is `any`).

        Raises:
            InvalidRequestError: an empty query, `top_k` outside 1..100, an unknown design or
                evidence type, a year range that ends before it starts; a `trial_id` that is
                no registry id; a `query_key` synced before its records were recorded, or
                holding more than `MAX_QUERY_RECORDS`.
            NotFoundError: nothing has been indexed yet; no saved query `query_key` holds
                records.
            EmbeddingError, VectorStoreError: from the adapters.
        """
        scope = _Scope(filters, include_retracted, study_designs, query_key, trial_id)
        return await self._scoped(query, top_k, top_k, quality_bias, scope)

    async def search(
        self,
        query: str,
        top_k: int = 20,
        quality_bias: bool = True,
        *,
        group_by: GroupBy = "chunk",
        chunks_per_paper: int = CHUNKS_PER_PAPER,
        filters: SearchFilters | None = None,
        include_retracted: bool = False,
        study_designs: Collection[str] | None = None,
        query_key: str | None = None,
        trial_id: str | None = None,
    ) -> SearchOutcome:
        """`run`'s search with the relevance verdict; with `group_by="paper"`, the best
        `top_k` papers (each with up to `chunks_per_paper` of its chunks, the best first) out
        of the best `top_k * PAPER_OVERSAMPLE` chunks (at most `MAX_PAPER_CHUNKS`).

        Raises:
            InvalidRequestError: as `run`; an unknown `group_by`, `chunks_per_paper` < 1.
            NotFoundError, EmbeddingError, VectorStoreError: as `run`.
        """
        if group_by not in GROUPINGS:
            raise InvalidRequestError(
                f"group_by must be one of {', '.join(GROUPINGS)}, got {group_by!r}",
                details={"field": "group_by", "allowed": list(GROUPINGS)},
            )
        if chunks_per_paper < 1:
            raise InvalidRequestError(f"chunks_per_paper must be >= 1, got {chunks_per_paper}")
        floor = self.config.floor
        scope = _Scope(filters, include_retracted, study_designs, query_key, trial_id)
        if group_by == "chunk":
            hits = await self._scoped(query, top_k, top_k, quality_bias, scope)
            return SearchOutcome.judged(hits, None, floor)
        limit = min(top_k * PAPER_OVERSAMPLE, MAX_PAPER_CHUNKS)
        ranked = await self._scoped(query, top_k, limit, quality_bias, scope)
        papers = group_by_paper(ranked, limit=top_k, chunks_per_paper=chunks_per_paper, floor=floor)
        return SearchOutcome.judged([c for p in papers for c in p.chunks], papers, floor)

    async def _scoped(
        self, query: str, top_k: int, limit: int, quality_bias: bool, scope: _Scope
    ) -> list[SearchHit]:
        """The best `limit` chunks within `scope`, `top_k` checked as `run` checks it."""
        if not query.strip():
            raise InvalidRequestError(_EMPTY_QUERY)
        if not 1 <= top_k <= MAX_TOP_K:
            raise InvalidRequestError(f"top_k must be in 1..{MAX_TOP_K}, got {top_k}")
        filters = scope.filters
        if filters is not None:
            check_filters(filters)
        filters = with_trial_id(filters, scope.trial_id)
        if scope.query_key is not None:
            filters = await self._within_query(scope.query_key, filters)
            if filters.doc_ids == frozenset():  # none of the ids asked for is the query's
                return []
        return await self.ranked(
            query,
            limit,
            quality_bias,
            filters=with_designs(filters, scope.study_designs),
            include_retracted=scope.include_retracted,
        )

    async def ranked(
        self,
        query: str,
        limit: int,
        quality_bias: bool = True,
        *,
        filters: SearchFilters | None = None,
        include_retracted: bool = False,
    ) -> list[SearchHit]:
        """`run` without its bound on `top_k`: the best `limit` chunks, ranked exactly as `run`
        ranks them. The retrieval evaluation reads deep rankings (Recall@100 of documents needs
        a few hundred chunks) through it.

        Raises:
            InvalidRequestError: an empty query or `limit` < 1.
            NotFoundError, EmbeddingError, VectorStoreError: as `run`.
        """
        text = query.strip()
        if not text:
            raise InvalidRequestError(_EMPTY_QUERY)
        if limit < 1:
            raise InvalidRequestError(f"limit must be >= 1, got {limit}")
        config = self.config
        try:
            await self.check_model()
            vector = (await self._embedder.embed([text]))[0]
            hits, retracted = await self._candidates(
                text, vector, limit, filters, include_retracted
            )
        except CollectionNotFoundError:
            raise NotFoundError(
                "the corpus is empty: sync a PubMed query first (pubmed_sync_delta)"
            ) from None
        results: list[SearchHit] = []
        kept = [h for h in hits if include_retracted or h.doc_id not in retracted]
        ranked = quality_rerank(kept, text, quality_bias=quality_bias, weights=config.weights)
        if quality_bias and config.neighbour_share > 0.0:
            ranked = await self._smoothed(ranked)
        for entry in ranked[:limit]:
            hit = entry.hit
            results.append(
                SearchHit(
                    doc_id=hit.doc_id,
                    uuid=hit.uuid,
                    chunk_id=hit.chunk_id,
                    score=entry.score,
                    fused=hit.score,
                    sim=hit.sim,
                    bm25=hit.bm25,
                    quality=hit.quality_total,
                    evidence_type=hit.evidence_type,
                    section=_meta(hit, SECTION_PATH) or hit.section,
                    text=hit.text,
                    year=hit.year,
                    journal=hit.journal,
                    retracted=hit.doc_id in retracted,
                    study_design=_meta(hit, STUDY_DESIGN),
                    source="fulltext" if _meta(hit, SOURCE_FACET) == "fulltext" else "abstract",
                    anchor=_meta(hit, ANCHOR),
                )
            )
        return results

    async def _smoothed(self, ranked: list[Reranked]) -> list[Reranked]:
        """`ranked` after neighbour smoothing, reading the stored vectors of the chunks of
        its best papers."""
        uuids = neighbour_chunks(ranked)
        if not uuids:
            return ranked
        records = await self._vectors.fetch_chunks(self.config.collection, uuids)
        vectors = {record.uuid: record.vector for record in records if record.vector}
        return neighbour_smoothed(ranked, vectors, share=self.config.neighbour_share)

    async def _candidates(
        self,
        text: str,
        vector: list[float],
        limit: int,
        filters: SearchFilters | None,
        include_retracted: bool,
    ) -> tuple[list[VectorHit], set[str]]:
        """The vector store's candidates (`limit * oversample`) and the doc ids among them
        whose stored record is retracted now. When leaving those out would leave fewer than
        `limit * oversample` candidates, the store is asked again for as many more as were
        left out (the rerank needs its full pool), until it has no more to give."""
        config = self.config
        wanted = limit * config.oversample
        asked = wanted
        for _ in range(_MAX_ROUNDS):
            hits = await hybrid_search(
                self._vectors,
                config.collection,
                text,
                vector,
                limit=asked,
                alpha=config.alpha,
                fusion=config.fusion,
                filters=filters,
                sentence_share=config.sentence_share,
            )
            retracted = await self._retracted({hit.doc_id for hit in hits})
            if include_retracted or not retracted:
                return hits, retracted
            kept = sum(1 for hit in hits if hit.doc_id not in retracted)
            if kept >= wanted or len(hits) < asked:
                break
            asked += wanted - kept
        return hits, retracted

    async def _within_query(self, query_key: str, filters: SearchFilters | None) -> SearchFilters:
        """`filters` narrowed to the records the saved query `query_key` holds."""
        if self._metadata is None:
            raise InvalidRequestError("searching within a saved query needs the metadata store")
        key = query_key.strip()
        pmids = await records_of_query(self._metadata, key, purpose="search within it")
        if len(pmids) > MAX_QUERY_RECORDS:
            raise InvalidRequestError(
                f"{key!r} holds {len(pmids)} records, more than the {MAX_QUERY_RECORDS} a "
                "search within one saved query filters on: search the whole corpus with "
                "filters (years, evidence tiers, study designs) instead",
                details={"query_key": key, "records": len(pmids)},
            )
        held = frozenset(f"pmid:{pmid}" for pmid in pmids)
        base = filters or SearchFilters()
        return replace(base, doc_ids=held if base.doc_ids is None else base.doc_ids & held)

    async def _retracted(self, doc_ids: set[str]) -> set[str]:
        """Those of `doc_ids` whose stored record is retracted (MetadataStoreError passes)."""
        if self._metadata is None or not doc_ids:
            return set()
        pmids = [doc_id.removeprefix("pmid:") for doc_id in doc_ids]
        return {f"pmid:{pmid}" for pmid in await self._metadata.retracted_pmids(pmids)}


def _meta(hit: VectorHit, key: str) -> str | None:
    """A text the chunk's metadata holds under `key`, if any."""
    value = hit.metadata.get(key)
    return value if isinstance(value, str) else None

"""The ranking rule, one for every store and for the corpus and projects alike.

A store finds (`VectorStore.search_arms`, `VectorStore.hits`); this module ranks:

* candidate sizing: each arm takes `candidate_count(limit)` = max(limit * 5, 100) candidates
  after filtering; the arm whose weight is 0 (alpha = 0: vector, alpha = 1: BM25, or no query
  vector) is not run;
* fusion, as Weaviate does it (`biomcp.domain.fusion`): relative-score fusion by default
  (each arm min-max normalized, `alpha` weighting the vector arm), or ranked fusion;
* exact cosines: `sim` is reported for every hit when a query vector is given (a BM25-only
  hit's cosine comes from its stored vector), `bm25` for the hits the BM25 arm returned;
* the quality rerank (spec 03 section 7) and the output scores of a corpus search.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from biomcp.domain.fusion import candidate_count, ranked_fusion, relative_score_fusion
from biomcp.domain.rerank import RerankWeights, detect_intent, rerank_score
from biomcp.ports.vectors import Fusion, SearchFilters, VectorHit, VectorStore, VectorStoreError

__all__ = ["Reranked", "hybrid_search", "quality_rerank"]


async def hybrid_search(
    store: VectorStore,
    collection: str,
    text: str,
    vector: Sequence[float] | None,
    *,
    limit: int = 20,
    alpha: float = 0.5,
    fusion: Fusion = Fusion.RELATIVE_SCORE,
    filters: SearchFilters | None = None,
) -> list[VectorHit]:
    """The best `limit` chunks of `collection` by fused score (`VectorHit.score`), best first,
    ties broken by uuid. `vector` None means BM25 only.

    Raises:
        VectorStoreError: `alpha` outside [0, 1].
        InvalidVectorError: a query vector of the wrong dimension or not unit length.
        CollectionNotFoundError, VectorStoreUnavailableError.
    """
    if not 0.0 <= alpha <= 1.0 or math.isnan(alpha):
        raise VectorStoreError(f"alpha must be within [0, 1], got {alpha}")
    weight = 0.0 if vector is None else alpha
    k = candidate_count(limit) if limit > 0 else 0
    arms = await store.search_arms(
        collection,
        text,
        vector,
        keyword_limit=k if weight < 1.0 else 0,
        vector_limit=k if weight > 0.0 else 0,
        filters=filters,
    )
    if limit <= 0:
        return []
    bm25 = dict(arms.keyword)
    sims = dict(arms.vector)
    fuse = relative_score_fusion if fusion is Fusion.RELATIVE_SCORE else ranked_fusion
    fused = fuse(list(sims.items()), list(bm25.items()), weight)[:limit]
    if not fused:
        return []
    found = {h.uuid: h for h in await store.hits(collection, [u for u, _ in fused], vector=vector)}
    return [
        replace(
            found[uuid],
            score=score,
            bm25=bm25.get(uuid),
            sim=sims[uuid] if uuid in sims else found[uuid].sim,
        )
        for uuid, score in fused
        if uuid in found
    ]


@dataclass(frozen=True, slots=True)
class Reranked:
    """A hit and its output score: the fused score reranked by quality, or the fused score."""

    hit: VectorHit
    score: float


def quality_rerank(
    hits: Sequence[VectorHit],
    query: str,
    *,
    quality_bias: bool = True,
    weights: RerankWeights | None = None,
) -> list[Reranked]:
    """`hits` by output score, best first (ties by uuid). With `quality_bias` each fused score
    is reranked by the question's intent:

        score = fused * (1 + quality / 10) * (1 + section_boost) * (1 + tier_weight(intent))

    The fused score stands in for the spec's `sim`, so that a chunk found by BM25 alone keeps
    its place. Without `quality_bias` the score is the fused score."""
    intent = detect_intent(query)
    ranked = [
        Reranked(
            hit,
            rerank_score(
                hit.score, hit.quality_total, hit.section, hit.evidence_type, intent, weights
            )
            if quality_bias
            else hit.score,
        )
        for hit in hits
    ]
    ranked.sort(key=lambda r: (-r.score, r.hit.uuid))
    return ranked

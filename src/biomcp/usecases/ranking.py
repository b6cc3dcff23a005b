"""The ranking rule, one for every store and for the corpus and projects alike.

A store finds (`VectorStore.search_arms`, `VectorStore.hits`); this module ranks:

* candidate sizing: each arm takes `candidate_count(limit)` = max(limit * 5, 100) candidates
  after filtering; the arm whose weight is 0 (alpha = 0: vector, alpha = 1: BM25, or no query
  vector) is not run;
* fusion, as Weaviate does it (`biomcp.domain.fusion`): relative-score fusion by default
  (each arm min-max normalized, `alpha` weighting the vector arm), or ranked fusion;
* the best sentence: when the candidates' chunks carry sentence vectors, a third arm ranks
  them by their best sentence's cosine (a chunk without any by its own cosine) and takes
  `SENTENCE_SHARE` of the vector arm's weight; with none, the two arms fuse alone;
* vector-only search (alpha 1, `dense_search`): each chunk by its own cosine, blended with
  its best sentence's when it carries sentence vectors (`dense_score`): the score stays a
  cosine, and the fusion plays no part;
* exact cosines: `sim` is reported for every hit when a query vector is given (a BM25-only
  hit's cosine comes from its stored vector), `bm25` for the hits the BM25 arm returned;
* the quality rerank (spec 03 section 7) and the output scores of a corpus search;
* numbers first: a question asking for a figure gets, within each paper, the chunk that
  carries one first (`numeric_first`);
* neighbour smoothing (`biomcp.domain.neighbours`): a paper's score moves towards that of
  its nearest neighbour among the best-ranked papers (`neighbour_smoothed`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from biomcp.domain.fusion import SENTENCE_SHARE, Arm, candidate_count, dense_score, fuse_arms
from biomcp.domain.neighbours import NEIGHBOUR_PAPERS, NEIGHBOUR_SHARE, neighbour_shifts
from biomcp.domain.numeric import has_numeric_result
from biomcp.domain.quality_bias import tempered_score
from biomcp.domain.rerank import RerankWeights, asks_for_numbers, detect_intent, rerank_score
from biomcp.domain.sections import section_category
from biomcp.ports.vectors import Fusion, SearchFilters, VectorHit, VectorStore, VectorStoreError
from biomcp.usecases.indexing import SECTION_CATEGORY

__all__ = [
    "Reranked",
    "dense_search",
    "hybrid_search",
    "neighbour_chunks",
    "neighbour_smoothed",
    "numeric_first",
    "quality_rerank",
]


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
    sentence_share: float = SENTENCE_SHARE,
) -> list[VectorHit]:
    """The best `limit` chunks of `collection` by fused score (`VectorHit.score`), best first,
    ties broken by uuid. `vector` None means BM25 only; `alpha` 1 means vectors alone, ranked
    by `dense_search`. `sentence_share` is the share of the vector arm's weight that the
    best-sentence arm takes (0: the chunks' own vectors only).

    Raises:
        VectorStoreError: `alpha` outside [0, 1].
        InvalidVectorError: a query vector of the wrong dimension or not unit length.
        CollectionNotFoundError, VectorStoreUnavailableError.
    """
    if not 0.0 <= alpha <= 1.0 or math.isnan(alpha):
        raise VectorStoreError(f"alpha must be within [0, 1], got {alpha}")
    _check_share(sentence_share)
    weight = 0.0 if vector is None else alpha
    if vector is not None and weight == 1.0:
        return await dense_search(
            store, collection, vector, limit=limit, filters=filters, sentence_share=sentence_share
        )
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
    weighted: list[Arm] = [(weight, list(sims.items())), (1 - weight, list(bm25.items()))]
    if vector is not None and weight > 0.0 and sentence_share > 0.0:
        sentences = await _sentence_arm(store, collection, vector, sims, bm25, k)
        if sentences:
            share = weight * sentence_share
            weighted = [(weight - share, weighted[0][1]), (share, sentences), weighted[1]]
    fused = fuse_arms(weighted, ranked=fusion is Fusion.RANKED)[:limit]
    return await _as_hits(store, collection, fused, vector, sims, bm25)


async def dense_search(
    store: VectorStore,
    collection: str,
    vector: Sequence[float],
    *,
    limit: int = 20,
    filters: SearchFilters | None = None,
    sentence_share: float = SENTENCE_SHARE,
) -> list[VectorHit]:
    """The best `limit` chunks of `collection` by `dense_score`, best first, ties broken by
    uuid. `VectorHit.score` is that score and `sim` the chunk's own cosine. The candidates
    are the vector arm's `candidate_count(limit)` nearest chunks.

    Raises:
        VectorStoreError: `sentence_share` outside [0, 1].
        InvalidVectorError: a query vector of the wrong dimension or not unit length.
        CollectionNotFoundError, VectorStoreUnavailableError.
    """
    _check_share(sentence_share)
    k = candidate_count(limit) if limit > 0 else 0
    arms = await store.search_arms(
        collection, "", vector, keyword_limit=0, vector_limit=k, filters=filters
    )
    sims = dict(arms.vector)
    if limit <= 0 or not sims:
        return []
    best = await store.sentence_scores(collection, list(sims), vector) if sentence_share else {}
    scored = {u: dense_score(s, best.get(u), sentence_share) for u, s in sims.items()}
    return await _as_hits(store, collection, _best_first(scored)[:limit], vector, sims, {})


def _check_share(sentence_share: float) -> None:
    if not 0.0 <= sentence_share <= 1.0 or math.isnan(sentence_share):
        raise VectorStoreError(f"sentence_share must be within [0, 1], got {sentence_share}")


def _best_first(scores: dict[str, float]) -> list[tuple[str, float]]:
    """(uuid, score) best first, ties broken by uuid."""
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


async def _as_hits(
    store: VectorStore,
    collection: str,
    ranked: Sequence[tuple[str, float]],
    vector: Sequence[float] | None,
    sims: dict[str, float],
    bm25: dict[str, float],
) -> list[VectorHit]:
    """The stored chunks of `ranked`, in its order, each with its ranked score, its BM25
    score when the keyword arm found it, and its cosine (the vector arm's, else the store's)."""
    if not ranked:
        return []
    found = {h.uuid: h for h in await store.hits(collection, [u for u, _ in ranked], vector=vector)}
    return [
        replace(
            found[uuid],
            score=score,
            bm25=bm25.get(uuid),
            sim=sims[uuid] if uuid in sims else found[uuid].sim,
        )
        for uuid, score in ranked
        if uuid in found
    ]


async def _sentence_arm(
    store: VectorStore,
    collection: str,
    vector: Sequence[float],
    sims: dict[str, float],
    bm25: dict[str, float],
    k: int,
) -> list[tuple[str, float]]:
    """The best `k` candidates of both arms by their best sentence's cosine to `vector`; a
    chunk kept without sentence vectors counts as its one sentence (its own cosine, when the
    vector arm found it). Empty when no candidate has sentence vectors."""
    candidates = list(dict.fromkeys([*sims, *bm25]))
    if not candidates:
        return []
    best = await store.sentence_scores(collection, candidates, vector)
    if not best:
        return []
    scored = {u: best[u] if u in best else sims[u] for u in candidates if u in best or u in sims}
    return _best_first(scored)[:k]


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

        multiplier = (1 + quality / 10) * (1 + section_boost) * (1 + tier_weight(intent))
        score = fused * (1 + strength * (multiplier - 1))

    `strength` (`weights.strength`) keeps a share of the multiplier's gain, so quality breaks
    near ties without passing a clearly better match. The fused score stands in for the
    spec's `sim`, so that a chunk found by BM25 alone keeps its place. The section boost reads
    the chunk's NLM category. Without `quality_bias` the score is the fused score. With
    `quality_bias` and `weights.numeric_first`, a question asking for a figure then
    gets `numeric_first`."""
    weights = weights or RerankWeights()
    intent = detect_intent(query)
    ranked = [
        Reranked(
            hit,
            tempered_score(
                hit.score,
                rerank_score(
                    1.0,
                    hit.quality_total,
                    hit.section,
                    hit.evidence_type,
                    intent,
                    weights,
                    category=_category(hit),
                ),
                weights.strength,
            )
            if quality_bias
            else hit.score,
        )
        for hit in hits
    ]
    ranked.sort(key=lambda r: (-r.score, r.hit.uuid))
    if quality_bias and weights.numeric_first and asks_for_numbers(query):
        return numeric_first(ranked)
    return ranked


def neighbour_chunks(ranked: Sequence[Reranked], papers: int = NEIGHBOUR_PAPERS) -> list[str]:
    """The uuids of the chunks of the best `papers` papers of `ranked`: those whose vectors
    `neighbour_smoothed` reads."""
    best: set[str] = set()
    for entry in ranked:
        if len(best) == papers and entry.hit.doc_id not in best:
            continue
        best.add(entry.hit.doc_id)
    return [entry.hit.uuid for entry in ranked if entry.hit.doc_id in best]


def neighbour_smoothed(
    ranked: Sequence[Reranked],
    vectors: Mapping[str, Sequence[float]],
    *,
    share: float = NEIGHBOUR_SHARE,
    papers: int = NEIGHBOUR_PAPERS,
) -> list[Reranked]:
    """`ranked` with each paper's scores moved towards its nearest neighbour's
    (`biomcp.domain.neighbours`), best first again. `vectors` maps chunk uuids to their
    stored vectors; a paper scores as its first chunk. Every chunk of a paper moves by the
    same amount, and ties keep their old order, so each paper's chunks keep theirs (the
    answer chunk `numeric_first` put first stays first)."""
    best: dict[str, float] = {}
    paper_vectors: dict[str, list[Sequence[float]]] = {}
    for entry in ranked:
        best.setdefault(entry.hit.doc_id, entry.score)
        vector = vectors.get(entry.hit.uuid)
        if vector is not None:
            paper_vectors.setdefault(entry.hit.doc_id, []).append(vector)
    shifts = neighbour_shifts(list(best.items()), paper_vectors, share=share, limit=papers)
    if not shifts:
        return list(ranked)
    moved = sorted(
        ((entry.score + shifts.get(entry.hit.doc_id, 0.0), i) for i, entry in enumerate(ranked)),
        key=lambda item: (-item[0], item[1]),
    )
    return [Reranked(ranked[i].hit, score) for score, i in moved]


def numeric_first(ranked: Sequence[Reranked]) -> list[Reranked]:
    """`ranked` with each paper's answer chunk moved to the paper's first position.

    A paper's answer chunk is its best-ranked Results chunk that carries a numeric result,
    else its best-ranked numeric chunk of Conclusions or of no known section (numbers in
    Background or Methods answer nothing). Only a paper's own positions change: the answer takes
    the paper's first, its other chunks keep their order in the rest, and other papers do not
    move. Scores stay with positions, so the list stays ordered by score."""
    slots: dict[str, list[int]] = {}
    for i, entry in enumerate(ranked):
        slots.setdefault(entry.hit.doc_id, []).append(i)
    out = list(ranked)
    for positions in slots.values():
        chunks = [ranked[i] for i in positions]
        answer = _answer(chunks)
        if answer is None or answer == 0:
            continue
        order = [chunks[answer], *chunks[:answer], *chunks[answer + 1 :]]
        for position, entry in zip(positions, order, strict=True):
            out[position] = Reranked(entry.hit, ranked[position].score)
    return out


def _answer(chunks: Sequence[Reranked]) -> int | None:
    """The index of the first numeric Results chunk, else of the first numeric chunk of
    Conclusions or of no known section, else None."""
    results: list[int] = []
    others: list[int] = []
    for i, entry in enumerate(chunks):
        if not _has_numbers(entry.hit):
            continue
        category = _category(entry.hit)
        if category == "RESULTS":
            results.append(i)
        elif category in (None, "CONCLUSIONS"):
            others.append(i)
    found = results or others
    return found[0] if found else None


def _has_numbers(hit: VectorHit) -> bool:
    if hit.has_numbers is not None:
        return hit.has_numbers
    return has_numeric_result(hit.text or "")


def _category(hit: VectorHit) -> str | None:
    stored = hit.metadata.get(SECTION_CATEGORY) if hit.metadata else None
    return section_category(hit.section, stored if isinstance(stored, str) else None)

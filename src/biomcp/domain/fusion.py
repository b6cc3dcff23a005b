"""Hybrid fusion of a keyword arm and a vector arm, as Weaviate does it.

* Relative-score fusion (Weaviate's default since 1.24): each arm's scores are min-max
  normalized over the results that arm returned (all equal -> 1), then
  fused = alpha * vector_norm + (1 - alpha) * keyword_norm; a result missing from an arm
  gets 0 from it.
* Ranked fusion: fused = alpha / (k + rank_vector) + (1 - alpha) / (k + rank_keyword), ranks
  from 1, k = 60; a missing arm adds nothing.

Ties are broken by the key, so results are deterministic.

A third arm ranks chunks by their best sentence (`fuse_arms`): it takes `SENTENCE_SHARE` of
the vector arm's weight, and both forms of fusion treat it as one more arm.

The ranking above the stores (`usecases.ranking`) takes `candidate_count(limit)` candidates
from each arm before fusing, for every store and for the corpus and projects alike.
"""

from __future__ import annotations

from collections.abc import Sequence

from biomcp.domain.errors import InvalidConfigError

__all__ = [
    "CANDIDATES_FACTOR",
    "CANDIDATES_MIN",
    "RRF_K",
    "SENTENCE_SHARE",
    "Arm",
    "candidate_count",
    "dense_score",
    "fuse_arms",
    "ranked_fusion",
    "relative_score_fusion",
]

RRF_K = 60
CANDIDATES_FACTOR = 5
CANDIDATES_MIN = 100
#: The share of the vector arm's weight that the best-sentence arm takes. It was chosen on
#: SciFact's train split (docs/decisions.md, "The best-sentence arm").
SENTENCE_SHARE = 0.5

#: One arm of a fusion: its weight and its (key, raw score) candidates, any order.
Arm = tuple[float, Sequence[tuple[str, float]]]


def candidate_count(
    limit: int, *, factor: int = CANDIDATES_FACTOR, minimum: int = CANDIDATES_MIN
) -> int:
    """How many candidates each arm of a hybrid search takes for `limit` fused results."""
    return max(limit * factor, minimum)


def dense_score(chunk: float, sentence: float | None, share: float = SENTENCE_SHARE) -> float:
    """A chunk's similarity to a query from vectors alone: its own cosine `chunk`, blended
    with its best sentence's cosine `sentence` when it carries sentence vectors. The sentence
    takes `share` of the blend, so the score stays on the cosine's scale."""
    if sentence is None:
        return chunk
    return (1.0 - share) * chunk + share * sentence


def _check_alpha(alpha: float) -> None:
    if not 0.0 <= alpha <= 1.0:
        raise InvalidConfigError(f"alpha must be within [0, 1], got {alpha}")


def _normalized(hits: Sequence[tuple[str, float]]) -> dict[str, float]:
    if not hits:
        return {}
    scores = [s for _, s in hits]
    low, high = min(scores), max(scores)
    if high == low:
        return {key: 1.0 for key, _ in hits}
    return {key: (score - low) / (high - low) for key, score in hits}


def _ordered(fused: dict[str, float]) -> list[tuple[str, float]]:
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))


def relative_score_fusion(
    vector_hits: Sequence[tuple[str, float]],
    keyword_hits: Sequence[tuple[str, float]],
    alpha: float,
) -> list[tuple[str, float]]:
    """(key, fused score) best first. Arms are (key, raw score) lists, any order."""
    _check_alpha(alpha)
    return fuse_arms([(alpha, vector_hits), (1 - alpha, keyword_hits)])


def ranked_fusion(
    vector_hits: Sequence[tuple[str, float]],
    keyword_hits: Sequence[tuple[str, float]],
    alpha: float,
    k: int = RRF_K,
) -> list[tuple[str, float]]:
    """(key, fused score) best first, by weighted reciprocal rank."""
    _check_alpha(alpha)
    return fuse_arms([(alpha, vector_hits), (1 - alpha, keyword_hits)], ranked=True, k=k)


def fuse_arms(
    arms: Sequence[Arm], *, ranked: bool = False, k: int = RRF_K
) -> list[tuple[str, float]]:
    """(key, fused score) best first over any number of weighted arms: each arm's
    normalized score times its weight, summed (`ranked`: weight / (k + rank) instead)."""
    fused: dict[str, float] = {}
    for weight, hits in arms:
        if ranked:
            order = sorted(hits, key=lambda item: (-item[1], item[0]))
            for rank, (key, _) in enumerate(order, start=1):
                fused[key] = fused.get(key, 0.0) + weight / (k + rank)
        else:
            for key, value in _normalized(hits).items():
                fused[key] = fused.get(key, 0.0) + weight * value
    return _ordered(fused)

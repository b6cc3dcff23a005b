"""Hybrid fusion of a keyword arm and a vector arm, as Weaviate does it.

* Relative-score fusion (Weaviate's default since 1.24): each arm's scores are min-max
  normalized over the results that arm returned (all equal -> 1), then
  fused = alpha * vector_norm + (1 - alpha) * keyword_norm; a result missing from an arm
  gets 0 from it.
* Ranked fusion: fused = alpha / (k + rank_vector) + (1 - alpha) / (k + rank_keyword), ranks
  from 1, k = 60; a missing arm adds nothing.

Ties are broken by the key, so results are deterministic.

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
    "candidate_count",
    "ranked_fusion",
    "relative_score_fusion",
]

RRF_K = 60
CANDIDATES_FACTOR = 5
CANDIDATES_MIN = 100


def candidate_count(
    limit: int, *, factor: int = CANDIDATES_FACTOR, minimum: int = CANDIDATES_MIN
) -> int:
    """How many candidates each arm of a hybrid search takes for `limit` fused results."""
    return max(limit * factor, minimum)


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
    vec = _normalized(vector_hits)
    kw = _normalized(keyword_hits)
    fused = {
        key: alpha * vec.get(key, 0.0) + (1 - alpha) * kw.get(key, 0.0)
        for key in vec.keys() | kw.keys()
    }
    return _ordered(fused)


def ranked_fusion(
    vector_hits: Sequence[tuple[str, float]],
    keyword_hits: Sequence[tuple[str, float]],
    alpha: float,
    k: int = RRF_K,
) -> list[tuple[str, float]]:
    """(key, fused score) best first, by weighted reciprocal rank."""
    _check_alpha(alpha)
    fused: dict[str, float] = {}
    for weight, hits in ((alpha, vector_hits), (1 - alpha, keyword_hits)):
        ranked = sorted(hits, key=lambda item: (-item[1], item[0]))
        for rank, (key, _) in enumerate(ranked, start=1):
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
    return _ordered(fused)

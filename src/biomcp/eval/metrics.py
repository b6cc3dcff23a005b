"""Ranking metrics of the retrieval evaluation: nDCG@k, Recall@k, MRR@k and their means.

A *ranking* is a sequence of keys (document ids, chunk ids), best first; a key repeated later
in the ranking counts only where it first appears. *Qrels* map a key to its graded relevance;
a grade of 0 or less means not relevant. The definitions are trec_eval's (and BEIR's, which
calls pytrec_eval):

* nDCG@k = DCG@k / IDCG@k with linear gain and a log2 discount,
  DCG@k = sum over the first k ranks r (from 1) of grade / log2(r + 1); the ideal ranking
  sorts the qrels' positive grades, best first.
* Recall@k = relevant keys among the first k / all relevant keys.
* MRR@k = 1 / rank of the first relevant key within the first k, else 0.

A query without any relevant key scores 0 on every metric; evaluations leave such queries out
(as trec_eval does), so `mean_scores` is only given the ones that count.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "Qrels",
    "dcg",
    "mean_scores",
    "mrr_at_k",
    "ndcg_at_k",
    "recall_at_k",
    "relevant_keys",
    "score_ranking",
]

Qrels = Mapping[str, int]
"""key -> graded relevance (> 0: relevant)."""


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")


def _unique(ranking: Iterable[str], k: int) -> list[str]:
    """The first `k` distinct keys of `ranking`, in order."""
    seen: set[str] = set()
    out: list[str] = []
    for key in ranking:
        if key in seen:
            continue
        seen.add(key)
        out.append(key)
        if len(out) == k:
            break
    return out


def relevant_keys(qrels: Qrels) -> frozenset[str]:
    """The keys graded above 0."""
    return frozenset(key for key, grade in qrels.items() if grade > 0)


def dcg(gains: Iterable[float]) -> float:
    """Discounted cumulative gain of `gains` in rank order: sum of gain / log2(rank + 1)."""
    return math.fsum(gain / math.log2(rank + 1) for rank, gain in enumerate(gains, start=1))


def ndcg_at_k(ranking: Sequence[str], qrels: Qrels, k: int) -> float:
    """nDCG@k of `ranking` against graded `qrels` (0.0 when nothing is relevant)."""
    _check_k(k)
    ideal = dcg(sorted((g for g in qrels.values() if g > 0), reverse=True)[:k])
    if ideal == 0.0:
        return 0.0
    gains = [max(0, qrels.get(key, 0)) for key in _unique(ranking, k)]
    return dcg(gains) / ideal


def recall_at_k(ranking: Sequence[str], qrels: Qrels | Iterable[str], k: int) -> float:
    """Share of the relevant keys found among the first `k` (0.0 when nothing is relevant).

    `qrels` may also be a plain collection of relevant keys."""
    _check_k(k)
    relevant = relevant_keys(qrels) if isinstance(qrels, Mapping) else frozenset(qrels)
    if not relevant:
        return 0.0
    found = sum(1 for key in _unique(ranking, k) if key in relevant)
    return found / len(relevant)


def mrr_at_k(ranking: Sequence[str], qrels: Qrels | Iterable[str], k: int) -> float:
    """Reciprocal rank of the first relevant key within the first `k` (0.0 when none is)."""
    _check_k(k)
    relevant = relevant_keys(qrels) if isinstance(qrels, Mapping) else frozenset(qrels)
    for rank, key in enumerate(_unique(ranking, k), start=1):
        if key in relevant:
            return 1.0 / rank
    return 0.0


def score_ranking(
    ranking: Sequence[str],
    qrels: Qrels,
    *,
    ndcg: Sequence[int] = (10,),
    recall: Sequence[int] = (10, 100),
    mrr: Sequence[int] = (10,),
) -> dict[str, float]:
    """The metrics of one query by name: `ndcg@10`, `recall@10`, `recall@100`, `mrr@10`."""
    scores: dict[str, float] = {}
    for k in ndcg:
        scores[f"ndcg@{k}"] = ndcg_at_k(ranking, qrels, k)
    for k in recall:
        scores[f"recall@{k}"] = recall_at_k(ranking, qrels, k)
    for k in mrr:
        scores[f"mrr@{k}"] = mrr_at_k(ranking, qrels, k)
    return scores


def mean_scores(per_query: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """The mean of each metric over the queries (every query must carry the same metrics;
    an empty input gives an empty result).

    Raises:
        ValueError: when the queries do not all carry the same metric names.
    """
    totals: dict[str, list[float]] = {}
    names: frozenset[str] | None = None
    for scores in per_query:
        keys = frozenset(scores)
        if names is None:
            names = keys
        elif keys != names:
            raise ValueError(f"metric names differ between queries: {sorted(names ^ keys)}")
        for name, value in scores.items():
            totals.setdefault(name, []).append(value)
    return {name: math.fsum(values) / len(values) for name, values in totals.items()}

"""Neighbour smoothing: a paper's score moves towards that of its nearest neighbour in the ranking.

Relevant papers tend to resemble one another (the cluster hypothesis). A paper whose nearest
neighbour among the best-ranked papers also ranks high is likely on topic. A paper that
matches the question by chance, unlike anything else near the top, is likely not.

Among the best `NEIGHBOUR_PAPERS` papers of one ranking, each paper's nearest neighbour is
the other paper whose vector has the highest cosine with its own. A paper's vector is the
mean of its ranked chunks' vectors. Its score becomes

    (1 - NEIGHBOUR_SHARE) * own score + NEIGHBOUR_SHARE * nearest neighbour's score

Every chunk of the paper moves by the same amount, so a paper's chunks keep their order.
Papers below the best `NEIGHBOUR_PAPERS`, and papers without a vector, do not move.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

__all__ = ["NEIGHBOUR_PAPERS", "NEIGHBOUR_SHARE", "neighbour_shifts"]

#: The share of a paper's score taken from its nearest neighbour's (`docs/decisions.md`).
NEIGHBOUR_SHARE = 0.2
#: How many of the best-ranked papers smooth one another.
NEIGHBOUR_PAPERS = 30


def neighbour_shifts(
    papers: Sequence[tuple[str, float]],
    vectors: Mapping[str, Sequence[Sequence[float]]],
    *,
    share: float = NEIGHBOUR_SHARE,
    limit: int = NEIGHBOUR_PAPERS,
) -> dict[str, float]:
    """How much each paper's score moves: paper id -> shift (module docstring).

    `papers` holds (paper id, score), best first; `vectors` the vectors of each paper's ranked
    chunks. Only the best `limit` papers with vectors take part; with fewer than two, nothing
    moves and the result is empty.
    """
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must be in [0, 1], got {share}")
    ranked = [(pid, score) for pid, score in papers[:limit] if vectors.get(pid)]
    if len(ranked) < 2 or share == 0.0:
        return {}
    units = [_unit_mean(vectors[pid]) for pid, _ in ranked]
    scores = [score for _, score in ranked]
    shifts: dict[str, float] = {}
    for i, (pid, score) in enumerate(ranked):
        nearest, best = -1, -math.inf
        for j, other in enumerate(units):
            if j != i and (cosine := _dot(units[i], other)) > best:  # ties: the better ranked
                nearest, best = j, cosine
        shifts[pid] = share * (scores[nearest] - score)
    return shifts


def _unit_mean(rows: Sequence[Sequence[float]]) -> list[float]:
    """The mean of `rows`, scaled to unit length (a zero mean stays zero)."""
    mean = [math.fsum(column) / len(rows) for column in zip(*rows, strict=True)]
    norm = math.sqrt(_dot(mean, mean))
    return [x / norm for x in mean] if norm > 0 else mean


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))

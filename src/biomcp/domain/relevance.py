"""The relevance floor: whether a search found anything relevant at all.

Fused scores are normalized per query, so the best hit always looks good. The floor reads
what is comparable across queries instead: a hit's cosine similarity to the question under one
embedding model. A floor belongs to the model it was calibrated for; for any other model there
is no floor unless one is set, and no search is judged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from biomcp.domain.errors import InvalidConfigError

__all__ = ["CALIBRATED_FLOORS", "RelevanceFloor", "floor_for"]


@dataclass(frozen=True, slots=True)
class RelevanceFloor:
    """The least cosine similarity a hit needs to count as relevant."""

    min_sim: float

    def __post_init__(self) -> None:
        if not math.isfinite(self.min_sim) or not -1.0 <= self.min_sim <= 1.0:
            raise InvalidConfigError(f"a relevance floor is a cosine in [-1, 1]: {self.min_sim}")

    def passes(self, sim: float | None, bm25: float | None = None) -> bool:
        """Whether one hit counts as relevant. A hit without a similarity never passes."""
        del bm25  # the lexical score is not comparable across queries
        return sim is not None and sim >= self.min_sim


#: Floors by embedding model id, each fitted by `biomcp eval floor --data <SciFact folder>`.
CALIBRATED_FLOORS: Mapping[str, RelevanceFloor] = MappingProxyType(
    {"sentence-transformers/all-MiniLM-L6-v2": RelevanceFloor(0.46)}
)


def floor_for(model_id: str, setting: float | None = None) -> RelevanceFloor | None:
    """The floor to apply: `setting` when given (0 or less: none), else the floor calibrated
    for `model_id`, else none."""
    if setting is not None:
        return RelevanceFloor(setting) if setting > 0 else None
    return CALIBRATED_FLOORS.get(model_id)

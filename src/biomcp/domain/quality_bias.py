"""The quality bias as a nudge: a share of the rerank's multiplier, not all of it.

The rerank (`biomcp.domain.rerank`) multiplies a fused score by up to 2.6 for quality, section
and tier. Applied whole, it lets a weaker match of a better paper pass a stronger match. A
tempered bias keeps a share of the multiplier's gain: the quality still breaks near ties, but a
clear difference in relevance stands.
"""

from __future__ import annotations

import math

from biomcp.domain.errors import InvalidConfigError

__all__ = ["QUALITY_BIAS_STRENGTH", "tempered_score"]

#: The share of the rerank multiplier's gain kept (chosen on SciFact train,
#: `benchmarks/README.md`).
QUALITY_BIAS_STRENGTH = 0.25


def tempered_score(
    score: float, multiplier: float, strength: float = QUALITY_BIAS_STRENGTH
) -> float:
    """`score * (1 + strength * (multiplier - 1))`: strength 1 is the whole rerank, 0 none.

    Raises:
        InvalidConfigError: `strength` outside [0, 1], or a multiplier not finite and > 0.
    """
    if not math.isfinite(strength) or not 0.0 <= strength <= 1.0:
        raise InvalidConfigError(f"a quality bias strength is within [0, 1]: {strength}")
    if not math.isfinite(multiplier) or multiplier <= 0.0:
        raise InvalidConfigError(f"a rerank multiplier is finite and > 0: {multiplier}")
    return score * (1.0 + strength * (multiplier - 1.0))

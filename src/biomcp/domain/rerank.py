"""The quality-biased rerank of search hits (spec 03 section 7).

    final = similarity * (1 + quality_total / 10) * (1 + section_boost) * (1 + tier_weight)

`section_boost` rewards the sections that carry findings (Results +0.10, Conclusions +0.05);
`tier_weight` depends on what the question asks: a predictive question ("likelihood of
success", efficacy, outcomes) favours clinical evidence (+0.20, preclinical +0.05), a mechanism
question favours preclinical (+0.20) and basic (+0.10) evidence; a neutral question adds none.
All weights live in `RerankWeights` and can be changed per deployment.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from biomcp.domain.errors import InvalidConfigError
from biomcp.domain.records import EvidenceType

__all__ = ["Intent", "RerankWeights", "detect_intent", "rerank_score"]


class Intent(StrEnum):
    PREDICTIVE = "predictive"
    MECHANISM = "mechanism"
    NEUTRAL = "neutral"


def _frozen(mapping: Mapping[str, float]) -> Mapping[str, float]:
    return MappingProxyType(dict(mapping))


_SECTION_BOOSTS = {"results": 0.10, "findings": 0.10, "conclusions": 0.05, "conclusion": 0.05}
_TIER_WEIGHTS = {
    Intent.PREDICTIVE: {"clinical": 0.20, "preclinical": 0.05},
    Intent.MECHANISM: {"preclinical": 0.20, "basic": 0.10},
    Intent.NEUTRAL: {},
}


@dataclass(frozen=True, slots=True)
class RerankWeights:
    """Section boosts by lower-cased label or NlmCategory, and tier weights by intent."""

    section_boosts: Mapping[str, float] = field(default_factory=lambda: _frozen(_SECTION_BOOSTS))
    tier_weights: Mapping[Intent, Mapping[str, float]] = field(
        default_factory=lambda: MappingProxyType(
            {intent: _frozen(w) for intent, w in _TIER_WEIGHTS.items()}
        )
    )

    def __post_init__(self) -> None:
        values = [*self.section_boosts.values()]
        values += [v for weights in self.tier_weights.values() for v in weights.values()]
        if any(not math.isfinite(v) or v <= -1 for v in values):
            raise InvalidConfigError("boosts and tier weights must be finite and > -1")

    def section_boost(self, section: str | None) -> float:
        if not section:
            return 0.0
        return self.section_boosts.get(section.strip().casefold(), 0.0)

    def tier_weight(self, intent: Intent, evidence_type: EvidenceType | str | None) -> float:
        if evidence_type is None:
            return 0.0
        return self.tier_weights.get(intent, {}).get(str(evidence_type), 0.0)


# Cues are counted, not just detected: "the mechanism behind the efficacy" has one of each and
# stays neutral rather than guessing.
_PREDICTIVE_CUES = re.compile(
    r"\b(?:likelihood|probability|chances?|predict\w*|success|succeed|efficacy|effective\w*|"
    r"benefit\w*|outcomes?|survival|mortality|response rates?|remission|relapse|"
    r"phase (?:i{1,3}|[123])|trials?|vs\.?|versus|placebo|compared|superior\w*|"
    r"non-?inferior\w*|reduce[sd]?|risk|safety|adverse|dose|approval|endpoint\w*|prognos\w*)\b",
    re.IGNORECASE,
)
_MECHANISM_CUES = re.compile(
    r"\b(?:mechanisms?|mechanistic\w*|pathways?|signal\w*|how does|how do|why|binds?|binding|"
    r"targets?|receptors?|modes? of action|moa|downstream|upstream|mediat\w*|"
    r"molecular|cellular|in vitro|in vivo|mouse|mice|murine|rats?|animal|preclinical|"
    r"express\w*|regulat\w*|inhibit\w*|activat\w*|phosphorylat\w*|transcription\w*|"
    r"biology|pharmacodynamics?|pharmacology)\b",
    re.IGNORECASE,
)


def detect_intent(question: str) -> Intent:
    """Predictive when the question's predictive cues (efficacy, outcomes, trials, "likelihood
    of success", vs placebo...) outnumber its mechanism cues (mechanism, pathway, binding, in
    vitro, mouse...), mechanism when the reverse holds, neutral on a tie."""
    predictive = len(_PREDICTIVE_CUES.findall(question))
    mechanism = len(_MECHANISM_CUES.findall(question))
    if predictive > mechanism:
        return Intent.PREDICTIVE
    if mechanism > predictive:
        return Intent.MECHANISM
    return Intent.NEUTRAL


def rerank_score(
    similarity: float,
    quality_total: float | None,
    section: str | None,
    evidence_type: EvidenceType | str | None,
    intent: Intent,
    weights: RerankWeights | None = None,
) -> float:
    """The spec's rerank key. A missing quality counts as 0 (no bonus, no penalty)."""
    weights = weights or RerankWeights()
    quality = min(10.0, max(0.0, quality_total or 0.0))
    return (
        similarity
        * (1 + quality / 10)
        * (1 + weights.section_boost(section))
        * (1 + weights.tier_weight(intent, evidence_type))
    )

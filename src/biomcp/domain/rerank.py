"""The quality-biased rerank of search hits (spec 03 section 7).

    final = similarity * (1 + quality_total / 10) * (1 + section_boost) * (1 + tier_weight)

`section_boost` rewards the sections that carry findings (Results +0.10, Conclusions +0.05),
read from the section's NLM category, so INTERPRETATION counts as Conclusions and FINDINGS as
Results (`biomcp.domain.sections`);
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
from biomcp.domain.quality_bias import QUALITY_BIAS_STRENGTH, tempered_score
from biomcp.domain.records import EvidenceType
from biomcp.domain.sections import section_category

__all__ = ["Intent", "RerankWeights", "asks_for_numbers", "detect_intent", "rerank_score"]


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
    """Section boosts by lower-cased label or NlmCategory, and tier weights by intent.
    `numeric_first`: a question asking for a number gets, within each paper, the chunk that
    carries one first (see `biomcp.usecases.ranking.numeric_first`)."""

    section_boosts: Mapping[str, float] = field(default_factory=lambda: _frozen(_SECTION_BOOSTS))
    tier_weights: Mapping[Intent, Mapping[str, float]] = field(
        default_factory=lambda: MappingProxyType(
            {intent: _frozen(w) for intent, w in _TIER_WEIGHTS.items()}
        )
    )
    numeric_first: bool = True
    #: The share of the multiplier's gain a score keeps (`biomcp.domain.quality_bias`).
    strength: float = QUALITY_BIAS_STRENGTH

    def __post_init__(self) -> None:
        tempered_score(1.0, 1.0, self.strength)  # refuses a strength outside [0, 1]
        values = [*self.section_boosts.values()]
        values += [v for weights in self.tier_weights.values() for v in weights.values()]
        if any(not math.isfinite(v) or v <= -1 for v in values):
            raise InvalidConfigError("boosts and tier weights must be finite and > -1")

    def section_boost(self, section: str | None, category: str | None = None) -> float:
        """The boost of the label itself when it has one, else of its NLM category (`category`
        when given, else the one the label maps to)."""
        label = (section or "").strip().casefold()
        if label in self.section_boosts:
            return self.section_boosts[label]
        resolved = section_category(section, category)
        return self.section_boosts.get(resolved.casefold(), 0.0) if resolved else 0.0

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


# "How does X compare with Y": a comparison of outcomes, not a question of how X works.
_COMPARE_ASK = re.compile(
    r"\bhow (?:do|does|did)\b(?=[^?,;]*\b(?:compare|differ)\b)", re.IGNORECASE
)


def _without_compare_asks(question: str) -> tuple[str, int]:
    """`question` with the "how does" of each comparison taken out, and how many there were."""
    return _COMPARE_ASK.subn("", question)


def detect_intent(question: str) -> Intent:
    """Predictive when the question's predictive cues (efficacy, outcomes, trials, "likelihood
    of success", vs placebo, "how does X compare"...) outnumber its mechanism cues (mechanism,
    pathway, binding, in vitro, mouse...), mechanism when the reverse holds, neutral on a tie."""
    rest, compares = _without_compare_asks(question)
    predictive = len(_PREDICTIVE_CUES.findall(rest)) + compares
    mechanism = len(_MECHANISM_CUES.findall(rest))
    if predictive > mechanism:
        return Intent.PREDICTIVE
    if mechanism > predictive:
        return Intent.MECHANISM
    return Intent.NEUTRAL


# A figure asked for outright: how much/many/often, a rate, a share, a ratio, a risk...
_NUMBER_CUES = re.compile(
    r"\b(?:how (?:much|many|often|long|large|big|frequent(?:ly)?|common|likely|effective|"
    r"active|safe|well|quickly|fast|soon)|by what (?:amount|margin)|what (?:percentage|"
    r"proportion|share|fraction|number|percent|amount|magnitude)|rates?|incidence|"
    r"prevalence|proportions?|percentages?|percent|ratios?|effect sizes?|frequen\w*|risks?|"
    r"odds|median|mean|averages?|counts?|number of|numbers of|survival|mortality|deaths?|fatal\w*|"
    r"(?:more|less|how) common)\b",
    re.IGNORECASE,
)
# An outcome measure named outright, whose answer is a figure: a reduction or a change in
# something, a test's accuracy, a dose or a level, a treatment's efficacy, its harms, a
# relapse or a remission, a score, a stay in hospital, quality of life.
_MEASURE_CUES = re.compile(
    r"\b(?:reductions?|differences?|(?:changes?|improvements?|declines?|falls?|rises?) in|"
    r"weight loss|sensitivity|specificity|accura(?:te|cy)|auc|area under|c.statistic|"
    r"predictive values?|doses?|dosages?|(?:serum|plasma|blood|urinary) (?:levels?|"
    r"concentrations?)|number needed to (?:treat|harm)|nnt|efficacy|effectiveness|"
    r"(?:absolute|relative|net) (?:benefit|risk)|responses? to|side effects?|"
    r"adverse (?:events?|effects?|reactions?)|\w*toxicit(?:y|ies)|complications?|"
    r"recurrences?|relapses?|remissions?|scores?|length of stay|quality of life)\b",
    re.IGNORECASE,
)
# A question about how something works, whatever figures it names.
_MECHANISM_ASK = re.compile(
    r"\b(?:why|how (?:do|does|did|is|are|can)|mechanis\w*|pathways?|through which|by which|"
    r"modes? of action)\b",
    re.IGNORECASE,
)
# A comparison or an effect, which asks for a figure when the question is about outcomes.
_EFFECT_CUES = re.compile(
    r"\b(?:compare[sd]?|differ\w*|versus|vs\.?|than|more|less|fewer|greater|higher|lower|"
    r"increase[sd]?|decrease[sd]?|reduce[sd]?|improve[sd]?|raise[sd]?|lose|lost|gain(?:ed)?|"
    r"regain(?:ed)?)\b",
    re.IGNORECASE,
)


def asks_for_numbers(question: str) -> bool:
    """Whether the answer to `question` is a figure: it asks how much, how many or how often,
    for a rate, share, ratio, risk, survival or deaths; it names an outcome measure (a
    reduction, a change in something, accuracy, a dose or level, efficacy, adverse events)
    and is no mechanism question ("cause weight loss by raising energy expenditure");
    or it compares an effect and its intent is predictive (efficacy, outcomes, trials, "how
    does X compare with Y"). A question asking how or why something works ("how does",
    "why", "mechanism", "pathway") never is."""
    if _MECHANISM_ASK.search(_without_compare_asks(question)[0]):
        return False
    if _NUMBER_CUES.search(question):
        return True
    intent = detect_intent(question)
    if _MEASURE_CUES.search(question) and intent is not Intent.MECHANISM:
        return True
    return intent is Intent.PREDICTIVE and bool(_EFFECT_CUES.search(question))


def rerank_score(
    similarity: float,
    quality_total: float | None,
    section: str | None,
    evidence_type: EvidenceType | str | None,
    intent: Intent,
    weights: RerankWeights | None = None,
    *,
    category: str | None = None,
) -> float:
    """The spec's rerank key. A missing quality counts as 0 (no bonus, no penalty).
    `category` is the section's NLM category when known."""
    weights = weights or RerankWeights()
    quality = min(10.0, max(0.0, quality_total or 0.0))
    return (
        similarity
        * (1 + quality / 10)
        * (1 + weights.section_boost(section, category))
        * (1 + weights.tier_weight(intent, evidence_type))
    )

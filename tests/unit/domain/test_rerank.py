"""The quality-biased rerank (spec 03 section 7; `biomcp.domain.rerank`)."""

from __future__ import annotations

import math
from types import MappingProxyType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.errors import InvalidConfigError
from biomcp.domain.records import EvidenceType
from biomcp.domain.rerank import Intent, RerankWeights, detect_intent, rerank_score

pytestmark = pytest.mark.unit

PREDICTIVE = Intent.PREDICTIVE
MECHANISM = Intent.MECHANISM
NEUTRAL = Intent.NEUTRAL


# --- the formula ---------------------------------------------------------------------------


def test_formula_multiplies_quality_section_and_tier_factors() -> None:
    score = rerank_score(0.8, 7, "Results", EvidenceType.CLINICAL, PREDICTIVE)
    assert score == pytest.approx(0.8 * 1.7 * 1.1 * 1.2)
    assert score == pytest.approx(1.7952)


def test_formula_for_a_mechanism_question_on_a_basic_conclusion() -> None:
    score = rerank_score(0.5, 4, "Conclusions", EvidenceType.BASIC, MECHANISM)
    assert score == pytest.approx(0.5 * 1.4 * 1.05 * 1.1)
    assert score == pytest.approx(0.8085)


def test_formula_without_any_boost_is_similarity_times_quality_factor() -> None:
    assert rerank_score(0.6, 5, "Methods", EvidenceType.OTHER, NEUTRAL) == pytest.approx(0.9)


def test_zero_quality_no_section_neutral_intent_returns_similarity() -> None:
    assert rerank_score(0.42, 0, None, None, NEUTRAL) == pytest.approx(0.42)


def test_missing_quality_counts_as_zero() -> None:
    assert rerank_score(0.5, None, None, EvidenceType.CLINICAL, NEUTRAL) == pytest.approx(0.5)
    assert rerank_score(0.5, None, "Results", None, NEUTRAL) == pytest.approx(0.55)


@pytest.mark.parametrize(("quality", "factor"), [(15, 2.0), (10, 2.0), (-3, 1.0)])
def test_quality_is_clamped_to_zero_to_ten(quality: float, factor: float) -> None:
    assert rerank_score(0.5, quality, None, None, NEUTRAL) == pytest.approx(0.5 * factor)


def test_fractional_quality_is_used_as_is() -> None:
    assert rerank_score(1.0, 2.5, None, None, NEUTRAL) == pytest.approx(1.25)


def test_zero_similarity_scores_zero_whatever_the_boosts() -> None:
    assert rerank_score(0.0, 10, "Results", EvidenceType.CLINICAL, PREDICTIVE) == 0.0


# --- section boosts ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("section", "boost"),
    [
        ("Results", 0.10),
        ("RESULTS", 0.10),
        ("results", 0.10),
        (" Results ", 0.10),
        ("Findings", 0.10),
        ("Conclusions", 0.05),
        ("CONCLUSIONS", 0.05),
        ("Conclusion", 0.05),
        ("METHODS", 0.0),
        ("BACKGROUND", 0.0),
        ("UNASSIGNED", 0.0),
        ("", 0.0),
        (None, 0.0),
    ],
)
def test_section_boost_by_label_or_nlm_category(section: str | None, boost: float) -> None:
    assert RerankWeights().section_boost(section) == pytest.approx(boost)
    expected = 0.5 * (1 + boost)
    assert rerank_score(0.5, 0, section, None, NEUTRAL) == pytest.approx(expected)


# --- tier weights --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("intent", "evidence", "weight"),
    [
        (PREDICTIVE, EvidenceType.CLINICAL, 0.20),
        (PREDICTIVE, EvidenceType.PRECLINICAL, 0.05),
        (PREDICTIVE, EvidenceType.BASIC, 0.0),
        (PREDICTIVE, EvidenceType.OTHER, 0.0),
        (MECHANISM, EvidenceType.PRECLINICAL, 0.20),
        (MECHANISM, EvidenceType.BASIC, 0.10),
        (MECHANISM, EvidenceType.CLINICAL, 0.0),
        (MECHANISM, EvidenceType.OTHER, 0.0),
        (NEUTRAL, EvidenceType.CLINICAL, 0.0),
        (NEUTRAL, EvidenceType.PRECLINICAL, 0.0),
        (NEUTRAL, EvidenceType.BASIC, 0.0),
        (NEUTRAL, EvidenceType.OTHER, 0.0),
    ],
)
def test_tier_weight_per_intent(intent: Intent, evidence: EvidenceType, weight: float) -> None:
    assert RerankWeights().tier_weight(intent, evidence) == pytest.approx(weight)
    assert rerank_score(0.5, 0, None, evidence, intent) == pytest.approx(0.5 * (1 + weight))


def test_tier_weight_accepts_the_evidence_type_as_a_plain_string() -> None:
    assert rerank_score(0.5, 0, None, "clinical", PREDICTIVE) == pytest.approx(0.6)
    assert rerank_score(0.5, 0, None, "preclinical", MECHANISM) == pytest.approx(0.6)


def test_missing_or_unknown_evidence_type_adds_no_tier_weight() -> None:
    assert rerank_score(0.5, 0, None, None, PREDICTIVE) == pytest.approx(0.5)
    assert rerank_score(0.5, 0, None, "anecdotal", PREDICTIVE) == pytest.approx(0.5)


def test_neutral_intent_adds_nothing_for_any_tier() -> None:
    scores = [rerank_score(0.7, 6, "Results", t, NEUTRAL) for t in EvidenceType]
    assert scores == [pytest.approx(0.7 * 1.6 * 1.1)] * len(EvidenceType)


def test_predictive_question_ranks_clinical_above_preclinical_at_equal_similarity() -> None:
    clinical = rerank_score(0.7, 5, "Results", EvidenceType.CLINICAL, PREDICTIVE)
    preclinical = rerank_score(0.7, 5, "Results", EvidenceType.PRECLINICAL, PREDICTIVE)
    assert clinical > preclinical


def test_mechanism_question_ranks_preclinical_above_clinical_at_equal_similarity() -> None:
    clinical = rerank_score(0.7, 5, "Results", EvidenceType.CLINICAL, MECHANISM)
    preclinical = rerank_score(0.7, 5, "Results", EvidenceType.PRECLINICAL, MECHANISM)
    assert preclinical > clinical


# --- custom and invalid weights ------------------------------------------------------------


def test_custom_weights_replace_the_defaults() -> None:
    weights = RerankWeights(
        section_boosts={"results": 0.5},
        tier_weights={PREDICTIVE: {"clinical": 1.0}},
    )
    assert rerank_score(1.0, 0, "RESULTS", "clinical", PREDICTIVE, weights) == pytest.approx(3.0)
    assert rerank_score(1.0, 0, "Conclusions", "clinical", MECHANISM, weights) == pytest.approx(1.0)


def test_negative_weights_above_minus_one_are_allowed_as_penalties() -> None:
    weights = RerankWeights(section_boosts={"background": -0.5}, tier_weights={})
    assert rerank_score(1.0, 0, "Background", None, NEUTRAL, weights) == pytest.approx(0.5)


def test_default_weights_are_read_only() -> None:
    weights = RerankWeights()
    assert isinstance(weights.section_boosts, MappingProxyType)
    with pytest.raises(TypeError):
        weights.section_boosts["results"] = 9.0  # type: ignore[index]
    assert weights.section_boost("results") == pytest.approx(0.10)


@pytest.mark.parametrize("bad", [-1.0, -2.5, math.nan, math.inf, -math.inf])
def test_invalid_section_boost_is_rejected(bad: float) -> None:
    with pytest.raises(InvalidConfigError):
        RerankWeights(section_boosts={"results": bad})


@pytest.mark.parametrize("bad", [-1.0, -2.5, math.nan, math.inf])
def test_invalid_tier_weight_is_rejected(bad: float) -> None:
    with pytest.raises(InvalidConfigError):
        RerankWeights(tier_weights={MECHANISM: {"basic": bad}})


# --- detect_intent -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "What is the likelihood of success of sotorasib in phase 3 trials for KRAS G12C NSCLC?",
        "How effective is semaglutide for weight loss compared with placebo?",
        "Does tirzepatide reduce cardiovascular mortality in adults with obesity?",
        "What are the survival outcomes of adagrasib versus docetaxel?",
        "What is the probability that a GLP-1 agonist succeeds in a phase II trial for NASH?",
        "Is pembrolizumab superior to chemotherapy for overall survival in lung cancer?",
        "What adverse events and safety signals were reported for CAR-T therapy?",
        "What response rates were seen with osimertinib in EGFR-mutant NSCLC?",
    ],
)
def test_efficacy_and_outcome_questions_are_predictive(question: str) -> None:
    assert detect_intent(question) is PREDICTIVE


@pytest.mark.parametrize(
    "question",
    [
        "How does apixaban compare with warfarin for bleeding?",
        "How do outcomes differ between early and late surgery for endocarditis?",
        "How did tirzepatide compare with semaglutide in obesity?",
    ],
)
def test_how_one_treatment_compares_with_another_is_predictive(question: str) -> None:
    assert detect_intent(question) is PREDICTIVE


def test_a_comparison_clause_leaves_a_mechanism_clause_its_own_how() -> None:
    mixed = "How does metformin lower glucose, and how does it compare with insulin?"
    assert detect_intent(mixed) is not PREDICTIVE
    assert detect_intent("How do KRAS G12C and G12D differ in their binding pocket?") is not (
        PREDICTIVE
    )


@pytest.mark.parametrize(
    "question",
    [
        "What is the mechanism of action of sotorasib?",
        "How does KRAS G12C signal through the MAPK pathway?",
        "Which receptors does semaglutide bind in the hypothalamus?",
        "What downstream pathways mediate GLP-1 receptor activation in beta cells?",
        "How do mouse models explain resistance to KRAS inhibitors?",
        "Why does EGFR inhibition activate compensatory signalling in vitro?",
        "What is the molecular target of metformin?",
        "How does PD-1 blockade regulate T cell exhaustion?",
    ],
)
def test_mechanism_and_biology_questions_are_mechanism(question: str) -> None:
    assert detect_intent(question) is MECHANISM


@pytest.mark.parametrize(
    "question",
    [
        "Tell me about semaglutide.",
        "What is known about KRAS G12C in lung cancer?",
        "Summarize recent papers on tirzepatide.",
        "",
    ],
)
def test_questions_without_cues_are_neutral(question: str) -> None:
    assert detect_intent(question) is NEUTRAL


def test_a_tie_between_cues_is_neutral() -> None:
    assert detect_intent("Mechanism and efficacy of sotorasib") is NEUTRAL


def test_a_question_with_one_cue_of_each_kind_stays_neutral() -> None:
    assert detect_intent("What is the mechanism behind the efficacy of semaglutide?") is NEUTRAL
    # ...while a second predictive cue tips it.
    assert detect_intent("What is the mechanism of the survival benefit of semaglutide?") is (
        Intent.PREDICTIVE
    )


# --- properties ----------------------------------------------------------------------------

QUALITY = st.floats(min_value=-5, max_value=15, allow_nan=False)


@given(
    similarity=st.floats(min_value=1e-6, max_value=1.0),
    q1=QUALITY,
    q2=QUALITY,
    section=st.sampled_from([None, "Results", "CONCLUSIONS", "Methods"]),
    evidence=st.sampled_from([None, *EvidenceType]),
    intent=st.sampled_from(list(Intent)),
)
def test_score_is_monotone_in_quality_for_positive_similarity(
    similarity: float,
    q1: float,
    q2: float,
    section: str | None,
    evidence: EvidenceType | None,
    intent: Intent,
) -> None:
    low, high = min(q1, q2), max(q1, q2)
    assert rerank_score(similarity, low, section, evidence, intent) <= rerank_score(
        similarity, high, section, evidence, intent
    )

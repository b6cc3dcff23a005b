"""Section labels to NLM categories, and the section boost that follows the category."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.rerank import Intent, RerankWeights, rerank_score
from biomcp.domain.sections import NLM_CATEGORIES, category_of_label, section_category

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("label", "category"),
    [
        ("INTERPRETATION", "CONCLUSIONS"),
        ("CONCLUSIONS AND RELEVANCE", "CONCLUSIONS"),
        ("Authors' conclusions", "CONCLUSIONS"),
        ("FINDINGS", "RESULTS"),
        ("MAIN RESULTS", "RESULTS"),
        ("Measurements and Main Results", "RESULTS"),
        ("MAIN OUTCOME MEASURES", "METHODS"),
        ("MAIN OUTCOMES AND MEASURES", "METHODS"),
        ("DESIGN, SETTING, AND PARTICIPANTS", "METHODS"),
        ("Patients & Methods", "METHODS"),
        ("INTRODUCTION", "BACKGROUND"),
        ("CONTEXT", "BACKGROUND"),
        ("AIMS", "OBJECTIVE"),
        ("PURPOSE:", "OBJECTIVE"),
    ],
)
def test_common_labels_map_to_the_nlm_category(label: str, category: str) -> None:
    assert category_of_label(label) == category


@pytest.mark.parametrize(
    ("label", "category"),
    [
        ("RESULTS AND CONCLUSIONS", "RESULTS"),  # its numbers are what it carries
        ("Efficacy results", "RESULTS"),
        ("Clinical conclusions", "CONCLUSIONS"),
    ],
)
def test_an_unlisted_label_is_placed_by_the_words_it_uses(label: str, category: str) -> None:
    assert category_of_label(label) == category


@pytest.mark.parametrize("label", [None, "", "   ", "TRIAL REGISTRATION", "FUNDING"])
def test_a_label_that_names_no_kind_of_section_has_no_category(label: str | None) -> None:
    assert category_of_label(label) is None


def test_a_stored_nlm_category_wins_over_the_label() -> None:
    assert section_category("SUMMARY OF FINDINGS", "CONCLUSIONS") == "CONCLUSIONS"
    assert section_category("FINDINGS", "results") == "RESULTS"


def test_unassigned_or_unknown_categories_fall_back_to_the_label() -> None:
    assert section_category("INTERPRETATION", "UNASSIGNED") == "CONCLUSIONS"
    assert section_category("FINDINGS", "SOMETHING") == "RESULTS"
    assert section_category(None, "UNASSIGNED") is None


@given(st.text(max_size=40))
def test_any_label_maps_to_an_nlm_category_or_none(label: str) -> None:
    assert category_of_label(label) in NLM_CATEGORIES | {None}


@pytest.mark.parametrize(
    ("label", "category", "boost"),
    [
        ("INTERPRETATION", None, 0.05),
        ("CONCLUSIONS AND RELEVANCE", None, 0.05),
        ("FINDINGS", None, 0.10),
        ("MAIN OUTCOME MEASURES", None, 0.0),
        ("SUMMARY OF FINDINGS", "RESULTS", 0.10),
        ("OUTCOMES AND IMPLICATIONS", "CONCLUSIONS", 0.05),
        ("BACKGROUND", "BACKGROUND", 0.0),
    ],
)
def test_the_section_boost_follows_the_nlm_category(
    label: str, category: str | None, boost: float
) -> None:
    assert RerankWeights().section_boost(label, category) == pytest.approx(boost)
    score = rerank_score(0.5, 0, label, None, Intent.NEUTRAL, category=category)
    assert score == pytest.approx(0.5 * (1 + boost))


def test_a_boost_set_for_a_label_itself_wins_over_its_category() -> None:
    weights = RerankWeights(section_boosts={"interpretation": 0.3, "conclusions": 0.05})
    assert weights.section_boost("Interpretation", "CONCLUSIONS") == pytest.approx(0.3)
    assert weights.section_boost("Conclusion", "CONCLUSIONS") == pytest.approx(0.05)

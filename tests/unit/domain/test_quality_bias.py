from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.errors import InvalidConfigError
from biomcp.domain.quality_bias import QUALITY_BIAS_STRENGTH, tempered_score
from biomcp.domain.rerank import Intent, rerank_score

multipliers = st.floats(min_value=0.01, max_value=5.0, allow_nan=False)
fused = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def test_strength_one_is_the_whole_rerank() -> None:
    multiplier = rerank_score(1.0, 8.0, "results", "clinical", Intent.PREDICTIVE)
    whole = rerank_score(0.7, 8.0, "results", "clinical", Intent.PREDICTIVE)
    assert tempered_score(0.7, multiplier, 1.0) == pytest.approx(whole)


def test_strength_zero_leaves_the_fused_score() -> None:
    assert tempered_score(0.7, 2.4, 0.0) == 0.7


def test_the_default_keeps_a_quarter_of_the_multipliers_gain() -> None:
    assert QUALITY_BIAS_STRENGTH == 0.25
    assert tempered_score(0.8, 2.0) == pytest.approx(0.8 * 1.25)


def test_a_clearly_better_match_keeps_its_place_against_a_better_paper() -> None:
    # A weak hit of a top-quality paper passes a strong plain one under the whole rerank.
    strong, weak = 0.9, 0.6
    best = rerank_score(1.0, 10.0, "results", "clinical", Intent.PREDICTIVE)
    assert weak * best > strong
    assert tempered_score(weak, best) < tempered_score(strong, 1.0)


def test_quality_still_breaks_a_tie_of_relevance() -> None:
    assert tempered_score(0.8, 1.6) > tempered_score(0.8, 1.2)


@given(fused, fused, multipliers)
def test_equal_multipliers_keep_the_fused_order(a: float, b: float, multiplier: float) -> None:
    if a > b:
        assert tempered_score(a, multiplier) >= tempered_score(b, multiplier)


@given(fused, multipliers)
def test_a_tempered_score_lies_between_the_fused_and_the_fully_reranked_one(
    score: float, multiplier: float
) -> None:
    low, high = sorted((score, score * multiplier))
    assert low - 1e-12 <= tempered_score(score, multiplier) <= high + 1e-12


def test_a_strength_outside_zero_to_one_is_refused() -> None:
    for strength in (-0.1, 1.01, math.nan):
        with pytest.raises(InvalidConfigError, match="strength"):
            tempered_score(0.5, 1.2, strength)


def test_a_multiplier_that_is_not_positive_and_finite_is_refused() -> None:
    for multiplier in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(InvalidConfigError, match="multiplier"):
            tempered_score(0.5, multiplier)

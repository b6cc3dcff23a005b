"""Hybrid fusion as Weaviate does it: relative-score and ranked fusion."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.errors import InvalidConfigError
from biomcp.domain.fusion import (
    RRF_K,
    candidate_count,
    fuse_arms,
    ranked_fusion,
    relative_score_fusion,
)

pytestmark = pytest.mark.unit

VECTOR = [("a", 0.9), ("b", 0.7), ("c", 0.5)]
KEYWORD = [("c", 12.0), ("d", 6.0), ("a", 3.0)]


def test_relative_score_fusion_normalizes_each_arm_and_weights_by_alpha() -> None:
    fused = dict(relative_score_fusion(VECTOR, KEYWORD, alpha=0.5))
    # vector: a 1, b 0.5, c 0; keyword: c 1, d 1/3, a 0
    assert fused == pytest.approx({"a": 0.5, "b": 0.25, "c": 0.5, "d": 1 / 6})


def test_relative_score_fusion_orders_best_first_with_key_ties() -> None:
    assert [k for k, _ in relative_score_fusion(VECTOR, KEYWORD, alpha=0.5)] == ["a", "c", "b", "d"]


def test_alpha_one_is_pure_vector_order_and_alpha_zero_pure_keyword_order() -> None:
    assert [k for k, s in relative_score_fusion(VECTOR, KEYWORD, 1.0) if s > 0] == ["a", "b"]
    assert [k for k, s in relative_score_fusion(VECTOR, KEYWORD, 0.0) if s > 0] == ["c", "d"]


def test_an_arm_with_equal_scores_normalizes_to_one() -> None:
    assert dict(relative_score_fusion([("a", 0.3), ("b", 0.3)], [], 1.0)) == {"a": 1.0, "b": 1.0}


def test_ranked_fusion_sums_weighted_reciprocal_ranks() -> None:
    fused = dict(ranked_fusion(VECTOR, KEYWORD, alpha=0.5))
    assert fused["a"] == pytest.approx(0.5 / (RRF_K + 1) + 0.5 / (RRF_K + 3))
    assert fused["d"] == pytest.approx(0.5 / (RRF_K + 2))
    assert ranked_fusion(VECTOR, KEYWORD, alpha=0.5)[0][0] == "a"


@pytest.mark.parametrize("alpha", [-0.1, 1.5])
def test_alpha_outside_the_unit_interval_is_rejected(alpha: float) -> None:
    with pytest.raises(InvalidConfigError):
        relative_score_fusion(VECTOR, KEYWORD, alpha)
    with pytest.raises(InvalidConfigError):
        ranked_fusion(VECTOR, KEYWORD, alpha)


ARM = st.dictionaries(
    st.text(alphabet="abcdefgh", min_size=1, max_size=3),
    st.floats(min_value=-5, max_value=50, allow_nan=False),
    max_size=12,
).map(lambda d: list(d.items()))


@given(vector=ARM, keyword=ARM, alpha=st.floats(min_value=0, max_value=1))
def test_fused_scores_are_bounded_and_cover_both_arms(
    vector: list[tuple[str, float]], keyword: list[tuple[str, float]], alpha: float
) -> None:
    fused = relative_score_fusion(vector, keyword, alpha)
    assert {k for k, _ in fused} == {k for k, _ in vector} | {k for k, _ in keyword}
    assert all(-1e-9 <= s <= 1 + 1e-9 for _, s in fused)
    scores = [s for _, s in fused]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize(("limit", "expected"), [(1, 100), (20, 100), (21, 105), (50, 250)])
def test_each_arm_takes_five_times_the_limit_and_at_least_a_hundred(
    limit: int, expected: int
) -> None:
    assert candidate_count(limit) == expected
    assert candidate_count(limit, factor=2, minimum=10) == max(2 * limit, 10)


_ARM = st.lists(
    st.tuples(st.sampled_from("abcdefgh"), st.floats(-5, 5, allow_nan=False)),
    max_size=8,
    unique_by=lambda item: item[0],
)


@given(_ARM, _ARM, st.floats(0, 1))
def test_two_weighted_arms_are_the_two_arm_fusions(
    vector: list[tuple[str, float]], keyword: list[tuple[str, float]], alpha: float
) -> None:
    arms = [(alpha, vector), (1 - alpha, keyword)]
    assert fuse_arms(arms) == relative_score_fusion(vector, keyword, alpha)
    assert fuse_arms(arms, ranked=True) == ranked_fusion(vector, keyword, alpha)


def test_a_third_arm_adds_its_weighted_normalized_score() -> None:
    vector = [("a", 0.9), ("b", 0.5)]
    sentence = [("b", 0.95), ("a", 0.55), ("c", 0.5)]
    keyword = [("c", 10.0), ("a", 2.0)]
    fused = dict(fuse_arms([(0.3, vector), (0.3, sentence), (0.4, keyword)]))
    assert fused["a"] == pytest.approx(0.3 * 1.0 + 0.3 * (0.05 / 0.45) + 0.4 * 0.0)
    assert fused["b"] == pytest.approx(0.3 * 0.0 + 0.3 * 1.0)
    assert fused["c"] == pytest.approx(0.4 * 1.0)
    ranked = dict(fuse_arms([(0.3, vector), (0.3, sentence), (0.4, keyword)], ranked=True))
    assert ranked["b"] == pytest.approx(0.3 / (RRF_K + 2) + 0.3 / (RRF_K + 1))

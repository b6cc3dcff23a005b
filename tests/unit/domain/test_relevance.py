"""The relevance floor: which floor applies to a model, and which hits pass it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.errors import InvalidConfigError
from biomcp.domain.relevance import CALIBRATED_FLOORS, RelevanceFloor, floor_for

pytestmark = pytest.mark.unit

MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def test_the_default_model_has_a_calibrated_floor_between_zero_and_one() -> None:
    floor = floor_for(MINILM)
    assert floor is CALIBRATED_FLOORS[MINILM]
    assert floor is not None
    assert 0.0 < floor.min_sim < 1.0


def test_a_setting_overrides_the_calibrated_floor() -> None:
    assert floor_for(MINILM, 0.5) == RelevanceFloor(0.5)
    assert floor_for("some/other-model", 0.42) == RelevanceFloor(0.42)


def test_a_setting_of_zero_or_less_turns_the_floor_off() -> None:
    assert floor_for(MINILM, 0.0) is None
    assert floor_for(MINILM, -0.3) is None


def test_an_uncalibrated_model_without_a_setting_gets_no_floor() -> None:
    assert floor_for("text-embedding-3-small") is None
    assert floor_for("deterministic-test-embedder") is None


def test_a_hit_exactly_at_the_floor_passes_and_one_just_below_does_not() -> None:
    floor = RelevanceFloor(0.3)
    assert floor.passes(0.3)
    assert floor.passes(0.9, bm25=1.0)
    assert not floor.passes(0.2999)


def test_a_hit_without_a_similarity_never_passes_even_with_a_strong_bm25() -> None:
    assert not RelevanceFloor(0.1).passes(None, bm25=50.0)


@pytest.mark.parametrize("value", [1.01, -1.5, float("nan"), float("inf")])
def test_a_floor_outside_the_cosine_range_is_refused(value: float) -> None:
    with pytest.raises(InvalidConfigError, match="cosine"):
        RelevanceFloor(value)


@given(
    st.floats(min_value=-1, max_value=1),
    st.floats(min_value=-1, max_value=1),
    st.floats(min_value=-1, max_value=1),
)
def test_a_higher_floor_never_lets_more_hits_pass(low: float, high: float, sim: float) -> None:
    low, high = sorted((low, high))
    assert RelevanceFloor(low).passes(sim) or not RelevanceFloor(high).passes(sim)

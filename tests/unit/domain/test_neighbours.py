"""Neighbour smoothing: each of the best papers moves towards its nearest neighbour's score."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.neighbours import NEIGHBOUR_PAPERS, NEIGHBOUR_SHARE, neighbour_shifts

pytestmark = pytest.mark.unit

# Two topics: papers a and b are alike, c stands apart (nearest to b).
VECTORS = {
    "a": [[1.0, 0.0, 0.0]],
    "b": [[0.9, 0.1, 0.0], [1.0, 0.0, 0.1]],
    "c": [[0.0, 0.2, 1.0]],
}


def test_each_paper_moves_by_the_share_of_the_gap_to_its_nearest_neighbour() -> None:
    shifts = neighbour_shifts([("c", 1.0), ("a", 0.9), ("b", 0.5)], VECTORS, share=0.2)
    assert shifts["a"] == pytest.approx(0.2 * (0.5 - 0.9))  # a's neighbour is b
    assert shifts["b"] == pytest.approx(0.2 * (0.9 - 0.5))  # b's neighbour is a
    assert shifts["c"] == pytest.approx(0.2 * (0.5 - 1.0))  # c is nearest to b


def test_a_paper_whose_neighbours_rank_low_falls_below_a_pair_that_rank_high() -> None:
    # c tops the ranking, but the only paper like it (d) ranks last; a and b rank high together.
    vectors = {**VECTORS, "d": [[0.0, 0.3, 0.9]]}
    papers = [("c", 1.0), ("a", 0.95), ("b", 0.9), ("d", 0.1)]
    shifts = neighbour_shifts(papers, vectors, share=0.2)
    moved = sorted(papers, key=lambda p: -(p[1] + shifts[p[0]]))
    assert [pid for pid, _ in moved] == ["a", "b", "c", "d"]


def test_a_paper_vector_is_the_mean_of_its_chunks() -> None:
    # d's chunks average to a's direction, though neither chunk alone is nearest to a.
    vectors = {
        "a": [[1.0, 0.0, 0.0]],
        "d": [[1.0, 1.0, 0.0], [1.0, -1.0, 0.0]],
        "e": [[0.7, 0.7, 0.1]],
    }
    shifts = neighbour_shifts([("a", 0.5), ("d", 0.4), ("e", 0.1)], vectors, share=0.5)
    assert shifts["d"] == pytest.approx(0.5 * (0.5 - 0.4))


def test_only_the_best_papers_with_vectors_take_part() -> None:
    papers = [("a", 0.9), ("x", 0.8), ("b", 0.5), ("c", 0.1)]
    shifts = neighbour_shifts(papers, VECTORS, share=0.2, limit=3)
    assert set(shifts) == {"a", "b"}  # x has no vector; c is below the best three
    assert neighbour_shifts([("a", 0.9)], VECTORS) == {}
    assert neighbour_shifts(papers, VECTORS, share=0.0) == {}


@pytest.mark.parametrize("share", [-0.1, 1.5, math.nan])
def test_a_share_outside_zero_to_one_is_refused(share: float) -> None:
    with pytest.raises(ValueError, match="share"):
        neighbour_shifts([("a", 0.9), ("b", 0.5)], VECTORS, share=share)


def test_the_defaults_are_the_measured_ones() -> None:
    assert (NEIGHBOUR_SHARE, NEIGHBOUR_PAPERS) == (0.2, 30)


@given(
    st.lists(
        st.tuples(
            st.floats(0.0, 1.0),
            st.lists(st.floats(-1.0, 1.0), min_size=3, max_size=3).filter(
                lambda v: sum(x * x for x in v) > 1e-6
            ),
        ),
        min_size=2,
        max_size=12,
    )
)
def test_every_score_stays_between_its_own_and_the_best(
    rows: list[tuple[float, list[float]]],
) -> None:
    papers = [(str(i), score) for i, (score, _) in enumerate(rows)]
    vectors = {str(i): [vector] for i, (_, vector) in enumerate(rows)}
    shifts = neighbour_shifts(papers, vectors, share=0.2)
    top = max(score for _, score in papers)
    low = min(score for _, score in papers)
    for pid, score in papers:
        moved = score + shifts[pid]
        assert low - 1e-12 <= moved <= top + 1e-12
        assert abs(shifts[pid]) <= 0.2 * (top - low) + 1e-12

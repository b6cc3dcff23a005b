"""Similar-article scores: NCBI's integers made relative to the most similar article."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.ports.entrez import Link
from biomcp.usecases.live.shapes import similarity_scores

pytestmark = pytest.mark.unit


def test_the_most_similar_article_scores_one_and_the_raw_integer_is_kept() -> None:
    links = [Link("2", 31_000_000), Link("3", 30_000_000), Link("4", 12_000_000)]

    scores = similarity_scores(links)

    assert scores == {
        "2": (1.0, 31_000_000),
        "3": (0.9677, 30_000_000),
        "4": (0.3871, 12_000_000),
    }


def test_links_without_scores_keep_none() -> None:
    assert similarity_scores([Link("2"), Link("3")]) == {"2": (None, None), "3": (None, None)}


def test_all_zero_scores_stay_zero_rather_than_dividing_by_zero() -> None:
    assert similarity_scores([Link("2", 0), Link("3", None)]) == {
        "2": (0.0, 0),
        "3": (None, None),
    }


@given(st.lists(st.integers(min_value=0, max_value=2**31 - 1), min_size=1, max_size=30))
def test_scores_are_within_zero_and_one_and_keep_the_order(raw: list[int]) -> None:
    links = [Link(str(i + 1), score) for i, score in enumerate(raw)]

    scores = similarity_scores(links)

    assert all(0.0 <= scores[link.pmid][0] <= 1.0 for link in links)  # type: ignore[operator]
    by_raw = sorted(links, key=lambda link: link.score or 0)
    relative = [scores[link.pmid][0] for link in by_raw]
    assert relative == sorted(relative)  # type: ignore[type-var]

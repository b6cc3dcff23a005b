"""Ranking metrics of the retrieval evaluation (`biomcp.eval.metrics`), on hand-computed
cases and a few properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.eval.metrics import (
    dcg,
    mean_scores,
    mrr_at_k,
    ndcg_at_k,
    recall_at_k,
    relevant_keys,
    score_ranking,
)

pytestmark = pytest.mark.unit

# d1 (grade 1) at rank 1, d3 (grade 2) at rank 3; d5 (grade 1) is never retrieved.
RANKING = ["d1", "d2", "d3", "d4"]
QRELS = {"d1": 1, "d3": 2, "d5": 1}


# --- nDCG ----------------------------------------------------------------------------------


def test_dcg_discounts_by_log2_of_rank_plus_one() -> None:
    # 3/log2(2) + 2/log2(3) + 1/log2(4) = 3 + 1.26186 + 0.5
    assert dcg([3, 2, 1]) == pytest.approx(3 + 2 / math.log2(3) + 0.5)
    assert dcg([]) == 0.0


def test_ndcg_with_graded_qrels_by_hand() -> None:
    # DCG@3 = 1/1 + 0/log2(3) + 2/log2(4) = 2; ideal [2, 1, 1]: 2 + 1/log2(3) + 1/2 = 3.13093
    assert ndcg_at_k(RANKING, QRELS, 3) == pytest.approx(2 / (2.5 + 1 / math.log2(3)))
    assert ndcg_at_k(RANKING, QRELS, 3) == pytest.approx(0.638788, abs=1e-6)


def test_ndcg_cutoff_drops_what_lies_beyond_k() -> None:
    # k = 1: DCG = 1 (d1), ideal = 2 (the grade-2 document first)
    assert ndcg_at_k(RANKING, QRELS, 1) == pytest.approx(0.5)


def test_ndcg_of_a_single_relevant_document_at_rank_three() -> None:
    assert ndcg_at_k(["a", "b", "c"], {"c": 1}, 10) == pytest.approx(0.5)


def test_ndcg_is_one_for_the_ideal_ranking_and_zero_without_hits() -> None:
    assert ndcg_at_k(["d3", "d1", "d5"], QRELS, 10) == pytest.approx(1.0)
    assert ndcg_at_k(["x", "y"], QRELS, 10) == 0.0
    assert ndcg_at_k([], QRELS, 10) == 0.0


def test_a_repeated_key_counts_once_where_it_first_appears() -> None:
    # "a" twice: "b" is the second distinct key, at rank 2.
    assert ndcg_at_k(["a", "a", "b"], {"b": 1}, 10) == pytest.approx(1 / math.log2(3))
    assert mrr_at_k(["a", "a", "b"], {"b": 1}, 10) == pytest.approx(0.5)
    assert ndcg_at_k(["b", "b"], {"b": 1}, 10) == pytest.approx(1.0)


def test_grades_of_zero_or_less_are_not_relevant() -> None:
    qrels = {"a": 0, "b": 1, "c": -1}
    assert relevant_keys(qrels) == {"b"}
    assert ndcg_at_k(["a", "b"], qrels, 10) == pytest.approx(1 / math.log2(3))
    assert recall_at_k(["a", "c"], qrels, 10) == 0.0
    assert mrr_at_k(["a", "c", "b"], qrels, 10) == pytest.approx(1 / 3)


def test_a_query_without_relevant_documents_scores_zero() -> None:
    assert ndcg_at_k(["a"], {}, 10) == 0.0
    assert recall_at_k(["a"], {}, 10) == 0.0
    assert mrr_at_k(["a"], {"a": 0}, 10) == 0.0


# --- recall and MRR ------------------------------------------------------------------------


def test_recall_by_hand() -> None:
    assert recall_at_k(RANKING, QRELS, 1) == pytest.approx(1 / 3)
    assert recall_at_k(RANKING, QRELS, 2) == pytest.approx(1 / 3)
    assert recall_at_k(RANKING, QRELS, 3) == pytest.approx(2 / 3)
    assert recall_at_k(RANKING, QRELS, 100) == pytest.approx(2 / 3)


def test_recall_and_mrr_accept_a_plain_set_of_relevant_keys() -> None:
    assert recall_at_k(["a", "b", "c"], {"c", "z"}, 3) == pytest.approx(0.5)
    assert mrr_at_k(["a", "b", "c"], ["c"], 3) == pytest.approx(1 / 3)


def test_mrr_by_hand() -> None:
    assert mrr_at_k(RANKING, QRELS, 10) == 1.0
    assert mrr_at_k(["x", "y", "d3"], QRELS, 10) == pytest.approx(1 / 3)
    assert mrr_at_k(["x", "y", "d3"], QRELS, 2) == 0.0


@pytest.mark.parametrize("metric", [ndcg_at_k, recall_at_k, mrr_at_k])
def test_k_must_be_positive(metric: object) -> None:
    with pytest.raises(ValueError, match="k must be >= 1"):
        metric(RANKING, QRELS, 0)  # type: ignore[operator]


# --- one query, many queries ---------------------------------------------------------------


def test_score_ranking_names_each_metric_by_its_cutoff() -> None:
    scores = score_ranking(RANKING, QRELS)
    assert set(scores) == {"ndcg@10", "recall@10", "recall@100", "mrr@10"}
    # ideal@10 is [2, 1, 1]: the same as @3 here
    assert scores["ndcg@10"] == pytest.approx(0.638788, abs=1e-6)
    assert scores["recall@10"] == pytest.approx(2 / 3)
    assert scores["mrr@10"] == 1.0


def test_mean_scores_averages_each_metric_over_queries() -> None:
    per_query = [
        score_ranking(["a", "b", "c"], {"c": 1}),  # ndcg 0.5, mrr 1/3, recall 1
        score_ranking(["x"], {"y": 1}),  # all 0
    ]
    mean = mean_scores(per_query)
    assert mean["ndcg@10"] == pytest.approx(0.25)
    assert mean["mrr@10"] == pytest.approx(1 / 6)
    assert mean["recall@10"] == pytest.approx(0.5)
    assert mean_scores([]) == {}


def test_mean_scores_refuses_queries_with_different_metrics() -> None:
    with pytest.raises(ValueError, match="metric names differ"):
        mean_scores([{"ndcg@10": 1.0}, {"mrr@10": 1.0}])


# --- properties ----------------------------------------------------------------------------

_keys = st.sampled_from([f"d{i}" for i in range(12)])


@given(
    ranking=st.lists(_keys, max_size=15),
    qrels=st.dictionaries(_keys, st.integers(0, 3), max_size=8),
    k=st.integers(1, 15),
)
def test_metrics_stay_within_zero_and_one_and_recall_grows_with_k(
    ranking: list[str], qrels: dict[str, int], k: int
) -> None:
    for metric in (ndcg_at_k, recall_at_k, mrr_at_k):
        assert 0.0 <= metric(ranking, qrels, k) <= 1.0 + 1e-12
    assert recall_at_k(ranking, qrels, k) <= recall_at_k(ranking, qrels, k + 1)


@given(qrels=st.dictionaries(_keys, st.integers(1, 3), min_size=1, max_size=8))
def test_the_ideal_ranking_scores_one(qrels: dict[str, int]) -> None:
    ideal = sorted(qrels, key=lambda key: -qrels[key])
    assert ndcg_at_k(ideal, qrels, 10) == pytest.approx(1.0)
    assert mrr_at_k(ideal, qrels, 10) == 1.0

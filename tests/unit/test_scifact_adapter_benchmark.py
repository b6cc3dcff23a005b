"""The query-adapter SciFact experiment: its gradient, its folds and its test split.

Synthetic inputs only; each test checks a rule the experiment's figures rest on.
"""

from __future__ import annotations

import numpy as np
import pytest
from benchmarks.scifact_lexical.adapter import (
    Example,
    adapt,
    fit,
    leak_free_folds,
    loss_and_gradient,
    seen_split,
    unit,
)

pytestmark = pytest.mark.unit


def _example(seed: int = 0) -> Example:
    rng = np.random.default_rng(seed)
    dim = 6

    chunks = unit(rng.normal(size=(5, dim)))
    sentences = [unit(rng.normal(size=(n, dim))) for n in (1, 3, 2, 1, 4)]
    relevant = np.array([False, True, False, True, False])
    return Example(unit(rng.normal(size=dim)), chunks, sentences, relevant)


def test_the_gradient_matches_finite_differences() -> None:
    example = _example()
    w = np.random.default_rng(1).normal(scale=0.05, size=(6, 6))
    _, grad = loss_and_gradient(example, w)
    step = 1e-6
    for i, j in [(0, 0), (2, 5), (4, 1), (5, 3)]:
        moved = w.copy()
        moved[i, j] += step
        back = w.copy()
        back[i, j] -= step
        numeric = (loss_and_gradient(example, moved)[0] - loss_and_gradient(example, back)[0]) / (
            2 * step
        )
        assert grad[i, j] == pytest.approx(numeric, rel=1e-4, abs=1e-7)


def test_fitting_lowers_the_loss_and_no_adapter_leaves_the_query() -> None:
    examples = [_example(s) for s in range(8)]
    before = sum(loss_and_gradient(e, np.zeros((6, 6)))[0] for e in examples)
    w = fit(examples, epochs=20, rate=0.01, l2=0.0)
    after = sum(loss_and_gradient(e, w)[0] for e in examples)
    assert after < before
    query = np.array([3.0, 4.0, 0, 0, 0, 0])
    assert adapt(query, None).tolist() == [0.6, 0.8, 0, 0, 0, 0]


def test_queries_sharing_a_relevant_paper_share_a_fold() -> None:
    qrels = {
        "a": {"d1": 1},
        "b": {"d1": 1, "d2": 1},
        "c": {"d2": 1},  # linked to a through b
        "d": {"d3": 1},
        "e": {"d4": 1, "d9": 0},
        "f": {"d9": 1},  # d9 is not relevant to e: no link
    }
    qids = list(qrels)
    folds = leak_free_folds(qids, qrels, 3)
    fold = dict(zip(qids, folds.tolist(), strict=True))
    assert fold["a"] == fold["b"] == fold["c"]
    assert len({fold["d"], fold["e"], fold["f"]} - {fold["a"]}) >= 2
    assert sorted(np.bincount(folds, minlength=3).tolist()) == [1, 2, 3]


def test_test_claims_split_by_whether_train_saw_their_paper() -> None:
    train = {"t1": {"d1": 1}, "t2": {"d2": 0}}
    test = {"s1": {"d1": 1, "d5": 1}, "s2": {"d2": 1}, "s3": {"d6": 1}}
    assert seen_split(train, test) == (["s1"], ["s2", "s3"])

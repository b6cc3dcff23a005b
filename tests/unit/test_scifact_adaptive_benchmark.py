"""The per-query SciFact experiments: the alpha predictor and the sentence arm's scores.

Synthetic inputs only; each test checks a rule the experiment's figures rest on.
"""

from __future__ import annotations

import numpy as np
import pytest
from benchmarks.scifact_lexical.adaptive import DEFAULT, Ridge, _cross_validated
from benchmarks.scifact_lexical.sentences import sentences

from biomcp.eval.beir import BeirDataset, BeirDocument

pytestmark = pytest.mark.unit


def _curves(n: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Queries whose best alpha follows the first feature: low alpha when it is high."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    alphas = np.linspace(0, 1, 11)
    best = np.where(x[:, 0] > 0, 0.2, 0.9)
    y = 1 - np.abs(alphas[None, :] - best[:, None])
    return x, y


def test_the_ridge_predictor_learns_a_weight_that_features_decide() -> None:
    x, y = _curves(400)
    chosen = Ridge(1.0).fit(x, y).choose(x)
    assert y[np.arange(len(x)), chosen].mean() > y[:, DEFAULT].mean() + 0.1
    assert _cross_validated(Ridge(1.0), x, y) > y[:, DEFAULT].mean() + 0.1


def test_a_wide_band_keeps_the_fixed_weight() -> None:
    x, y = _curves(100)
    assert (Ridge(1.0, band=10.0).fit(x, y).choose(x) == DEFAULT).all()


def test_sentences_keep_the_title_and_split_the_abstract() -> None:
    docs = (
        BeirDocument("d1", "Statins and pain", "Pain fell by 20%. Statins were safe."),
        BeirDocument("d2", "", "One sentence only."),
    )
    data = BeirDataset("toy", "test", docs, {}, {})
    texts, owners = sentences(data)
    assert texts == [
        "Statins and pain",
        "Pain fell by 20%.",
        "Statins were safe.",
        "One sentence only.",
    ]
    assert len(set(owners[:3])) == 1
    assert owners[3] != owners[0]


def test_sentence_windows_run_over_the_abstract_with_stride_one() -> None:
    docs = (BeirDocument("d1", "T", "One. Two. Three."), BeirDocument("d2", "Only a title", ""))
    texts, owners = sentences(BeirDataset("toy", "test", docs, {}, {}), window=2)
    assert texts == ["T", "One. Two.", "Two. Three.", "Only a title"]
    assert owners[-1] != owners[0]

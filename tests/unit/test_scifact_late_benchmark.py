"""The late-interaction SciFact experiment: its query token weights and its MaxSim score.

Synthetic inputs only; each test checks a rule the experiment's figures rest on.
"""

from __future__ import annotations

import numpy as np
import pytest
from benchmarks.scifact_lexical.late import is_content, maxsim, token_weights
from benchmarks.scifact_lexical.sentences import best_own_sentence

pytestmark = pytest.mark.unit


def test_content_pieces_are_words_and_digits_but_not_stopwords() -> None:
    assert [is_content(p) for p in ["statin", "##s", "12", "the", ".", "##-"]] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]


def test_query_token_weights_follow_their_kind() -> None:
    pieces = ["the", "statin", "##s", "."]
    idf = {"statin": 3.0, "##s": 0.5, "the": 0.1}
    assert token_weights(pieces, "mean", idf).tolist() == [1.0, 1.0, 1.0, 1.0]
    assert token_weights(pieces, "content", idf).tolist() == [0.0, 1.0, 1.0, 0.0]
    assert token_weights(pieces, "idf", idf).tolist() == [0.0, 3.0, 0.5, 0.0]
    # a query of stopwords alone is still scored, each token alike
    assert token_weights(["the", "."], "idf", idf).tolist() == [1.0, 1.0]


def test_maxsim_takes_each_query_token_s_best_chunk_token() -> None:
    query = np.array([[1.0, 0.0], [0.0, 1.0]])
    covers_both = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float16)
    covers_one = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]], dtype=np.float16)
    scores = maxsim([covers_both, covers_one], query, np.array([1.0, 1.0]))
    assert scores.tolist() == [1.0, 0.5]
    # weighting the first query token only, both chunks match it fully
    assert maxsim([covers_both, covers_one], query, np.array([1.0, 0.0])).tolist() == [1.0, 1.0]


def test_each_chunk_scores_its_best_own_sentence() -> None:
    query = np.array([1.0, 0.0])
    vectors = np.array([[0.2, 0.98], [0.9, 0.44], [0.6, 0.8]])
    owner = np.array([0, 0, 2])  # chunk 1 has no sentence
    assert best_own_sentence(query, vectors, owner, 3).tolist() == [0.9, -1.0, 0.6]

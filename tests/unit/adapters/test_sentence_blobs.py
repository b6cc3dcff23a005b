"""Sentence vectors as one half-precision blob, read back as unit vectors."""

from __future__ import annotations

import numpy as np
import pytest

from biomcp.adapters.vectors.sentence_blobs import best_cosine, decode, encode
from biomcp.ports.vectors import check_unit_vector

pytestmark = pytest.mark.unit


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    rows = rng.normal(size=(n, dim))
    unit: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit


def test_vectors_round_trip_at_half_precision_as_unit_vectors() -> None:
    vectors = _unit(np.random.default_rng(0), 5, 384)
    blob = encode(vectors.tolist())
    assert len(blob) == 5 * 384 * 2
    back = decode(blob, 384)
    assert back.shape == (5, 384)
    assert np.abs(back - vectors).max() < 2e-3
    for row in back.tolist():
        check_unit_vector(row, 384)  # written anew, a read-back vector is accepted


def test_the_best_cosine_is_the_closest_sentence() -> None:
    vectors = _unit(np.random.default_rng(1), 4, 16)
    query = vectors[2]
    assert best_cosine(encode(vectors.tolist()), 16, query) == pytest.approx(1.0, abs=2e-3)
    assert best_cosine(b"", 16, query) is None
    assert best_cosine(None, 16, query) is None
    assert decode(b"", 16).shape == (0, 16)
    assert encode([]) == b""


def test_a_blob_of_another_dimension_is_refused() -> None:
    blob = encode(_unit(np.random.default_rng(2), 3, 16).tolist())
    with pytest.raises(ValueError, match="does not hold 20-d vectors"):
        decode(blob, 20)

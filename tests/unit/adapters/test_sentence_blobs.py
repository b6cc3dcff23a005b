"""Sentence vectors as one half-precision blob, read back as unit vectors."""

from __future__ import annotations

import numpy as np
import pytest

from biomcp.adapters.vectors.sentence_blobs import best_cosines, decode, encode
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


def test_each_blob_is_scored_by_its_closest_sentence() -> None:
    rng = np.random.default_rng(1)
    first, second = _unit(rng, 4, 16), _unit(rng, 1, 16)
    query = first[2]
    blobs = {
        "a": encode(first.tolist()),
        "b": encode(second.tolist()),
        "none": b"",
        "missing": None,
        "other dimension": encode(_unit(rng, 1, 12).tolist()),
    }
    scores = best_cosines(blobs, 16, query)
    assert set(scores) == {"a", "b"}
    assert scores["a"] == pytest.approx(1.0, abs=2e-3)
    assert scores["b"] == pytest.approx(float(second[0] @ query), abs=2e-3)
    assert best_cosines({}, 16, query) == {}
    assert decode(b"", 16).shape == (0, 16)
    assert encode([]) == b""


def test_a_blob_of_another_dimension_is_refused() -> None:
    blob = encode(_unit(np.random.default_rng(2), 3, 16).tolist())
    with pytest.raises(ValueError, match="does not hold 20-d vectors"):
        decode(blob, 20)

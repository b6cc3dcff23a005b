"""How both stores keep a chunk's sentence vectors: one blob of half-precision floats.

A blob is the sentence vectors of one chunk, each of the collection's dimension, as
little-endian float16 values one after another (empty: the chunk has none). Half precision
halves the disk a chunk's sentences take; decoding renormalizes each vector, so a vector read
back is a unit vector again and passes `check_unit_vector` when written anew.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["best_cosines", "decode", "encode"]

_DTYPE = "<f2"


def encode(vectors: Sequence[Sequence[float]]) -> bytes:
    """The blob of `vectors` (already checked unit vectors of one dimension)."""
    if not vectors:
        return b""
    return np.asarray(vectors, dtype=np.float32).astype(_DTYPE).tobytes()


def decode(blob: bytes | None, dim: int) -> np.ndarray:
    """The vectors of `blob` as an (n, dim) float32 array of unit rows (n = 0 when empty).

    Raises:
        ValueError: the blob's length is not a whole number of `dim`-d vectors.
    """
    if blob and len(blob) % (2 * dim):
        raise ValueError(f"a sentence blob of {len(blob)} bytes does not hold {dim}-d vectors")
    return _unit_rows(blob or b"", dim)


def best_cosines(
    blobs: Mapping[str, bytes | None], dim: int, query: np.ndarray
) -> dict[str, float]:
    """key -> the highest cosine of its blob's vectors to the unit vector `query`, for the
    keys whose blob holds vectors of `dim` dimensions (one product over every blob)."""
    kept = {k: b for k, b in blobs.items() if b and len(b) % (2 * dim) == 0}
    if not kept:
        return {}
    counts = [len(blob) // (2 * dim) for blob in kept.values()]
    cosines = _unit_rows(b"".join(kept.values()), dim) @ query
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    best = np.maximum.reduceat(cosines, starts)
    return dict(zip(kept, best.tolist(), strict=True))


def _unit_rows(buffer: bytes, dim: int) -> np.ndarray:
    """`buffer`'s half-precision vectors as float32 unit rows."""
    rows = np.frombuffer(buffer, dtype=_DTYPE).astype(np.float32).reshape(-1, dim)
    unit: np.ndarray = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    return unit

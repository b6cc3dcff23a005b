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
    if not blob:
        return np.zeros((0, dim), dtype=np.float32)
    if len(blob) % (2 * dim):
        raise ValueError(f"a sentence blob of {len(blob)} bytes does not hold {dim}-d vectors")
    rows = np.frombuffer(blob, dtype=_DTYPE).astype(np.float32).reshape(-1, dim)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit: np.ndarray = rows / np.maximum(norms, 1e-12)
    return unit


def best_cosines(
    blobs: Mapping[str, bytes | None], dim: int, query: np.ndarray
) -> dict[str, float]:
    """key -> the highest cosine of its blob's vectors to the unit vector `query`, for the
    keys whose blob holds vectors of `dim` dimensions (one product over every blob)."""
    keys: list[str] = []
    parts: list[bytes] = []
    counts: list[int] = []
    for key, blob in blobs.items():
        if blob and len(blob) % (2 * dim) == 0:
            keys.append(key)
            parts.append(blob)
            counts.append(len(blob) // (2 * dim))
    if not keys:
        return {}
    rows = np.frombuffer(b"".join(parts), dtype=_DTYPE).astype(np.float32).reshape(-1, dim)
    cosines = (rows @ query) / np.maximum(np.linalg.norm(rows, axis=1), 1e-12)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    best = np.maximum.reduceat(cosines, starts)
    return dict(zip(keys, best.tolist(), strict=True))

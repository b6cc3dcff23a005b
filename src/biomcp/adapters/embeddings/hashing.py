"""A model-free `Embedder`: feature hashing of words.

Each word (lower-cased `\\w+` run, accents kept) adds a fixed pseudo-random sparse pattern of
±1 entries to the vector; the sum is L2-normalized. Texts sharing words therefore get similar
vectors (cosine close to the share of common words), texts sharing none get nearly orthogonal
ones, so retrieval tests over it are meaningful. Patterns come from BLAKE2b of the word, so the
vectors are the same in every process, on every machine, whatever `PYTHONHASHSEED` is. A text
with no word hashes its raw content instead (still a unit vector, still deterministic).

Pure Python; no numpy needed.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

__all__ = ["HASHING_MODEL_ID", "HashingEmbedder", "tokenize"]

_WORD = re.compile(r"\w+", re.UNICODE)
_EMPTY_KEY = "\x00text:"
#: The model id of its vectors. Corpora store it: another id would make them read as
#: embedded by another model.
HASHING_MODEL_ID = "deterministic-v1"


def tokenize(text: str) -> list[str]:
    """The words the embedder hashes: lower-cased runs of word characters."""
    return _WORD.findall(text.lower())


@lru_cache(maxsize=65536)
def _pattern(feature: str, dim: int, nnz: int) -> tuple[tuple[int, float], ...]:
    """`nnz` (index, sign) pairs for `feature`, from its BLAKE2b digest."""
    out: list[tuple[int, float]] = []
    counter = 0
    while len(out) < nnz:
        digest = hashlib.blake2b(
            f"{counter}\x1f{feature}".encode(), digest_size=64, person=b"biomcp-det-v1"
        ).digest()
        for offset in range(0, len(digest) - 4, 5):
            if len(out) == nnz:
                break
            index = int.from_bytes(digest[offset : offset + 4], "little") % dim
            sign = 1.0 if digest[offset + 4] & 1 else -1.0
            out.append((index, sign))
        counter += 1
    return tuple(out)


class HashingEmbedder:
    """`Embedder` mapping text to a unit vector from word hashes: similar words, not meanings.

    Args:
        dim: vector length (>= 8).
        model_id: the reported model id (vectors of equal `model_id` and `dim` are equal).
        max_tokens: the reported input window (None: unbounded; when set, only the first
            `max_tokens` words are seen, like a real model's truncation).
        nnz: non-zero entries per word pattern.

    Attributes:
        calls: how many times `embed` was called with a non-empty input.
        texts_embedded: how many texts it embedded in all.
    """

    def __init__(
        self,
        dim: int = 384,
        model_id: str = HASHING_MODEL_ID,
        *,
        max_tokens: int | None = None,
        nnz: int = 8,
    ) -> None:
        if dim < 8:
            raise ValueError(f"dim must be >= 8, got {dim}")
        if not 1 <= nnz <= dim:
            raise ValueError(f"nnz must be in 1..dim, got {nnz}")
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1 or None, got {max_tokens}")
        self._dim = dim
        self._model_id = model_id
        self._max_tokens = max_tokens
        self._nnz = nnz
        self.calls = 0
        self.texts_embedded = 0

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def max_tokens(self) -> int | None:
        return self._max_tokens

    @property
    def runtime(self) -> str:
        """What computes the vectors, for a person reading a diagnosis."""
        return "word hashing (tests and demos: similar words, not similar meanings)"

    def embed_one(self, text: str) -> list[float]:
        """The vector of one text (synchronous; `embed` is the port's method)."""
        words = tokenize(text)
        if self._max_tokens is not None:
            words = words[: self._max_tokens]
        counts = Counter(words) if words else Counter({_EMPTY_KEY + text: 1})
        vector = [0.0] * self._dim
        for feature, count in counts.items():
            for index, sign in _pattern(feature, self._dim, self._nnz):
                vector[index] += sign * count
        norm = math.sqrt(math.fsum(x * x for x in vector))
        if norm == 0.0:  # the patterns cancelled out exactly: fall back to the raw text's
            index, sign = _pattern(_EMPTY_KEY + text, self._dim, 1)[0]
            vector[index] = sign
            return vector
        return [x / norm for x in vector]

    def embed_sync(self, texts: Sequence[str]) -> list[list[float]]:
        """`embed` without the event loop."""
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not a single str")
        if texts:
            self.calls += 1
            self.texts_embedded += len(texts)
        return [self.embed_one(text) for text in texts]

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed_sync(texts)

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self._dim}, model_id={self._model_id!r})"

"""The Embedder port: text in, unit-length vectors out (spec 01 "Embeddings Adapter")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

__all__ = [
    "Embedder",
    "EmbeddingError",
    "EmbeddingInputError",
    "EmbeddingUnavailableError",
]


class EmbeddingError(Exception):
    """Base of every error an Embedder raises. Messages never contain credentials."""


class EmbeddingUnavailableError(EmbeddingError):
    """The model cannot be loaded or the provider cannot be reached (after retries)."""


class EmbeddingInputError(EmbeddingError):
    """The provider refused the input itself (too long, empty batch item it cannot take...)."""


class Embedder(Protocol):
    """Turns texts into vectors.

    Contract: `embed` returns exactly one vector per input, in input order, each of length
    `dim` and unit L2 norm (within 1e-3); an empty input gives an empty list. Batching is the
    adapter's business. `model_id` names the model precisely enough that vectors of two
    embedders with equal `model_id` and `dim` are interchangeable. `max_tokens` is the model's
    input window in its own tokens (None when unbounded or unknown): text beyond it is not
    seen, so chunk budgets follow it.

    Raises (from `embed`):
        EmbeddingUnavailableError: the model or provider is not usable now.
        EmbeddingInputError: the provider rejected an input.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def max_tokens(self) -> int | None: ...

    async def embed(self, texts: Sequence[str]) -> list[list[float]]: ...

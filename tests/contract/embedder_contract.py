"""The `Embedder` contract suite: one set of checks every adapter must pass.

Subclass `EmbedderContract` in a `test_*.py` module, provide an `embedder` fixture (any scope)
and override the class attributes that differ for the adapter:

    class TestMine(EmbedderContract):
        related = ("heart attack treatment", "myocardial infarction therapy", "soil bacteria")

        @pytest.fixture(scope="class")
        def embedder(self) -> Embedder:
            return MyEmbedder()

        def error_cases(self, embedder: Embedder) -> list[ErrorCase]:
            return [ErrorCase("provider down", lambda: ..., EmbeddingUnavailableError)]

Each check runs its coroutine in a fresh `asyncio.run`, then awaits the embedder's `aclose()`
when it has one (adapters holding a connection pool must release it on the loop that opened
it).
"""

from __future__ import annotations

import asyncio
import math
import traceback
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import pytest

from biomcp.ports.embeddings import Embedder, EmbeddingError, EmbeddingInputError

__all__ = ["EmbedderContract", "ErrorCase", "cosine", "probe_texts", "run_closing"]

_T = TypeVar("_T")

_DRUGS = ("metformin", "aspirin", "atorvastatin", "lisinopril", "warfarin", "insulin")
_CONDITIONS = (
    "type 2 diabetes", "atrial fibrillation", "hypertension", "heart failure",
    "chronic kidney disease",
)  # fmt: skip
_OUTCOMES = ("mortality", "hospital admission", "stroke", "HbA1c", "quality of life")


def probe_texts(count: int) -> list[str]:
    """`count` distinct sentences of varied length (so batches need padding)."""
    texts = []
    for i in range(count):
        drug = _DRUGS[i % len(_DRUGS)]
        condition = _CONDITIONS[(i // len(_DRUGS)) % len(_CONDITIONS)]
        outcome = _OUTCOMES[(i // 7) % len(_OUTCOMES)]
        tail = " and adverse events were recorded in every arm" * (i % 4)
        texts.append(
            f"Trial {i}: {drug} in {i % 90 + 18}-year-old patients with {condition} "
            f"reduced {outcome}{tail}."
        )
    return texts


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True))


def max_abs_diff(a: Sequence[float], b: Sequence[float]) -> float:
    return max(abs(x - y) for x, y in zip(a, b, strict=True))


def run_closing(embedder: object, make: Callable[[], Awaitable[_T]]) -> _T:
    """`asyncio.run(make())`, then the embedder's `aclose()` (when it has one) on that loop."""

    async def scenario() -> _T:
        try:
            return await make()
        finally:
            close = getattr(embedder, "aclose", None)
            if close is not None:
                await close()

    return asyncio.run(scenario())


@dataclass(frozen=True)
class ErrorCase:
    """One way to make an adapter fail: `run` (a coroutine factory doing the whole scenario,
    cleanup included) must raise `expected`, whose message (and whole traceback chain) holds
    every string of `includes` and none of `excludes`."""

    name: str
    run: Callable[[], Coroutine[Any, Any, Any]]
    expected: type[EmbeddingError]
    includes: tuple[str, ...] = ()
    excludes: tuple[str, ...] = field(default_factory=tuple)


class EmbedderContract:
    """The checks. Class attributes configure them per adapter."""

    # (anchor, closer, farther): cos(anchor, closer) must exceed cos(anchor, farther).
    related: ClassVar[tuple[str, str, str]] = (
        "heart attack treatment",
        "myocardial infarction therapy",
        "soil bacteria",
    )
    # largest difference allowed between a vector embedded in a batch and alone
    batch_tolerance: ClassVar[float] = 1e-5
    # how many inputs the batching check sends at once
    batch_probe: ClassVar[int] = 300
    # whether "" embeds (else it must raise EmbeddingInputError)
    accepts_empty_text: ClassVar[bool] = True

    def error_cases(self, embedder: Embedder) -> list[ErrorCase]:
        """The adapter's failure scenarios (none by default)."""
        return []

    # -- helpers -------------------------------------------------------------------------------

    @staticmethod
    def embed(embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
        return run_closing(embedder, lambda: embedder.embed(texts))

    def assert_valid(self, embedder: Embedder, vectors: list[list[float]], count: int) -> None:
        assert isinstance(vectors, list)
        assert len(vectors) == count
        for vector in vectors:
            assert isinstance(vector, list)
            assert len(vector) == embedder.dim
            assert all(isinstance(x, float) and math.isfinite(x) for x in vector)
            assert abs(math.sqrt(math.fsum(x * x for x in vector)) - 1.0) <= 1e-3

    # -- the checks ----------------------------------------------------------------------------

    def test_describes_its_model(self, embedder: Embedder) -> None:
        assert isinstance(embedder.model_id, str)
        assert embedder.model_id.strip()
        assert isinstance(embedder.dim, int)
        assert embedder.dim > 0
        assert embedder.max_tokens is None or (
            isinstance(embedder.max_tokens, int) and embedder.max_tokens > 0
        )

    def test_one_unit_vector_per_input(self, embedder: Embedder) -> None:
        texts = probe_texts(5)
        self.assert_valid(embedder, self.embed(embedder, texts), len(texts))

    def test_empty_input_gives_an_empty_list(self, embedder: Embedder) -> None:
        assert self.embed(embedder, []) == []
        assert self.embed(embedder, ()) == []

    def test_vectors_come_in_input_order(self, embedder: Embedder) -> None:
        texts = probe_texts(6)
        forward = self.embed(embedder, texts)
        backward = self.embed(embedder, texts[::-1])
        for a, b in zip(forward, backward[::-1], strict=True):
            assert max_abs_diff(a, b) <= self.batch_tolerance
        # distinct texts get distinct vectors, so the order is observable
        assert max_abs_diff(forward[0], forward[1]) > 1e-3

    def test_deterministic_for_the_same_input(self, embedder: Embedder) -> None:
        texts = probe_texts(4)
        first, second = self.embed(embedder, texts), self.embed(embedder, texts)
        for a, b in zip(first, second, strict=True):
            assert max_abs_diff(a, b) <= 1e-6

    def test_identical_texts_get_identical_vectors(self, embedder: Embedder) -> None:
        a, b = probe_texts(2)
        vectors = self.embed(embedder, [a, b, a, a])
        assert max_abs_diff(vectors[0], vectors[2]) <= 1e-6
        assert max_abs_diff(vectors[0], vectors[3]) <= 1e-6

    def test_closer_meaning_scores_higher(self, embedder: Embedder) -> None:
        anchor, closer, farther = self.related
        va, vc, vf = self.embed(embedder, [anchor, closer, farther])
        assert cosine(va, vc) > cosine(va, vf) + 0.05, (cosine(va, vc), cosine(va, vf))

    def test_large_batch_equals_one_by_one(self, embedder: Embedder) -> None:
        texts = probe_texts(self.batch_probe)
        batched = self.embed(embedder, texts)
        self.assert_valid(embedder, batched, len(texts))

        async def one_by_one() -> list[list[float]]:
            return [(await embedder.embed([t]))[0] for t in texts]

        single = run_closing(embedder, one_by_one)
        worst = max(max_abs_diff(a, b) for a, b in zip(batched, single, strict=True))
        assert worst <= self.batch_tolerance, worst

    def test_unicode_and_long_texts(self, embedder: Embedder) -> None:
        long_words = 1000 if embedder.max_tokens is None else min(2 * embedder.max_tokens, 3000)
        texts = [
            "β-blockers at 5 µg/kg ± 2 reduced mortality (HR 0.8, 95% CI 0.7–0.9) — 肺癌",
            " ".join(["cardiomyopathy"] * long_words),
            "   leading and trailing whitespace   ",
        ]
        self.assert_valid(embedder, self.embed(embedder, texts), len(texts))

    def test_the_empty_string(self, embedder: Embedder) -> None:
        if self.accepts_empty_text:
            self.assert_valid(embedder, self.embed(embedder, ["", "x"]), 2)
        else:
            with pytest.raises(EmbeddingInputError):
                self.embed(embedder, ["x", ""])

    def test_concurrent_calls_agree(self, embedder: Embedder) -> None:
        texts = probe_texts(8)

        async def together() -> list[list[list[float]]]:
            return list(await asyncio.gather(*(embedder.embed(texts) for _ in range(4))))

        results = run_closing(embedder, together)
        for other in results[1:]:
            for a, b in zip(results[0], other, strict=True):
                assert max_abs_diff(a, b) <= 1e-6

    def test_errors_are_the_ports(self, embedder: Embedder) -> None:
        for case in self.error_cases(embedder):
            with pytest.raises(EmbeddingError) as caught:
                asyncio.run(case.run())
            error = caught.value
            assert isinstance(error, case.expected), (case.name, type(error), str(error))
            chain = "".join(traceback.format_exception(error))
            for needle in case.includes:
                assert needle in str(error), (case.name, needle, str(error))
            for secret in case.excludes:
                assert secret not in chain, (case.name, secret)
                assert secret not in repr(error), (case.name, secret)

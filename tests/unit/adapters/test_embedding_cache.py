"""CachingEmbedder: lookups first, only distinct misses embedded (in one call), SQLite WAL."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest

from biomcp.adapters.embeddings import CachingEmbedder, HashingEmbedder
from biomcp.ports.embeddings import EmbeddingError, EmbeddingUnavailableError

pytestmark = pytest.mark.unit


class Recording:
    """A HashingEmbedder that records every batch it is asked for."""

    def __init__(self, dim: int = 32, model_id: str = "rec-v1") -> None:
        self.inner = HashingEmbedder(dim=dim, model_id=model_id, max_tokens=77)
        self.calls: list[list[str]] = []
        self.closed = False

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def max_tokens(self) -> int | None:
        return self.inner.max_tokens

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return await self.inner.embed(texts)

    async def aclose(self) -> None:
        self.closed = True


class Broken(Recording):
    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        raise EmbeddingUnavailableError("provider down")


class Short(Recording):
    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return (await super().embed(texts))[:-1]


def embed(cache: CachingEmbedder, texts: Sequence[str]) -> list[list[float]]:
    return asyncio.run(cache.embed(texts))


def close_to(a: Sequence[float], b: Sequence[float], tol: float = 1e-6) -> bool:
    return max(abs(x - y) for x, y in zip(a, b, strict=True)) <= tol


@pytest.fixture
def rec() -> Recording:
    return Recording()


@pytest.fixture
def cache(rec: Recording, tmp_path: Path) -> CachingEmbedder:
    return CachingEmbedder(rec, tmp_path / "sub" / "cache.db")


def test_same_identity_as_the_inner_embedder(cache: CachingEmbedder) -> None:
    assert (cache.model_id, cache.dim, cache.max_tokens) == ("rec-v1", 32, 77)


def test_misses_are_embedded_once_then_served_from_the_cache(
    cache: CachingEmbedder, rec: Recording
) -> None:
    first = embed(cache, ["a b", "c d", "e f"])
    assert rec.calls == [["a b", "c d", "e f"]]
    assert (cache.hits, cache.misses) == (0, 3)
    second = embed(cache, ["a b", "c d", "e f"])
    assert rec.calls == [["a b", "c d", "e f"]]
    assert (cache.hits, cache.misses) == (3, 3)
    assert first == second  # hits and misses agree exactly


def test_only_the_misses_go_to_the_inner_embedder_in_one_call(
    cache: CachingEmbedder, rec: Recording
) -> None:
    embed(cache, ["known one", "known two"])
    vectors = embed(cache, ["new x", "known two", "new y", "known one"])
    assert rec.calls[-1] == ["new x", "new y"]
    assert len(rec.calls) == 2
    expected = [rec.inner.embed_one(t) for t in ["new x", "known two", "new y", "known one"]]
    assert all(close_to(v, e) for v, e in zip(vectors, expected, strict=True))
    assert (cache.hits, cache.misses) == (2, 4)


def test_repeats_within_a_call_are_embedded_once(cache: CachingEmbedder, rec: Recording) -> None:
    vectors = embed(cache, ["x", "x", "y", "x"])
    assert rec.calls == [["x", "y"]]
    assert vectors[0] == vectors[1] == vectors[3]
    assert (cache.hits, cache.misses) == (2, 2)


def test_empty_input_touches_nothing(cache: CachingEmbedder, rec: Recording) -> None:
    assert embed(cache, []) == []
    assert rec.calls == []
    assert not cache.cache_path.exists()


def test_a_str_is_not_a_sequence_of_texts(cache: CachingEmbedder) -> None:
    with pytest.raises(TypeError):
        embed(cache, "abc")


def test_the_cache_persists_across_instances(rec: Recording, tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    with CachingEmbedder(rec, path) as first:
        stored = embed(first, ["persist me"])
    again = Recording()
    with CachingEmbedder(again, path) as second:
        assert embed(second, ["persist me"]) == stored
    assert again.calls == []


def test_keys_include_model_id_and_dim(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    base, other_model, other_dim = Recording(), Recording(model_id="rec-v2"), Recording(dim=16)
    for inner in (base, other_model, other_dim):
        with CachingEmbedder(inner, path) as cache:
            vectors = embed(cache, ["same text"])
            assert len(vectors[0]) == inner.dim
        assert inner.calls == [["same text"]]
    with CachingEmbedder(Recording(), path) as cache:
        assert len(cache) == 3


def test_texts_are_keyed_exactly(cache: CachingEmbedder, rec: Recording) -> None:
    embed(cache, ["text", "text ", "Text", "\ud800 lone surrogate", "émigré"])
    embed(cache, ["text", "text ", "Text", "\ud800 lone surrogate", "émigré"])
    assert len(rec.calls) == 1
    assert len(rec.calls[0]) == 5


def test_the_file_uses_wal(cache: CachingEmbedder) -> None:
    embed(cache, ["a"])
    cache.close()
    with sqlite3.connect(cache.cache_path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_inner_errors_pass_through_and_store_nothing(tmp_path: Path) -> None:
    broken = Broken()
    cache = CachingEmbedder(broken, tmp_path / "c.db")
    with pytest.raises(EmbeddingUnavailableError, match="provider down"):
        embed(cache, ["a", "b"])
    assert (cache.hits, cache.misses) == (0, 0)
    assert len(cache) == 0


def test_a_wrong_vector_count_is_an_embedding_error(tmp_path: Path) -> None:
    cache = CachingEmbedder(Short(), tmp_path / "c.db")
    with pytest.raises(EmbeddingError, match="2 vectors for 3 texts"):
        embed(cache, ["a", "b", "c"])


def test_an_unusable_file_degrades_to_no_cache(
    tmp_path: Path, rec: Recording, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    cache = CachingEmbedder(rec, blocker / "cache.db")
    with caplog.at_level(logging.WARNING, logger="biomcp.embeddings.cache"):
        first = embed(cache, ["a"])
        second = embed(cache, ["a"])
    assert first == second
    assert len(rec.calls) == 2
    assert "unusable" in caplog.text


def test_a_corrupt_file_degrades_to_no_cache(
    tmp_path: Path, rec: Recording, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "c.db"
    path.write_bytes(b"this is not a database" * 100)
    cache = CachingEmbedder(rec, path)
    with caplog.at_level(logging.WARNING, logger="biomcp.embeddings.cache"):
        vectors = embed(cache, ["a", "b"])
    assert len(vectors) == 2
    assert rec.calls == [["a", "b"]]
    assert "embedding cache" in caplog.text


def test_concurrent_calls_all_get_their_vectors(cache: CachingEmbedder, rec: Recording) -> None:
    batches = [[f"t{i}", f"t{i + 1}", "shared"] for i in range(10)]

    async def together() -> list[list[list[float]]]:
        return list(await asyncio.gather(*(cache.embed(b) for b in batches)))

    results = asyncio.run(together())
    for batch, vectors in zip(batches, results, strict=True):
        expected = [rec.inner.embed_one(t) for t in batch]
        assert all(close_to(v, e) for v, e in zip(vectors, expected, strict=True))


def test_clear_close_and_reopen(cache: CachingEmbedder, rec: Recording) -> None:
    embed(cache, ["a", "b"])
    assert len(cache) == 2
    cache.close()
    cache.close()  # idempotent
    embed(cache, ["a"])  # reopens
    assert len(rec.calls) == 1
    cache.clear()
    assert len(cache) == 0
    assert (cache.hits, cache.misses) == (0, 0)
    embed(cache, ["a"])
    assert len(rec.calls) == 2


def test_aclose_closes_the_inner_embedder(cache: CachingEmbedder, rec: Recording) -> None:
    embed(cache, ["a"])
    asyncio.run(cache.aclose())
    assert rec.closed


def test_large_batches_span_lookup_chunks(cache: CachingEmbedder, rec: Recording) -> None:
    texts = [f"text number {i}" for i in range(1234)]
    first = embed(cache, texts)
    assert embed(cache, texts) == first
    assert len(rec.calls) == 1
    assert cache.hits == 1234

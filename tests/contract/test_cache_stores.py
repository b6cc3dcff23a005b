"""The cache stores' contract, run against the SQLite file and the PostgreSQL tables that
replicas share: what is stored is found under its keys only, entries past their time to live are
not, the oldest go first past the size bound, and a store that cannot reach its database
answers misses with one warning instead of failing.

PostgreSQL runs when `BIOMCP_TEST_POSTGRES_URL` is set (`scripts/services.sh start postgres`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from biomcp.adapters.embeddings import CachingEmbedder, HashingEmbedder
from biomcp.adapters.embeddings.cache import EmbeddingCacheStore
from biomcp.adapters.embeddings.cache_pg import PgEmbeddingCache
from biomcp.adapters.embeddings.cache_sqlite import SqliteEmbeddingCache
from biomcp.adapters.entrez.cache import EntrezCacheStore
from biomcp.adapters.entrez.cache_pg import PgEntrezCache
from biomcp.adapters.entrez.cache_sqlite import SqliteEntrezCache
from tests.contract.test_embedders import free_port
from tests.support.services import postgres_url
from tests.support.sql_databases import migrated_postgres_schema, postgres_schema

pytestmark = pytest.mark.contract

NS = "http://eutils.test"
T0 = 1_000_000.0
TTL = 60.0
BOUND = 100  # bytes


class Steps:
    """A monotonic clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def migrated() -> Iterator[str]:
    """A PostgreSQL schema migrated to head, shared by this module's tests."""
    with migrated_postgres_schema(postgres_url()) as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def entries(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EntrezCacheStore]:
    """An empty NCBI cache store of each kind, bound to BOUND bytes and TTL seconds."""
    store: EntrezCacheStore
    if request.param == "sqlite":
        store = SqliteEntrezCache(tmp_path / "ncbi.sqlite3", ttl_s=TTL, max_bytes=BOUND)
    else:
        url = request.getfixturevalue("migrated")
        store = PgEntrezCache(url, ttl_s=TTL, max_bytes=BOUND, trim_after_bytes=0)
    store.clear()
    yield store
    store.clear()
    store.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def vectors(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EmbeddingCacheStore]:
    """An empty embedding cache store of each kind."""
    store: EmbeddingCacheStore
    if request.param == "sqlite":
        store = SqliteEmbeddingCache(tmp_path / "embeddings.sqlite3")
    else:
        store = PgEmbeddingCache(request.getfixturevalue("migrated"))
    store.clear()
    yield store
    store.clear()
    store.close()


# --- the NCBI cache's entries ----------------------------------------------------------------


def test_stored_entries_are_found_under_their_namespace_and_kind_only(
    entries: EntrezCacheStore,
) -> None:
    assert entries.write(NS, "article", {"1": b"one", "2": b"two"}, T0) == (2, 0)
    assert entries.lookup(NS, "article", ["2", "1", "3"], T0) == {"1": b"one", "2": b"two"}
    assert entries.lookup("http://other", "article", ["1"], T0) == {}
    assert entries.lookup(NS, "medline", ["1"], T0) == {}
    assert (entries.count(), entries.size_bytes()) == (2, 6)


def test_a_second_write_replaces_the_entry(entries: EntrezCacheStore) -> None:
    entries.write(NS, "einfo", {"pubmed": b"old"}, T0)
    entries.write(NS, "einfo", {"pubmed": b"newer"}, T0 + 1)
    assert entries.lookup(NS, "einfo", ["pubmed"], T0) == {"pubmed": b"newer"}
    assert (entries.count(), entries.size_bytes()) == (1, 5)


def test_an_entry_stored_before_the_oldest_moment_asked_is_a_miss(
    entries: EntrezCacheStore,
) -> None:
    entries.write(NS, "article", {"1": b"one"}, T0)
    entries.write(NS, "article", {"2": b"two"}, T0 + 10)
    assert entries.lookup(NS, "article", ["1", "2"], T0 + 5) == {"2": b"two"}


def test_entries_past_their_time_to_live_are_dropped_by_a_later_write(
    entries: EntrezCacheStore,
) -> None:
    entries.write(NS, "article", {"1": b"one", "2": b"two"}, T0)
    stored, evicted = entries.write(NS, "article", {"3": b"three"}, T0 + TTL + 1)
    assert (stored, evicted) == (1, 2)
    assert entries.count() == 1


def test_the_oldest_entries_go_first_past_the_size_bound(entries: EntrezCacheStore) -> None:
    for step, key in enumerate("abcde"):
        entries.write(NS, "article", {key: bytes(30)}, T0 + step)
    assert entries.size_bytes() <= BOUND
    assert entries.lookup(NS, "article", list("abcde"), T0) == {k: bytes(30) for k in "cde"}


def test_deleted_and_cleared_entries_are_gone(entries: EntrezCacheStore) -> None:
    entries.write(NS, "article", {"1": b"one", "2": b"two"}, T0)
    entries.delete(NS, "article", ["1"])
    assert entries.lookup(NS, "article", ["1", "2"], T0) == {"2": b"two"}
    entries.clear()
    assert (entries.count(), entries.size_bytes()) == (0, 0)


# --- the embedding cache's vectors -----------------------------------------------------------


def test_stored_vectors_are_found_under_their_model_and_dimension_only(
    vectors: EmbeddingCacheStore,
) -> None:
    vectors.store("m1", 2, [(b"k1", b"v1v1v1v1"), (b"k2", b"v2v2v2v2")])
    assert vectors.lookup("m1", 2, [b"k2", b"k1", b"k3"]) == {
        b"k1": b"v1v1v1v1",
        b"k2": b"v2v2v2v2",
    }
    assert vectors.lookup("m2", 2, [b"k1"]) == {}
    assert vectors.lookup("m1", 3, [b"k1"]) == {}
    assert vectors.count() == 2
    vectors.store("m1", 2, [(b"k1", b"v1v1v1v1")])  # a repeat changes nothing
    assert vectors.count() == 2
    vectors.clear()
    assert vectors.count() == 0


def test_a_caching_embedder_over_either_store_embeds_a_text_once(
    vectors: EmbeddingCacheStore,
) -> None:
    first = CachingEmbedder(HashingEmbedder(dim=16), vectors)
    again = CachingEmbedder(HashingEmbedder(dim=16), vectors)  # another process, same store
    one = asyncio.run(first.embed(["asthma in children"]))
    two = asyncio.run(again.embed(["asthma in children"]))
    assert one == two
    assert (first.misses, again.misses, again.hits) == (1, 0, 1)


# --- PostgreSQL only -------------------------------------------------------------------------


def test_the_shared_table_is_trimmed_only_after_a_share_of_the_bound_is_written(
    migrated: str,
) -> None:
    """No scan per write: the bound is restored once this process has written 60 bytes."""
    store = PgEntrezCache(migrated, ttl_s=TTL, max_bytes=BOUND, trim_after_bytes=60)
    store.clear()
    try:
        store.write(NS, "article", {"a": bytes(30)}, T0)  # the first write trims (nothing)
        for step, key in enumerate("bcd", start=1):
            assert store.write(NS, "article", {key: bytes(30)}, T0 + step)[1] == 0
        assert store.size_bytes() == 120  # over the bound until the next trim
        assert store.write(NS, "article", {"e": bytes(30)}, T0 + 4) == (1, 2)
        assert store.lookup(NS, "article", list("abcde"), T0) == {k: bytes(30) for k in "cde"}
    finally:
        store.clear()
        store.close()


def test_a_database_that_is_down_gives_misses_and_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/nothing"
    steps = Steps()
    entries = PgEntrezCache(url, ttl_s=TTL, max_bytes=BOUND, retry_s=30, monotonic=steps)
    vectors = PgEmbeddingCache(url, retry_s=30, monotonic=steps)
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            assert entries.lookup(NS, "article", ["1"], T0) == {}
            assert entries.write(NS, "article", {"1": b"one"}, T0) == (0, 0)
            assert vectors.lookup("m", 2, [b"k"]) == {}
            vectors.store("m", 2, [(b"k", b"vvvvvvvv")])
            steps.now += 31  # past the pause: tried again, still down, no new warning
        assert (entries.count(), vectors.count()) == (0, 0)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2, warnings  # one per cache
    assert all("cannot be used" in w and "nothing" not in w for w in warnings)  # no URL shown


def test_a_caching_embedder_over_a_database_that_is_down_still_embeds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = f"postgresql://postgres@127.0.0.1:{free_port()}/nothing"
    cache = CachingEmbedder(HashingEmbedder(dim=16), PgEmbeddingCache(url))
    with caplog.at_level(logging.WARNING):
        first = asyncio.run(cache.embed(["a", "b"]))
        second = asyncio.run(cache.embed(["a", "b"]))
    assert first == second
    assert len(first) == 2
    assert cache.misses == 4  # nothing was cached
    assert sum(r.levelno == logging.WARNING for r in caplog.records) == 1


def test_an_unmigrated_database_gives_misses_and_asks_for_an_upgrade(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with postgres_schema(postgres_url()) as url:
        store = PgEntrezCache(url, ttl_s=TTL, max_bytes=BOUND)
        with caplog.at_level(logging.WARNING):
            assert store.lookup(NS, "article", ["1"], T0) == {}
        store.close()
    assert "biomcp db upgrade" in caplog.text


def test_a_database_back_after_an_outage_is_used_again(migrated: str) -> None:
    steps = Steps()
    store = PgEntrezCache(migrated, ttl_s=TTL, max_bytes=BOUND, monotonic=steps)
    store.clear()
    try:
        store.write(NS, "article", {"1": b"one"}, T0)
        store.database._url += "x"  # the database turns unreachable
        store.database.close()
        assert store.lookup(NS, "article", ["1"], T0) == {}
        assert store.database.failing
        store.database._url = store.database._url[:-1]  # back
        assert store.lookup(NS, "article", ["1"], T0) == {}  # resting: not asked yet
        steps.now += 31
        assert store.lookup(NS, "article", ["1"], T0) == {"1": b"one"}
        assert not store.database.failing
    finally:
        store.clear()
        store.close()

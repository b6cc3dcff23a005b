"""A cancelled sync leaks nothing: every lock it held is released, and the next sync (of the
same key or another, in the same process) runs at once and leaves the corpus exact.

Clients cancel requests all the time (a request timeout, a user pressing stop); the MCP SDK
cancels through anyio cancel scopes, which cancel *every* await left in the scope, the awaits
that release locks included. The cancellation points are drawn by hypothesis as call counts
(the k-th embedding call, the k-th vector write), never as wall-clock delays.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from biomcp.ports.vectors import ChunkRecord, UpsertReport
from biomcp.testing.eutils import FakeEutilsServer
from tests.support.sync_harness import (
    CountingEmbedder,
    CountingVectorStore,
    SteppingClock,
    backend_spec,
    chunk_uuids,
    embedder,
    entrez_client,
    make_corpus,
    make_sync,
    matching,
    record_of,
    run,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

N = 60
START, END = date(2024, 1, 1), date(2024, 6, 30)
NOW = datetime(2024, 7, 1, 12, tzinfo=UTC)
MESH = "Humans"
TERM = f"{MESH}[mh]"
KEYS = ("humans_v1", "humans_v2")
#: A lock left behind makes the next sync wait this long, then fail with LockTimeoutError.
LOCK_WAIT_S = 5.0


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    with FakeEutilsServer(make_corpus(N, START, END, seed=31), warm=True) as server:
        yield server


class _Tripwire:
    """Cancels `scope` when the watched call count reaches `at` (then lets the call await a
    checkpoint, where the cancellation lands)."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.calls = 0
        self.scope: anyio.CancelScope | None = None
        self.fired = False

    async def tick(self) -> None:
        self.calls += 1
        if self.calls == self.at and self.scope is not None:
            self.fired = True
            self.scope.cancel()
            await anyio.lowlevel.checkpoint()


class _TrippingEmbedder(CountingEmbedder):
    def __init__(self, inner: Any, wire: _Tripwire) -> None:
        super().__init__(inner)
        self.wire = wire

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        await self.wire.tick()
        return await super().embed(texts)


class _TrippingVectors(CountingVectorStore):
    def __init__(self, inner: Any, wire: _Tripwire) -> None:
        super().__init__(inner)
        self.wire = wire

    async def upsert_chunks(self, collection: str, chunks: Sequence[ChunkRecord]) -> UpsertReport:
        await self.wire.tick()
        return await super().upsert_chunks(collection, chunks)


@settings(
    max_examples=24,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    where=st.sampled_from(["embed", "upsert"]),
    at=st.integers(min_value=1, max_value=8),
    same_key=st.booleans(),
)
def test_a_sync_cancelled_at_any_point_leaves_no_lock_and_the_next_sync_is_exact(
    fake: FakeEutilsServer, where: str, at: int, same_key: bool
) -> None:
    expected = matching(fake.corpus, MESH)
    records = [record_of(fake.corpus, p) for p in expected]
    newest = max(r.edat for r in records if r.edat is not None)

    async def scenario(root: Path) -> None:
        with backend_spec("sqlite-embedded", root) as spec:
            clock = SteppingClock(NOW)
            entrez = entrez_client(fake.base_url)
            wire = _Tripwire(at)
            metadata = spec.metadata(clock)
            inner_vectors = spec.vectors()
            never = _Tripwire(0)  # counts from 1: never fires
            vectors = _TrippingVectors(inner_vectors, wire if where == "upsert" else never)
            tripping = _TrippingEmbedder(embedder().inner, wire if where == "embed" else never)
            config: dict[str, Any] = {"batch_size": 10, "lock_timeout_s": LOCK_WAIT_S}
            try:
                first = make_sync(
                    entrez, metadata, vectors, tripping, clock, spec.collection, **config
                )
                with anyio.CancelScope() as scope:
                    wire.scope = scope
                    await first.run(KEYS[0], TERM)
                assert scope.cancelled_caught == wire.fired

                # The next sync, in this process, must not wait for a lock nobody holds.
                second = make_sync(
                    entrez, metadata, inner_vectors, embedder(), clock, spec.collection, **config
                )
                key = KEYS[0] if same_key else KEYS[1]
                report = await second.run(key, TERM)  # LockTimeoutError if one was left
                assert report.checkpoint == newest

                stored = await metadata.get_documents(expected)
                assert set(stored) == set(expected)
                assert {d.indexed_version for d in stored.values()} == {1}
                assert {d.version for d in stored.values()} == {1}
                uuids = set().union(*(chunk_uuids(r, second.chunking) for r in records))
                assert await inner_vectors.count(spec.collection) == len(uuids)
                assert await inner_vectors.existing_uuids(spec.collection, uuids) == uuids
                checkpoint = await metadata.get_checkpoint(key)
                assert checkpoint.last_edat == newest
            finally:
                await inner_vectors.aclose()
                await metadata.aclose()
                await entrez.aclose()

    with tempfile.TemporaryDirectory(prefix="biomcp-cancel-") as scratch:
        run(scenario(Path(scratch)))


def test_the_tripwire_really_cancels_inside_the_sync(fake: FakeEutilsServer) -> None:
    """The property above is only as good as its cancellations: one must land mid-sync."""

    async def scenario(root: Path) -> tuple[bool, int]:
        with backend_spec("sqlite-embedded", root) as spec:
            clock = SteppingClock(NOW + timedelta(days=1))
            entrez = entrez_client(fake.base_url)
            wire = _Tripwire(2)
            metadata = spec.metadata(clock)
            inner_vectors = spec.vectors()
            try:
                sync = make_sync(
                    entrez,
                    metadata,
                    _TrippingVectors(inner_vectors, wire),
                    embedder(),
                    clock,
                    spec.collection,
                    batch_size=10,
                )
                with anyio.CancelScope() as scope:
                    wire.scope = scope
                    await sync.run(KEYS[0], TERM)
                return scope.cancelled_caught, await inner_vectors.count(spec.collection)
            finally:
                await inner_vectors.aclose()
                await metadata.aclose()
                await entrez.aclose()

    with tempfile.TemporaryDirectory(prefix="biomcp-cancel-") as scratch:
        cancelled, indexed = run(scenario(Path(scratch)))
    assert cancelled
    assert indexed > 0  # the first batch was written before the second write was cancelled

"""`/readyz` answers from cheap checks, each bounded in time, and never with a 500: a store
that hangs, ignores cancellation or raises a CancelledError of its own gives 503 naming the
check. The corpus index's status (a scan of the whole collection) stays off the probe's path:
one background check per `INDEX_STATUS_EVERY_S`, whatever the probes and the corpus size."""

from __future__ import annotations

import asyncio
import math
import os
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from starlette.applications import Starlette

from biomcp.adapters.sql import SqlMetadataStore
from biomcp.adapters.vectors import EmbeddedVectorStore
from biomcp.entrypoints.http.probes import READINESS_TIMEOUT_S, IndexStatusCache, probe_routes
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.services import Services
from biomcp.entrypoints.settings import Settings
from biomcp.ports.vectors import ChunkRecord, VectorStore
from biomcp.testing.memory import MemoryMetadataStore
from biomcp.usecases.diagnostics import (
    READINESS_CHECK_TIMEOUT_S,
    CheckFailedError,
    Diagnostics,
    bounded,
)

pytestmark = pytest.mark.unit

#: A probe that has not answered after this long is hung (far above any bound under test).
HUNG_S = 60.0
DIM = 8


@pytest.fixture
def settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Settings:
    """The model-free embedder and a data folder of its own; no bio-mcp variable, no `.env`."""
    for name in list(os.environ):
        if name.startswith(("BIOMCP_", "NCBI_", "MCP_", "WEAVIATE_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return Settings(biomcp_data_dir=tmp_path / "data", biomcp_embeddings="hashing")


class _Hanging(EmbeddedVectorStore):
    """Lists its collections only once `release` is set; with `stubborn`, a cancellation is
    swallowed and it goes on waiting (what a client stuck in a call does)."""

    def __init__(self, data_dir: Path, *, stubborn: bool = False) -> None:
        super().__init__(data_dir)
        self.release = asyncio.Event()
        self.stubborn = stubborn

    async def collections(self) -> list[str]:
        while True:
            try:
                await self.release.wait()
                return await super().collections()
            except asyncio.CancelledError:
                if not self.stubborn:
                    raise


class _CancelsItself(EmbeddedVectorStore):
    """Raises a CancelledError of its own making, as grpc.aio does when its call is cancelled:
    a fresh exception that no cancel scope of the caller's can recognise."""

    async def collections(self) -> list[str]:
        inner = asyncio.ensure_future(asyncio.sleep(HUNG_S))
        inner.cancel()
        await inner  # raises the inner task's CancelledError
        return []


class _ReRaisesFresh(EmbeddedVectorStore):
    """Hangs; when cancelled, raises a new CancelledError in place of the one it was sent."""

    async def collections(self) -> list[str]:
        try:
            await asyncio.sleep(HUNG_S)
        except asyncio.CancelledError:
            raise asyncio.CancelledError from None  # a fresh one, as grpc.aio raises
        return []


class _HangingPing(MemoryMetadataStore):
    async def ping(self) -> None:
        await asyncio.sleep(HUNG_S)


class _Counted:
    """Any vector store, counting the calls of each of its methods."""

    def __init__(self, inner: VectorStore) -> None:
        self._inner = inner
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._inner, name)
        if not callable(found):
            return found

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return found(*args, **kwargs)

        return counted


def _app(services: Services, settings: Settings) -> Starlette:
    server = cast("BioMcpServer", None)  # only `/` reads it
    return Starlette(routes=probe_routes(server, services, settings, mcp_path="/mcp"))


async def _probe(app: Starlette, path: str = "/readyz") -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://probe") as http:
        # In a task of its own: a CancelledError escaping the app fails this test, not the loop.
        return await asyncio.wait_for(asyncio.ensure_future(http.get(path)), HUNG_S)


# --- a check that hangs -------------------------------------------------------------------------


@pytest.mark.parametrize("stubborn", [False, True], ids=["cancellable", "ignores-cancellation"])
def test_a_vector_store_that_hangs_gives_503_naming_it_and_the_server_keeps_serving(
    settings: Settings, tmp_path: Path, stubborn: bool
) -> None:
    async def scenario() -> None:
        vectors = _Hanging(tmp_path / "vectors", stubborn=stubborn)
        services = Services(settings, metadata=MemoryMetadataStore(), vectors=vectors)
        app = _app(services, settings)
        loop = asyncio.get_running_loop()
        try:
            for _ in range(2):  # a second probe is not stuck behind the first's check
                began = loop.time()
                response = await _probe(app)
                assert loop.time() - began < READINESS_TIMEOUT_S + HUNG_S / 4
                assert response.status_code == 503, response.text
                body = response.json()
                assert body["status"] == "unavailable"
                assert body["checks"]["vectors"] == (
                    f"no answer within {READINESS_CHECK_TIMEOUT_S:g}s"
                )
                assert body["checks"]["metadata"] == "ok"
                assert (await _probe(app, "/health")).status_code == 200
            vectors.release.set()
            recovered = await _probe(app)
            assert recovered.status_code == 200, recovered.text
            assert recovered.json()["checks"] == {"metadata": "ok", "vectors": "ok"}
        finally:
            vectors.release.set()
            await services.aclose()

    asyncio.run(scenario())


def test_a_metadata_store_that_hangs_gives_503_naming_it(
    settings: Settings, tmp_path: Path
) -> None:
    async def scenario() -> None:
        vectors = EmbeddedVectorStore(tmp_path / "vectors")
        services = Services(settings, metadata=_HangingPing(), vectors=vectors)
        try:
            response = await _probe(_app(services, settings))
        finally:
            await services.aclose()
        assert response.status_code == 503, response.text
        checks = response.json()["checks"]
        assert checks == {
            "metadata": f"no answer within {READINESS_CHECK_TIMEOUT_S:g}s",
            "vectors": "ok",
        }

    asyncio.run(scenario())


# --- cancellation inside a check ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("store", "reason"),
    [
        (_CancelsItself, "cancelled before it answered"),
        (_ReRaisesFresh, f"no answer within {READINESS_CHECK_TIMEOUT_S:g}s"),
    ],
    ids=["cancelled-inside", "fresh-cancellederror-at-the-timeout"],
)
def test_a_cancellederror_inside_a_check_gives_503_not_500(
    settings: Settings, tmp_path: Path, store: type[EmbeddedVectorStore], reason: str
) -> None:
    async def scenario() -> None:
        services = Services(
            settings, metadata=MemoryMetadataStore(), vectors=store(tmp_path / "vectors")
        )
        app = _app(services, settings)
        try:
            response = await _probe(app)
            assert response.status_code == 503, response.text
            assert response.json()["checks"]["vectors"] == reason
            assert (await _probe(app, "/health")).status_code == 200
        finally:
            await services.aclose()

    asyncio.run(scenario())


def test_bounded_fails_on_a_checks_own_cancellation_and_passes_the_callers_on() -> None:
    async def scenario() -> None:
        stragglers: set[asyncio.Future[Any]] = set()

        async def cancels_itself() -> None:
            raise asyncio.CancelledError

        with pytest.raises(CheckFailedError, match="cancelled before it answered"):
            await bounded(cancels_itself, 5.0, stragglers)

        started = asyncio.Event()
        cancelled = asyncio.Event()

        async def slow() -> None:
            started.set()
            try:
                await asyncio.sleep(HUNG_S)
            except asyncio.CancelledError:
                cancelled.set()
                raise

        caller = asyncio.ensure_future(bounded(slow, HUNG_S, stragglers))
        await started.wait()
        caller.cancel()
        with pytest.raises(asyncio.CancelledError):
            await caller
        await asyncio.wait_for(cancelled.wait(), HUNG_S)  # the check was cancelled with it

    asyncio.run(scenario())


# --- what each check says -----------------------------------------------------------------------


class _Model:
    """An embedder whose model loads (`loaded`), behind a wrapper that names it `inner`."""

    def __init__(self, loaded: bool) -> None:
        self.loaded = loaded


class _Wrapper:
    def __init__(self, inner: object) -> None:
        self.inner = inner


@pytest.mark.parametrize(
    ("embedder", "expected"),
    [
        (_Wrapper(_Model(loaded=True)), "ok"),
        (_Model(loaded=False), "the embedding model is not loaded (the server log says why)"),
        (_Wrapper(object()), None),  # loads no model: no check
    ],
    ids=["loaded-behind-a-cache", "not-loaded", "no-model"],
)
def test_readiness_says_whether_the_embedding_model_is_loaded(
    tmp_path: Path, embedder: object, expected: str | None
) -> None:
    async def scenario() -> dict[str, str]:
        vectors = EmbeddedVectorStore(tmp_path / "vectors")
        diagnostics = Diagnostics(
            MemoryMetadataStore(),
            lambda: vectors,
            lambda: cast("Any", None),
            collection="corpus",
            embedder=lambda: cast("Any", embedder),
        )
        try:
            return await diagnostics.readiness(timeout_s=HUNG_S)  # the answer, not the bound
        finally:
            await vectors.aclose()

    checks = asyncio.run(scenario())
    assert checks.get("embedder") == expected
    assert (checks["metadata"], checks["vectors"]) == ("ok", "ok")


def test_a_database_whose_schema_is_behind_is_not_ready_and_says_to_upgrade(
    tmp_path: Path,
) -> None:
    async def scenario() -> dict[str, str]:
        database = SqlMetadataStore(data_dir=tmp_path, auto_migrate=False)  # an empty file
        vectors = EmbeddedVectorStore(tmp_path / "vectors")
        diagnostics = Diagnostics(
            database, lambda: vectors, lambda: cast("Any", None), collection="corpus"
        )
        try:
            return await diagnostics.readiness(timeout_s=HUNG_S)  # the answer, not the bound
        finally:
            await database.aclose()
            await vectors.aclose()

    checks = asyncio.run(scenario())
    assert "biomcp db upgrade" in checks["metadata"]
    assert checks["vectors"] == "ok"


def test_a_warm_up_that_does_not_end_in_time_is_reported_alone(tmp_path: Path) -> None:
    async def scenario() -> dict[str, str]:
        vectors = EmbeddedVectorStore(tmp_path / "vectors")
        diagnostics = Diagnostics(
            _HangingPing(), lambda: vectors, lambda: cast("Any", None), collection="corpus"
        )
        try:
            return await diagnostics.readiness(warm_up=asyncio.Event().wait, warm_up_s=0.05)
        finally:
            await vectors.aclose()

    checks = asyncio.run(scenario())
    assert list(checks) == ["warm_up"]  # no store was asked while the warm-up runs
    assert checks["warm_up"].endswith("no answer within 0.05s")


# --- nothing on the probe's path grows with the corpus ------------------------------------------


def _unit(rng: random.Random) -> list[float]:
    vector = [rng.gauss(0.0, 1.0) for _ in range(DIM)]
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


def _chunks(documents: int) -> Iterator[ChunkRecord]:
    rng = random.Random(documents)
    for doc in range(documents):
        for part in range(3):
            yield ChunkRecord(
                uuid=f"00000000-0000-4000-8000-{doc:08d}{part:04d}",
                doc_id=f"pmid:{doc + 1}",
                chunk_id=str(part),
                text=f"document {doc} part {part}",
                vector=_unit(rng),
            )


@pytest.mark.parametrize("documents", [20, 400])
def test_probes_ask_the_vector_store_only_to_list_its_collections_at_any_corpus_size(
    settings: Settings, tmp_path: Path, documents: int
) -> None:
    probes = 8

    async def scenario() -> Counter[str]:
        store = EmbeddedVectorStore(tmp_path / "vectors")
        collection = settings.biomcp_collection
        await store.ensure_schema(collection, dim=DIM, model_id="test-model")
        await store.upsert_chunks(collection, list(_chunks(documents)))
        counted = _Counted(store)
        services = Services(
            settings, metadata=MemoryMetadataStore(), vectors=cast("VectorStore", counted)
        )
        try:
            for _ in range(probes):
                assert await services.readiness() == {"metadata": "ok", "vectors": "ok"}
            readiness_calls = Counter(counted.calls)
            counted.calls.clear()
            app = _app(services, settings)
            for _ in range(probes):
                response = await _probe(app)
                assert response.status_code == 200, response.text
                assert response.json()["corpus_index"] == "ok"
            # The index status: one background check for all the probes (collections + stats).
            assert counted.calls == Counter({"collections": probes + 1, "stats": 1})
        finally:
            await services.aclose()
            await store.aclose()
        return readiness_calls

    assert asyncio.run(scenario()) == Counter({"collections": probes})


# --- the index status cache ---------------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_index_status_is_checked_at_most_once_per_interval_and_never_awaited_again() -> None:
    async def scenario() -> None:
        clock = _Clock()
        answers = ["ok", "the vector store holds 1 of the 2 indexed documents"]  # in turn
        gate = asyncio.Event()
        gate.set()

        async def status() -> str:
            await gate.wait()
            return answers.pop(0)

        cache = IndexStatusCache(status, every_s=300.0, clock=clock)
        cache.due()
        assert await cache.current(HUNG_S) == "ok"  # the first is waited for
        for _ in range(5):
            cache.due()
        assert cache.checks == 1
        clock.now = 301.0
        gate.clear()  # the next check hangs until released
        cache.due()
        assert cache.checks == 2
        # A probe answers from the cache while the check runs.
        assert await asyncio.wait_for(cache.current(HUNG_S), HUNG_S) == "ok"
        gate.set()

        async def changed() -> str:
            while (answer := await cache.current(0.0)) == "ok":
                await asyncio.sleep(0.01)
            return answer

        assert await asyncio.wait_for(changed(), HUNG_S) == (
            "the vector store holds 1 of the 2 indexed documents"
        )
        assert cache.checks == 2

    asyncio.run(scenario())


def test_only_the_first_probe_waits_for_the_first_index_status_and_the_check_goes_on() -> None:
    async def scenario() -> None:
        gate = asyncio.Event()

        async def status() -> str:
            await gate.wait()
            return "ok"

        cache = IndexStatusCache(status)
        cache.due()
        assert await cache.current(0.05) == "not checked yet"
        # The next probe does not wait.
        assert await asyncio.wait_for(cache.current(HUNG_S), HUNG_S / 2) == "not checked yet"
        gate.set()

        async def checked() -> str:
            while (answer := await cache.current(0.0)) == "not checked yet":
                await asyncio.sleep(0.01)
            return answer

        assert await asyncio.wait_for(checked(), HUNG_S) == "ok"  # not cancelled: it ended

    asyncio.run(scenario())


def test_an_index_status_check_that_fails_is_reported_as_such() -> None:
    async def scenario() -> None:
        async def status() -> str:
            raise asyncio.CancelledError  # a fresh one, as grpc raises

        cache = IndexStatusCache(status)
        cache.due()
        answer = await cache.current(HUNG_S)
        assert answer == "could not check: cancelled before it answered"

    asyncio.run(scenario())

"""Diagnostics: what a health check reads of the stores and of NCBI.

`biomcp doctor` asks the thorough questions: does the metadata database pass its own integrity
check, what does the vector store hold, does NCBI answer. `GET /readyz` asks only cheap ones,
each bounded in time: do the stores answer, is the model loaded. Both ask them here, so no
entry point reads a port.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from biomcp.ports.embeddings import Embedder
from biomcp.ports.entrez import EntrezClient
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.vectors import CollectionStats, VectorStore

__all__ = [
    "READINESS_CHECK_TIMEOUT_S",
    "WARM_UP_WAIT_S",
    "CheckFailedError",
    "Diagnostics",
    "MetadataHealth",
    "bounded",
]

_T = TypeVar("_T")

#: Each readiness check answers within this many seconds.
READINESS_CHECK_TIMEOUT_S: Final = 2.0
#: The readiness checks wait this long for the warm-up (it opens the stores, loads the model).
WARM_UP_WAIT_S: Final = 4.0


class CheckFailedError(Exception):
    """A bounded check raised, was cancelled or did not answer in time; the message says which."""


async def bounded(
    check: Callable[[], Awaitable[_T]], timeout_s: float, stragglers: set[asyncio.Future[Any]]
) -> _T:
    """What `check()` returns, waited for at most `timeout_s` seconds.

    The check runs in a task of its own. So a CancelledError it raises itself (grpc raises a
    fresh one when its call is cancelled) cannot pass for the caller's, and a check that
    ignores cancellation cannot hold the caller. A check still running at the timeout is
    cancelled and kept in `stragglers` until it ends.

    Raises:
        CheckFailedError: the check raised, was cancelled or did not answer in time.
    """
    task = asyncio.ensure_future(check())
    try:
        await asyncio.wait({task}, timeout=timeout_s)
    finally:  # on a timeout, or when the caller itself is cancelled
        if not task.done():
            task.cancel()
            stragglers.add(task)
            task.add_done_callback(_forget(stragglers))
    if not task.done():
        raise CheckFailedError(f"no answer within {timeout_s:g}s")
    if task.cancelled():
        raise CheckFailedError("cancelled before it answered")
    error = task.exception()
    if isinstance(error, CheckFailedError):
        raise error
    if error is not None:
        name = type(error).__name__
        raise CheckFailedError(f"{name}: {error}" if str(error) else name) from error
    return task.result()


def _forget(stragglers: set[asyncio.Future[Any]]) -> Callable[[asyncio.Future[Any]], None]:
    def done(task: asyncio.Future[Any]) -> None:
        stragglers.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: asyncio logs none that nobody awaited

    return done


def _model_loaded(embedder: object) -> bool | None:
    """Whether the embedder's model is in memory; None when it loads none (a remote API, the
    hashing embedder). Embedders that load a model say so with `loaded`; the embedding cache
    is seen through its `inner`."""
    for each in (embedder, getattr(embedder, "inner", None)):
        loaded = getattr(each, "loaded", None)
        if isinstance(loaded, bool):
            return loaded
    return None


@dataclass(frozen=True, slots=True)
class MetadataHealth:
    """The metadata database: what its integrity check found (empty: sound) and, when sound,
    how many records it holds (None otherwise)."""

    problems: list[str]
    records: int | None


class Diagnostics:
    """Health questions over the ports; the vector store and NCBI client are opened on use."""

    def __init__(
        self,
        metadata: MetadataStore,
        vectors: Callable[[], VectorStore],
        entrez: Callable[[], EntrezClient],
        *,
        collection: str,
        embedder: Callable[[], Embedder] | None = None,
    ) -> None:
        self._metadata = metadata
        self._vectors = vectors
        self._entrez = entrez
        self._embedder = embedder
        self.collection = collection
        self._stragglers: set[asyncio.Future[Any]] = set()

    async def metadata_health(self) -> MetadataHealth:
        """Open the database (SQLite migrates itself then), run its integrity check and count
        its records when it passes.

        Raises:
            MetadataStoreError: the database cannot be opened or read.
        """
        await self._metadata.ping()
        problems = await self._metadata.quick_check()
        if problems:
            return MetadataHealth(problems, None)
        return MetadataHealth([], await self._metadata.count_documents())

    async def corpus_stats(self) -> CollectionStats | None:
        """The corpus collection's statistics; None before anything was indexed.

        Raises:
            VectorStoreError: the vector store cannot be reached.
        """
        vectors = self._vectors()
        if self.collection not in await vectors.collections():
            return None
        return await vectors.stats(self.collection)

    async def ncbi_count(self) -> int:
        """How many records match `pubmed` in an ESearch: NCBI answers, and takes the key.

        Raises:
            EntrezError: NCBI refused or did not answer.
        """
        found = await self._entrez().esearch("pubmed", retmax=0)
        return found.count

    async def readiness(
        self,
        *,
        warm_up: Callable[[], Awaitable[object]] | None = None,
        timeout_s: float = READINESS_CHECK_TIMEOUT_S,
        warm_up_s: float = WARM_UP_WAIT_S,
    ) -> dict[str, str]:
        """`ok` or the reason, per check: what `/readyz` reports. First the `warm_up`, when
        given, for `warm_up_s` at most: until it ends, only `warm_up` is reported. Then, at
        once: `metadata` (the database answers; on opening it checks that its schema is the
        one this version needs), `vectors` (the store lists its collections) and `embedder`
        (the model is loaded; only for embedders that load one). Each answers within
        `timeout_s`, and none reads more as the corpus grows. Raises nothing but the
        caller's cancellation."""
        if warm_up is not None:
            waited = await self._answer(warm_up, warm_up_s)
            if waited != "ok":
                return {"warm_up": f"still loading the model and opening the stores: {waited}"}
        checks: dict[str, Callable[[], Awaitable[object]]] = {
            "metadata": self._metadata.ping,
            "vectors": self._list_collections,
        }
        if self._loads_a_model():
            checks["embedder"] = self._model
        answers = await asyncio.gather(*(self._answer(c, timeout_s) for c in checks.values()))
        return dict(zip(checks, answers, strict=True))

    async def _answer(self, check: Callable[[], Awaitable[object]], timeout_s: float) -> str:
        try:
            await bounded(check, timeout_s, self._stragglers)
        except CheckFailedError as exc:
            return str(exc)
        return "ok"

    async def _list_collections(self) -> None:
        await self._vectors().collections()

    def _loads_a_model(self) -> bool:
        if self._embedder is None:
            return False
        try:
            return _model_loaded(self._embedder()) is not None
        except Exception:  # it cannot even be built: the check says why
            return True

    async def _model(self) -> None:
        if self._embedder is not None and not _model_loaded(self._embedder()):
            raise CheckFailedError("the embedding model is not loaded (the server log says why)")

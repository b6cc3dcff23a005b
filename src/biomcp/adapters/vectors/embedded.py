"""`EmbeddedVectorStore`: the default VectorStore, persistent, in-process, no server.

Layout: one sub-directory of `data_dir` per collection, holding

* `rows.sqlite`: every chunk with its vector (SQLite, WAL, synchronous=FULL), the manifest
  (model_id, dim, created) and a generation counter: the source of truth;
* `lexical/` + `lexical.json`: a tantivy BM25 index (Weaviate's `word` tokenization and
  k1 = 1.2, b = 0.75; see `embedded_lexical`) and the generation it reflects;
* `vectors-<gen>.faiss`, `vectors-<gen>.npy`, `vectors.json`: a snapshot of the faiss HNSW
  vector index (held in each process's memory while open; see `embedded_ann`);
* `LOCK`: the writer's turn (`embedded_lock`), an exclusive `flock` held only while writing.

Many processes share one data folder, as with SQLite: any number read at once (servers, the
CLI, notebooks), writers take turns, and each reader sees every committed write on its next
query (see `embedded_collection`). Both indexes are derived from the rows and repaired:
whatever was committed to the rows after an index's generation is replayed into it, and an
index that is missing, unreadable or inconsistent is rebuilt. A crash (even SIGKILL in the
middle of an upsert) therefore leaves each chunk either old or new, never mixed, and costs at
most a replay; other processes keep working meanwhile.

Engines were chosen by measurement (`python -m benchmarks vectors`). tantivy was chosen over
SQLite FTS5 and bm25s: an order of magnitude faster than FTS5 at 100k chunks; bm25s is as fast
but holds far more in memory and cannot update an index in place, while tantivy updates
incrementally on disk and filters in the index. faiss HNSW was chosen over hnswlib and usearch:
fast to build and to query at high recall, it filters in C++ (`IDSelectorBitmap`) and lets the
exact path and the exact cosines read its storage without a second copy; hnswlib is as fast but
slow to read vectors back, usearch cannot filter from Python and builds slower (figures:
benchmarks/README.md, "Decisions and their figures").

Nothing happens in `__init__`; a collection is opened on first use. Every call runs in a worker
thread (`asyncio.to_thread`); calls on one collection are serialized by its mutex. Every
engine, SQLite or OS exception is translated to the port's errors.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import sqlite3
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TypeVar

from biomcp.adapters.vectors.embedded_collection import EmbeddedCollection
from biomcp.adapters.vectors.embedded_lock import WriterLock
from biomcp.adapters.vectors.embedded_settings import StoreSettings
from biomcp.ports.vectors import (
    Arms,
    ChunkRecord,
    CollectionNotFoundError,
    CollectionStats,
    EmbeddingMismatchError,
    SearchFilters,
    StoreCheck,
    UpsertReport,
    VectorHit,
    VectorStoreError,
    VectorStoreUnavailableError,
)

__all__ = ["EmbeddedVectorStore", "StoreSettings"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
T = TypeVar("T")


def _translate(exc: Exception, what: str) -> VectorStoreError:
    if isinstance(exc, VectorStoreError):
        return exc
    if isinstance(exc, sqlite3.Error | OSError):
        return VectorStoreUnavailableError(f"{what}: {type(exc).__name__}: {exc}")
    return VectorStoreError(f"{what}: {type(exc).__name__}: {exc}")


class EmbeddedVectorStore:
    """Chunk collections under `data_dir`, searched by BM25 (tantivy) + vectors (faiss HNSW)."""

    #: A batch is one SQLite transaction: written whole or not at all.
    atomic_batches = True

    def __init__(self, data_dir: Path, settings: StoreSettings | None = None) -> None:
        self._dir = Path(data_dir)
        self._settings = settings or StoreSettings()
        self._open: dict[str, EmbeddedCollection] = {}
        self._registry = asyncio.Lock()
        self._closed = False

    @property
    def data_dir(self) -> Path:
        return self._dir

    # --- plumbing ------------------------------------------------------------------------

    async def _call(self, what: str, fn: Callable[..., T], *args: object) -> T:
        try:
            return await asyncio.to_thread(fn, *args)
        except Exception as exc:
            raise _translate(exc, what) from exc

    def _check_open(self) -> None:
        if self._closed:
            raise VectorStoreUnavailableError("the embedded vector store is closed")

    async def _collection(
        self, name: str, create: tuple[str, int] | None = None
    ) -> EmbeddedCollection:
        """The open collection `name`, opening (or, given (model_id, dim), creating) it."""
        self._check_open()
        found = self._open.get(name)
        if found is not None and not found.broken and not found.replaced():
            return found
        async with self._registry:
            self._check_open()
            found = self._open.pop(name, None)
            if found is not None and not found.broken and not found.replaced():
                self._open[name] = found
                return found
            if found is not None:  # a write failed halfway: reopening repairs the indexes
                await self._call(f"closing {name!r}", lambda: found.close(save=False))
            if not _NAME.fullmatch(name):
                raise CollectionNotFoundError(f"no collection {name!r} (not a valid name)")
            fresh = EmbeddedCollection(name, self._dir / name, self._settings)
            if not await self._call(f"opening {name!r}", fresh.open, create):
                raise CollectionNotFoundError(f"no collection {name!r}: call ensure_schema first")
            self._open[name] = fresh
            return fresh

    # --- the port ------------------------------------------------------------------------

    async def ensure_schema(
        self, collection: str, *, dim: int, model_id: str, allow_model_change: bool = False
    ) -> None:
        self._check_open()
        if not _NAME.fullmatch(collection):
            raise VectorStoreError(
                f"invalid collection name {collection!r}: letters, digits, '_' and '-' only"
            )
        if dim <= 0 or not model_id:
            raise VectorStoreError(f"invalid schema: dim={dim}, model_id={model_id!r}")
        found = await self._collection(collection, (model_id, dim))
        manifest = found.schema
        if manifest.model_id == model_id and manifest.dim == dim:
            return
        if not allow_model_change:
            raise EmbeddingMismatchError(
                collection, f"{manifest.model_id} ({manifest.dim}-d)", f"{model_id} ({dim}-d)"
            )
        await self._call(f"migrating {collection!r}", found.reset, model_id, dim)

    async def upsert_chunks(self, collection: str, chunks: Sequence[ChunkRecord]) -> UpsertReport:
        found = await self._collection(collection)
        return await self._call(f"upserting into {collection!r}", found.upsert, chunks)

    async def delete_chunks(
        self, collection: str, doc_id: str, *, keep: Collection[str] = ()
    ) -> int:
        found = await self._collection(collection)
        return await self._call(f"deleting from {collection!r}", found.delete, doc_id, keep)

    async def delete_documents(self, collection: str, doc_ids: Collection[str]) -> int:
        found = await self._collection(collection)
        return await self._call(
            f"deleting from {collection!r}", found.delete_documents, sorted(set(doc_ids))
        )

    async def search_arms(
        self,
        collection: str,
        text: str,
        vector: Sequence[float] | None,
        *,
        keyword_limit: int,
        vector_limit: int,
        filters: SearchFilters | None = None,
    ) -> Arms:
        """BM25 from tantivy (its raw score), the vector arm from faiss HNSW (cosines)."""
        found = await self._collection(collection)
        return await self._call(
            f"searching {collection!r}",
            found.reads.search_arms,
            text,
            vector,
            keyword_limit,
            vector_limit,
            filters,
        )

    async def hits(
        self, collection: str, uuids: Collection[str], *, vector: Sequence[float] | None = None
    ) -> list[VectorHit]:
        found = await self._collection(collection)
        return await self._call(f"reading {collection!r}", found.reads.hits, uuids, vector)

    async def sentence_scores(
        self, collection: str, uuids: Collection[str], vector: Sequence[float]
    ) -> dict[str, float]:
        found = await self._collection(collection)
        return await self._call(
            f"reading {collection!r}", found.reads.sentence_scores, uuids, vector
        )

    async def existing_uuids(self, collection: str, uuids: Collection[str]) -> set[str]:
        found = await self._collection(collection)
        return await self._call(f"reading {collection!r}", found.reads.existing, uuids)

    async def fetch_chunks(self, collection: str, uuids: Collection[str]) -> list[ChunkRecord]:
        found = await self._collection(collection)
        return await self._call(f"reading {collection!r}", found.reads.fetch, uuids)

    async def page_chunks(
        self, collection: str, *, after: str | None = None, limit: int = 500
    ) -> list[ChunkRecord]:
        found = await self._collection(collection)
        return await self._call(f"reading {collection!r}", found.reads.page, after, limit)

    async def count(self, collection: str) -> int:
        found = await self._collection(collection)
        return await self._call(f"counting {collection!r}", found.reads.count)

    async def drop_collection(self, collection: str) -> None:
        self._check_open()
        if not _NAME.fullmatch(collection):
            return
        async with self._registry:
            found = self._open.pop(collection, None)
            if found is not None:
                await self._call(f"closing {collection!r}", lambda: found.close(save=False))
            await self._call(f"dropping {collection!r}", self._drop, collection)

    def _drop(self, collection: str) -> None:
        """Under the collection's writer turn: move its folder aside, then delete it (another
        process holding its files keeps reading them until it notices)."""
        root = self._dir / collection
        if not root.exists():
            return
        lock = WriterLock(root / "LOCK", collection, wait_s=self._settings.write_wait_s)
        with lock.turn():
            aside = self._dir / f".{collection}.dropped-{time.time_ns()}"
            root.rename(aside)
        shutil.rmtree(aside, ignore_errors=True)

    async def verify(self, collection: str) -> StoreCheck:
        found = await self._collection(collection)
        return await self._call(f"verifying {collection!r}", found.verify)

    async def stats(self, collection: str) -> CollectionStats:
        found = await self._collection(collection)
        return await self._call(f"reading {collection!r}", found.reads.stats)

    async def sample(self, collection: str, n: int) -> list[VectorHit]:
        found = await self._collection(collection)
        return await self._call(f"reading {collection!r}", found.reads.sample, n)

    async def collections(self) -> list[str]:
        self._check_open()
        names = set(self._open)
        return sorted(names | await self._call("listing collections", self._on_disk))

    def _on_disk(self) -> set[str]:
        if not self._dir.is_dir():
            return set()
        found: set[str] = set()
        for child in self._dir.iterdir():
            path = child / "rows.sqlite"
            if not _NAME.fullmatch(child.name) or not path.is_file():
                continue
            db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
            try:
                row = db.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'manifest'"
                ).fetchone()
                if row and db.execute("SELECT 1 FROM manifest").fetchone():
                    found.add(child.name)
            except sqlite3.DatabaseError:
                continue  # unreadable: not listed; opening it says why
            finally:
                db.close()
        return found

    async def aclose(self) -> None:
        """Snapshot the vector indexes that changed, close every file. Idempotent."""
        if self._closed:
            return
        async with self._registry:
            self._closed = True
            collections, self._open = list(self._open.values()), {}
            failure: Exception | None = None
            for found in collections:
                try:
                    await asyncio.to_thread(found.close)
                except Exception as exc:  # keep closing the others
                    failure = failure or exc
            if failure is not None:
                raise _translate(failure, "closing the embedded vector store") from failure

    async def index_counts(self, collection: str) -> dict[str, int]:
        """Diagnostics, not part of the port: rows vs. documents in each derived index."""
        found = await self._collection(collection)
        return await self._call(f"reading {collection!r}", found.reads.index_counts)

"""Shared pieces of the sync integration tests (test_sync_scenarios.py, test_sync_faults.py).

* Backends: `backend_spec(kind, tmp_path)` gives what one test needs to open the stores of a
  backend pair: SQLite + the embedded vector store, or PostgreSQL (a schema of its own) +
  Weaviate (a class of its own, dropped afterwards). The PostgreSQL / Weaviate pair is skipped
  with the reason when the service variables are unset (failed when CI is set).
  `spec.stores(clock)` opens the adapters inside the test's event loop and closes them there
  (the Weaviate async client belongs to the loop that connected it).
* Pass-through wrappers that count (and optionally break): `CountingEmbedder`,
  `CountingVectorStore` (raises `VectorStoreUnavailableError` on its Nth upsert, or refuses
  the chunks of chosen documents), `FlakyEntrezClient` (an HTTP client that can drop PMIDs
  from EFetch answers or report an incomplete enumeration).
* The fake's corpus: synthetic articles, plus in-place edits (a later DateRevised, a new
  abstract) and the oracle of what a term matches.
* `SteppingClock`: a fixed test time that moves 1 ms per reading, so job intervals keep the
  real order of events, and that tests move forward by days.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
import uuid
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Collection,
    Coroutine,
    Iterable,
    Iterator,
    Sequence,
)
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, TypeVar

import httpx
import pytest

from biomcp.adapters.embeddings import HashingEmbedder
from biomcp.adapters.entrez.client import EntrezSettings, HttpEntrezClient
from biomcp.adapters.entrez.ratelimit import RateLimiter
from biomcp.adapters.sql import SqlMetadataStore, upgrade
from biomcp.adapters.vectors import EmbeddedVectorStore
from biomcp.domain.chunking import ChunkingConfig, chunk_record, sentence_units
from biomcp.domain.records import PubMedRecord
from biomcp.ports.embeddings import Embedder
from biomcp.ports.entrez import DateType, WindowEnumeration
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.saved_queries import Checkpoint
from biomcp.ports.vectors import (
    Arms,
    ChunkRecord,
    CollectionStats,
    ObjectError,
    SearchFilters,
    StoreCheck,
    UpsertReport,
    VectorHit,
    VectorStore,
    VectorStoreUnavailableError,
)
from biomcp.testing.eutils import FakeCorpus, generate_articles
from biomcp.usecases.sync import SyncConfig, SyncDelta
from tests.support.services import postgres_url, weaviate_url
from tests.support.sql_databases import postgres_schema

__all__ = [
    "BACKENDS",
    "BACKEND_PARAMS",
    "FAST_RETRIES",
    "BackendKind",
    "BackendSpec",
    "CountingEmbedder",
    "CountingVectorStore",
    "FlakyEntrezClient",
    "SteppingClock",
    "Untracked",
    "add_articles",
    "backend_spec",
    "chunk_uuids",
    "embedder",
    "entrez_client",
    "expected_chunk_total",
    "make_corpus",
    "make_sync",
    "matching",
    "medline_index",
    "record_of",
    "replace_abstract",
    "revise",
    "run",
    "unindex",
    "utc_noon",
]

T = TypeVar("T")
BackendKind = Literal["sqlite-embedded", "postgres-weaviate"]
BACKENDS: tuple[BackendKind, ...] = ("sqlite-embedded", "postgres-weaviate")
#: `BACKENDS` as fixture params: the service pair is marked slow (round trips to two servers).
BACKEND_PARAMS = [
    "sqlite-embedded",
    pytest.param("postgres-weaviate", marks=pytest.mark.slow),
]

#: Retries that keep a faulty sync fast: tiny backoff, Retry-After capped at 20 ms.
FAST_RETRIES: dict[str, Any] = {
    "max_retries": 8,
    "backoff_initial_s": 0.005,
    "backoff_max_s": 0.02,
    "retry_after_max_s": 0.02,
    "deadline_s": 30.0,
}


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Drive an async scenario (the suite has no async plugin: one event loop per test)."""
    return asyncio.run(coroutine)


# --- time ----------------------------------------------------------------------------------


class Untracked:
    """The store, reading `key` as a saved query synced before records were recorded (a
    corpus from an earlier version), whether or not it has a checkpoint."""

    def __init__(self, inner: MetadataStore, key: str) -> None:
        self.inner, self.key = inner, key

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def get_checkpoint(self, query_key: str) -> Checkpoint:
        found = await self.inner.get_checkpoint(query_key)
        return replace(found, records_tracked=query_key != self.key)

    async def list_checkpoints(self) -> list[Checkpoint]:
        others = [c for c in await self.inner.list_checkpoints() if c.query_key != self.key]
        return [*others, await self.get_checkpoint(self.key)]


class SteppingClock:
    """A test clock: `now()` returns the current time and then moves it 1 ms on, so two
    readings are never equal and their order is the order they were taken in. `advance`
    moves it by a span (a later day of the scenario)."""

    def __init__(self, start: datetime, step: timedelta = timedelta(milliseconds=1)) -> None:
        if start.utcoffset() is None:
            raise ValueError("the clock's start must be timezone-aware")
        self._now = start.astimezone(UTC)
        self._step = step
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            current = self._now
            self._now = current + self._step
            return current

    def peek(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, span: timedelta) -> None:
        with self._lock:
            self._now += span


# --- counting (and failing) pass-through wrappers ------------------------------------------


class CountingEmbedder:
    """An Embedder that counts the calls and texts it passes to `inner`."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.calls = 0
        self.texts = 0

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
        self.calls += 1
        self.texts += len(texts)
        return await self.inner.embed(texts)

    def reset(self) -> None:
        self.calls = self.texts = 0


class CountingVectorStore:
    """A VectorStore passing everything to `inner`, counting writes.

    `fail_on_upsert=N` makes the Nth `upsert_chunks` call (counted from the last `reset`) raise
    `VectorStoreUnavailableError` without writing anything; `refuse_docs` makes the store
    report the chunks of those doc ids as refused (`UpsertReport.errors`) and not write them;
    `before_upsert` is awaited once, at the next `upsert_chunks` call, before it writes (to
    run something else in the middle of a sync).
    """

    def __init__(
        self,
        inner: VectorStore,
        *,
        fail_on_upsert: int | None = None,
        refuse_docs: Collection[str] = (),
    ) -> None:
        self.inner = inner
        self.fail_on_upsert = fail_on_upsert
        self.refuse_docs = set(refuse_docs)
        self.before_upsert: Callable[[], Awaitable[None]] | None = None
        self.upsert_calls = 0
        self.chunks_upserted = 0
        self.delete_calls = 0
        self.schema_calls = 0

    @property
    def writes(self) -> int:
        """Upsert and delete calls since the last reset."""
        return self.upsert_calls + self.delete_calls

    def reset(self) -> None:
        self.upsert_calls = self.chunks_upserted = self.delete_calls = self.schema_calls = 0

    async def ensure_schema(
        self, collection: str, *, dim: int, model_id: str, allow_model_change: bool = False
    ) -> None:
        self.schema_calls += 1
        await self.inner.ensure_schema(
            collection, dim=dim, model_id=model_id, allow_model_change=allow_model_change
        )

    async def upsert_chunks(self, collection: str, chunks: Sequence[ChunkRecord]) -> UpsertReport:
        self.upsert_calls += 1
        hook, self.before_upsert = self.before_upsert, None
        if hook is not None:
            await hook()
        if self.fail_on_upsert is not None and self.upsert_calls == self.fail_on_upsert:
            raise VectorStoreUnavailableError(
                f"injected failure on upsert #{self.upsert_calls} (the store went away)"
            )
        refused = [c for c in chunks if c.doc_id in self.refuse_docs]
        kept = [c for c in chunks if c.doc_id not in self.refuse_docs]
        report = await self.inner.upsert_chunks(collection, kept) if kept else UpsertReport(0)
        self.chunks_upserted += report.upserted
        errors = tuple(ObjectError(c.uuid, "injected refusal") for c in refused)
        return UpsertReport(report.upserted, report.errors + errors)

    async def delete_chunks(
        self, collection: str, doc_id: str, *, keep: Collection[str] = ()
    ) -> int:
        self.delete_calls += 1
        return await self.inner.delete_chunks(collection, doc_id, keep=keep)

    async def delete_documents(self, collection: str, doc_ids: Collection[str]) -> int:
        self.delete_calls += 1
        return await self.inner.delete_documents(collection, doc_ids)

    @property
    def atomic_batches(self) -> bool:
        return self.inner.atomic_batches

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
        return await self.inner.search_arms(
            collection,
            text,
            vector,
            keyword_limit=keyword_limit,
            vector_limit=vector_limit,
            filters=filters,
        )

    async def hits(
        self, collection: str, uuids: Collection[str], *, vector: Sequence[float] | None = None
    ) -> list[VectorHit]:
        return await self.inner.hits(collection, uuids, vector=vector)

    async def sentence_scores(
        self, collection: str, uuids: Collection[str], vector: Sequence[float]
    ) -> dict[str, float]:
        return await self.inner.sentence_scores(collection, uuids, vector)

    async def existing_uuids(self, collection: str, uuids: Collection[str]) -> set[str]:
        return await self.inner.existing_uuids(collection, uuids)

    async def fetch_chunks(self, collection: str, uuids: Collection[str]) -> list[ChunkRecord]:
        return await self.inner.fetch_chunks(collection, uuids)

    async def page_chunks(
        self, collection: str, *, after: str | None = None, limit: int = 500
    ) -> list[ChunkRecord]:
        return await self.inner.page_chunks(collection, after=after, limit=limit)

    async def count(self, collection: str) -> int:
        return await self.inner.count(collection)

    async def stats(self, collection: str) -> CollectionStats:
        return await self.inner.stats(collection)

    async def verify(self, collection: str) -> StoreCheck:
        return await self.inner.verify(collection)

    async def sample(self, collection: str, n: int) -> list[VectorHit]:
        return await self.inner.sample(collection, n)

    async def drop_collection(self, collection: str) -> None:
        await self.inner.drop_collection(collection)

    async def collections(self) -> list[str]:
        return await self.inner.collections()

    async def aclose(self) -> None:
        await self.inner.aclose()


class FlakyEntrezClient(HttpEntrezClient):
    """The real HTTP client, with one scriptable lapse on top of what the server sends:
    `incomplete=True` marks every enumeration incomplete (as when a day holds more ids than the
    ESearch cap allows), `incomplete="mdat"` only those by that date type. A record EFetch does
    not return is the fake server's own (`FakeEutilsServer.withhold`)."""

    def __init__(self, settings: EntrezSettings, *, limiter: RateLimiter | None = None) -> None:
        super().__init__(settings, limiter=limiter)
        self.incomplete: bool | DateType = False

    async def esearch_delta(
        self, term: str, mindate: date, maxdate: date, datetype: DateType = "edat"
    ) -> WindowEnumeration:
        found = await super().esearch_delta(term, mindate, maxdate, datetype)
        if self.incomplete is True or self.incomplete == datetype:
            return replace(found, complete=False)
        return found


def entrez_client(base_url: str, *, flaky: bool = False, **settings: Any) -> HttpEntrezClient:
    """An HTTP client for the fake at `base_url` with a private, fast rate limiter (the rate
    rule has tests of its own) and fast retries."""
    values: dict[str, Any] = {"base_url": base_url, **FAST_RETRIES}
    values.update(settings)
    limiter = RateLimiter(1000.0)
    if flaky:
        return FlakyEntrezClient(EntrezSettings(**values), limiter=limiter)
    return HttpEntrezClient(EntrezSettings(**values), limiter=limiter)


def make_sync(
    entrez: HttpEntrezClient,
    metadata: MetadataStore,
    vectors: VectorStore,
    embedder: Embedder,
    clock: SteppingClock,
    collection: str,
    **config: Any,
) -> SyncDelta:
    values: dict[str, Any] = {"collection": collection, "lock_timeout_s": 60.0}
    values.update(config)
    return SyncDelta(entrez, metadata, vectors, embedder, clock=clock, config=SyncConfig(**values))


def embedder() -> CountingEmbedder:
    """The container's deterministic embedder (`BIOMCP_EMBEDDINGS=deterministic`), counted."""
    return CountingEmbedder(HashingEmbedder(max_tokens=256))


# --- backends ------------------------------------------------------------------------------


@dataclass
class BackendSpec:
    """Where one test's stores live. Open them with `stores()` inside the test's loop."""

    kind: BackendKind
    metadata_url: str
    collection: str
    vectors_dir: Path | None = None
    weaviate_url: str | None = None
    weaviate_grpc_port: int = 50051
    _extra: list[SqlMetadataStore] = field(default_factory=list)

    def metadata(self, clock: SteppingClock | None = None) -> SqlMetadataStore:
        """A new metadata store instance on the backend's database (closed by `stores`)."""
        store = SqlMetadataStore(self.metadata_url, clock=clock)
        self._extra.append(store)
        return store

    def vectors(self) -> VectorStore:
        if self.kind == "sqlite-embedded":
            assert self.vectors_dir is not None
            return EmbeddedVectorStore(self.vectors_dir)
        from biomcp.adapters.vectors.weaviate_store import WeaviateVectorStore

        assert self.weaviate_url is not None
        return WeaviateVectorStore(
            self.weaviate_url,
            grpc_port=self.weaviate_grpc_port,
            corpus_collection=self.collection,
        )

    @asynccontextmanager
    async def stores(
        self, clock: SteppingClock | None = None, **wrapper: Any
    ) -> AsyncIterator[tuple[SqlMetadataStore, CountingVectorStore]]:
        """A metadata store and a counting vector store, closed (with every other metadata
        store made by `metadata()`) when the block ends."""
        metadata = self.metadata(clock)
        vectors = CountingVectorStore(self.vectors(), **wrapper)
        try:
            yield metadata, vectors
        finally:
            await vectors.aclose()
            for store in self._extra:
                await store.aclose()
            self._extra.clear()


@contextmanager
def backend_spec(kind: BackendKind, tmp_path: Path) -> Iterator[BackendSpec]:
    """The stores of `kind` for one test, removed afterwards (skips without the services)."""
    collection = f"SyncT{uuid.uuid4().hex[:12]}"
    if kind == "sqlite-embedded":
        yield BackendSpec(
            kind, f"sqlite:///{tmp_path / 'meta.sqlite3'}", collection, tmp_path / "vectors"
        )
        return
    pg, wv = postgres_url(), weaviate_url()
    grpc_port = int(os.environ.get("BIOMCP_TEST_WEAVIATE_GRPC_PORT", "50051"))
    with postgres_schema(pg) as url:
        upgrade(url)
        try:
            yield BackendSpec(kind, url, collection, None, wv, grpc_port)
        finally:
            with httpx.Client(base_url=wv, timeout=30) as client:
                client.delete(f"/v1/schema/{collection}")


# --- the fake's corpus ---------------------------------------------------------------------

_DATE_REVISED = re.compile(rb"<DateRevised>.*?</DateRevised>", re.S)
_ABSTRACT = re.compile(rb"<Abstract>.*?</Abstract>", re.S)


def make_corpus(
    n: int, start: date, end: date, *, seed: int = 1, pmid_start: int = 30_000_000
) -> FakeCorpus:
    """A fake corpus of `n` synthetic articles with Entrez dates spread over [start, end],
    each last revised the day it appeared (as PubMed's, no DateRevised lies in the future, so
    a later sync finds revised only the records a test revises)."""
    return FakeCorpus.from_xml_bytes(
        generate_articles(
            n, start=start, end=end, seed=seed, pmid_start=pmid_start, revised_after_days=0
        )
    )


def add_articles(
    corpus: FakeCorpus, n: int, start: date, end: date, *, seed: int, pmid_start: int
) -> list[str]:
    """Add `n` synthetic articles (PMIDs from `pmid_start`); returns their PMIDs."""
    corpus.add(
        generate_articles(
            n, start=start, end=end, seed=seed, pmid_start=pmid_start, revised_after_days=0
        )
    )
    return [str(pmid_start + i) for i in range(n)]


def _replace_article(corpus: FakeCorpus, pmid: str, pattern: re.Pattern[bytes], new: bytes) -> None:
    raw = corpus.raw(pmid)
    assert raw is not None, f"PMID {pmid} is not in the fake corpus"
    edited, count = pattern.subn(new, raw, count=1)
    assert count == 1, f"PMID {pmid}: nothing to replace"
    corpus.add(b"<PubmedArticleSet>" + edited + b"</PubmedArticleSet>", source="<edit>")


def revise(corpus: FakeCorpus, pmid: str, revised: date) -> None:
    """Give the article a new DateRevised (LR), nothing else changed."""
    new = (
        f"<DateRevised><Year>{revised.year}</Year><Month>{revised.month:02d}</Month>"
        f"<Day>{revised.day:02d}</Day></DateRevised>"
    ).encode()
    _replace_article(corpus, pmid, _DATE_REVISED, new)


_MESH_LIST = re.compile(rb"<MeshHeadingList>.*?</MeshHeadingList>", re.S)
_TYPE_LIST_END = b"</PublicationTypeList>"


def unindex(corpus: FakeCorpus, pmid: str) -> bytes:
    """Take the article's MeSH terms away, as PubMed has them before MEDLINE indexing; return
    its MeSH heading list for `medline_index`."""
    raw = corpus.raw(pmid)
    assert raw is not None, f"PMID {pmid} is not in the fake corpus"
    found = _MESH_LIST.search(raw)
    assert found is not None, f"PMID {pmid} has no MeSH"
    _replace_article(corpus, pmid, _MESH_LIST, b"")
    return found.group(0)


def medline_index(
    corpus: FakeCorpus,
    pmid: str,
    revised: date,
    *,
    mesh: bytes | None = None,
    publication_type: tuple[str, str] | None = None,
) -> None:
    """What MEDLINE indexing does to an article weeks after it appeared: its MeSH heading list
    (`mesh`, as `unindex` returned it) and a publication type (`(ui, name)`) are added, and its
    DateRevised (LR, the modification date `mdat` searches) moves to `revised`."""
    if mesh is not None:
        _replace_article(corpus, pmid, re.compile(rb"</MedlineJournalInfo>"),
                         b"</MedlineJournalInfo>" + mesh)  # fmt: skip
    if publication_type is not None:
        ui, name = publication_type
        added = f'<PublicationType UI="{ui}">{name}</PublicationType>'.encode()
        _replace_article(corpus, pmid, re.compile(re.escape(_TYPE_LIST_END)),
                         added + _TYPE_LIST_END)  # fmt: skip
    revise(corpus, pmid, revised)


def replace_abstract(corpus: FakeCorpus, pmid: str, text: str) -> None:
    """Replace the article's abstract by one unlabelled section holding `text`."""
    new = f"<Abstract><AbstractText>{text}</AbstractText></Abstract>".encode()
    _replace_article(corpus, pmid, _ABSTRACT, new)


def record_of(corpus: FakeCorpus, pmid: str) -> PubMedRecord:
    record = corpus.record(pmid)
    assert record is not None, f"PMID {pmid} does not parse"
    return record


def matching(corpus: FakeCorpus, mesh: str, lo: date = date.min, hi: date = date.max) -> list[str]:
    """The oracle: PMIDs whose MeSH includes `mesh` and whose Entrez date (UTC day) is in
    [lo, hi], computed from the parsed records, not by the fake's search engine."""
    found = []
    for pmid in corpus.pmids():
        record = record_of(corpus, pmid)
        if record.edat is None or not lo <= record.edat.astimezone(UTC).date() <= hi:
            continue
        if any(heading.descriptor == mesh for heading in record.mesh):
            found.append(pmid)
    return found


def chunk_uuids(record: PubMedRecord, chunking: ChunkingConfig) -> set[str]:
    return {chunk.uuid for chunk in chunk_record(record, chunking)}


def expected_chunk_total(records: Iterable[PubMedRecord], chunking: ChunkingConfig) -> int:
    return sum(len(chunk_record(record, chunking)) for record in records)


def expected_distinct_texts(records: Iterable[PubMedRecord], chunking: ChunkingConfig) -> int:
    """How many texts a sync of `records` embeds: each distinct chunk text and each distinct
    sentence of a chunk (`sentence_units`) once."""
    return len(
        {
            text
            for record in records
            for chunk in chunk_record(record, chunking)
            for text in (chunk.text, *sentence_units(chunk.text))
        }
    )


def utc_noon(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, 12, tzinfo=UTC)

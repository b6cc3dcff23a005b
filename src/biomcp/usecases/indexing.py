"""ChunkIndexer: documents into a vector collection (chunk, embed, write, drop stale chunks).

The one path by which documents reach a collection: syncs use it, and so does the retrieval
evaluation, so what is measured is what is served. Chunk ids are stable (`uuid5(ns,
f"{pmid}:{chunk_id}")`): writing a document again replaces its chunks in place, and the chunks
a new version no longer has are deleted when the document was indexed before.

A document's chunks are its abstract's and, when its PMC full text is stored
(`FullTextStore`), its article's (`fulltext_chunks`). Both are written together, so
re-indexing a document never loses its full-text chunks, and dropping an article removes them.
Full-text chunks carry the facet `source=fulltext` and their place in the article.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from biomcp.domain.chunking import (
    ChunkingConfig,
    chunk_record,
    chunking_for_window,
    has_sentence_units,
    sentence_units,
)
from biomcp.domain.design import classify_design
from biomcp.domain.fulltext import FullTextArticle
from biomcp.domain.fulltext_chunks import chunk_article
from biomcp.domain.numeric import has_numeric_result
from biomcp.domain.records import Chunk, PubMedRecord
from biomcp.domain.registries import registry_of
from biomcp.domain.sections import section_category
from biomcp.ports.documents import StoredDocument
from biomcp.ports.embeddings import Embedder, EmbeddingError
from biomcp.ports.fulltext import FullTextStore
from biomcp.ports.vectors import ChunkRecord, CollectionNotFoundError, VectorStore
from biomcp.usecases.payloads import iso_utc

__all__ = [
    "ANCHOR",
    "DESIGN_FACET",
    "EMBED_BATCH",
    "INDEX_LOCK",
    "REGISTRY_FACET",
    "SECTION_CATEGORY",
    "SECTION_PATH",
    "SOURCE_FACET",
    "STUDY_DESIGN",
    "TRIAL_ID_FACET",
    "ChunkIndexer",
    "ExpectedChunks",
    "IndexOutcome",
    "PreparedChunks",
    "chunk_record_of",
]

#: The facet key a corpus chunk's study design is filtered by, and its metadata key in hits.
DESIGN_FACET = "design"
STUDY_DESIGN = "study_design"
#: The facet keys of a chunk's trial registries (`REGISTRIES`) and its record's registry ids.
REGISTRY_FACET = "registry"
TRIAL_ID_FACET = "trial_id"
#: The metadata key of a chunk's section's NLM category (RESULTS, CONCLUSIONS...).
SECTION_CATEGORY = "section_category"
#: The facet (and metadata) key of a chunk's source; only full-text chunks carry it, so a
#: chunk indexed before full text existed counts as an abstract's.
SOURCE_FACET = "source"
#: The metadata keys of a full-text chunk's place in its article.
SECTION_PATH = "section_path"
ANCHOR = "anchor"


#: The lock every sync holds while it writes chunks (query keys are user names: this one
#: cannot collide with a saved query's key in practice). Deleting a query's records takes it
#: too, so no sync writes the chunks of a record while they are deleted.
INDEX_LOCK = "__biomcp_index__"


@dataclass(slots=True)
class IndexOutcome:
    """What one `index` call did. `failed` are the PMIDs with a refused chunk (`refused`:
    uuid -> the store's message); `timings` are seconds per stage (chunk, embed, index)."""

    texts_embedded: int = 0
    chunks_written: int = 0
    chunks_deleted: int = 0
    refused: dict[str, str] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)
    timings: dict[str, float] = field(default_factory=dict)
    #: pmid -> how many full-text chunks were written for it (documents with an article).
    fulltext_chunks: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ExpectedChunks:
    """The chunks some records should have in the collection."""

    #: pmid -> the uuids of the record's chunks
    uuids: dict[str, list[str]]
    #: pmid -> the uuids of those chunks that carry sentence vectors (only pmids with some;
    #: none when sentence vectors are off)
    with_sentences: dict[str, list[str]]


@dataclass(slots=True)
class PreparedChunks:
    """Documents chunked, and their chunk texts embedded, ahead of `ChunkIndexer.index` (which
    a sync runs under its index lock: the preparation runs outside it, beside the previous
    batch's writes). `index` takes a document's chunks from here when it is the same version
    of the same content, and a chunk's vector when its text was embedded here; anything else
    it chunks and embeds itself. `timings` are seconds per stage (chunk, embed)."""

    chunks: dict[tuple[str, int, str], tuple[Chunk, ...]] = field(default_factory=dict)
    vectors: dict[str, list[float]] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    #: Chunk text -> its sentences to embed (`sentence_units`; none without sentence vectors).
    units: dict[str, list[str]] = field(default_factory=dict)

    def chunks_of(self, doc: StoredDocument) -> tuple[Chunk, ...] | None:
        return self.chunks.get(_version_key(doc))

    @property
    def texts(self) -> list[str]:
        """The distinct texts to embed, in document order: each chunk's text, then its
        sentences (`units`)."""
        return list(
            dict.fromkeys(
                text
                for chunks in self.chunks.values()
                for c in chunks
                for text in (c.text, *self.units.get(c.text, ()))
            )
        )


#: The most texts sent to the embedder in one call: a sync batch's chunks and their sentences
#: (500 records, about 750 chunks and 2,300 sentences) go in one. The local embedder groups a
#: call's texts by length into runs, so a larger call makes fuller runs (benchmarks/README.md);
#: the remote ones cut requests to the API limits.
EMBED_BATCH = 4096


def _version_key(doc: StoredDocument) -> tuple[str, int, str]:
    return (doc.record.pmid, doc.version, doc.content_hash)


class ChunkIndexer:
    """Writes documents' chunks into `collection`. `chunking` None follows the embedder's
    window (`chunking_for_window`). With `sentence_vectors` each chunk also carries the
    vectors of its sentences (`sentence_units`)."""

    def __init__(
        self,
        vectors: VectorStore,
        embedder: Embedder,
        *,
        collection: str,
        chunking: ChunkingConfig | None = None,
        embed_batch_size: int = EMBED_BATCH,
        fulltext: FullTextStore | None = None,
        sentence_vectors: bool = True,
    ) -> None:
        if embed_batch_size < 1:
            raise ValueError("embed_batch_size must be >= 1")
        self._fulltext = fulltext
        self._sentences = sentence_vectors
        self._vectors = vectors
        self._embedder = embedder
        self.collection = collection
        self._chunking = chunking
        self._embed_batch_size = embed_batch_size
        self._schema_ready = False

    @property
    def chunking(self) -> ChunkingConfig:
        if self._chunking is not None:
            return self._chunking
        return chunking_for_window(self._embedder.max_tokens)

    def forget_schema(self) -> None:
        """The collection was dropped: the next write makes it again."""
        self._schema_ready = False

    async def ensure_schema(self) -> None:
        if not self._schema_ready:
            await self._vectors.ensure_schema(
                self.collection, dim=self._embedder.dim, model_id=self._embedder.model_id
            )
            self._schema_ready = True

    def prepare(self, docs: Sequence[StoredDocument]) -> PreparedChunks:
        """`docs` chunked under the chunking in force (no embedding, no write)."""
        began = time.perf_counter()
        chunking = self.chunking
        chunks = {_version_key(doc): chunk_record(doc.record, chunking) for doc in docs}
        prepared = PreparedChunks(
            chunks=chunks,
            units={c.text: self._units(c.text) for own in chunks.values() for c in own},
        )
        prepared.timings["chunk"] = time.perf_counter() - began
        return prepared

    async def embed_prepared(self, prepared: PreparedChunks) -> int:
        """Embed the prepared texts that have no vector yet (each distinct text once); return
        how many texts were sent to the embedder.

        Raises:
            EmbeddingError: from the embedder (nothing is written either way).
        """
        began = time.perf_counter()
        sent = await self._embed_missing(prepared.texts, prepared.vectors)
        prepared.timings["embed"] = prepared.timings.get("embed", 0.0) + (
            time.perf_counter() - began
        )
        return sent

    async def index(
        self,
        docs: Sequence[StoredDocument],
        prepared: PreparedChunks | None = None,
        *,
        articles: Mapping[str, FullTextArticle | None] | None = None,
    ) -> IndexOutcome:
        """Chunk, embed and write `docs`; delete the chunks that documents indexed before no
        longer have (unless one of their chunks was refused). What `prepared` holds for these
        versions of the documents (their chunks, the vectors of their texts) is used as is.
        A document's full text is its stored article, or the one `articles` gives for its PMID
        (None there: index it without full text, which deletes its full-text chunks).

        Raises:
            EmbeddingError, VectorStoreError: from the adapters (nothing is half-recorded: the
                caller records indexed versions only after this returns).
        """
        outcome = IndexOutcome()
        await self.ensure_schema()
        prepared = prepared or PreparedChunks()

        full = await self._articles([doc.record.pmid for doc in docs], articles or {})
        began = time.perf_counter()
        chunking = self.chunking
        pieces: list[tuple[StoredDocument, Chunk]] = []
        for doc in docs:
            chunks = prepared.chunks_of(doc)
            if chunks is None:
                chunks = chunk_record(doc.record, chunking)
            pieces.extend((doc, chunk) for chunk in chunks)
            article = full.get(doc.record.pmid)
            if article is not None:
                extra = chunk_article(doc.record.pmid, article, chunking, title=doc.record.title)
                outcome.fulltext_chunks[doc.record.pmid] = len(extra)
                pieces.extend((doc, chunk) for chunk in extra)
        outcome.timings["chunk"] = time.perf_counter() - began

        began = time.perf_counter()
        known = prepared.vectors
        units = [self._units(chunk.text, prepared.units) for _, chunk in pieces]
        await self._embed_missing(
            [
                text
                for (_, chunk), own in zip(pieces, units, strict=True)
                for text in (chunk.text, *own)
            ],
            known,
        )
        outcome.timings["embed"] = time.perf_counter() - began
        outcome.texts_embedded = len(pieces)

        began = time.perf_counter()
        records = [
            chunk_record_of(doc, chunk, known[chunk.text], [known[u] for u in own])
            for (doc, chunk), own in zip(pieces, units, strict=True)
        ]
        try:
            report = await self._vectors.upsert_chunks(self.collection, records)
        except CollectionNotFoundError:  # dropped since (a rebuild elsewhere): make it again
            self._schema_ready = False
            await self.ensure_schema()
            report = await self._vectors.upsert_chunks(self.collection, records)
        outcome.refused = {error.uuid: error.message for error in report.errors}
        outcome.failed = {doc.record.pmid for doc, chunk in pieces if chunk.uuid in outcome.refused}
        outcome.chunks_written = report.upserted

        keep: dict[str, set[str]] = {}
        for doc, chunk in pieces:
            keep.setdefault(doc.record.pmid, set()).add(chunk.chunk_id)
        for doc in docs:
            if doc.indexed_version > 0 and doc.record.pmid not in outcome.failed:
                outcome.chunks_deleted += await self._vectors.delete_chunks(
                    self.collection, doc.record.doc_id, keep=keep.get(doc.record.pmid, set())
                )
        outcome.timings["index"] = time.perf_counter() - began
        return outcome

    async def _articles(
        self, pmids: Sequence[str], given: Mapping[str, FullTextArticle | None]
    ) -> dict[str, FullTextArticle]:
        """The article each of `pmids` is indexed with: `given`'s, else the stored one."""
        found: dict[str, FullTextArticle] = {}
        rest = [p for p in pmids if p not in given]
        if self._fulltext is not None and rest:
            found.update(await self._fulltext.fulltext_articles(rest))
        found.update({p: a for p, a in given.items() if a is not None and p in set(pmids)})
        return found

    @property
    def vectors(self) -> VectorStore:
        return self._vectors

    def chunk_uuids(self, records: Sequence[PubMedRecord]) -> dict[str, list[str]]:
        """pmid -> the uuids of the chunks each record has under the chunking in force."""
        return self.expected_chunks(records).uuids

    def expected_chunks(self, records: Sequence[PubMedRecord]) -> ExpectedChunks:
        """What the collection should hold for `records` under the settings in force, from
        one chunking of each record."""
        chunking = self.chunking
        uuids: dict[str, list[str]] = {}
        sentences: dict[str, list[str]] = {}
        for record in records:
            chunks = chunk_record(record, chunking)
            uuids[record.pmid] = [c.uuid for c in chunks]
            own = [c.uuid for c in chunks if self._sentences and has_sentence_units(c.text)]
            if own:
                sentences[record.pmid] = own
        return ExpectedChunks(uuids, sentences)

    async def lacking_sentences(self, wanted: dict[str, list[str]]) -> dict[str, list[str]]:
        """Of `wanted` (pmid -> uuids of stored chunks that should carry sentence vectors),
        those stored without them, by pmid (only pmids with some). A chunk stored before
        sentence vectors were kept, or while they were off, has none until a rebuild.

        The store says which chunks carry them: `VectorStore.sentence_scores` leaves the
        others out, whatever the query vector (a unit axis here).

        Raises:
            VectorStoreError: from the adapter.
        """
        axis = [1.0] + [0.0] * (self._embedder.dim - 1)

        async def having(uuids: list[str]) -> Collection[str]:
            return (await self._vectors.sentence_scores(self.collection, uuids, axis)).keys()

        return await _left_out(wanted, having)

    async def missing_chunks(self, wanted: dict[str, list[str]]) -> dict[str, list[str]]:
        """Of `wanted` (pmid -> chunk uuids), the chunks the collection lacks, by pmid (only
        pmids with some missing; a collection that does not exist lacks them all).

        Raises:
            VectorStoreError: from the adapter.
        """

        async def present(uuids: list[str]) -> Collection[str]:
            return await self._vectors.existing_uuids(self.collection, uuids)

        return await _left_out(wanted, present)

    def _units(self, text: str, known: Mapping[str, list[str]] | None = None) -> list[str]:
        """The sentences of a chunk's text to embed apart (none without sentence vectors), from
        `known` when it has them."""
        if known is not None and text in known:
            return known[text]
        return sentence_units(text) if self._sentences else []

    async def _embed_missing(self, texts: Sequence[str], vectors: dict[str, list[float]]) -> int:
        """Embed the distinct `texts` that `vectors` lacks, each once, into `vectors`; return
        how many were sent to the embedder."""
        missing = [t for t in dict.fromkeys(texts) if t not in vectors]
        if missing:
            vectors.update(zip(missing, await self._embed(missing), strict=True))
        return len(missing)

    async def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        size = self._embed_batch_size
        vectors: list[list[float]] = []
        for offset in range(0, len(texts), size):
            part = texts[offset : offset + size]
            got = await self._embedder.embed(part)
            if len(got) != len(part):
                raise EmbeddingError(
                    f"the embedder returned {len(got)} vectors for {len(part)} texts"
                )
            vectors.extend(got)
        return vectors


def chunk_record_of(
    doc: StoredDocument,
    chunk: Chunk,
    vector: Sequence[float],
    sentence_vectors: Sequence[Sequence[float]] = (),
) -> ChunkRecord:
    """The vector-store record of one chunk (with the vectors of its `sentence_units`), and
    the document's filterable metadata: its
    study design is both returned with hits (`metadata`) and filterable (`facets`), and so
    are its record's trial registry ids and their registries (`facets` only). Its section's
    NLM category is returned with hits (`metadata`) when known."""
    record = doc.record
    design = (doc.evidence.design or classify_design(record)).design.value
    metadata = {STUDY_DESIGN: design}
    category = _category(record, chunk)
    if category:
        metadata[SECTION_CATEGORY] = category
    facets: dict[str, tuple[str, ...]] = {DESIGN_FACET: (design,)}
    if chunk.source == "fulltext":
        metadata[SOURCE_FACET] = chunk.source
        facets[SOURCE_FACET] = (chunk.source,)
        for key, value in ((SECTION_PATH, chunk.section_path), (ANCHOR, chunk.anchor)):
            if value:
                metadata[key] = value
    if record.trial_ids:
        facets[TRIAL_ID_FACET] = record.trial_ids
        facets[REGISTRY_FACET] = tuple(dict.fromkeys(map(_registry, record.trial_ids)))
    return ChunkRecord(
        uuid=chunk.uuid,
        doc_id=record.doc_id,
        chunk_id=chunk.chunk_id,
        text=chunk.text,
        vector=vector,
        section=chunk.section,
        year=record.year,
        evidence_type=str(doc.evidence.evidence_type),
        quality_total=float(doc.quality.total),
        journal=record.journal.title or record.journal.iso_abbreviation,
        pub_types=record.publication_types,
        edat=iso_utc(record.edat),
        lr=iso_utc(record.lr),
        source_url=f"https://pubmed.ncbi.nlm.nih.gov/{record.pmid}/",
        has_numbers=has_numeric_result(chunk.text),
        metadata=metadata,
        facets=facets,
        sentence_vectors=tuple(sentence_vectors),
    )


def _category(record: PubMedRecord, chunk: Chunk) -> str | None:
    """The NLM category of the chunk's section: PubMed's own, else the one its label maps to."""
    if chunk.section is None:
        return None
    given = None
    if chunk.source == "abstract" and 0 <= chunk.section_index < len(record.abstract):
        section = record.abstract[chunk.section_index]
        given = section.category if section.label == chunk.section else None
    return section_category(chunk.section, given)


def _registry(trial_id: str) -> str:
    return registry_of(trial_id) or ""


async def _left_out(
    wanted: dict[str, list[str]], found: Callable[[list[str]], Awaitable[Collection[str]]]
) -> dict[str, list[str]]:
    """Of `wanted` (pmid -> uuids), those `found` does not return, by pmid (only pmids with
    some). A collection that does not exist returns none."""
    everything = [u for uuids in wanted.values() for u in uuids]
    if not everything:
        return {}
    try:
        kept = set(await found(everything))
    except CollectionNotFoundError:
        kept = set()
    left = {p: [u for u in uuids if u not in kept] for p, uuids in wanted.items()}
    return {p: uuids for p, uuids in left.items() if uuids}

"""BEIR: retrieval quality measured through the product's own index and search.

A BEIR data set (`corpus.jsonl`, `queries.jsonl`, `qrels/<split>.tsv`) becomes a throwaway
corpus. Each document is a PubMed record (its title and one unstructured abstract section; the
PMID is the BEIR id when that is a valid PMID, else a stable number derived from it, see
`beir_pmids`), classified and scored by the domain, then chunked, embedded and written by
`ChunkIndexer`, the path syncs take. Every query of the split goes through
`SearchCorpus.ranked` in each mode (`MODES`): BM25 alone (alpha 0), vectors alone (alpha 1),
hybrid (the configured alpha and fusion) and hybrid with the quality-biased rerank. Chunk hits
are aggregated to documents by their best chunk (the first in rank order) and scored with
`eval.metrics`: nDCG@10, Recall@10, Recall@100 and MRR@10, with indexing time and queries per
second (spec 03 section 12, "fast sanity loop").

Only ports are used here: the entry point supplies the vector store (a throwaway one) and the
embedder (behind a persistent cache, so a second run embeds nothing).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from biomcp.domain.chunking import ChunkingConfig, chunking_for_window
from biomcp.domain.evidence import classify_evidence
from biomcp.domain.fusion import SENTENCE_SHARE
from biomcp.domain.neighbours import NEIGHBOUR_SHARE
from biomcp.domain.quality import score_quality
from biomcp.domain.records import AbstractSection, PubMedRecord
from biomcp.domain.versioning import content_hash
from biomcp.eval.data import PMID_PATTERN, EvaluationDataError, Progress, read_jsonl
from biomcp.eval.metrics import mean_scores, score_ranking
from biomcp.ports.documents import StoredDocument
from biomcp.ports.embeddings import Embedder
from biomcp.ports.vectors import Fusion, VectorStore
from biomcp.usecases.errors import IndexingError, InvalidRequestError
from biomcp.usecases.indexing import EMBED_BATCH, ChunkIndexer
from biomcp.usecases.search import SearchConfig, SearchCorpus, SearchHit

__all__ = [
    "ABLATIONS",
    "MODES",
    "BeirDataset",
    "BeirDocument",
    "BeirEvaluation",
    "BeirReport",
    "IndexSummary",
    "Mode",
    "ModeResult",
    "beir_pmids",
    "beir_record",
    "budget_chunking",
    "load_beir",
    "modes_for",
]

MODES = ("bm25", "vector", "hybrid", "hybrid+rerank")
#: Modes named only on request: the hybrid ones without the best-sentence arm, for a before
#: and after in one run.
ABLATIONS = (
    "hybrid-chunks",
    "hybrid-chunks+rerank",
    "hybrid+rerank-unsmoothed",
)
#: The day quality scores are computed for (fixed, so reports are reproducible).
EVAL_DAY = date(2025, 1, 1)

# --- BEIR data ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BeirDocument:
    doc_id: str
    title: str
    text: str


@dataclass(frozen=True, slots=True)
class BeirDataset:
    """The corpus and one split: the queries with at least one relevant document, and their
    graded qrels (query id -> document id -> grade)."""

    name: str
    split: str
    documents: tuple[BeirDocument, ...]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    warnings: tuple[str, ...] = ()


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise EvaluationDataError(f"cannot read {path}: {exc.strerror or exc}") from None
    for number, line in enumerate(lines, start=1):
        cells = line.strip().split("\t")
        if cells == [""]:
            continue
        if len(cells) != 3:
            raise EvaluationDataError(f"{path}:{number}: expected query-id, corpus-id, score")
        try:
            grade = int(cells[2])
        except ValueError:
            if number == 1:
                continue  # the header line
            raise EvaluationDataError(
                f"{path}:{number}: score {cells[2]!r} is not an integer"
            ) from None
        qrels.setdefault(cells[0], {})[cells[1]] = grade
    return qrels


def load_beir(folder: Path, split: str, *, max_queries: int | None = None) -> BeirDataset:
    """Read a BEIR data set folder. Queries without a relevant document are left out (they
    cannot be scored); `max_queries` keeps the first N query ids in sorted order (quick runs).

    Raises:
        EvaluationDataError: a missing or malformed file, or a split without queries.
    """
    folder = Path(folder)
    qrels_path = folder / "qrels" / f"{split}.tsv"
    for path in (folder / "corpus.jsonl", folder / "queries.jsonl", qrels_path):
        if not path.is_file():
            raise EvaluationDataError(
                f"{path} not found: a BEIR folder holds corpus.jsonl, queries.jsonl and "
                f"qrels/<split>.tsv"
            )
    documents: dict[str, BeirDocument] = {}
    for number, item in read_jsonl(folder / "corpus.jsonl"):
        if "_id" not in item:
            raise EvaluationDataError(f"{folder / 'corpus.jsonl'}:{number}: no _id")
        doc_id = str(item["_id"])
        documents[doc_id] = BeirDocument(
            doc_id, str(item.get("title") or ""), str(item.get("text") or "")
        )
    all_queries = {
        str(item["_id"]): str(item.get("text") or "")
        for _, item in read_jsonl(folder / "queries.jsonl")
        if "_id" in item
    }
    warnings: list[str] = []
    qrels: dict[str, dict[str, int]] = {}
    missing: list[str] = []
    for qid, grades in _read_qrels(qrels_path).items():
        if not any(g > 0 for g in grades.values()):
            continue
        if not all_queries.get(qid, "").strip():
            missing.append(qid)
            continue
        qrels[qid] = grades
    if missing:
        warnings.append(f"{len(missing)} judged queries have no text and were skipped")
    unknown = {d for grades in qrels.values() for d in grades} - documents.keys()
    if unknown:
        warnings.append(f"{len(unknown)} judged documents are not in the corpus")
    qids = sorted(qrels)
    if max_queries is not None:
        qids = qids[:max_queries]
    if not qids:
        raise EvaluationDataError(f"{qrels_path}: no query with a relevant document")
    return BeirDataset(
        name=folder.resolve().name,
        split=split,
        documents=tuple(documents.values()),
        queries={q: all_queries[q] for q in qids},
        qrels={q: qrels[q] for q in qids},
        warnings=tuple(warnings),
    )


def beir_pmids(doc_ids: Iterable[str]) -> dict[str, str]:
    """A PMID for each BEIR document id: the id itself when it is a valid PMID (digits, no
    leading zero, at most 10), else a 10-digit number from the SHA-256 of the id, moved up
    past any PMID already taken (ids are placed in sorted order, so the mapping depends only
    on the set of ids)."""
    ids = sorted(set(doc_ids))
    mapping = {i: i for i in ids if PMID_PATTERN.fullmatch(i)}
    taken = set(mapping.values())
    span = 9_000_000_000
    for doc_id in ids:
        if doc_id in mapping:
            continue
        offset = int.from_bytes(hashlib.sha256(doc_id.encode("utf-8")).digest()[:8], "big")
        number = offset % span
        while str(1_000_000_000 + number) in taken:
            number = (number + 1) % span
        mapping[doc_id] = str(1_000_000_000 + number)
        taken.add(mapping[doc_id])
    return mapping


def beir_record(pmid: str, doc: BeirDocument) -> PubMedRecord:
    """The record of a BEIR document: its title and one unstructured abstract section."""
    text = doc.text.strip()
    return PubMedRecord(
        pmid=pmid,
        title=doc.title.strip() or None,
        abstract=(AbstractSection(text=text),) if text else (),
    )


def _stored(record: PubMedRecord, now: datetime) -> StoredDocument:
    evidence = classify_evidence(record)
    return StoredDocument(
        record=record,
        evidence=evidence,
        quality=score_quality(record, EVAL_DAY, evidence=evidence),
        content_hash=content_hash(record),
        version=1,
        indexed_version=0,
        last_seen_at=now,
    )


def budget_chunking(max_tokens: int) -> ChunkingConfig:
    """A chunk budget of at most `max_tokens` estimated tokens, shaped as the domain shapes
    the embedder-window budget: target 85% of it (at most 350), overlap a quarter of the
    target (at most 50)."""
    if max_tokens < 16:
        raise InvalidRequestError(f"a chunk budget of {max_tokens} tokens is too small (>= 16)")
    target = max(16, min(350, int(max_tokens * 0.85)))
    return ChunkingConfig(
        target_tokens=target, max_tokens=max_tokens, overlap_tokens=min(50, target // 4)
    )


# --- BEIR evaluation ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Mode:
    """One way of searching: `alpha` weighs the vector arm, `quality_bias` adds the rerank,
    `sentence_share` is the vector weight's share ranking chunks by their best sentence,
    `neighbour_share` the share of a paper's score taken from its nearest neighbour's."""

    name: str
    alpha: float
    fusion: Fusion
    quality_bias: bool
    sentence_share: float = SENTENCE_SHARE
    neighbour_share: float = NEIGHBOUR_SHARE


def modes_for(names: Iterable[str], *, alpha: float, fusion: Fusion) -> list[Mode]:
    """The modes named (`all` for every one of `MODES`), in `MODES` then `ABLATIONS` order.

    Raises:
        InvalidRequestError: an unknown mode name.
    """
    wanted = {n.strip().lower() for n in names if n.strip()} or {"all"}
    unknown = wanted - {*MODES, *ABLATIONS, "all"}
    if unknown:
        raise InvalidRequestError(
            f"unknown mode {', '.join(sorted(unknown))}: "
            f"use {', '.join((*MODES, *ABLATIONS))} or all"
        )
    if "all" in wanted:
        wanted = (wanted - {"all"}) | set(MODES)
    table = {
        "bm25": Mode("bm25", 0.0, fusion, False),
        "vector": Mode("vector", 1.0, fusion, False),
        "hybrid": Mode("hybrid", alpha, fusion, False),
        "hybrid+rerank": Mode("hybrid+rerank", alpha, fusion, True),
        "hybrid-chunks": Mode("hybrid-chunks", alpha, fusion, False, 0.0),
        "hybrid-chunks+rerank": Mode("hybrid-chunks+rerank", alpha, fusion, True, 0.0),
        "hybrid+rerank-unsmoothed": Mode(
            "hybrid+rerank-unsmoothed", alpha, fusion, True, neighbour_share=0.0
        ),
    }
    return [table[name] for name in (*MODES, *ABLATIONS) if name in wanted]


@dataclass(frozen=True, slots=True)
class IndexSummary:
    documents: int
    chunks: int
    texts_embedded: int
    seconds: float
    timings: dict[str, float]


@dataclass(frozen=True, slots=True)
class ModeResult:
    """The mean metrics of one mode; `docs_ranked` is the mean number of distinct documents
    a query's deep ranking reached (Recall@100 is capped when it falls below 100)."""

    mode: Mode
    metrics: dict[str, float]
    queries: int
    seconds: float
    docs_ranked: float
    per_query: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def queries_per_s(self) -> float:
        return self.queries / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "mode": self.mode.name,
            "alpha": self.mode.alpha,
            "fusion": str(self.mode.fusion),
            "quality_bias": self.mode.quality_bias,
            "sentence_share": self.mode.sentence_share,
            "neighbour_share": self.mode.neighbour_share,
            "metrics": {k: round(v, 4) for k, v in self.metrics.items()},
            "queries": self.queries,
            "seconds": round(self.seconds, 3),
            "queries_per_s": round(self.queries_per_s, 1),
            "docs_ranked_mean": round(self.docs_ranked, 1),
        }
        if per_query:
            out["per_query"] = {
                q: {k: round(v, 4) for k, v in m.items()} for q, m in self.per_query.items()
            }
        return out


@dataclass(frozen=True, slots=True)
class BeirReport:
    dataset: str
    split: str
    model_id: str
    chunking: ChunkingConfig
    depth: int
    oversample: int
    index: IndexSummary
    query_embedding_seconds: float
    results: tuple[ModeResult, ...]
    warnings: tuple[str, ...] = ()

    def as_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        return {
            "kind": "beir",
            "dataset": self.dataset,
            "split": self.split,
            "embedder": self.model_id,
            "chunking": {
                "target_tokens": self.chunking.target_tokens,
                "max_tokens": self.chunking.max_tokens,
                "overlap_tokens": self.chunking.overlap_tokens,
                "title_every_chunk": self.chunking.title_every_chunk,
            },
            "depth_chunks": self.depth,
            "oversample": self.oversample,
            "index": {
                "documents": self.index.documents,
                "chunks": self.index.chunks,
                "texts_embedded": self.index.texts_embedded,
                "seconds": round(self.index.seconds, 3),
                "timings": {k: round(v, 3) for k, v in self.index.timings.items()},
            },
            "query_embedding_seconds": round(self.query_embedding_seconds, 3),
            "modes": [r.as_dict(per_query=per_query) for r in self.results],
            "warnings": list(self.warnings),
        }


def _documents_of(hits: Sequence[SearchHit]) -> list[str]:
    """Document ids in the order of their best chunk (hits come best first)."""
    seen: dict[str, None] = {}
    for hit in hits:
        seen.setdefault(hit.doc_id, None)
    return list(seen)


class BeirEvaluation:
    """Indexes a `BeirDataset` into `collection` of `vectors` and scores each mode on it.

    `search` gives the oversampling, rerank weights, alpha and fusion of the product (the
    collection is replaced by `collection`); `depth` is how many chunks each query ranks;
    `recall_at` are the cut-offs of the Recall@k metrics."""

    def __init__(
        self,
        vectors: VectorStore,
        embedder: Embedder,
        *,
        collection: str = "BeirEval",
        chunking: ChunkingConfig | None = None,
        search: SearchConfig | None = None,
        depth: int = 200,
        embed_batch_size: int = EMBED_BATCH,
        index_batch: int = 1000,
        title_every_chunk: bool | None = None,
        recall_at: Sequence[int] = (10, 100),
    ) -> None:
        if depth < 1:
            raise InvalidRequestError(f"depth must be >= 1, got {depth}")
        self._vectors = vectors
        self._embedder = embedder
        self.collection = collection
        self.search = replace(search or SearchConfig(), collection=collection)
        self.depth = depth
        self.recall_at = tuple(recall_at)
        self._index_batch = index_batch
        if title_every_chunk is not None:
            base = chunking or chunking_for_window(embedder.max_tokens)
            chunking = replace(base, title_every_chunk=title_every_chunk)
        self.indexer = ChunkIndexer(
            vectors,
            embedder,
            collection=collection,
            chunking=chunking,
            embed_batch_size=embed_batch_size,
        )

    async def index(self, data: BeirDataset, progress: Progress | None = None) -> IndexSummary:
        """Chunk, embed and write every document.

        Raises:
            IndexingError: the store refused chunks. EmbeddingError, VectorStoreError.
        """
        pmids = beir_pmids(d.doc_id for d in data.documents)
        now = datetime.now(UTC)
        began = time.perf_counter()
        timings: dict[str, float] = {}
        chunks = embedded = 0
        docs = data.documents
        for start in range(0, len(docs), self._index_batch):
            part = docs[start : start + self._index_batch]
            batch = [_stored(beir_record(pmids[d.doc_id], d), now) for d in part]
            outcome = await self.indexer.index(batch)
            if outcome.refused:
                sample = "; ".join(list(outcome.refused.values())[:3])
                raise IndexingError(f"the store refused {len(outcome.refused)} chunks: {sample}")
            chunks += outcome.chunks_written
            embedded += outcome.texts_embedded
            for stage, seconds in outcome.timings.items():
                timings[stage] = timings.get(stage, 0.0) + seconds
            if progress is not None:
                done = min(len(docs), start + self._index_batch)
                progress(f"indexed {done}/{len(docs)} documents ({chunks} chunks)")
        return IndexSummary(len(docs), chunks, embedded, time.perf_counter() - began, timings)

    async def embed_queries(self, data: BeirDataset) -> float:
        """Embed each query alone, as a search does (filling the cache, so that the timed
        searches measure retrieval); returns the seconds it took."""
        began = time.perf_counter()
        for text in data.queries.values():
            await self._embedder.embed([text.strip()])
        return time.perf_counter() - began

    async def score(
        self, data: BeirDataset, mode: Mode, *, progress: Progress | None = None
    ) -> ModeResult:
        """Run every query of `data` in `mode` and score the document rankings."""
        config = replace(
            self.search,
            alpha=mode.alpha,
            fusion=mode.fusion,
            sentence_share=mode.sentence_share,
            neighbour_share=mode.neighbour_share,
        )
        search = SearchCorpus(self._vectors, self._embedder, config=config)
        pmids = beir_pmids(d.doc_id for d in data.documents)
        beir_id = {f"pmid:{pmid}": doc_id for doc_id, pmid in pmids.items()}
        per_query: dict[str, dict[str, float]] = {}
        ranked_docs = 0
        began = time.perf_counter()
        for qid, text in data.queries.items():
            hits = await search.ranked(text, self.depth, mode.quality_bias)
            ranking = [beir_id.get(doc, doc) for doc in _documents_of(hits)]
            ranked_docs += len(ranking)
            per_query[qid] = score_ranking(ranking, data.qrels[qid], recall=self.recall_at)
        seconds = time.perf_counter() - began
        if progress is not None:
            progress(f"{mode.name}: {len(per_query)} queries in {seconds:.1f}s")
        return ModeResult(
            mode=mode,
            metrics=mean_scores(per_query.values()),
            queries=len(per_query),
            seconds=seconds,
            docs_ranked=ranked_docs / max(1, len(per_query)),
            per_query=per_query,
        )

    async def run(
        self, data: BeirDataset, modes: Sequence[Mode], progress: Progress | None = None
    ) -> BeirReport:
        """Index `data`, then score each mode."""
        summary = await self.index(data, progress)
        query_seconds = await self.embed_queries(data)
        results = [await self.score(data, mode, progress=progress) for mode in modes]
        return BeirReport(
            dataset=data.name,
            split=data.split,
            model_id=self._embedder.model_id,
            chunking=self.indexer.chunking,
            depth=self.depth,
            oversample=self.search.oversample,
            index=summary,
            query_embedding_seconds=query_seconds,
            results=tuple(results),
            warnings=data.warnings,
        )

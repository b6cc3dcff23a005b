"""The relevance floor's calibration: how similar the best hit is when an answer is there.

Each question goes through `SearchCorpus.ranked` (the agent path: hybrid with the quality
rerank) and keeps the best cosine similarity and BM25 score among its top hits. Sets play one
of three roles:

* `keep`: questions whose answer is in the corpus (gold questions, SciFact train claims with
  their relevant documents); the floor must let nearly all of them through.
* `reject`: questions nothing in the corpus answers (off-topic questions asked of the gold
  corpus); the floor should turn away as many as it can.
* `measure`: reported only (SciFact train claims searched with their relevant documents left
  out: the corpus still holds papers on the same subject, so these are not off-topic).

`fit_floor` picks the highest floor, on a grid, that keeps the share asked of every `keep` set;
a higher floor can only turn away more questions, so it turns away the most.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from biomcp.adapters.entrez.pubmed_xml import parse_pubmed_articles
from biomcp.domain.quality import QualityConfig
from biomcp.domain.records import PubMedRecord
from biomcp.domain.relevance import RelevanceFloor
from biomcp.eval.beir import EVAL_DAY, BeirDataset, BeirEvaluation, beir_pmids
from biomcp.eval.data import EvaluationDataError, Progress, read_jsonl
from biomcp.eval.gold import GoldQuestion
from biomcp.ports.documents import StoredDocument
from biomcp.ports.embeddings import Embedder
from biomcp.ports.vectors import SearchFilters, VectorStore
from biomcp.usecases.errors import IndexingError, InvalidRequestError
from biomcp.usecases.indexing import ChunkIndexer
from biomcp.usecases.search import SearchConfig, SearchCorpus, SearchHit
from biomcp.usecases.sync_pipeline import derive_document

__all__ = [
    "OFFTOPIC_KINDS",
    "QUANTILES",
    "FloorEvaluation",
    "FloorQuery",
    "FloorReport",
    "FloorSet",
    "OfftopicQuestion",
    "QueryScore",
    "fit_floor",
    "floor_markdown",
    "index_records",
    "load_offtopic",
    "pass_rate",
    "quantiles",
    "read_records",
    "score_queries",
]

Role = Literal["keep", "reject", "measure"]
OFFTOPIC_KINDS = ("biomedical", "general", "gibberish")
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)

# --- pure: the fit ------------------------------------------------------------------------------


def pass_rate(scores: Sequence[float | None], floor: float) -> float:
    """The share of `scores` at or above `floor` (a missing score never passes)."""
    if not scores:
        raise InvalidRequestError("a pass rate needs at least one score")
    return sum(1 for s in scores if s is not None and s >= floor) / len(scores)


def quantiles(
    scores: Sequence[float | None], at: Sequence[float] = QUANTILES
) -> dict[str, float | None]:
    """Quantiles of the present scores by linear interpolation, keyed `p05`, `p50`..."""
    present = sorted(s for s in scores if s is not None)
    out: dict[str, float | None] = {}
    for q in at:
        key = f"p{round(q * 100):02d}"
        if not present:
            out[key] = None
            continue
        pos = q * (len(present) - 1)
        low = math.floor(pos)
        high = min(low + 1, len(present) - 1)
        out[key] = present[low] + (present[high] - present[low]) * (pos - low)
    return out


def fit_floor(
    keep: Mapping[str, Sequence[float | None]], *, min_keep: float = 0.95, step: float = 0.01
) -> float:
    """The highest multiple of `step` that lets at least `min_keep` of every `keep` set pass.

    Raising the floor never lets more questions through, so this value also turns away the
    most questions of any `reject` set among floors that keep `min_keep`.

    Raises:
        InvalidRequestError: no keep set, an empty one, `min_keep` outside (0, 1] or a step
            outside (0, 1].
    """
    if not keep or any(not scores for scores in keep.values()):
        raise InvalidRequestError("fitting a floor needs questions that must pass")
    if not 0.0 < min_keep <= 1.0 or not 0.0 < step <= 1.0:
        raise InvalidRequestError(f"min_keep and step must be in (0, 1]: {min_keep}, {step}")
    best = -1.0
    for scores in keep.values():
        present = sorted((s for s in scores if s is not None), reverse=True)
        needed = math.ceil(min_keep * len(scores) - 1e-9)
        if needed > len(present):
            raise InvalidRequestError(
                f"no floor keeps {min_keep:.0%}: too many questions have no similarity"
            )
        best = present[needed - 1] if best < 0 else min(best, present[needed - 1])
    grid = math.floor(best / step + 1e-9) * step
    return round(max(0.0, min(1.0, grid)), 6)


# --- the data -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OfftopicQuestion:
    qid: str
    question: str
    kind: str


def load_offtopic(path: Path) -> list[OfftopicQuestion]:
    """Read off-topic questions: one JSON object a line with `id`, `question` and `kind`
    (biomedical, general or gibberish).

    Raises:
        EvaluationDataError: a missing file or a malformed line (its number is given).
    """
    path = Path(path)
    if not path.is_file():
        raise EvaluationDataError(f"{path} not found")
    found: list[OfftopicQuestion] = []
    for number, item in read_jsonl(path):
        where = f"{path}:{number}"
        extra = set(item) - {"id", "question", "kind"}
        if extra:
            raise EvaluationDataError(f"{where}: unknown fields {', '.join(sorted(extra))}")
        question = str(item.get("question") or "").strip()
        if not question:
            raise EvaluationDataError(f"{where}: question is missing")
        kind = str(item.get("kind") or "biomedical")
        if kind not in OFFTOPIC_KINDS:
            raise EvaluationDataError(f"{where}: kind {kind!r} is not one of {OFFTOPIC_KINDS}")
        found.append(OfftopicQuestion(str(item.get("id") or f"o{number}"), question, kind))
    if not found:
        raise EvaluationDataError(f"{path}: no questions")
    return found


def read_records(path: Path) -> list[PubMedRecord]:
    """The records of a PubmedArticleSet file (the gold corpus).

    Raises:
        EvaluationDataError: a missing file or one holding no record.
    """
    path = Path(path)
    try:
        parsed = parse_pubmed_articles(path.read_bytes())
    except OSError as exc:
        raise EvaluationDataError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not parsed.records:
        raise EvaluationDataError(f"{path}: no PubMed record")
    return list(parsed.records)


async def index_records(
    vectors: VectorStore, embedder: Embedder, collection: str, records: Sequence[PubMedRecord]
) -> int:
    """Chunk, embed and write `records` into `collection` as a sync does; returns the chunks.

    Raises:
        IndexingError: the store refused chunks. EmbeddingError, VectorStoreError.
    """
    now = datetime.now(UTC)
    docs = []
    for record in records:
        derived = derive_document(record, EVAL_DAY, QualityConfig())
        docs.append(
            StoredDocument(
                record=record,
                evidence=derived.evidence,
                quality=derived.quality,
                content_hash=derived.content_hash,
                version=1,
                indexed_version=0,
                last_seen_at=now,
            )
        )
    outcome = await ChunkIndexer(vectors, embedder, collection=collection).index(docs)
    if outcome.refused:
        raise IndexingError(f"the store refused {len(outcome.refused)} chunks")
    return outcome.chunks_written


# --- scoring questions --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FloorQuery:
    """One question; `leave_out` are doc ids (`pmid:<pmid>`) the search must not return."""

    qid: str
    text: str
    leave_out: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class QueryScore:
    """The best cosine similarity and BM25 score among a question's top hits."""

    qid: str
    sim: float | None
    bm25: float | None


def _best(hits: Sequence[SearchHit]) -> tuple[float | None, float | None]:
    sims = [h.sim for h in hits if h.sim is not None]
    bm25 = [h.bm25 for h in hits if h.bm25 is not None]
    return (max(sims) if sims else None, max(bm25) if bm25 else None)


async def score_queries(
    search: SearchCorpus,
    queries: Sequence[FloorQuery],
    *,
    top_k: int = 10,
    quality_bias: bool = True,
    every_doc: frozenset[str] | None = None,
    progress: Progress | None = None,
) -> list[QueryScore]:
    """Search each question as an agent does and keep its best scores. A question with
    `leave_out` searches `every_doc` without them (`every_doc` is then required).

    Raises:
        InvalidRequestError: `leave_out` without `every_doc`. NotFoundError and the adapters'.
    """
    scores: list[QueryScore] = []
    for number, query in enumerate(queries, start=1):
        filters = None
        if query.leave_out:
            if every_doc is None:
                raise InvalidRequestError("leaving documents out needs the corpus's doc ids")
            filters = SearchFilters(doc_ids=every_doc - query.leave_out)
        hits = await search.ranked(query.text, top_k, quality_bias, filters=filters)
        scores.append(QueryScore(query.qid, *_best(hits)))
        if progress is not None and number % 200 == 0:
            progress(f"{number}/{len(queries)} questions")
    return scores


class FloorEvaluation:
    """Builds the sets of a calibration: each corpus goes into its own collection of
    `vectors`, and each question is searched as `search` configures (collection aside)."""

    def __init__(
        self,
        vectors: VectorStore,
        embedder: Embedder,
        *,
        search: SearchConfig | None = None,
        top_k: int = 10,
        quality_bias: bool = True,
    ) -> None:
        if top_k < 1:
            raise InvalidRequestError(f"top_k must be >= 1, got {top_k}")
        self._vectors = vectors
        self._embedder = embedder
        self._search = search or SearchConfig()
        self.top_k = top_k
        self.quality_bias = quality_bias

    def _corpus(self, collection: str) -> SearchCorpus:
        config = replace(self._search, collection=collection)
        return SearchCorpus(self._vectors, self._embedder, config=config)

    async def _set(
        self,
        name: str,
        role: Role,
        corpus: tuple[str, str],
        queries: Sequence[FloorQuery],
        every_doc: frozenset[str] | None = None,
        progress: Progress | None = None,
    ) -> FloorSet:
        scores = await score_queries(
            self._corpus(corpus[0]),
            queries,
            top_k=self.top_k,
            quality_bias=self.quality_bias,
            every_doc=every_doc,
            progress=progress,
        )
        return FloorSet(name, role, corpus[1], tuple(scores))

    async def gold_sets(
        self,
        records: Sequence[PubMedRecord],
        gold: Sequence[GoldQuestion],
        offtopic: Sequence[OfftopicQuestion],
    ) -> list[FloorSet]:
        """The gold questions (keep) and the off-topic ones (reject, and one set per kind
        measured) asked of the gold corpus."""
        corpus = ("FloorGold", f"gold ({len(records)} records)")
        await index_records(self._vectors, self._embedder, corpus[0], records)
        sets = [
            await self._set("gold", "keep", corpus, [FloorQuery(q.qid, q.question) for q in gold]),
            await self._set(
                "offtopic", "reject", corpus, [FloorQuery(q.qid, q.question) for q in offtopic]
            ),
        ]
        by_id = {s.qid: s for s in sets[1].scores}
        for kind in OFFTOPIC_KINDS:
            mine = tuple(by_id[q.qid] for q in offtopic if q.kind == kind)
            if mine and len(mine) < len(offtopic):
                sets.append(FloorSet(f"offtopic/{kind}", "measure", corpus[1], mine))
        return sets

    async def scifact_sets(
        self, dataset: BeirDataset, progress: Progress | None = None
    ) -> list[FloorSet]:
        """The split's claims with their relevant documents in the corpus (keep) and with
        them left out by a doc-id filter (measure)."""
        collection = "FloorBeir"
        await BeirEvaluation(
            self._vectors, self._embedder, collection=collection, search=self._search
        ).index(dataset, progress)
        pmids = beir_pmids(d.doc_id for d in dataset.documents)
        every_doc = frozenset(f"pmid:{p}" for p in pmids.values())
        corpus = (collection, f"{dataset.name} ({len(pmids)} documents)")
        present, absent = [], []
        for qid, text in dataset.queries.items():
            relevant = {d for d, grade in dataset.qrels[qid].items() if grade > 0}
            held = frozenset(f"pmid:{pmids[d]}" for d in relevant if d in pmids)
            present.append(FloorQuery(qid, text))
            if held:
                absent.append(FloorQuery(qid, text, held))
        name = f"{dataset.name}-{dataset.split}"
        return [
            await self._set(f"{name}/with", "keep", corpus, present, None, progress),
            await self._set(f"{name}/without", "measure", corpus, absent, every_doc, progress),
        ]


# --- the report ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FloorSet:
    name: str
    role: Role
    corpus: str
    scores: tuple[QueryScore, ...]

    @property
    def sims(self) -> list[float | None]:
        return [s.sim for s in self.scores]

    def as_dict(self, floor: float, *, per_query: bool = False) -> dict[str, Any]:
        passed = pass_rate(self.sims, floor)
        out: dict[str, Any] = {
            "name": self.name,
            "role": self.role,
            "corpus": self.corpus,
            "questions": len(self.scores),
            "pass_rate": round(passed, 4),
            "nothing_relevant_rate": round(1 - passed, 4),
            "sim_quantiles": _rounded(quantiles(self.sims)),
            "bm25_quantiles": _rounded(quantiles([s.bm25 for s in self.scores])),
        }
        if per_query:
            out["per_query"] = {
                s.qid: _rounded({"sim": s.sim, "bm25": s.bm25}) for s in self.scores
            }
        return out


def _rounded(values: Mapping[str, float | None]) -> dict[str, float | None]:
    return {k: None if v is None else round(v, 4) for k, v in values.items()}


@dataclass(frozen=True, slots=True)
class FloorReport:
    model_id: str
    top_k: int
    min_keep: float
    sets: tuple[FloorSet, ...]
    warnings: tuple[str, ...] = field(default=())

    @property
    def floor(self) -> float:
        """The fitted floor: see `fit_floor`."""
        keep = {s.name: s.sims for s in self.sets if s.role == "keep"}
        return fit_floor(keep, min_keep=self.min_keep)

    def as_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        floor = self.floor
        RelevanceFloor(floor)  # a fitted value is always a valid floor
        return {
            "kind": "floor",
            "embedder": self.model_id,
            "top_k": self.top_k,
            "min_keep": self.min_keep,
            "floor": floor,
            "sets": [s.as_dict(floor, per_query=per_query) for s in self.sets],
            "warnings": list(self.warnings),
        }


def floor_markdown(report: Mapping[str, Any]) -> str:
    """A short markdown summary of a floor report (`FloorReport.as_dict()`)."""
    head = f"# Relevance floor for `{report['embedder']}`: {report['floor']:.2f}"
    setup = (
        f"Best cosine similarity among each question's top {report['top_k']} hits (hybrid, "
        f"quality rerank). The floor is the highest that lets at least "
        f"{report['min_keep']:.0%} of every keep set pass."
    )
    keys = [f"p{round(q * 100):02d}" for q in QUANTILES]
    lines = [
        "| set | role | corpus | questions | pass | nothing relevant | "
        + " | ".join(f"sim {k}" for k in keys)
        + " |",
        "|---|---|---|--:|--:|--:|" + "--:|" * len(keys),
    ]
    for s in report["sets"]:
        sims = [s["sim_quantiles"][k] for k in keys]
        cells = [
            s["name"],
            s["role"],
            s["corpus"],
            str(s["questions"]),
            f"{s['pass_rate']:.1%}",
            f"{s['nothing_relevant_rate']:.1%}",
            *("-" if v is None else f"{v:.3f}" for v in sims),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    notes = [f"- {w}" for w in report.get("warnings", [])]
    return (
        "\n\n".join([head, setup, "\n".join(lines), *(["\n".join(notes)] if notes else [])]) + "\n"
    )

"""Gold questions: hand-written questions per topic asked of the synced corpus.

Each question has an intent (efficacy, safety, mechanism, other), the PMIDs or chunks that
answer it and optionally `must_have_numeric`. `GoldEvaluation` reports Recall@K, the share of
results that carry a numeric claim for efficacy questions, whether a numeric chunk of an
expected document was found when one is required and whether the answer came first (the
rank-1 hit is an expected chunk, or a numeric chunk of an expected paper), and the clinical
vs preclinical/basic balance of the top documents (spec 03 section 12), over all questions,
by topic and by question kind (intent).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biomcp.domain.numeric import has_numeric_result
from biomcp.eval.data import PMID_PATTERN, EvaluationDataError, read_jsonl
from biomcp.usecases.search import SearchCorpus, SearchHit

__all__ = [
    "INTENTS",
    "GoldEvaluation",
    "GoldQuestion",
    "GoldReport",
    "GoldResult",
    "load_gold",
]

INTENTS = ("efficacy", "safety", "mechanism", "other")


@dataclass(frozen=True, slots=True)
class GoldQuestion:
    """One gold question. `expected_chunks` are `<pmid>:<chunk_id>` (e.g. `31000002:s2_0`)."""

    qid: str
    topic: str
    question: str
    intent: str
    expected_pmids: tuple[str, ...] = ()
    expected_chunks: tuple[str, ...] = ()
    must_have_numeric: bool = False

    @property
    def expected(self) -> frozenset[str]:
        """What must be found, as keys: `pmid:<pmid>` and `<pmid>:<chunk_id>`."""
        return frozenset(f"pmid:{p}" for p in self.expected_pmids) | frozenset(self.expected_chunks)


_GOLD_FIELDS = frozenset(
    {"id", "topic", "question", "intent", "expected_pmids", "expected_chunks", "must_have_numeric"}
)
_CHUNK_KEY = re.compile(r"[1-9][0-9]{0,9}:[A-Za-z0-9_]+")


def _strings(value: object, where: str, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str | int) for v in value):
        raise EvaluationDataError(f"{where}: {name} must be a list of strings")
    return tuple(str(v).strip() for v in value)


def load_gold(path: Path) -> list[GoldQuestion]:
    """Read a gold JSONL file: one object per line with `question`, `intent` (efficacy,
    safety, mechanism, other), `expected_pmids` and/or `expected_chunks`, and optionally
    `topic`, `id` and `must_have_numeric`.

    Raises:
        EvaluationDataError: a missing file or a malformed line (its number is given).
    """
    path = Path(path)
    if not path.is_file():
        raise EvaluationDataError(f"{path} not found")
    questions: list[GoldQuestion] = []
    for number, item in read_jsonl(path):
        where = f"{path}:{number}"
        extra = set(item) - _GOLD_FIELDS
        if extra:
            raise EvaluationDataError(f"{where}: unknown fields {', '.join(sorted(extra))}")
        question = str(item.get("question") or "").strip()
        if not question:
            raise EvaluationDataError(f"{where}: question is missing")
        intent = str(item.get("intent") or "other").strip().lower()
        if intent not in INTENTS:
            raise EvaluationDataError(f"{where}: intent {intent!r} is not one of {INTENTS}")
        pmids = _strings(item.get("expected_pmids"), where, "expected_pmids")
        chunks = _strings(item.get("expected_chunks"), where, "expected_chunks")
        bad = [p for p in pmids if not PMID_PATTERN.fullmatch(p)] + [
            c for c in chunks if not _CHUNK_KEY.fullmatch(c)
        ]
        if bad:
            raise EvaluationDataError(f"{where}: malformed PMID or chunk id {bad[0]!r}")
        if not pmids and not chunks:
            raise EvaluationDataError(f"{where}: give expected_pmids or expected_chunks")
        numeric = item.get("must_have_numeric", False)
        if not isinstance(numeric, bool):
            raise EvaluationDataError(f"{where}: must_have_numeric must be true or false")
        questions.append(
            GoldQuestion(
                qid=str(item.get("id") or f"q{number}"),
                topic=str(item.get("topic") or "default"),
                question=question,
                intent=intent,
                expected_pmids=pmids,
                expected_chunks=chunks,
                must_have_numeric=numeric,
            )
        )
    if not questions:
        raise EvaluationDataError(f"{path}: no questions")
    return questions


@dataclass(frozen=True, slots=True)
class GoldResult:
    question: GoldQuestion
    recall: float
    found: tuple[str, ...]
    missing: tuple[str, ...]
    numeric_share: float
    numeric_found: bool | None
    evidence: dict[str, int]
    answer_at_1: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        q = self.question
        return {
            "id": q.qid,
            "topic": q.topic,
            "intent": q.intent,
            "question": q.question,
            "recall": round(self.recall, 4),
            "found": list(self.found),
            "missing": list(self.missing),
            "numeric_share": round(self.numeric_share, 4),
            "numeric_found": self.numeric_found,
            "answer_at_1": self.answer_at_1,
            "evidence": self.evidence,
        }


def _summary(results: Sequence[GoldResult]) -> dict[str, Any]:
    efficacy = [r.numeric_share for r in results if r.question.intent == "efficacy"]
    required = [r.numeric_found for r in results if r.numeric_found is not None]
    first = [float(r.answer_at_1) for r in results if r.answer_at_1 is not None]
    counts: dict[str, int] = {}
    for r in results:
        for kind, n in r.evidence.items():
            counts[kind] = counts.get(kind, 0) + n
    total = sum(counts.values())
    share = {k: round(v / total, 4) for k, v in sorted(counts.items())} if total else {}
    mixed = [
        r
        for r in results
        if r.evidence.get("clinical") and (r.evidence.get("preclinical") or r.evidence.get("basic"))
    ]

    def mean(values: Sequence[float]) -> float | None:
        return round(math.fsum(values) / len(values), 4) if values else None

    return {
        "questions": len(results),
        "recall": mean([r.recall for r in results]),
        "numeric_share_efficacy": mean(efficacy),
        "numeric_found": mean([float(x) for x in required if x is not None]),
        "answer_at_1": mean(first),
        "evidence_share": share,
        "clinical_share": share.get("clinical", 0.0),
        "basic_share": round(share.get("basic", 0.0) + share.get("preclinical", 0.0), 4),
        "mixed_share": round(len(mixed) / len(results), 4) if results else None,
    }


@dataclass(frozen=True, slots=True)
class GoldReport:
    top_k: int
    quality_bias: bool
    results: tuple[GoldResult, ...]
    seconds: float

    def by_topic(self) -> dict[str, list[GoldResult]]:
        topics: dict[str, list[GoldResult]] = {}
        for r in self.results:
            topics.setdefault(r.question.topic, []).append(r)
        return topics

    def by_intent(self) -> dict[str, list[GoldResult]]:
        """Results by question kind (spec 03 section 12: mechanism, efficacy, safety), in the
        order of `INTENTS`."""
        intents: dict[str, list[GoldResult]] = {i: [] for i in INTENTS}
        for r in self.results:
            intents[r.question.intent].append(r)
        return {i: rs for i, rs in intents.items() if rs}

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": "gold",
            "top_k": self.top_k,
            "quality_bias": self.quality_bias,
            "seconds": round(self.seconds, 3),
            "overall": _summary(self.results),
            "topics": {t: _summary(rs) for t, rs in sorted(self.by_topic().items())},
            "intents": {i: _summary(rs) for i, rs in self.by_intent().items()},
            "questions": [r.as_dict() for r in self.results],
        }


class GoldEvaluation:
    """Asks each gold question of the corpus through `search.run` (`top_k` chunks, with or
    without the quality bias) and scores what came back."""

    def __init__(self, search: SearchCorpus, *, top_k: int = 10, quality_bias: bool = True):
        self._search = search
        self.top_k = top_k
        self.quality_bias = quality_bias

    async def run(self, questions: Sequence[GoldQuestion]) -> GoldReport:
        """Raises: InvalidRequestError, NotFoundError (empty corpus), and the adapters'."""
        began = time.perf_counter()
        results = [await self._ask(q) for q in questions]
        return GoldReport(
            self.top_k, self.quality_bias, tuple(results), time.perf_counter() - began
        )

    async def _ask(self, question: GoldQuestion) -> GoldResult:
        hits = await self._search.run(question.question, self.top_k, self.quality_bias)
        keys: list[str] = []
        numeric_keys: set[str] = set()
        for hit in hits:
            pmid = hit.doc_id.removeprefix("pmid:")
            chunk_key = f"{pmid}:{hit.chunk_id}"
            keys += [hit.doc_id, chunk_key]
            if has_numeric_result(hit.text or ""):
                numeric_keys.update((hit.doc_id, chunk_key))
        expected = question.expected
        found = sorted(expected & set(keys))
        evidence: dict[str, int] = {}
        first: dict[str, SearchHit] = {}
        for hit in hits:
            first.setdefault(hit.doc_id, hit)
        for hit in first.values():
            kind = hit.evidence_type or "other"
            evidence[kind] = evidence.get(kind, 0) + 1
        numeric_found = bool(expected & numeric_keys) if question.must_have_numeric else None
        answer_at_1 = _answer_first(question, hits) if question.must_have_numeric else None
        share = (
            sum(1 for h in hits if has_numeric_result(h.text or "")) / len(hits) if hits else 0.0
        )
        return GoldResult(
            question=question,
            recall=len(found) / len(expected),
            found=tuple(found),
            missing=tuple(sorted(expected - set(found))),
            numeric_share=share,
            numeric_found=numeric_found,
            evidence=dict(sorted(evidence.items())),
            answer_at_1=answer_at_1,
        )


def _answer_first(question: GoldQuestion, hits: Sequence[SearchHit]) -> bool:
    """Whether the rank-1 hit answers: an expected chunk, or a chunk of an expected paper
    that carries a numeric result."""
    if not hits:
        return False
    top = hits[0]
    pmid = top.doc_id.removeprefix("pmid:")
    if f"{pmid}:{top.chunk_id}" in question.expected_chunks:
        return True
    return pmid in question.expected_pmids and has_numeric_result(top.text or "")

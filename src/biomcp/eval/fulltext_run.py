"""Asking the full-text gold questions of a synced corpus (`eval.fulltext_gold` holds them).

Each question is asked once through `SearchCorpus.search` (chunk results, the default ranking).
Two figures per question:

* `answer_found`: one of the top `top_k` chunks carries every answer term (the chunk that
  answers it was found);
* `paper_found`: a chunk of the question's paper is among the top `top_k` (the paper was
  found, whatever chunk it gave).

`FullTextGoldReport.summary` gives recall@k of both, overall and by where the answer sits
(methods, results, table...).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from biomcp.eval.fulltext_gold import FullTextQuestion, answer_found
from biomcp.usecases.search import SearchCorpus
from biomcp.usecases.search_filters import with_source

__all__ = ["FullTextGoldReport", "FullTextResult", "ask_fulltext_questions"]


@dataclass(frozen=True, slots=True)
class FullTextResult:
    """One question's outcome: whether the answer and the paper were in the top k, and the
    rank (1-based) of the first chunk carrying the answer (None: not in the top k)."""

    question: FullTextQuestion
    answer_found: bool
    paper_found: bool
    answer_rank: int | None


@dataclass(frozen=True, slots=True)
class FullTextGoldReport:
    top_k: int
    results: tuple[FullTextResult, ...]

    def summary(self) -> dict[str, Any]:
        """Recall@k of the answer and of the paper, overall and by `where`."""
        groups: dict[str, list[FullTextResult]] = {}
        for result in self.results:
            groups.setdefault(result.question.where, []).append(result)
        return {
            "questions": len(self.results),
            "top_k": self.top_k,
            "overall": _recall(self.results),
            "by_where": {where: _recall(found) for where, found in sorted(groups.items())},
            "missed": sorted(r.question.qid for r in self.results if not r.answer_found),
        }


def _recall(results: Sequence[FullTextResult]) -> dict[str, float]:
    count = len(results) or 1
    return {
        "answer_recall": round(sum(r.answer_found for r in results) / count, 4),
        "paper_recall": round(sum(r.paper_found for r in results) / count, 4),
    }


async def ask_fulltext_questions(
    search: SearchCorpus,
    questions: Sequence[FullTextQuestion],
    *,
    top_k: int = 10,
    source: str | None = None,
) -> FullTextGoldReport:
    """Ask every question of `search` (restricted to one `source` when given)."""
    results: list[FullTextResult] = []
    for question in questions:
        outcome = await search.search(question.question, top_k, filters=with_source(None, source))
        hits = outcome.hits[:top_k]
        rank = next(
            (i for i, hit in enumerate(hits, 1) if answer_found([hit.text or ""], question)),
            None,
        )
        paper = any(hit.doc_id == f"pmid:{question.pmid}" for hit in hits)
        results.append(FullTextResult(question, rank is not None, paper, rank))
    return FullTextGoldReport(top_k, tuple(results))

"""Paper-level results: ranked chunk hits grouped into one result per paper.

A paper ranks where its best chunk ranks, and its score is that chunk's score. It carries the
chunk that matched best first, then its other ranked chunks in rank order (those that pass the
relevance floor, when there is one), up to a cap. The grouping is a pure function.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from biomcp.usecases.search_hits import SearchHit

if TYPE_CHECKING:
    from biomcp.domain.relevance import RelevanceFloor

__all__ = [
    "CHUNKS_PER_PAPER",
    "GROUPINGS",
    "GroupBy",
    "PaperHit",
    "SearchOutcome",
    "group_by_paper",
    "nothing_relevant_message",
]

#: The most chunks one paper result carries by default (its best one included).
CHUNKS_PER_PAPER = 3
GroupBy = Literal["chunk", "paper"]
GROUPINGS: Final[tuple[GroupBy, ...]] = ("chunk", "paper")


@dataclass(frozen=True, slots=True)
class PaperHit:
    """One paper of a search: its chunks among the ranked candidates, the best first."""

    doc_id: str
    chunks: tuple[SearchHit, ...]

    def __post_init__(self) -> None:
        if not self.chunks:
            raise ValueError("a paper result needs at least its best chunk")

    @property
    def best(self) -> SearchHit:
        """The chunk that matched best: it places the paper in the ranking."""
        return self.chunks[0]

    @property
    def score(self) -> float:
        return self.best.score

    def as_payload(self) -> dict[str, Any]:
        """One `rag.search` result of a paper search: its best chunk's fields, then the paper's
        other chunks (`other_chunks`, best first)."""
        return {
            **self.best.as_payload(),
            "other_chunks": [_chunk_payload(hit) for hit in self.chunks[1:]],
        }


def group_by_paper(
    hits: Sequence[SearchHit],
    *,
    limit: int | None = None,
    chunks_per_paper: int = CHUNKS_PER_PAPER,
    floor: RelevanceFloor | None = None,
) -> list[PaperHit]:
    """`hits` (best first) as one result per paper, in the order of each paper's best chunk.

    A paper's best chunk is always kept; its other chunks are kept in rank order when they pass
    `floor` (all of them without one), at most `chunks_per_paper` in all. `limit` None: every
    paper. Hits of equal score keep their order.

    Raises:
        ValueError: `chunks_per_paper` or `limit` below 1.
    """
    if chunks_per_paper < 1:
        raise ValueError(f"chunks_per_paper must be >= 1, got {chunks_per_paper}")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    grouped: dict[str, list[SearchHit]] = {}
    for hit in hits:
        chunks = grouped.get(hit.doc_id)
        if chunks is None:
            if limit is not None and len(grouped) == limit:
                continue
            grouped[hit.doc_id] = [hit]
        elif len(chunks) < chunks_per_paper and (floor is None or floor.passes(hit.sim, hit.bm25)):
            chunks.append(hit)
    return [PaperHit(doc_id, tuple(chunks)) for doc_id, chunks in grouped.items()]


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    """A search's answer: its chunks, its papers (None for a chunk search) and the relevance
    verdict. `nothing_relevant` is None when no floor applies: then nothing is judged."""

    hits: tuple[SearchHit, ...]
    papers: tuple[PaperHit, ...] | None
    nothing_relevant: bool | None
    best_sim: float | None
    floor: float | None

    @classmethod
    def judged(
        cls,
        hits: Sequence[SearchHit],
        papers: Sequence[PaperHit] | None,
        floor: RelevanceFloor | None,
    ) -> SearchOutcome:
        """The outcome of `hits`, judged by `floor`: nothing is relevant when no hit passes."""
        sims = [hit.sim for hit in hits if hit.sim is not None]
        verdict = None if floor is None else not any(floor.passes(h.sim, h.bm25) for h in hits)
        return cls(
            hits=tuple(hits),
            papers=None if papers is None else tuple(papers),
            nothing_relevant=verdict,
            best_sim=max(sims, default=None),
            floor=None if floor is None else floor.min_sim,
        )

    @property
    def results(self) -> tuple[SearchHit, ...] | tuple[PaperHit, ...]:
        """The papers of a paper search, else the chunks."""
        return self.hits if self.papers is None else self.papers

    @property
    def warnings(self) -> list[str]:
        """The words an agent or a reader needs: nothing relevant, when that is the verdict."""
        if not self.nothing_relevant:
            return []
        return [nothing_relevant_message(self.best_sim, self.floor)]

    def as_payload(self) -> dict[str, Any]:
        """The `rag.search` answer (v1.1): results, `nothing_relevant` (false when nothing is
        judged) and `warnings`."""
        return {
            "results": [result.as_payload() for result in self.results],
            "nothing_relevant": bool(self.nothing_relevant),
            "warnings": self.warnings,
        }


def nothing_relevant_message(best_sim: float | None, floor: float | None) -> str:
    """The sentence saying a search found nothing relevant, with the figures it rests on."""
    best = "no hit" if best_sim is None else f"best similarity {best_sim:.2f}"
    limit = "" if floor is None else f", floor {floor:.2f}"
    return (
        f"Nothing in the corpus looks relevant to this question ({best}{limit}): the results "
        "are only the closest. Search PubMed live, or sync a query on this topic."
    )


def _chunk_payload(hit: SearchHit) -> dict[str, Any]:
    """A paper's other chunk: what tells it apart from the paper's best chunk."""
    return {
        "chunk_id": hit.chunk_id,
        "section": hit.section,
        "text": hit.text,
        "score": hit.score,
        "sim": hit.sim,
    }

"""Neighbour smoothing over a ranked list of chunks: papers move as one, chunks keep their
order within their paper, and the answer chunk numbers-first put first stays first."""

from __future__ import annotations

import pytest

from biomcp.ports.vectors import VectorHit
from biomcp.usecases.ranking import Reranked, neighbour_chunks, neighbour_smoothed

pytestmark = pytest.mark.unit

# Papers 1 and 2 share a topic; 3 is alone near the top, and its only look-alike (4) ranks last.
VECTORS = {
    "1-a": [1.0, 0.0, 0.0],
    "1-b": [0.9, 0.1, 0.0],
    "2-a": [0.95, 0.05, 0.0],
    "3-a": [0.0, 0.1, 1.0],
    "4-a": [0.0, 0.3, 0.9],
}


def entry(uuid: str, score: float) -> Reranked:
    doc = uuid.split("-")[0]
    return Reranked(VectorHit(uuid=uuid, doc_id=f"pmid:{doc}", chunk_id=uuid, score=score), score)


def uuids(ranked: list[Reranked]) -> list[str]:
    return [r.hit.uuid for r in ranked]


RANKED = [entry("3-a", 1.0), entry("1-a", 0.95), entry("2-a", 0.9), entry("1-b", 0.5)]
RANKED += [entry("4-a", 0.1)]


def test_a_paper_alone_at_the_top_falls_below_papers_that_rank_high_together() -> None:
    smoothed = neighbour_smoothed(RANKED, VECTORS, share=0.2)
    assert uuids(smoothed) == ["1-a", "2-a", "3-a", "1-b", "4-a"]
    assert smoothed[0].score == pytest.approx(0.8 * 0.95 + 0.2 * 0.9)


def test_every_chunk_of_a_paper_moves_by_the_same_amount() -> None:
    smoothed = {r.hit.uuid: r.score for r in neighbour_smoothed(RANKED, VECTORS, share=0.2)}
    before = {r.hit.uuid: r.score for r in RANKED}
    assert smoothed["1-a"] - before["1-a"] == pytest.approx(smoothed["1-b"] - before["1-b"])


def test_a_paper_keeps_the_order_of_its_chunks_even_against_their_scores() -> None:
    # numbers first put 1-b (a Results chunk) first; scores stay with positions, so they tie
    ranked = [entry("1-b", 0.95), entry("1-a", 0.95), entry("2-a", 0.9), entry("3-a", 0.2)]
    smoothed = neighbour_smoothed(ranked, VECTORS, share=0.2)
    papers_first = [u for u in uuids(smoothed) if u.startswith("1-")]
    assert papers_first == ["1-b", "1-a"]


def test_no_share_or_no_vectors_leave_the_ranking_as_it_was() -> None:
    assert neighbour_smoothed(RANKED, VECTORS, share=0.0) == RANKED
    assert neighbour_smoothed(RANKED, {}, share=0.2) == RANKED


def test_the_vectors_read_are_those_of_the_best_papers_chunks() -> None:
    assert neighbour_chunks(RANKED, papers=2) == ["3-a", "1-a", "1-b"]
    assert neighbour_chunks(RANKED) == uuids(RANKED)

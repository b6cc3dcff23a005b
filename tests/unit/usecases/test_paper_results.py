"""Paper-level results: ranked chunks grouped into one result per paper, and the verdict."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.relevance import RelevanceFloor
from biomcp.usecases.paper_results import (
    PaperHit,
    SearchOutcome,
    group_by_paper,
    nothing_relevant_message,
)
from biomcp.usecases.search import SearchHit

pytestmark = pytest.mark.unit


def hit(doc: str, chunk: str, score: float, sim: float | None = 0.5) -> SearchHit:
    return SearchHit(
        doc_id=f"pmid:{doc}",
        uuid=f"uuid-{doc}-{chunk}",
        chunk_id=chunk,
        score=score,
        fused=score,
        sim=sim,
        bm25=None,
        quality=None,
        evidence_type=None,
        section=chunk.upper(),
        text=f"{doc} {chunk}",
        year=None,
        journal=None,
    )


RANKED = [
    hit("1", "results", 0.9),
    hit("2", "methods", 0.8),
    hit("1", "background", 0.7),
    hit("3", "results", 0.6),
    hit("1", "conclusions", 0.5),
    hit("2", "results", 0.4),
    hit("1", "methods", 0.3),
]


def test_papers_come_once_each_in_the_order_of_their_best_chunk() -> None:
    papers = group_by_paper(RANKED)
    assert [p.doc_id for p in papers] == ["pmid:1", "pmid:2", "pmid:3"]
    assert [p.score for p in papers] == [0.9, 0.8, 0.6]


def test_a_paper_carries_its_best_chunk_first_then_its_others_in_rank_order() -> None:
    first = group_by_paper(RANKED)[0]
    assert first.best.chunk_id == "results"
    assert [c.chunk_id for c in first.chunks] == ["results", "background", "conclusions"]


def test_the_cap_counts_the_best_chunk_and_limit_counts_papers() -> None:
    papers = group_by_paper(RANKED, chunks_per_paper=2, limit=2)
    assert [p.doc_id for p in papers] == ["pmid:1", "pmid:2"]
    assert [len(p.chunks) for p in papers] == [2, 2]
    assert [len(p.chunks) for p in group_by_paper(RANKED, chunks_per_paper=1)] == [1, 1, 1]


def test_other_chunks_below_the_floor_are_left_out_but_a_best_chunk_never_is() -> None:
    ranked = [hit("1", "a", 0.9, sim=0.1), hit("1", "b", 0.8, sim=0.6), hit("1", "c", 0.7, 0.2)]
    (paper,) = group_by_paper(ranked, floor=RelevanceFloor(0.5))
    assert [c.chunk_id for c in paper.chunks] == ["a", "b"]


def test_equal_scores_keep_their_order() -> None:
    tied = [hit("9", "a", 0.5), hit("4", "a", 0.5), hit("7", "a", 0.5)]
    assert [p.doc_id for p in group_by_paper(tied)] == ["pmid:9", "pmid:4", "pmid:7"]


def test_bad_caps_are_refused() -> None:
    with pytest.raises(ValueError, match="chunks_per_paper"):
        group_by_paper(RANKED, chunks_per_paper=0)
    with pytest.raises(ValueError, match="limit"):
        group_by_paper(RANKED, limit=0)
    with pytest.raises(ValueError, match="best chunk"):
        PaperHit("pmid:1", ())


docs = st.sampled_from(["1", "2", "3", "4", "5"])


@given(st.lists(st.tuples(docs, st.floats(0, 1)), max_size=30), st.integers(1, 4))
def test_grouping_keeps_every_paper_once_and_only_chunks_it_was_given(
    pairs: list[tuple[str, float]], cap: int
) -> None:
    ranked = [hit(doc, f"c{i}", 1.0 - i / 100) for i, (doc, _) in enumerate(pairs)]
    papers = group_by_paper(ranked, chunks_per_paper=cap)
    assert [p.doc_id for p in papers] == list(dict.fromkeys(h.doc_id for h in ranked))
    for paper in papers:
        own = [h for h in ranked if h.doc_id == paper.doc_id]
        assert list(paper.chunks) == own[:cap]


def test_a_paper_payload_is_its_best_chunk_with_the_others_beside_it() -> None:
    payload = group_by_paper(RANKED)[0].as_payload()
    assert payload["chunk_id"] == "results"
    assert payload["doc_id"] == "pmid:1"
    assert [c["chunk_id"] for c in payload["other_chunks"]] == ["background", "conclusions"]


def test_nothing_is_relevant_when_no_hit_passes_the_floor() -> None:
    hits = [hit("1", "a", 0.9, sim=0.21), hit("2", "a", 0.8, sim=None)]
    outcome = SearchOutcome.judged(hits, None, RelevanceFloor(0.3))
    assert outcome.nothing_relevant is True
    assert outcome.best_sim == 0.21
    assert outcome.warnings == [nothing_relevant_message(0.21, 0.3)]
    assert "best similarity 0.21, floor 0.30" in outcome.warnings[0]
    payload = outcome.as_payload()
    assert payload["nothing_relevant"] is True
    assert [r["chunk_id"] for r in payload["results"]] == ["a", "a"]


def test_one_hit_over_the_floor_is_enough() -> None:
    hits = [hit("1", "a", 0.9, sim=0.1), hit("2", "a", 0.8, sim=0.31)]
    outcome = SearchOutcome.judged(hits, None, RelevanceFloor(0.3))
    assert outcome.nothing_relevant is False
    assert outcome.warnings == []


def test_without_a_floor_nothing_is_judged() -> None:
    outcome = SearchOutcome.judged([hit("1", "a", 0.9, sim=0.01)], None, None)
    assert outcome.nothing_relevant is None
    assert outcome.floor is None
    assert outcome.as_payload()["nothing_relevant"] is False
    assert outcome.warnings == []


def test_an_empty_search_under_a_floor_found_nothing_relevant() -> None:
    outcome = SearchOutcome.judged([], [], RelevanceFloor(0.3))
    assert outcome.nothing_relevant is True
    assert outcome.best_sim is None
    assert "no hit" in outcome.warnings[0]
    assert outcome.as_payload()["results"] == []

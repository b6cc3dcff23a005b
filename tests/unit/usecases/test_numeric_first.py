"""Numbers first: a question asking for a figure gets, within each paper, the chunk that carries
one first; paper order, other papers and the scores by position do not move."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.rerank import RerankWeights
from biomcp.ports.vectors import VectorHit
from biomcp.usecases.indexing import SECTION_CATEGORY
from biomcp.usecases.ranking import Reranked, numeric_first, quality_rerank

pytestmark = pytest.mark.unit

NUMERIC = "RESULTS: Weight fell by 14.9% vs 2.4% with placebo (p<0.001)."
PLAIN = "Obesity is a chronic disease with few effective drugs."
QUESTION = "How much weight do adults lose on semaglutide?"


def hit(
    doc: str,
    chunk: str,
    score: float,
    *,
    section: str | None = "BACKGROUND",
    numbers: bool = False,
    category: str | None = None,
) -> VectorHit:
    return VectorHit(
        uuid=f"{doc}-{chunk}",
        doc_id=f"pmid:{doc}",
        chunk_id=chunk,
        score=score,
        text=NUMERIC if numbers else PLAIN,
        section=section,
        quality_total=5.0,
        has_numbers=numbers,
        metadata={SECTION_CATEGORY: category} if category else {},
    )


def order(ranked: Sequence[Reranked]) -> list[str]:
    return [r.hit.uuid for r in ranked]


def ranked_of(*hits: VectorHit) -> list[Reranked]:
    return [Reranked(h, h.score) for h in hits]


def test_the_numeric_results_chunk_takes_its_papers_first_slot() -> None:
    ranked = ranked_of(
        hit("1", "s0_0", 0.9),
        hit("2", "s0_0", 0.8),
        hit("1", "s1_0", 0.7, section="CONCLUSIONS"),
        hit("1", "s2_0", 0.6, section="RESULTS", numbers=True),
        hit("2", "s2_0", 0.5, section="RESULTS", numbers=True),
    )
    out = numeric_first(ranked)
    assert order(out) == ["1-s2_0", "2-s2_0", "1-s0_0", "1-s1_0", "2-s0_0"]
    assert [r.hit.doc_id for r in out] == [r.hit.doc_id for r in ranked]  # paper slots kept
    assert [r.score for r in out] == [0.9, 0.8, 0.7, 0.6, 0.5]  # scores stay with positions


def test_a_results_chunk_is_preferred_to_a_better_ranked_numeric_conclusion() -> None:
    ranked = ranked_of(
        hit("1", "s3_0", 0.9, section="CONCLUSIONS", numbers=True),
        hit("1", "s2_0", 0.8, section="FINDINGS", numbers=True),
    )
    assert order(numeric_first(ranked)) == ["1-s2_0", "1-s3_0"]


def test_numbers_in_background_or_methods_do_not_answer() -> None:
    ranked = ranked_of(
        hit("1", "s2_0", 0.9, section="RESULTS"),
        hit("1", "s0_0", 0.8, section="BACKGROUND", numbers=True),
        hit("1", "s1_0", 0.7, section="MAIN OUTCOME MEASURES", numbers=True),
    )
    assert order(numeric_first(ranked)) == order(ranked)


def test_the_stored_category_names_the_results_of_an_unusual_label() -> None:
    ranked = ranked_of(
        hit("1", "s3_0", 0.9, section="CONCLUSIONS", numbers=True),
        hit("1", "s2_0", 0.8, section="EFFICACY", numbers=True, category="RESULTS"),
    )
    assert order(numeric_first(ranked)) == ["1-s2_0", "1-s3_0"]


def test_an_unstructured_abstract_with_numbers_counts_as_an_answer() -> None:
    ranked = ranked_of(
        hit("1", "w0", 0.9, section=None), hit("1", "w1", 0.8, section=None, numbers=True)
    )
    assert order(numeric_first(ranked)) == ["1-w1", "1-w0"]


def test_the_rerank_puts_numbers_first_only_for_numeric_questions() -> None:
    hits = [
        hit("1", "s0_0", 1.0),
        hit("2", "s0_0", 0.95),
        hit("1", "s2_0", 0.5, section="RESULTS", numbers=True),
    ]
    numeric = quality_rerank(hits, QUESTION)
    assert order(numeric) == ["1-s2_0", "2-s0_0", "1-s0_0"]
    plain = quality_rerank(hits, "Which receptors does semaglutide act on in the brain?")
    assert order(plain) == ["1-s0_0", "2-s0_0", "1-s2_0"]
    off = quality_rerank(hits, QUESTION, weights=RerankWeights(numeric_first=False))
    assert order(off) == order(plain)
    unbiased = quality_rerank(hits, QUESTION, quality_bias=False)
    assert order(unbiased) == order(plain)


_HITS = st.lists(
    st.tuples(st.sampled_from("abcd"), st.booleans(), st.sampled_from(["RESULTS", "BACKGROUND"])),
    max_size=12,
)


@given(_HITS)
def test_numbers_first_only_permutes_within_papers(spec: list[tuple[str, bool, str]]) -> None:
    ranked = ranked_of(
        *(
            hit(doc, f"c{i}", 1.0 - i / 100, section=section, numbers=numbers)
            for i, (doc, numbers, section) in enumerate(spec)
        )
    )
    out = numeric_first(ranked)
    assert sorted(order(out)) == sorted(order(ranked))
    assert [r.hit.doc_id for r in out] == [r.hit.doc_id for r in ranked]
    assert [r.score for r in out] == [r.score for r in ranked]
    for doc in "abcd":
        mine = [r.hit for r in out if r.hit.doc_id == f"pmid:{doc}"]
        if any(h.has_numbers and h.section == "RESULTS" for h in mine):
            assert mine[0].has_numbers
            assert mine[0].section == "RESULTS"
        rest = [h.uuid for h in mine[1:]]
        before = [r.hit.uuid for r in ranked if r.hit.doc_id == f"pmid:{doc}"]
        assert rest == [u for u in before if u != (mine[0].uuid if mine else None)]

"""The ranking rule above the stores: candidate sizing, fusion, exact cosines, the rerank."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.fusion import (
    SENTENCE_SHARE,
    candidate_count,
    dense_score,
    fuse_arms,
    ranked_fusion,
    relative_score_fusion,
)
from biomcp.domain.rerank import RerankWeights
from biomcp.ports.vectors import (
    ArmHit,
    Arms,
    Fusion,
    InvalidVectorError,
    SearchFilters,
    VectorHit,
    VectorStoreError,
    check_unit_vector,
)
from biomcp.usecases.ranking import dense_search, hybrid_search, quality_rerank

pytestmark = pytest.mark.unit

QUERY = [1.0, 0.0]


@dataclass
class ArmsStore:
    """A store whose arms are given: it records the candidate counts it was asked for."""

    keyword: list[ArmHit]
    vector: list[ArmHit]
    #: uuid -> exact cosine to QUERY, as a store computes it from the stored vector
    cosines: dict[str, float]
    quality: dict[str, float] = field(default_factory=dict)
    asked: list[tuple[int, int]] = field(default_factory=list)
    atomic_batches: bool = True
    #: uuid -> its best sentence's cosine to QUERY (the chunks stored with sentence vectors)
    sentences: dict[str, float] = field(default_factory=dict)
    #: the candidates each `sentence_scores` call asked about
    scored: list[set[str]] = field(default_factory=list)

    async def sentence_scores(
        self, collection: str, uuids: Collection[str], vector: Sequence[float]
    ) -> dict[str, float]:
        check_unit_vector(vector, 2)
        self.scored.append(set(uuids))
        return {u: self.sentences[u] for u in uuids if u in self.sentences}

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
        if vector is not None:
            check_unit_vector(vector, 2)
        self.asked.append((keyword_limit, vector_limit))
        run_vector = vector is not None and vector_limit > 0
        return Arms(
            keyword=tuple(self.keyword[:keyword_limit]),
            vector=tuple(self.vector[:vector_limit]) if run_vector else (),
        )

    async def hits(
        self, collection: str, uuids: Collection[str], *, vector: Sequence[float] | None = None
    ) -> list[VectorHit]:
        return [
            VectorHit(
                uuid=u,
                doc_id=f"doc-{u}",
                chunk_id="0",
                score=0.0,
                sim=None if vector is None else self.cosines[u],
                quality_total=self.quality.get(u),
            )
            for u in sorted(uuids)
        ]


def _store() -> ArmsStore:
    return ArmsStore(
        keyword=[ArmHit("c", 12.0), ArmHit("d", 6.0), ArmHit("a", 3.0)],
        vector=[ArmHit("a", 0.9), ArmHit("b", 0.7), ArmHit("c", 0.5)],
        cosines={"a": 0.9, "b": 0.7, "c": 0.5, "d": 0.25},
    )


def _search(store: ArmsStore, **kw: object) -> list[VectorHit]:
    return asyncio.run(hybrid_search(store, "C", "text", kw.pop("vector", QUERY), **kw))  # type: ignore[arg-type]


@pytest.mark.parametrize("fusion", list(Fusion))
def test_hybrid_search_fuses_the_stores_arms_with_the_domain_functions(fusion: Fusion) -> None:
    store = _store()
    hits = _search(store, alpha=0.5, fusion=fusion)
    fuse = relative_score_fusion if fusion is Fusion.RELATIVE_SCORE else ranked_fusion
    expected = fuse(store.vector, store.keyword, 0.5)
    assert [(h.uuid, h.score) for h in hits] == expected


def test_every_hit_reports_both_raw_scores_and_an_exact_cosine() -> None:
    hits = {h.uuid: h for h in _search(_store(), alpha=0.5)}
    assert (hits["d"].bm25, hits["d"].sim) == (6.0, 0.25)  # keyword only: cosine from the store
    assert (hits["b"].bm25, hits["b"].sim) == (None, 0.7)  # vector only
    assert (hits["c"].bm25, hits["c"].sim) == (12.0, 0.5)


def test_each_arm_takes_the_candidate_count_and_an_arm_of_weight_zero_is_not_run() -> None:
    store = _store()
    _search(store, limit=7, alpha=0.5)
    _search(store, limit=30, alpha=1.0)
    _search(store, limit=7, alpha=0.0)
    _search(store, limit=7, alpha=0.5, vector=None)
    k7, k30 = candidate_count(7), candidate_count(30)
    assert store.asked == [(k7, k7), (0, k30), (k7, 0), (k7, 0)]


def test_a_bm25_only_search_reports_no_cosine() -> None:
    hits = _search(_store(), vector=None)
    assert [h.uuid for h in hits] == ["c", "d", "a"]
    assert all(h.sim is None for h in hits)


def test_the_limit_cuts_the_fused_list_and_zero_finds_nothing() -> None:
    assert len(_search(_store(), limit=2)) == 2
    assert _search(_store(), limit=0) == []


@pytest.mark.parametrize("alpha", [-0.1, 1.5, math.nan])
def test_an_alpha_outside_zero_to_one_is_refused(alpha: float) -> None:
    with pytest.raises(VectorStoreError):
        _search(_store(), alpha=alpha)


def test_an_invalid_query_vector_is_refused_even_when_no_arm_runs() -> None:
    with pytest.raises(InvalidVectorError):
        _search(_store(), vector=[3.0, 0.0], limit=0)


# --- the best-sentence arm ------------------------------------------------------------------


@pytest.mark.parametrize("fusion", list(Fusion))
def test_the_best_sentence_arm_takes_its_share_of_the_vector_weight(fusion: Fusion) -> None:
    store = _store()
    # b's best sentence is the closest; d (BM25 only) has sentences; a and c have none
    store.sentences = {"b": 0.95, "d": 0.6}
    hits = _search(store, alpha=0.6, fusion=fusion)
    assert store.scored == [{"a", "b", "c", "d"}]
    # a and c count as one sentence each: their own cosine from the vector arm
    third = [("b", 0.95), ("a", 0.9), ("d", 0.6), ("c", 0.5)]
    share = 0.6 * SENTENCE_SHARE
    expected = fuse_arms(
        [(0.6 - share, store.vector), (share, third), (0.4, store.keyword)],
        ranked=fusion is Fusion.RANKED,
    )
    assert [(h.uuid, h.score) for h in hits] == expected
    two_arms = _search(_store(), alpha=0.6, fusion=fusion)
    assert [h.uuid for h in two_arms] != [h.uuid for h in hits]  # the arm changes the order


def test_a_chunk_whose_best_sentence_matches_rises_above_its_chunk_cosine() -> None:
    store = _store()
    before = [h.uuid for h in _search(store, alpha=1.0)]
    store.sentences = {"c": 0.99}
    after = [h.uuid for h in _search(store, alpha=1.0)]
    assert before.index("c") > before.index("b")
    assert after.index("c") < after.index("b")


def test_without_sentence_vectors_the_two_arms_fuse_as_before() -> None:
    store = _store()
    hits = _search(store, alpha=0.6)
    assert store.scored == [{"a", "b", "c", "d"}]
    assert [(h.uuid, h.score) for h in hits] == relative_score_fusion(
        store.vector, store.keyword, 0.6
    )


def test_no_sentence_is_scored_without_a_vector_weight_or_a_share() -> None:
    store = _store()
    store.sentences = {"b": 0.95}
    _search(store, alpha=0.0)
    _search(store, vector=None)
    plain = _search(store, alpha=0.6, sentence_share=0.0)
    assert store.scored == []
    assert [(h.uuid, h.score) for h in plain] == relative_score_fusion(
        store.vector, store.keyword, 0.6
    )


@pytest.mark.parametrize("share", [-0.1, 1.5, math.nan])
def test_a_sentence_share_outside_zero_to_one_is_refused(share: float) -> None:
    with pytest.raises(VectorStoreError):
        _search(_store(), sentence_share=share)


# --- vector-only search -------------------------------------------------------------------


def _dense(store: ArmsStore, **kw: object) -> list[VectorHit]:
    return asyncio.run(dense_search(store, "C", kw.pop("vector", QUERY), **kw))  # type: ignore[arg-type]


def test_dense_score_blends_the_best_sentence_and_keeps_a_chunk_without_any() -> None:
    assert dense_score(0.6, None) == 0.6
    assert dense_score(0.6, 0.9, 0.5) == pytest.approx(0.75)
    assert dense_score(0.6, 0.9, 0.0) == 0.6
    assert dense_score(0.6, 0.9, 1.0) == 0.9


def test_dense_search_ranks_by_the_blended_cosine_and_reports_it() -> None:
    store = _store()
    store.sentences = {"c": 0.99, "d": 1.0}  # d is no vector candidate: it stays out
    hits = _dense(store, limit=3)
    assert store.asked == [(0, candidate_count(3))]
    assert store.scored == [{"a", "b", "c"}]
    blended_c = (1 - SENTENCE_SHARE) * 0.5 + SENTENCE_SHARE * 0.99
    assert [(h.uuid, h.score) for h in hits] == [("a", 0.9), ("c", blended_c), ("b", 0.7)]
    assert [h.sim for h in hits] == [0.9, 0.5, 0.7]  # each chunk's own cosine
    assert all(h.bm25 is None for h in hits)


def test_dense_search_without_sentence_vectors_or_share_is_the_chunk_cosine() -> None:
    store = _store()
    plain = [(h.uuid, h.score) for h in _dense(store)]
    assert plain == [("a", 0.9), ("b", 0.7), ("c", 0.5)]
    store.sentences = {"c": 0.99}
    assert [(h.uuid, h.score) for h in _dense(store, sentence_share=0.0)] == plain
    assert len(store.scored) == 1  # only the search with a share asked for sentences


@pytest.mark.parametrize("fusion", list(Fusion))
def test_a_hybrid_search_by_vectors_alone_is_the_dense_search(fusion: Fusion) -> None:
    store = _store()
    store.sentences = {"c": 0.99}
    hybrid = _search(store, alpha=1.0, fusion=fusion, limit=3)
    assert [(h.uuid, h.score, h.sim) for h in hybrid] == [
        (h.uuid, h.score, h.sim) for h in _dense(store, limit=3)
    ]
    assert hybrid[1].score == pytest.approx((1 - SENTENCE_SHARE) * 0.5 + SENTENCE_SHARE * 0.99)


def test_dense_search_limit_zero_finds_nothing_and_a_bad_share_is_refused() -> None:
    assert _dense(_store(), limit=0) == []
    with pytest.raises(VectorStoreError):
        _dense(_store(), sentence_share=1.5)
    with pytest.raises(InvalidVectorError):
        _dense(_store(), vector=[3.0, 0.0])


def _hit(uuid: str, score: float, **fields: object) -> VectorHit:
    return VectorHit(uuid=uuid, doc_id=uuid, chunk_id="0", score=score, **fields)  # type: ignore[arg-type]


def test_the_quality_rerank_lifts_strong_evidence_over_a_slightly_better_fused_score() -> None:
    hits = [_hit("weak", 0.50, quality_total=0.0), _hit("strong", 0.45, quality_total=9.0)]
    ranked = quality_rerank(hits, "metformin in sepsis")
    assert [r.hit.uuid for r in ranked] == ["strong", "weak"]
    assert ranked[0].score == pytest.approx(0.45 * (1 + 0.25 * 0.9))


def test_a_clearly_better_match_stays_ahead_of_stronger_evidence() -> None:
    hits = [_hit("better", 0.70, quality_total=0.0), _hit("strong", 0.45, quality_total=9.0)]
    assert [r.hit.uuid for r in quality_rerank(hits, "metformin in sepsis")] == ["better", "strong"]
    whole = RerankWeights(strength=1.0)  # the spec's untempered rerank passes it
    ranked = quality_rerank(hits, "metformin in sepsis", weights=whole)
    assert [r.hit.uuid for r in ranked] == ["strong", "better"]


def test_without_quality_bias_the_output_score_is_the_fused_score() -> None:
    hits = [_hit("b", 0.5, quality_total=9.0), _hit("a", 0.5), _hit("c", 0.7)]
    ranked = quality_rerank(hits, "q", quality_bias=False, weights=RerankWeights())
    assert [(r.hit.uuid, r.score) for r in ranked] == [("c", 0.7), ("a", 0.5), ("b", 0.5)]


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=16))
def test_check_unit_vector_accepts_exactly_the_unit_vectors(values: list[float]) -> None:
    norm = math.hypot(*values)
    if abs(norm - 1.0) > 1e-3:
        with pytest.raises(InvalidVectorError):
            check_unit_vector(values, len(values))
    else:
        assert check_unit_vector(values, len(values)) == values
    if norm > 1e-300:  # below, subnormal rounding leaves v / norm off unit length
        unit = [v / norm for v in values]
        assert check_unit_vector(unit, len(unit)) == pytest.approx(unit)
        with pytest.raises(InvalidVectorError):
            check_unit_vector(unit, len(unit) + 1)


def test_check_unit_vector_refuses_nan_and_infinity() -> None:
    for bad in ([math.nan, 0.0], [math.inf, 0.0]):
        with pytest.raises(InvalidVectorError):
            check_unit_vector(bad, 2)

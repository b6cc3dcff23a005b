"""The rankings `scifact_variants` compares: the product's rule with one hook changed each.

A ranker takes the corpus's chunks and one query's candidates and returns document ids, best
first. `VARIANTS` names every ranker measured.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from biomcp.domain.fusion import ranked_fusion, relative_score_fusion
from biomcp.domain.quality_bias import tempered_score
from biomcp.domain.rerank import detect_intent, rerank_score
from biomcp.ports.vectors import VectorHit
from biomcp.usecases.ranking import quality_rerank

DEPTH = 200
OVERSAMPLE = 2


@dataclass(frozen=True, slots=True)
class Corpus:
    uuids: list[str]
    doc_ids: list[str]
    quality: list[float | None]
    section: list[str | None]
    evidence_type: list[str | None]
    vectors: np.ndarray


@dataclass(frozen=True, slots=True)
class Candidates:
    """One query: its text, its vector and each arm's (chunk position, raw score), best first."""

    text: str
    vector: np.ndarray
    keyword: list[tuple[int, float]]
    dense: list[tuple[int, float]]


Ranker = Callable[[Corpus, Candidates], list[str]]


def _docs_in_order(corpus: Corpus, positions: list[int]) -> list[str]:
    seen: dict[str, None] = {}
    for p in positions:
        seen.setdefault(corpus.doc_ids[p], None)
    return list(seen)


def _arms(
    corpus: Corpus, cands: Candidates, alpha: float
) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    vec = [(corpus.uuids[p], s) for p, s in cands.dense] if alpha > 0 else []
    kw = [(corpus.uuids[p], s) for p, s in cands.keyword] if alpha < 1 else []
    return vec, kw


def chunk_rule(
    corpus: Corpus,
    cands: Candidates,
    *,
    alpha: float = 0.6,
    rerank: bool = False,
    ranked: bool = False,
    strength: float | None = None,
) -> list[str]:
    """The product today: fuse chunks, keep depth * oversample, rerank, group by best chunk.

    `strength` simulates the hook of a tempered quality bias: each hit's fused score becomes
    `tempered_score(fused, rerank multiplier, strength)` before the product's rerank runs
    without bias."""
    position = {u: i for i, u in enumerate(corpus.uuids)}
    vec, kw = _arms(corpus, cands, alpha)
    fuse = ranked_fusion if ranked else relative_score_fusion
    fused = fuse(vec, kw, alpha)[: DEPTH * OVERSAMPLE]
    hits = [
        VectorHit(
            uuid=u,
            doc_id=corpus.doc_ids[position[u]],
            chunk_id="",
            score=s,
            quality_total=corpus.quality[position[u]],
            section=corpus.section[position[u]],
            evidence_type=corpus.evidence_type[position[u]],
        )
        for u, s in fused
    ]
    if strength is not None:
        mult = _multipliers(corpus, cands.text, [position[h.uuid] for h in hits])
        hits = [
            replace(h, score=tempered_score(h.score, mult[position[h.uuid]], strength))
            for h in hits
        ]
    ranked_hits = quality_rerank(hits, cands.text, quality_bias=rerank)[:DEPTH]
    return _docs_in_order(corpus, [position[r.hit.uuid] for r in ranked_hits])


def _multipliers(corpus: Corpus, text: str, positions: list[int]) -> dict[int, float]:
    intent = detect_intent(text)
    return {
        p: rerank_score(1.0, corpus.quality[p], corpus.section[p], corpus.evidence_type[p], intent)
        for p in positions
    }


#: What a default run measures: the product's four modes and the kept change.
VARIANTS: dict[str, Ranker] = {
    "bm25": partial(chunk_rule, alpha=0.0),
    "vector": partial(chunk_rule, alpha=1.0),
    "hybrid": partial(chunk_rule),
    "hybrid+rerank": partial(chunk_rule, rerank=True),
    "hybrid+tempered0.25": partial(chunk_rule, strength=0.25),
}


# --- exploration: paper-level scoring --------------------------------------------------------


def _normalize(scores: dict[str, float], how: str) -> dict[str, float]:
    if not scores:
        return {}
    values = np.fromiter(scores.values(), dtype=np.float64)
    if how == "minmax":
        low, high = values.min(), values.max()
        span = high - low
        return {k: (v - low) / span if span > 0 else 1.0 for k, v in scores.items()}
    if how == "z":
        mean, std = values.mean(), values.std()
        return {k: (v - mean) / std if std > 0 else 0.0 for k, v in scores.items()}
    if how.startswith("top"):  # min-max with the floor at the n-th best
        n = int(how[3:])
        ordered = np.sort(values)[::-1]
        low = ordered[min(n, len(ordered)) - 1]
        span = ordered[0] - low
        return {k: max(0.0, (v - low) / span) if span > 0 else 1.0 for k, v in scores.items()}
    raise ValueError(how)


def _aggregate(scores: list[float], share: float, how: str = "sum") -> float:
    scores = sorted(scores, reverse=True)
    if how == "sum":
        return scores[0] + share * sum(scores[1:])
    if how == "second":
        return scores[0] + share * (scores[1] if len(scores) > 1 else 0.0)
    raise ValueError(how)


def paper_rule(
    corpus: Corpus,
    cands: Candidates,
    *,
    alpha: float = 0.6,
    share: float = 0.0,
    how: str = "sum",
    level: str = "chunk",
    norm: str = "minmax",
    missing: str = "zero",
    bias: float = 0.0,
    arm_share: float | None = None,
    docvec: float = 0.0,
    docarm: float = 0.0,
) -> list[str]:
    """Paper scores from chunk evidence.

    level "chunk": fuse chunks (norm per arm over chunks), then a paper's score aggregates its
    chunks' fused scores. level "paper": each arm's paper score aggregates its chunks' raw arm
    scores (`arm_share`), then the arms are normalized and fused over papers.
    `bias` scales the quality rerank: final = score * (1 + bias * (multiplier - 1))."""
    doc = corpus.doc_ids
    kw = dict(cands.keyword) if alpha < 1 else {}
    vec = dict(cands.dense) if alpha > 0 else {}
    if level == "chunk":
        nv = _normalize({str(p): s for p, s in vec.items()}, norm)
        nk = _normalize({str(p): s for p, s in kw.items()}, norm)
        lo_v = min(nv.values(), default=0.0) if missing == "min" else 0.0
        lo_k = min(nk.values(), default=0.0) if missing == "min" else 0.0
        per_doc: dict[str, list[float]] = {}
        best_chunk: dict[str, int] = {}
        for key in nv.keys() | nk.keys():
            fused = alpha * nv.get(key, lo_v) + (1 - alpha) * nk.get(key, lo_k)
            p = int(key)
            per_doc.setdefault(doc[p], []).append(fused)
            if doc[p] not in best_chunk or fused > max(per_doc[doc[p]][:-1], default=-1e9):
                best_chunk[doc[p]] = p
        papers = {d: _aggregate(s, share, how) for d, s in per_doc.items()}
    else:
        a_share = share if arm_share is None else arm_share
        vd: dict[str, list[float]] = {}
        kd: dict[str, list[float]] = {}
        best_chunk = {}
        for p, s in vec.items():
            vd.setdefault(doc[p], []).append(s)
        if docvec:
            means = _doc_vectors(corpus)
            for d in vd:
                mean_sim = float(means[d] @ cands.vector)
                vd[d] = [(1 - docvec) * max(vd[d]) + docvec * mean_sim]
        for p, s in kw.items():
            kd.setdefault(doc[p], []).append(s)
        for p in list(vec) + list(kw):
            best_chunk.setdefault(doc[p], p)
        nv = _normalize({d: _aggregate(s, a_share, how) for d, s in vd.items()}, norm)
        nk = _normalize({d: _aggregate(s, a_share, how) for d, s in kd.items()}, norm)
        lo_v = min(nv.values(), default=0.0) if missing == "min" else 0.0
        lo_k = min(nk.values(), default=0.0) if missing == "min" else 0.0
        papers = {
            d: alpha * nv.get(d, lo_v) + (1 - alpha) * nk.get(d, lo_k)
            for d in nv.keys() | nk.keys()
        }
    if docarm:
        means = _doc_vectors(corpus)
        nd = _normalize({d: float(means[d] @ cands.vector) for d in papers}, norm)
        papers = {d: (1 - docarm) * s + docarm * nd[d] for d, s in papers.items()}
    if bias:
        mult = _multipliers(corpus, cands.text, list(best_chunk.values()))
        papers = {d: s * (1 + bias * (mult[best_chunk[d]] - 1)) for d, s in papers.items()}
    return sorted(papers, key=lambda d: (-papers[d], d))[:DEPTH]


_DOC_VECTORS: dict[int, dict[str, np.ndarray]] = {}


def _doc_vectors(corpus: Corpus) -> dict[str, np.ndarray]:
    """Each paper's mean chunk vector, unit length (cached per corpus)."""
    if id(corpus) not in _DOC_VECTORS:
        rows: dict[str, list[int]] = {}
        for p, d in enumerate(corpus.doc_ids):
            rows.setdefault(d, []).append(p)
        out = {}
        for d, ps in rows.items():
            m = corpus.vectors[ps].mean(axis=0)
            out[d] = m / np.linalg.norm(m)
        _DOC_VECTORS[id(corpus)] = out
    return _DOC_VECTORS[id(corpus)]


def _grid() -> dict[str, Ranker]:
    out: dict[str, Ranker] = {}
    out["rrf"] = partial(chunk_rule, ranked=True)
    for share in (0.0, 0.1, 0.2, 0.3, 0.5):
        out[f"chunk/sum{share}"] = partial(paper_rule, share=share)
        out[f"paper/sum{share}"] = partial(paper_rule, share=share, level="paper")
    for share in (0.2, 0.5):
        out[f"chunk/second{share}"] = partial(paper_rule, share=share, how="second")
    for norm in ("z", "top100", "top200", "top500"):
        low = "min" if norm == "z" else "zero"
        out[f"chunk/{norm}"] = partial(paper_rule, norm=norm, missing=low)
        out[f"paper/{norm}"] = partial(paper_rule, norm=norm, level="paper", missing=low)
    out["chunk/missing-min"] = partial(paper_rule, missing="min")
    for bias in (1.0, 0.5, 0.25, 0.1):
        out[f"chunk/bias{bias}"] = partial(paper_rule, bias=bias)
    for dv in (0.3, 0.5, 1.0):
        out[f"paper/docvec{dv}"] = partial(paper_rule, level="paper", docvec=dv)
    for alpha in (0.5, 0.7):
        out[f"chunk/alpha{alpha}"] = partial(paper_rule, alpha=alpha)
    return out


def _grid2() -> dict[str, Ranker]:
    out: dict[str, Ranker] = {}
    for bias in (0.25, 0.5):
        out[f"paper/bias{bias}"] = partial(paper_rule, level="paper", bias=bias)
        out[f"paper/z/bias{bias}"] = partial(
            paper_rule, level="paper", norm="z", missing="min", bias=bias
        )
    for arm in (0.1, 0.2, 0.3):
        out[f"chunk/docarm{arm}"] = partial(paper_rule, docarm=arm)
        out[f"paper/docarm{arm}"] = partial(paper_rule, level="paper", docarm=arm)
    for alpha in (0.5, 0.55, 0.65, 0.7):
        out[f"paper/alpha{alpha}"] = partial(paper_rule, level="paper", alpha=alpha)
    return out


#: The exploration on train (`--variants grid`): paper-level scores, normalizations, alpha.
GRID: dict[str, Ranker] = {**_grid(), **_grid2()}

"""`python -m benchmarks scifact_variants --adaptive`: per-query fusion weights, dense feedback.

An experiment harness, not the product. Two ideas are measured, each against the fixed rule.

A fusion weight chosen per query. The oracle (each train query's best alpha) is far
above the fixed weight, so this asks whether features the product can compute at query time
predict a better alpha than the fixed 0.6. The features read only the two arms' candidates
and the query: how sure each arm is of its first papers, how much the arms agree, and the
query's length and rarity.

Each train query is ranked at every alpha of `ALPHAS` (agent path, the product's rule over
numpy). A predictor maps the features to an alpha: ridge regressions of nDCG@10 at each alpha
(the alpha with the best prediction wins), or a classifier of the best alpha. It is scored by
five-fold cross-validation on train; then fitted on all of train and scored once on test.

Dense pseudo-relevance feedback (Rocchio on the query vector). The first pass is the agent
path at alpha 0.6. The best chunk (by cosine) of each of its first `k` papers is averaged, and
`beta` times that mean is added to the query vector. The dense arm is searched again, exactly
over every stored chunk vector, and fused with the store's BM25 arm as before. `k` and `beta`
are chosen on train; the chosen pair is scored once on test.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np

from benchmarks.machine import describe, loadavg
from benchmarks.scifact_lexical.common import (
    Judge,
    dense_top,
    experiment_parser,
    load_candidates,
    say,
)
from benchmarks.scifact_lexical.variants import ARM, Harness, Lexical
from benchmarks.scifact_rankers import Candidates
from benchmarks.scifact_variants import Collected
from biomcp.eval.beir import BeirDataset, load_beir

ALPHAS = np.round(np.linspace(0.0, 1.0, 11), 2)
DEFAULT = 6  # index of alpha 0.6, the product's weight
FOLDS = 5


def _papers(harness: Harness, hits: list[tuple[int, float]], k: int) -> list[str]:
    seen: dict[str, None] = {}
    for pos, _ in hits:
        seen.setdefault(harness.corpus.doc_ids[pos], None)
        if len(seen) == k:
            break
    return list(seen)


def features(harness: Harness, cands: Candidates) -> list[float]:
    """What the product knows before fusing: each arm's score shape and the arms' agreement."""
    dense = np.array([s for _, s in cands.dense]) if cands.dense else np.zeros(1)
    kw = np.array([s for _, s in cands.keyword]) if cands.keyword else np.zeros(1)

    def at(a: np.ndarray, i: int) -> float:
        return float(a[min(i, len(a) - 1)])

    d_top, k_top = _papers(harness, cands.dense, 10), _papers(harness, cands.keyword, 10)
    overlap = len(set(d_top) & set(k_top)) / 10
    d_all = _papers(harness, cands.dense, 100)
    k_all = _papers(harness, cands.keyword, 100)
    k_in_d = d_all.index(k_top[0]) if k_top and k_top[0] in d_all else 100
    d_in_k = k_all.index(d_top[0]) if d_top and d_top[0] in k_all else 100
    terms = harness.analyzer.query(cands.text)
    idfs = [harness.idf.get(t, 0.0) for t in terms]
    k_span = (at(kw, 0) - at(kw, 99)) or 1.0
    return [
        at(dense, 0),
        at(dense, 0) - at(dense, 9),
        at(dense, 0) - at(dense, 99),
        np.log1p(at(kw, 0)),
        (at(kw, 0) - at(kw, 9)) / k_span,
        (at(kw, 0) - at(kw, 1)) / k_span,
        overlap,
        np.log1p(k_in_d),
        np.log1p(d_in_k),
        np.log1p(len(terms)),
        float(np.mean(idfs)) if idfs else 0.0,
        float(max(idfs)) if idfs else 0.0,
        float(len(cands.keyword) < 2000),
    ]


def sweep(
    harness: Harness, data: BeirDataset, queries: dict[str, Candidates]
) -> tuple[np.ndarray, np.ndarray]:
    """Features and nDCG@10 at every alpha (agent path), one row per query."""
    judge = Judge(data)
    x, y = [], []
    for qid, cands in queries.items():
        dense, keyword = harness.dense(cands), harness.keyword(cands, STORE)
        row = []
        for alpha in ALPHAS:
            docs = harness.rank(cands, [(alpha, dense), (1 - alpha, keyword)], True)
            row.append(judge.ndcg(qid, docs))
        x.append(features(harness, cands))
        y.append(row)
    return np.array(x, dtype=np.float64), np.array(y, dtype=np.float64)


class Ridge:
    """One ridge regression of nDCG@10 per alpha; the predicted best alpha wins."""

    def __init__(self, strength: float, band: float = 0.0) -> None:
        self.strength, self.band = strength, band

    def fit(self, x: np.ndarray, y: np.ndarray) -> Ridge:
        self.mean, self.std = x.mean(0), x.std(0) + 1e-9
        z = np.hstack([np.ones((len(x), 1)), (x - self.mean) / self.std])
        reg = self.strength * np.eye(z.shape[1])
        reg[0, 0] = 0.0
        self.coef = np.linalg.solve(z.T @ z + reg, z.T @ y)
        return self

    def choose(self, x: np.ndarray) -> np.ndarray:
        z = np.hstack([np.ones((len(x), 1)), (x - self.mean) / self.std])
        pred = z @ self.coef
        best: np.ndarray = pred.argmax(1)
        # Keep the fixed weight unless the predicted gain clears the band.
        keep = pred[np.arange(len(x)), best] - pred[:, DEFAULT] <= self.band
        best[keep] = DEFAULT
        return best


def _cross_validated(model: Any, x: np.ndarray, y: np.ndarray, seed: int = 7) -> float:
    order = np.random.default_rng(seed).permutation(len(x))
    chosen = np.empty(len(x), dtype=np.int64)
    for fold in range(FOLDS):
        held = order[fold::FOLDS]
        fit = np.setdiff1d(order, held)
        chosen[held] = model.fit(x[fit], y[fit]).choose(x[held])
    return float(y[np.arange(len(x)), chosen].mean())


def feedback_sweep(
    harness: Harness,
    data: BeirDataset,
    queries: dict[str, Candidates],
    pairs: list[tuple[int, float]],
) -> dict[str, float]:
    """Mean nDCG@10 (agent path) of dense feedback for each (k, beta), and of the exact
    dense arm without feedback (beta 0) as the baseline."""
    judge = Judge(data)
    vectors = harness.corpus.vectors.astype(np.float32)
    alpha = ALPHAS[DEFAULT]
    sums = {f"k {k} beta {b}": 0.0 for k, b in [(0, 0.0), *pairs]}
    for qid, cands in queries.items():
        keyword = harness.keyword(cands, STORE)
        q = np.asarray(cands.vector, dtype=np.float32)
        q = q / (np.linalg.norm(q) or 1.0)
        first = harness.rank(cands, [(alpha, harness.dense(cands)), (1 - alpha, keyword)], True)
        cos = vectors @ q
        best_chunk = [
            max(harness.chunks_of[d], key=lambda p: cos[p]) for d in first if d in harness.chunks_of
        ]
        for k, beta in [(0, 0.0), *pairs]:
            shifted = q + beta * vectors[best_chunk[:k]].mean(0) if k else q
            shifted = shifted / (np.linalg.norm(shifted) or 1.0)
            dense = dense_top(vectors @ shifted, ARM)
            docs = harness.rank(cands, [(alpha, dense), (1 - alpha, keyword)], True)
            sums[f"k {k} beta {beta}"] += judge.ndcg(qid, docs)
    return {name: round(total / len(queries), 4) for name, total in sums.items()}


STORE = Lexical(store=True)  # the store's own BM25 arm
FEEDBACK = [(k, b) for k in (1, 3, 5, 10) for b in (0.25, 0.5, 1.0)]


def run(argv: list[str]) -> dict[str, Any]:
    args = experiment_parser("--adaptive").parse_args(argv)
    if not (args.data / "corpus.jsonl").is_file():
        return {"benchmark": "scifact_adaptive_alpha", "skipped": "no SciFact data at --data"}
    load_before = loadavg()

    split: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    feedback: dict[str, dict[str, float]] = {}
    first: Collected | None = None
    harness = None
    for name, path in (("train", args.train), ("test", args.test)):
        if path is None:
            continue
        collected = load_candidates(path, like=first)
        data = load_beir(args.data, name)
        if harness is None:
            first, harness = collected, Harness(data, collected.corpus)
        say(f"sweeping {name}: {len(collected.queries)} queries x {len(ALPHAS)} alphas")
        split[name] = sweep(harness, data, collected.queries)
        if name == "train":
            feedback[name] = feedback_sweep(harness, data, collected.queries, FEEDBACK)
        else:
            best = max(feedback["train"], key=feedback["train"].__getitem__)
            k, beta = (float(w) for w in best.split()[1::2])
            feedback[name] = feedback_sweep(harness, data, collected.queries, [(int(k), beta)])
    x, y = split["train"]
    models = {
        f"ridge {s} band {b}": Ridge(s, b) for s in (10.0, 100.0, 1000.0) for b in (0.0, 0.01, 0.02)
    }
    cross = {n: round(_cross_validated(m, x, y), 4) for n, m in models.items()}
    train: dict[str, Any] = {
        "fixed 0.6": round(float(y[:, DEFAULT].mean()), 4),
        "best fixed": {str(a): round(float(v), 4) for a, v in zip(ALPHAS, y.mean(0), strict=True)},
        "oracle": round(float(y.max(1).mean()), 4),
        "cross-validated": cross,
    }
    out: dict[str, Any] = {
        "benchmark": "scifact_adaptive_alpha",
        "train": train,
        "dense feedback": feedback,
    }
    if "test" in split:
        best = max(cross, key=cross.__getitem__)
        xt, yt = split["test"]
        chosen = models[best].fit(x, y).choose(xt)
        out["test"] = {
            "fixed 0.6": round(float(yt[:, DEFAULT].mean()), 4),
            "oracle": round(float(yt.max(1).mean()), 4),
            "model": best,
            "adaptive": round(float(yt[np.arange(len(xt)), chosen].mean()), 4),
            "alphas chosen": {
                str(ALPHAS[i]): int(c) for i, c in enumerate(np.bincount(chosen, minlength=11)) if c
            },
        }
    out["machine"], out["load_before"], out["load_after"] = describe(), load_before, loadavg()
    return out


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1:]), indent=2))

"""`python -m benchmarks scifact_variants --learned`: a linear ranker learned on train.

An experiment harness, not the product. The product fuses three arms with fixed weights (the
chunk vectors, the best sentence, BM25). This asks whether more of what a search already
knows, weighted by a model fitted on SciFact train, orders the top ten better. Every feature
is one the product has at ranking time, with no new index:

- each arm's min-max normalized score (0 when the arm did not return the chunk), as fused today;
- the raw cosines of the chunk and of its best sentence, and BM25 over the arm's best score;
- each arm's reciprocal rank, 1 / (60 + rank);
- the best normalized score of each arm among the chunk's paper's candidates (paper evidence);
- the BM25 of the chunk's best sentence (sentences as units) over the candidates' best, and
  the share of the query's idf its words cover (the last two need a sentence-level index).

The score is the weighted sum, times the product's tempered quality multiplier. Candidates are
each query's 400 best chunks by the product's fusion, as at the evaluation's depth. Weights are
fitted by coordinate ascent on train nDCG@10, started from the product's weights; five-fold
cross-validation on train says whether a fit generalises before the test split is scored once.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.machine import describe, loadavg
from benchmarks.scifact_lexical import Bm25, Fields, Params, chunk_fields
from benchmarks.scifact_lexical.common import experiment_parser, load_candidates, say
from benchmarks.scifact_lexical.sentences import chunk_sentence_vectors
from benchmarks.scifact_lexical.variants import ARM, FUSED, Harness
from benchmarks.scifact_rankers import Candidates, Corpus
from biomcp.domain.rerank import RerankWeights, detect_intent
from biomcp.eval.beir import BeirDataset, beir_pmids, load_beir

FEATURES = (
    "dense", "sentence", "bm25",
    "cos", "sentence_cos", "bm25_share",
    "rr_dense", "rr_sentence", "rr_bm25",
    "paper_dense", "paper_sentence", "paper_bm25",
    "sentence_bm25", "coverage",
)  # fmt: skip
PRODUCT = {"dense": 0.3, "sentence": 0.3, "bm25": 0.4}
STEPS = (-0.5, -0.25, -0.1, -0.05, 0.0, 0.05, 0.1, 0.25, 0.5, 1.0)


@dataclass(frozen=True, slots=True)
class Query:
    """One query's candidates: features, tempered multipliers, paper of each, relevance."""

    features: np.ndarray  # (chunks, len(FEATURES))
    multiplier: np.ndarray
    paper: np.ndarray  # local paper index of each chunk
    gain: np.ndarray  # relevance of each local paper
    ideal: float  # ideal DCG@10


def _normalized(scores: np.ndarray) -> np.ndarray:
    low, span = scores.min(), scores.max() - scores.min()
    return (scores - low) / span if span > 0 else np.ones_like(scores)


class Featurizer:
    """Builds `Query` rows from one split's candidates over a shared corpus."""

    def __init__(
        self,
        harness: Harness,
        chunks: Fields,
        sentences: tuple[list[str], np.ndarray, np.ndarray],
    ) -> None:
        """`chunks` are the corpus's chunk texts; `sentences` each chunk sentence's text,
        vector and chunk position."""
        texts, sentence_vectors, owner = sentences
        self.harness = harness
        self.sentence_bm25 = Bm25(
            Fields([""] * len(texts), texts, [""] * len(texts)), harness.analyzer, harness.vocab
        )
        self.terms = [
            set(harness.analyzer.index(f"{title} {body}"))
            for title, body in zip(chunks.titles, chunks.bodies, strict=True)
        ]
        corpus: Corpus = harness.corpus
        vectors = corpus.vectors.astype(np.float32)
        self.vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
        self.sentences = sentence_vectors
        self.owner = owner

    def query(self, cands: Candidates, qrels: dict[str, int], beir_id: dict[str, str]) -> Query:
        n = len(self.vectors)
        q = cands.vector / (np.linalg.norm(cands.vector) or 1.0)
        cos = self.vectors @ q
        best = cos.copy()  # a chunk without sentences counts as its one sentence
        has = np.zeros(n, dtype=bool)
        has[self.owner] = True
        best[has] = -1.0
        np.maximum.at(best, self.owner, self.sentences @ q)
        dense_pos = np.array([p for p, _ in cands.dense], dtype=np.int64)
        dense_raw = np.array([s for _, s in cands.dense])
        kw_pos = np.array([p for p, _ in cands.keyword], dtype=np.int64)
        kw_raw = np.array([s for _, s in cands.keyword])
        union = np.unique(np.concatenate([dense_pos, kw_pos]))
        sent_pos = union[np.argsort(-best[union], kind="stable")][:ARM]
        f = np.zeros((n, len(FEATURES)))
        present = np.zeros(n, dtype=bool)
        col = {name: i for i, name in enumerate(FEATURES)}
        for name, pos, raw in (
            ("dense", dense_pos, dense_raw),
            ("sentence", sent_pos, best[sent_pos]),
            ("bm25", kw_pos, kw_raw),
        ):
            if not len(pos):
                continue
            f[pos, col[name]] = _normalized(raw)
            f[pos, col[f"rr_{name}"]] = 1.0 / (60.0 + np.arange(1, len(pos) + 1))
            present[pos] = True
        if len(kw_pos):
            f[kw_pos, col["bm25_share"]] = kw_raw / max(kw_raw.max(), 1e-9)
        cand = np.flatnonzero(present)
        base = f[cand] @ _weights(PRODUCT)
        keep = cand[np.lexsort((self.harness._rank[cand], -base))[:FUSED]]
        rows = f[keep]
        rows[:, col["cos"]] = cos[keep]
        rows[:, col["sentence_cos"]] = best[keep]
        terms = self.harness.analyzer.query(cands.text)
        sent_scores = self.sentence_bm25.scores(dict.fromkeys(terms, 1.0), Params())
        per_chunk = np.zeros(n)
        np.maximum.at(per_chunk, self.owner, sent_scores)
        top_sent = per_chunk[keep]
        rows[:, col["sentence_bm25"]] = top_sent / max(top_sent.max(), 1e-9)
        idf = {t: self.harness.idf.get(t, 0.0) for t in terms}
        mass = sum(idf.values()) or 1.0
        rows[:, col["coverage"]] = [
            sum(v for t, v in idf.items() if t in self.terms[p]) / mass for p in keep
        ]
        docs = [self.harness.corpus.doc_ids[p] for p in keep]
        local = {d: i for i, d in enumerate(dict.fromkeys(docs))}
        paper = np.array([local[d] for d in docs], dtype=np.int64)
        for name in ("dense", "sentence", "bm25"):
            top = np.zeros(len(local))
            np.maximum.at(top, paper, rows[:, col[name]])
            rows[:, col[f"paper_{name}"]] = top[paper]
        intent = detect_intent(cands.text)
        strength = RerankWeights().strength
        mult = np.array([self.harness.multiplier(int(p), intent) for p in keep])
        gain = np.array([float(qrels.get(beir_id.get(d, d), 0)) for d in local])
        ideal_gains = sorted(qrels.values(), reverse=True)[:10]
        ideal = sum((2**g - 1) / np.log2(i + 2) for i, g in enumerate(ideal_gains))
        return Query(rows, 1 + strength * (mult - 1), paper, gain, float(ideal))


def _weights(named: dict[str, float]) -> np.ndarray:
    return np.array([named.get(name, 0.0) for name in FEATURES])


def ndcg(queries: list[Query], w: np.ndarray) -> float:
    """Mean nDCG@10 over papers in order of their best chunk, by `w`'s scores."""
    total = 0.0
    for query in queries:
        score = (query.features @ w) * query.multiplier
        order = np.argsort(-score, kind="stable")
        seen: dict[int, None] = {}
        for p in query.paper[order]:
            seen.setdefault(int(p), None)
            if len(seen) == 10:
                break
        ranked = np.fromiter(seen, dtype=np.int64)
        gains = query.gain[ranked]
        dcg = float(np.sum((2**gains - 1) / np.log2(np.arange(len(ranked)) + 2)))
        total += dcg / query.ideal if query.ideal > 0 else 0.0
    return total / len(queries)


def fit(queries: list[Query], names: tuple[str, ...] = FEATURES, passes: int = 3) -> np.ndarray:
    """Coordinate ascent from the product's weights: each named weight moved by each step in
    turn, kept when train nDCG@10 rises."""
    w = _weights(PRODUCT)
    best = ndcg(queries, w)
    for _ in range(passes):
        moved = False
        for j in [FEATURES.index(name) for name in names]:
            for step in STEPS:
                trial = w.copy()
                trial[j] = w[j] + step if step != 0.0 else 0.0
                value = ndcg(queries, trial)
                if value > best + 1e-6:
                    w, best, moved = trial, value, True
        if not moved:
            break
    return w


def cross_validate(
    queries: list[Query], names: tuple[str, ...], folds: int = 5
) -> dict[str, float]:
    """Held-out nDCG@10 of the product's weights and of the fitted ones, fold by fold."""
    product = learned = 0.0
    for k in range(folds):
        held = queries[k::folds]
        rest = [q for i, q in enumerate(queries) if i % folds != k]
        w = fit(rest, names)
        product += ndcg(held, _weights(PRODUCT)) * len(held)
        learned += ndcg(held, w) * len(held)
        say(f"fold {k}: product {ndcg(held, _weights(PRODUCT)):.4f} learned {ndcg(held, w):.4f}")
    return {
        "product": round(product / len(queries), 4),
        "learned": round(learned / len(queries), 4),
    }


def featurize(
    featurizer: Featurizer, data: BeirDataset, queries: dict[str, Candidates]
) -> list[Query]:
    beir_id = {
        f"pmid:{pmid}": doc for doc, pmid in beir_pmids(d.doc_id for d in data.documents).items()
    }
    return [featurizer.query(c, data.qrels[qid], beir_id) for qid, c in queries.items()]


def run(argv: list[str]) -> dict[str, Any]:
    parser = experiment_parser("--learned")
    parser.add_argument("--cache", type=Path, help="embedding cache for the chunk sentences")
    parser.add_argument(
        "--subset", default="", help="comma-separated features to fit (default all)"
    )
    args = parser.parse_args(argv)
    names = tuple(n for n in args.subset.split(",") if n) or FEATURES
    unknown = set(names) - set(FEATURES)
    if unknown:
        parser.error(f"unknown features {sorted(unknown)}: choose from {', '.join(FEATURES)}")
    if not (args.data / "corpus.jsonl").is_file():
        return {"benchmark": "scifact_learned", "skipped": "no SciFact data at --data"}
    load_before = loadavg()
    train = load_candidates(args.train)
    data = load_beir(args.data, "train")
    harness = Harness(data, train.corpus)
    featurizer = Featurizer(
        harness,
        chunk_fields(data, train.corpus.uuids),
        chunk_sentence_vectors(data, train.corpus.uuids, args.cache),
    )
    rows = featurize(featurizer, data, train.queries)
    out: dict[str, Any] = {"benchmark": "scifact_learned", "features": list(FEATURES)}
    out["train_product"] = round(ndcg(rows, _weights(PRODUCT)), 4)
    out["cross_validation"] = cross_validate(rows, names)
    w = fit(rows, names)
    out["weights"] = {name: round(float(v), 3) for name, v in zip(FEATURES, w, strict=True) if v}
    out["train_learned"] = round(ndcg(rows, w), 4)
    say(json.dumps(out))
    if args.test is not None:
        test = load_candidates(args.test, like=train)
        tdata = load_beir(args.data, "test")
        trows = featurize(featurizer, tdata, test.queries)
        out["test_product"] = round(ndcg(trows, _weights(PRODUCT)), 4)
        out["test_learned"] = round(ndcg(trows, w), 4)
    out["machine"], out["load_before"], out["load_after"] = describe(), load_before, loadavg()
    return out


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1:]), indent=2))

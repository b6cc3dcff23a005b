"""`python -m benchmarks scifact_variants --adapter`: a linear query adapter learned on train.

An experiment harness, not the product. Documents keep their vectors; only the query's vector
moves: `q' = unit(q + q W)`, with `W` a square matrix fitted on SciFact train. The loss is the
softmax cross-entropy of the relevant chunks among each query's best candidates, each chunk
scored as the product's two dense arms see it (half its cosine, half its best own sentence's).

SciFact's splits share one corpus, and many test claims cite a paper some train claim cites.
A fit on train can learn those papers, not a better reading of claims. So the harness:

- cross-validates on train with folds that keep queries sharing a relevant paper together
  (`leak_free_folds`), beside ordinary random folds;
- scores the test split in two parts (`seen_split`): claims with a relevant paper that some
  train claim has, and claims whose papers train never saw. Only the second says what a user's
  own corpus would gain.

The fit is plain numpy (Adam on the exact gradient of the loss; `loss_and_gradient`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
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
from benchmarks.scifact_lexical.sentences import ALPHA, OwnSentences, best_own_sentence
from benchmarks.scifact_lexical.variants import ARM, Harness, Lexical
from benchmarks.scifact_rankers import Candidates
from biomcp.eval.beir import BeirDataset, beir_pmids, load_beir

#: candidates per training query, besides its relevant chunks
POOL = 200
TEMPERATURE = 0.05
#: (epochs, learning rate, L2 weight): the configurations compared
CONFIGS = ((1, 3e-4, 0.0), (2, 1e-3, 0.0), (2, 1e-3, 0.01))
FOLDS = 5


def unit(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-9)
    return out


def adapt(query: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """The unit query vector moved by the adapter (unchanged without one)."""
    q = unit(query)
    return q if w is None else unit(q + q @ w)


@dataclass(frozen=True, slots=True)
class Example:
    """One training query: its unit vector, its candidates' vectors and which are relevant.

    `sentences[i]` holds the vectors of candidate i's own sentences."""

    query: np.ndarray
    chunks: np.ndarray
    sentences: list[np.ndarray]
    relevant: np.ndarray


def loss_and_gradient(example: Example, w: np.ndarray) -> tuple[float, np.ndarray]:
    """The example's loss under adapter `w`, and its gradient with respect to `w`.

    A candidate's score is half its cosine with the moved query and half its best own
    sentence's; the loss is -log of the softmax mass the relevant candidates take."""
    q = example.query
    u = q + q @ w
    norm = float(np.linalg.norm(u))
    a = u / norm
    best = np.stack([s[int(np.argmax(s @ a))] for s in example.sentences])
    v = 0.5 * (example.chunks + best)
    logits = v @ a / TEMPERATURE
    every = np.exp(logits - logits.max())
    p = every / every.sum()
    mass = np.where(example.relevant, every, 0.0)
    p_relevant = mass / mass.sum()
    loss = float(np.log(every.sum()) - np.log(mass.sum()))
    grad_a = (p - p_relevant) @ v / TEMPERATURE
    grad_u = (grad_a - (grad_a @ a) * a) / norm
    return loss, np.outer(q, grad_u)


def fit(examples: Sequence[Example], epochs: int, rate: float, l2: float) -> np.ndarray:
    """`W` fitted by Adam in batches of 32, from zero (the identity adapter)."""
    dim = examples[0].query.shape[0]
    w = np.zeros((dim, dim))
    m = np.zeros_like(w)
    s = np.zeros_like(w)
    step = 0
    for epoch in range(epochs):
        order = np.random.default_rng(epoch).permutation(len(examples))
        for start in range(0, len(order), 32):
            batch = order[start : start + 32]
            grad = sum(loss_and_gradient(examples[i], w)[1] for i in batch) / len(batch)
            grad = grad + 2 * l2 * w
            step += 1
            m = 0.9 * m + 0.1 * grad
            s = 0.999 * s + 0.001 * grad**2
            w -= rate * (m / (1 - 0.9**step)) / (np.sqrt(s / (1 - 0.999**step)) + 1e-8)
    return w


def relevant_docs(qrels: Mapping[str, Mapping[str, int]], qid: str) -> set[str]:
    return {d for d, r in qrels.get(qid, {}).items() if r > 0}


def leak_free_folds(
    qids: Sequence[str], qrels: Mapping[str, Mapping[str, int]], folds: int
) -> np.ndarray:
    """A fold for each query such that queries sharing a relevant paper share a fold.

    Groups of linked queries go, largest first, to the fold with the fewest queries."""
    parent = list(range(len(qids)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}
    for i, qid in enumerate(qids):
        for doc in sorted(relevant_docs(qrels, qid)):
            if doc in first:
                parent[root(i)] = root(first[doc])
            else:
                first[doc] = i
    groups: dict[int, list[int]] = {}
    for i in range(len(qids)):
        groups.setdefault(root(i), []).append(i)
    out = np.zeros(len(qids), dtype=np.int64)
    sizes = [0] * folds
    for members in sorted(groups.values(), key=lambda g: (-len(g), g[0])):
        fold = sizes.index(min(sizes))
        sizes[fold] += len(members)
        out[members] = fold
    return out


def seen_split(
    train: Mapping[str, Mapping[str, int]], test: Mapping[str, Mapping[str, int]]
) -> tuple[list[str], list[str]]:
    """Test queries with a relevant paper some train query has, and those without one."""
    known = {d for qid in train for d in relevant_docs(train, qid)}
    seen = [q for q in test if relevant_docs(test, q) & known]
    return seen, [q for q in test if q not in set(seen)]


class Setup:
    """The harness, the chunk and sentence vectors, and what a query's examples need."""

    def __init__(self, harness: Harness, own: OwnSentences, data: BeirDataset) -> None:
        self.harness = harness
        self.own = own
        vectors = harness.corpus.vectors.astype(np.float32)
        self.chunks = unit(vectors)
        self.pmids = beir_pmids(d.doc_id for d in data.documents)
        order = np.argsort(own.owner, kind="stable")
        bounds = np.searchsorted(own.owner[order], np.arange(len(self.chunks) + 1))
        self.sentences_of = [order[bounds[i] : bounds[i + 1]] for i in range(len(self.chunks))]

    def example(self, data: BeirDataset, qid: str, cands: Candidates) -> Example:
        q = unit(np.asarray(cands.vector, dtype=np.float64))
        papers = {f"pmid:{self.pmids[d]}" for d in relevant_docs(data.qrels, qid)}
        relevant = [p for d in papers for p in self.harness.chunks_of.get(d, [])]
        score = 0.5 * (self.chunks @ q) + 0.5 * self.best(q)
        pool = set(np.argpartition(-score, POOL)[:POOL].tolist()) | set(relevant)
        cand = np.array(sorted(pool), dtype=np.int64)
        sentences = [
            self.own.vectors[self.sentences_of[c]].astype(np.float64)
            if len(self.sentences_of[c])
            else self.chunks[c : c + 1].astype(np.float64)
            for c in cand
        ]
        return Example(q, self.chunks[cand].astype(np.float64), sentences, np.isin(cand, relevant))

    def best(self, q: np.ndarray) -> np.ndarray:
        return best_own_sentence(q, self.own.vectors, self.own.owner, len(self.chunks))

    def ndcg(
        self, data: BeirDataset, queries: Mapping[str, Candidates], w: np.ndarray | None
    ) -> dict[str, float]:
        """nDCG@10 on the agent path of each query, its dense arms fed the adapted vector."""
        judge = Judge(data)
        out = {}
        for qid, cands in queries.items():
            q = adapt(np.asarray(cands.vector, dtype=np.float32), w).astype(np.float32)
            arms = [
                (ALPHA * 0.5, dense_top(self.chunks @ q, ARM)),
                (ALPHA * 0.5, dense_top(self.best(q), ARM)),
                (1 - ALPHA, self.harness.keyword(cands, Lexical(store=True))),
            ]
            out[qid] = judge.ndcg(qid, self.harness.rank(cands, arms, True))
        return out


def _mean(scores: Mapping[str, float], qids: Sequence[str]) -> float:
    return round(float(np.mean([scores[q] for q in qids])), 4) if qids else 0.0


def cross_validate(
    setup: Setup, data: BeirDataset, queries: Mapping[str, Candidates], folds: np.ndarray
) -> dict[str, Any]:
    """Held-out nDCG@10 of each configuration over `folds`, and the product's."""
    qids = list(queries)
    examples = {q: setup.example(data, q, queries[q]) for q in qids}
    base = setup.ndcg(data, queries, None)
    out: dict[str, Any] = {"product": _mean(base, qids)}
    for config in CONFIGS:
        held: dict[str, float] = {}
        for fold in range(int(folds.max()) + 1):
            inside = [q for q, f in zip(qids, folds, strict=True) if f != fold]
            outside = {q: queries[q] for q, f in zip(qids, folds, strict=True) if f == fold}
            w = fit([examples[q] for q in inside], *config)
            held.update(setup.ndcg(data, outside, w))
        out[_config_name(config)] = _mean(held, qids)
        say(f"{_config_name(config)}: {out[_config_name(config)]}")
    return out


def _config_name(config: tuple[int, float, float]) -> str:
    epochs, rate, l2 = config
    return f"epochs {epochs}, rate {rate:g}, l2 {l2:g}"


def run(argv: list[str]) -> dict[str, Any]:
    parser = experiment_parser("--adapter")
    parser.add_argument("--cache", type=Path, help="embedding cache for the sentences")
    args = parser.parse_args(argv)
    if not (args.data / "corpus.jsonl").is_file():
        return {"benchmark": "scifact_query_adapter", "skipped": "no SciFact data at --data"}
    load_before = loadavg()
    train = load_candidates(args.train)
    data = load_beir(args.data, "train")
    harness = Harness(data, train.corpus)
    setup = Setup(harness, OwnSentences.of(data, train.corpus.uuids, args.cache), data)
    qids = list(train.queries)
    random_folds = np.random.default_rng(7).permutation(len(qids)) % FOLDS
    out: dict[str, Any] = {
        "benchmark": "scifact_query_adapter",
        "train, random folds": cross_validate(setup, data, train.queries, random_folds),
        "train, folds apart by relevant paper": cross_validate(
            setup, data, train.queries, leak_free_folds(qids, data.qrels, FOLDS)
        ),
    }
    if args.test is not None:
        best = max(CONFIGS, key=lambda c: out["train, random folds"][_config_name(c)])
        examples = [setup.example(data, q, train.queries[q]) for q in qids]
        w = fit(examples, *best)
        test = load_candidates(args.test, like=train)
        test_data = load_beir(args.data, "test")
        seen, unseen = seen_split(data.qrels, test_data.qrels)
        seen = [q for q in seen if q in test.queries]
        unseen = [q for q in unseen if q in test.queries]
        base = setup.ndcg(test_data, test.queries, None)
        moved = setup.ndcg(test_data, test.queries, w)
        out["test"] = {
            "chosen on train (random folds)": _config_name(best),
            "queries: all / seen paper / unseen paper": [len(test.queries), len(seen), len(unseen)],
            "product": [_mean(base, list(test.queries)), _mean(base, seen), _mean(base, unseen)],
            "adapter": [_mean(moved, list(test.queries)), _mean(moved, seen), _mean(moved, unseen)],
        }
    out["machine"], out["load_before"], out["load_after"] = describe(), load_before, loadavg()
    return out


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1:]), indent=2))

"""`python -m benchmarks scifact_variants --lexical`: BM25-side ranking experiments on SciFact.

An experiment harness, not the product. It reads the candidates `scifact_variants` collected
(`--train` / `--test` pickles: the store's chunks, vectors and both arms of every query), keeps
the store's dense arm, and replaces the BM25 arm by the in-benchmark BM25 of `scifact_lexical`
with one change each: BM25F title weight, k1 / b, query term handling, RM3 feedback, a
paper-level arm, and alpha. Fusion and the tempered quality bias are the product's rule,
re-implemented over numpy for speed (`--check` compares them with `scifact_rankers`).

`--grid` ranks the train split only. Without it, every configuration in `FINAL` is scored on
train and test in one run, one JSON document.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.machine import describe, loadavg
from benchmarks.scifact_lexical import (
    Analyzer,
    Bm25,
    Feedback,
    Params,
    Vocabulary,
    chunk_fields,
    paper_fields,
    query_weights,
    rm3,
    top,
)
from benchmarks.scifact_rankers import Candidates, Corpus, chunk_rule
from benchmarks.scifact_variants import Collected
from biomcp.domain.rerank import RerankWeights, detect_intent, rerank_score
from biomcp.eval.beir import BeirDataset, beir_pmids, load_beir
from biomcp.eval.metrics import mean_scores, score_ranking

#: An arm: chunk positions and their raw scores, best first.
Arm = tuple[np.ndarray, np.ndarray]

ARM = 2000  # each arm's candidates at the evaluation's depth (`candidate_count(400)`)
FUSED = 400
DEPTH = 200


@dataclass(frozen=True, slots=True)
class Lexical:
    """One BM25 configuration: scoring, query handling, feedback, and the arm's level."""

    params: Params = field(default_factory=Params)
    binary: bool = False
    max_df_share: float | None = None
    idf_power: float = 0.0
    feedback: Feedback | None = None
    paper_arm: bool = False
    store: bool = False  # the store's own arm, from the collected candidates


@dataclass(frozen=True, slots=True)
class Config:
    lexical: Lexical = field(default_factory=Lexical)
    alpha: float = 0.6
    third: Lexical | None = None  # a second BM25 arm, fused beside the first
    third_share: float = 0.0  # its share of the BM25 weight (1 - alpha)

    def arms(self, harness: Harness, cands: Candidates, alpha: float) -> list[tuple[float, Arm]]:
        lexical = 1 - alpha
        out = [(alpha, harness.dense(cands))]
        out.append((lexical * (1 - self.third_share), harness.keyword(cands, self.lexical)))
        if self.third is not None and self.third_share > 0:
            out.append((lexical * self.third_share, harness.keyword(cands, self.third)))
        return out


class Harness:
    """The BM25 indexes of one corpus and the product's fusion over numpy."""

    def __init__(self, data: BeirDataset, corpus: Corpus) -> None:
        self.analyzer = Analyzer()
        self.vocab = Vocabulary()
        self.corpus = corpus
        self.chunks = Bm25(chunk_fields(data, corpus.uuids), self.analyzer, self.vocab)
        self.papers = Bm25(paper_fields(data), self.analyzer, self.vocab)
        self.names = [""] * len(self.vocab.ids)
        for term, col in self.vocab.ids.items():
            self.names[col] = term
        idf = self.chunks.idf()
        self.idf = {t: float(idf[c]) for t, c in self.vocab.ids.items() if c < len(idf)}
        df = self.chunks.df()
        share = df / self.chunks.units
        self.df_share = {t: float(share[c]) for t, c in self.vocab.ids.items() if c < len(df)}
        self.paper_idf = self.papers.idf()
        self.chunks_of: dict[str, list[int]] = {}
        for pos, doc in enumerate(corpus.doc_ids):
            self.chunks_of.setdefault(doc, []).append(pos)
        self.paper_pos = {d: i for i, d in enumerate(self.papers.doc_ids)}
        self._rank = np.empty(len(corpus.uuids), dtype=np.int64)
        self._rank[np.argsort(np.asarray(corpus.uuids))] = np.arange(len(corpus.uuids))
        self._mult: dict[tuple[Any, ...], float] = {}

    def dense(self, cands: Candidates) -> Arm:
        return _arm(cands.dense)

    def keyword(self, cands: Candidates, lex: Lexical) -> Arm:
        """The BM25 arm of one query under `lex`: (chunk position, score), best first."""
        if lex.store:
            return _arm(cands.keyword)
        terms = self.analyzer.query(cands.text)
        query = query_weights(
            terms,
            self.idf,
            binary=lex.binary,
            max_df_share=lex.max_df_share,
            idf_power=lex.idf_power,
            df_share=self.df_share,
        )
        if lex.feedback is not None:
            first = self.papers.scores(query, lex.params)
            query = rm3(
                query, top(first, lex.feedback.docs), self.papers, self.paper_idf,
                self.names, lex.feedback,
            )  # fmt: skip
        if lex.paper_arm:
            return self._paper_arm(self.papers.scores(query, lex.params))
        return top(self.chunks.scores(query, lex.params), ARM)

    def _paper_arm(self, scores: np.ndarray) -> Arm:
        """Each of the best papers' score given to every chunk of the paper."""
        pos: list[int] = []
        out: list[float] = []
        for unit, s in zip(*top(scores, ARM), strict=True):
            chunks = self.chunks_of.get(self.papers.doc_ids[unit], [])
            pos.extend(chunks)
            out.extend([float(s)] * len(chunks))
            if len(pos) >= ARM:
                break
        return np.array(pos[:ARM], dtype=np.int64), np.array(out[:ARM])

    def multiplier(self, pos: int, intent: Any) -> float:
        c = self.corpus
        key = (c.quality[pos], c.section[pos], c.evidence_type[pos], intent)
        if key not in self._mult:
            self._mult[key] = rerank_score(1.0, *key[:3], intent, RerankWeights())
        return self._mult[key]

    def fuse(
        self, arms: list[tuple[float, Arm]], keep: int = FUSED
    ) -> tuple[np.ndarray, np.ndarray]:
        """Relative-score fusion of `arms`: the `keep` best chunk positions, best first (ties
        by uuid), and every chunk's fused score."""
        fused = np.zeros(len(self.corpus.uuids))
        present = np.zeros(len(self.corpus.uuids), dtype=bool)
        for weight, (pos, scores) in arms:
            if not len(pos) or weight == 0:
                continue
            low, span = scores.min(), scores.max() - scores.min()
            norm = (scores - low) / span if span > 0 else np.ones_like(scores)
            fused[pos] += weight * norm
            present[pos] = True
        cand = np.flatnonzero(present)
        return cand[np.lexsort((self._rank[cand], -fused[cand]))[:keep]], fused

    def rank(self, cands: Candidates, arms: list[tuple[float, Arm]], bias: bool) -> list[str]:
        """The product's rule: relative-score fusion, 400 best, tempered rerank, by paper."""
        best, fused = self.fuse(arms)
        if bias:
            intent = detect_intent(cands.text)
            strength = RerankWeights().strength
            mult = np.array([self.multiplier(int(p), intent) for p in best])
            scored = fused[best] * (1 + strength * (mult - 1))
            best = best[np.lexsort((self._rank[best], -scored))]
        docs: dict[str, None] = {}
        for p in best[:DEPTH]:
            docs.setdefault(self.corpus.doc_ids[p], None)
        return list(docs)


def _arm(hits: list[tuple[int, float]]) -> Arm:
    return np.array([p for p, _ in hits], dtype=np.int64), np.array([s for _, s in hits])


def _scores(data: BeirDataset, rankings: dict[str, list[str]]) -> dict[str, float]:
    beir_id = {
        f"pmid:{pmid}": doc for doc, pmid in beir_pmids(d.doc_id for d in data.documents).items()
    }
    per_query = [
        score_ranking([beir_id.get(d, d) for d in docs], data.qrels[qid])
        for qid, docs in rankings.items()
    ]
    return {k: round(v, 4) for k, v in mean_scores(per_query).items()}


def measure(
    harness: Harness, data: BeirDataset, queries: dict[str, Candidates], config: Config
) -> dict[str, float]:
    """nDCG@10 of the BM25 arm alone, hybrid (`quality_bias` off) and the agent path."""
    modes: dict[str, dict[str, list[str]]] = {"bm25": {}, "hybrid": {}, "agent": {}}
    for qid, cands in queries.items():
        lexical = config.arms(harness, cands, 0.0)
        arms = [(config.alpha, harness.dense(cands))] + [
            (w * (1 - config.alpha), a) for w, a in lexical[1:]
        ]
        modes["bm25"][qid] = harness.rank(cands, lexical, False)
        modes["hybrid"][qid] = harness.rank(cands, arms, False)
        modes["agent"][qid] = harness.rank(cands, arms, True)
    out = {}
    for mode, rankings in modes.items():
        figures = _scores(data, rankings)
        out[mode] = figures["ndcg@10"]
        if mode == "agent":
            out["agent_recall@100"] = figures["recall@100"]
    return out


def oracle(
    harness: Harness, data: BeirDataset, queries: dict[str, Candidates], config: Config
) -> dict[str, float]:
    """An upper bound for per-query fusion weights: each query's best alpha in 0, 0.1 .. 1
    (agent path), and the share of queries whose best alpha is 0.6 already."""
    beir_id = {
        f"pmid:{pmid}": doc for doc, pmid in beir_pmids(d.doc_id for d in data.documents).items()
    }
    best, at_default = [], 0
    for qid, cands in queries.items():
        lexical = config.arms(harness, cands, 0.0)[1:]
        figures = []
        for alpha in np.linspace(0, 1, 11):
            arms = [(alpha, harness.dense(cands)), *[(w * (1 - alpha), a) for w, a in lexical]]
            docs = harness.rank(cands, arms, True)
            ranked = [beir_id.get(d, d) for d in docs]
            figures.append(score_ranking(ranked, data.qrels[qid])["ndcg@10"])
        best.append(max(figures))
        at_default += figures[6] == max(figures)
    return {
        "oracle alpha agent ndcg@10": round(float(np.mean(best)), 4),
        "queries best at 0.6": round(at_default / len(queries), 3),
    }


def check(harness: Harness, data: BeirDataset, queries: dict[str, Candidates]) -> dict[str, Any]:
    """The numpy rule against `scifact_rankers.chunk_rule` on the store's arms."""
    fast = measure(harness, data, queries, Config(Lexical(store=True)))
    slow = {
        "hybrid": partial(chunk_rule),
        "agent": partial(chunk_rule, rerank=True),
    }
    product = {
        mode: _scores(data, {q: rule(harness.corpus, c) for q, c in queries.items()})["ndcg@10"]
        for mode, rule in slow.items()
    }
    return {"numpy": fast, "scifact_rankers": product}


def _fb(docs: int, terms: int, weight: float) -> Lexical:
    return Lexical(feedback=Feedback(docs=docs, terms=terms, weight=weight))


def grid() -> dict[str, Config]:
    """The train-only exploration."""
    out: dict[str, Config] = {
        "store arm": Config(Lexical(store=True)),
        "in-benchmark BM25": Config(),
    }
    for w in (0.0, 0.5, 2.0, 3.0):
        out[f"title weight {w}"] = Config(Lexical(Params(title_weight=w)))
    for k1, b in ((0.9, 0.75), (1.5, 0.75), (2.0, 0.75), (1.2, 0.5), (1.2, 0.9), (1.2, 1.0)):
        out[f"k1 {k1} b {b}"] = Config(Lexical(Params(k1=k1, b=b)))
    out["query terms once"] = Config(Lexical(binary=True))
    for share in (0.02, 0.05, 0.1):
        out[f"drop terms in > {share} of chunks"] = Config(Lexical(max_df_share=share))
    for power in (0.5, 1.0, 2.0):
        out[f"query weight idf^{power}"] = Config(Lexical(idf_power=power))
    for docs, terms, weight in ((3, 10, 0.3), (5, 10, 0.3), (10, 10, 0.3), (10, 20, 0.3),
                                (5, 10, 0.1), (5, 10, 0.5), (10, 10, 0.5)):  # fmt: skip
        out[f"RM3 {docs} papers {terms} terms weight {weight}"] = Config(_fb(docs, terms, weight))
    out["paper-level BM25 arm"] = Config(Lexical(paper_arm=True))
    out["paper-level BM25F title 2"] = Config(Lexical(Params(title_weight=2.0), paper_arm=True))
    for alpha in (0.5, 0.7):
        out[f"alpha {alpha}"] = Config(alpha=alpha)
    return out


_TUNED = Lexical(Params(k1=0.9, title_weight=0.5), binary=True)
_PAPERS = Lexical(Params(k1=0.9, title_weight=0.5), binary=True, paper_arm=True)


def combined() -> dict[str, Config]:
    """The train-only second round: the first round's gains together, and fusion weights."""
    out = {"terms once + k1 0.9 + title 0.5": Config(_TUNED)}
    out["terms once + idf^1"] = Config(Lexical(binary=True, idf_power=1.0))
    for alpha in (0.5, 0.55, 0.65, 0.7):
        out[f"tuned alpha {alpha}"] = Config(_TUNED, alpha=alpha)
    for share in (0.2, 0.4):
        out[f"tuned + paper-level arm {share}"] = Config(_TUNED, third=_PAPERS, third_share=share)
    return out


_RARE = Lexical(binary=True, idf_power=1.0)
_RARE_PAPERS = Lexical(binary=True, idf_power=1.0, paper_arm=True)

#: The configurations scored on both splits: the baselines and each family's best on train.
FINAL: dict[str, Config] = {
    "store arm (the product)": Config(Lexical(store=True)),
    "in-benchmark BM25": Config(),
    "title weight 0.5": Config(Lexical(Params(title_weight=0.5))),
    "k1 0.9": Config(Lexical(Params(k1=0.9))),
    "query terms once": Config(Lexical(binary=True)),
    "query weight idf^1": Config(Lexical(idf_power=1.0)),
    "terms once + idf^1": Config(_RARE),
    "terms once + k1 0.9 + title 0.5": Config(_TUNED),
    "RM3 5 papers 10 terms weight 0.1": Config(_fb(5, 10, 0.1)),
    "paper-level BM25 arm": Config(Lexical(paper_arm=True)),
    "paper-level arm, terms once + idf^1": Config(_RARE_PAPERS),
    "terms once + idf^1, paper-level third arm 0.3": Config(
        _RARE, third=_RARE_PAPERS, third_share=0.3
    ),
    "terms once + k1 0.9 + title 0.5, paper-level third arm 0.4": Config(
        _TUNED, third=_PAPERS, third_share=0.4
    ),
}


class _Unpickler(pickle.Unpickler):
    """Finds `Collected` whichever module ran `scifact_variants` when it wrote the file."""

    def find_class(self, module: str, name: str) -> Any:
        if name == "Collected":
            return Collected
        return super().find_class(module, name)


def _load(path: Path) -> Collected:
    with path.open("rb") as f:
        collected: Collected = _Unpickler(f).load()  # the harness's own file
    return collected


def run(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks scifact_variants --lexical")
    parser.add_argument("--data", type=Path, default=Path("../shared/data/scifact"))
    parser.add_argument("--train", type=Path, required=True, help="train candidates (pickle)")
    parser.add_argument("--test", type=Path, help="test candidates (pickle)")
    parser.add_argument("--grid", action="store_true", help="explore on train only")
    parser.add_argument("--check", action="store_true", help="numpy rule vs scifact_rankers")
    parser.add_argument("--oracle", action="store_true", help="per-query best alpha (train)")
    parser.add_argument("--only", default="", help="comma-separated configuration names")
    args = parser.parse_args(argv)
    if not (args.data / "corpus.jsonl").is_file():
        return {"benchmark": "scifact_lexical_variants", "skipped": "no SciFact data at --data"}
    if not (args.grid or args.check) and args.test is None:
        parser.error("--test is needed unless --grid")

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    load_before = loadavg()
    splits = ["train"] if args.grid or args.check else ["train", "test"]
    configs = grid() if args.grid else FINAL
    if args.only:
        wanted = args.only.split(",")
        configs = {n: c for n, c in {**grid(), **combined(), **FINAL}.items() if n in wanted}
    out: dict[str, Any] = {"benchmark": "scifact_lexical_variants", "configs": {}}
    for split in splits:
        data = load_beir(args.data, split)
        collected = _load(args.train if split == "train" else args.test)
        began = time.perf_counter()
        harness = Harness(data, collected.corpus)
        say(f"{split}: indexed {harness.chunks.units} chunks in {time.perf_counter() - began:.1f}s")
        if args.check:
            out["check"] = check(harness, data, collected.queries)
            continue
        if args.oracle and split == "train":
            out["oracle"] = oracle(harness, data, collected.queries, Config())
            say(f"oracle: {out['oracle']}")
        for name, config in configs.items():
            figures = measure(harness, data, collected.queries, config)
            out["configs"].setdefault(name, {})[split] = figures
            say(f"{split} {name}: {figures}")
    out.update(machine=describe(), load_before=load_before, load_after=loadavg())
    return out


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1:]), indent=2))

"""`python -m benchmarks.scifact_variants --split train|test`: ranking variants on SciFact.

One run indexes SciFact once (the product's chunk -> embed -> index path, `biomcp.eval.beir`),
asks the store for both arms of every query once, and then ranks the same candidates every way
listed in `VARIANTS`. Each variant is the product's ranking rule with one hook changed, so the
figures differ only by that hook. It prints one JSON document: per variant nDCG@10, Recall@10,
Recall@100 and MRR@10, with the machine and its load.

Candidates are what `SearchCorpus.ranked` sees at the evaluation's depth (200 chunks,
oversampled twice): each arm's best `candidate_count(400)` = 2,000 chunks. The stored chunk
vectors are read once, for the variants that score a paper by its mean vector.

The embedding cache (`--cache`) makes a second run embed nothing; copy the evaluation's cache
to a file of your own rather than share one with a running evaluation.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pickle
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.machine import describe, loadavg
from benchmarks.scifact_rankers import GRID, VARIANTS, Candidates, Corpus
from biomcp.domain.fusion import candidate_count
from biomcp.entrypoints.backends import EvaluationIndex
from biomcp.entrypoints.settings import load_settings
from biomcp.eval.beir import BeirDataset, BeirEvaluation, beir_pmids, load_beir
from biomcp.eval.metrics import mean_scores, score_ranking

DEPTH = 200
OVERSAMPLE = 2
PAGE = 2000


@dataclass(frozen=True, slots=True)
class Collected:
    """Everything the variants rank: the corpus's chunks and each query's candidates."""

    corpus: Corpus
    queries: dict[str, Candidates]
    index_seconds: float


async def _all_chunks(index: EvaluationIndex, collection: str) -> Corpus:
    rows: list[Any] = []
    after: str | None = None
    while True:
        page = await index.vectors.page_chunks(collection, after=after, limit=PAGE)
        if not page:
            break
        rows.extend(page)
        after = page[-1].uuid
    return Corpus(
        uuids=[r.uuid for r in rows],
        doc_ids=[r.doc_id for r in rows],
        quality=[r.quality_total for r in rows],
        section=[r.section for r in rows],
        evidence_type=[r.evidence_type for r in rows],
        vectors=np.asarray([r.vector for r in rows], dtype=np.float32),
    )


async def collect(data: BeirDataset, cache: Path | None, say: Callable[[str], None]) -> Collected:
    """Index `data` into a throwaway store and gather each query's arms and its vector."""
    settings = load_settings()
    with tempfile.TemporaryDirectory(prefix="scifact-variants-") as scratch:
        index = EvaluationIndex(settings, Path(scratch), cache)
        try:
            evaluation = BeirEvaluation(index.vectors, index.embedder, depth=DEPTH)
            summary = await evaluation.index(data, say)
            corpus = await _all_chunks(index, evaluation.collection)
            position = {u: i for i, u in enumerate(corpus.uuids)}
            k = candidate_count(DEPTH * OVERSAMPLE)
            queries: dict[str, Candidates] = {}
            for qid, text in data.queries.items():
                vector = (await index.embedder.embed([text.strip()]))[0]
                arms = await index.vectors.search_arms(
                    evaluation.collection,
                    text.strip(),
                    vector,
                    keyword_limit=k,
                    vector_limit=k,
                )
                queries[qid] = Candidates(
                    text=text.strip(),
                    vector=np.asarray(vector, dtype=np.float32),
                    keyword=[(position[u], s) for u, s in arms.keyword],
                    dense=[(position[u], s) for u, s in arms.vector],
                )
            say(f"collected {len(queries)} queries over {len(corpus.uuids)} chunks")
        finally:
            await index.aclose()
    return Collected(corpus, queries, summary.seconds)


def evaluate(
    data: BeirDataset, collected: Collected, names: Sequence[str], say: Callable[[str], None]
) -> dict[str, Any]:
    """Score each variant named over the same candidates."""
    beir_id = {
        f"pmid:{pmid}": doc for doc, pmid in beir_pmids(d.doc_id for d in data.documents).items()
    }
    out: dict[str, Any] = {}
    for name in names:
        ranker = {**VARIANTS, **GRID}[name]
        began = time.perf_counter()
        per_query = []
        for qid, cands in collected.queries.items():
            docs = ranker(collected.corpus, cands)
            per_query.append(score_ranking([beir_id.get(d, d) for d in docs], data.qrels[qid]))
        metrics = {k: round(v, 4) for k, v in mean_scores(per_query).items()}
        out[name] = metrics
        say(f"{name}: nDCG@10 {metrics['ndcg@10']:.4f} ({time.perf_counter() - began:.1f}s)")
    return out


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    """The figures of each variant (`--quick`: the first 100 queries). `--lexical` runs the
    BM25-side experiments of `benchmarks.scifact_lexical` instead, `--adaptive` the per-query
    ones (`benchmarks.scifact_lexical.adaptive`), `--late` late interaction (`.late`), `--adapter`
    a linear query adapter learned on train (`.adapter`)."""
    if "--lexical" in argv:
        from benchmarks.scifact_lexical.variants import run as lexical

        return lexical([a for a in argv if a != "--lexical"])
    if "--sentences" in argv:
        from benchmarks.scifact_lexical.sentences import run as sentence_arm

        return sentence_arm([a for a in argv if a != "--sentences"])
    if "--learned" in argv:
        from benchmarks.scifact_lexical.learned import run as learned

        return learned([a for a in argv if a != "--learned"])
    if "--adaptive" in argv:
        from benchmarks.scifact_lexical.adaptive import run as adaptive

        return adaptive([a for a in argv if a != "--adaptive"])
    if "--adapter" in argv:
        from benchmarks.scifact_lexical.adapter import run as adapter

        return adapter([a for a in argv if a != "--adapter"])
    if "--late" in argv:
        from benchmarks.scifact_lexical.late import run as late

        return late([a for a in argv if a != "--late"])
    parser = argparse.ArgumentParser(prog="python -m benchmarks scifact_variants")
    parser.add_argument("--split", choices=("train", "dev", "test"), default="train")
    parser.add_argument("--data", type=Path, default=Path("../shared/data/scifact"))
    parser.add_argument("--cache", type=Path, help="embedding cache file (a copy of your own)")
    parser.add_argument("--candidates", type=Path, help="reuse (or write) collected candidates")
    parser.add_argument(
        "--variants", default="", help="comma-separated names, or grid (default: the kept ones)"
    )
    parser.add_argument("--max-queries", type=int)
    parser.add_argument(
        "--lexical",
        action="store_true",
        help="BM25-side experiments (python -m benchmarks.scifact_lexical.variants --help)",
    )
    args = parser.parse_args(argv)
    if quick and args.max_queries is None:
        args.max_queries = 100
    if not (args.data / "corpus.jsonl").is_file():
        return {"benchmark": "scifact_variants", "skipped": "no SciFact data at --data"}
    known = {**VARIANTS, **GRID}
    names = [n for n in args.variants.split(",") if n] or list(VARIANTS)
    if names == ["grid"]:
        names = list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"unknown variants {unknown}: choose from grid, {', '.join(known)}")

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    load_before = loadavg()
    data = load_beir(args.data, args.split, max_queries=args.max_queries)
    if args.candidates is not None and args.candidates.is_file():
        collected: Collected = pickle.loads(args.candidates.read_bytes())  # noqa: S301 (own file)
    else:
        collected = asyncio.run(collect(data, args.cache, say))
        if args.candidates is not None:
            args.candidates.write_bytes(pickle.dumps(collected))
    figures = evaluate(data, collected, names, say)
    return {
        "benchmark": "scifact_variants",
        "split": args.split,
        "queries": len(collected.queries),
        "chunks": len(collected.corpus.uuids),
        "depth_chunks": DEPTH,
        "machine": describe(),
        "load_before": load_before,
        "load_after": loadavg(),
        "variants": figures,
    }


if __name__ == "__main__":
    print(json.dumps(run(False, sys.argv[1:]), indent=2))

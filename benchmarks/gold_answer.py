"""Gold "answer chunk at rank 1": does a numeric question get the chunk that answers it first?

Setup, as `tests/integration/test_eval.py` has it: the fake E-utilities (in process) serve the
synthetic gold records (`tests/fixtures/gold/records.xml`) and `tests/fixtures/eutils`; three
topics are synced with the configured embedder (default: the ONNX all-MiniLM-L6-v2) into a
temporary data folder. Then every gold question is asked three times of the same corpus, in one
run: with `RerankWeights(numeric_first=False)` (before), with the default weights (after), and
with the default weights but without the best-sentence arm (`after_without_sentence_arm`), and
without neighbour smoothing (`after_without_neighbours`).
`papers_missing` names the questions with an expected paper outside the top k.

For the numeric questions (`must_have_numeric`), `answer_at_1` is the share whose rank-1 hit is
an expected chunk, or a numeric chunk of an expected paper. Recall@10 over all questions shows
that the paper-level ranking did not move.

Run: `python -m benchmarks.gold_answer [--embeddings onnx] [--top-k 10]`; prints JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.machine import describe, goal
from biomcp.domain.rerank import RerankWeights
from biomcp.entrypoints.services import build_services
from biomcp.entrypoints.settings import Settings
from biomcp.eval.gold import GoldEvaluation, GoldReport, load_gold
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer
from biomcp.usecases.search import SearchCorpus

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
GOLD = FIXTURES / "gold"
#: Saved query keys and terms, as the integration test syncs them.
TOPICS = {
    "glp1_obesity_v1": "obesity[tiab]",
    "kras_nsclc_v1": "NSCLC[tiab]",
    "fixtures_v1": "BRCA1[tiab]",
}


def _figures(report: GoldReport) -> dict[str, Any]:
    numeric = [r for r in report.results if r.answer_at_1 is not None]
    missed = sorted(r.question.qid for r in numeric if not r.answer_at_1)
    hits = sum(1 for r in numeric if r.answer_at_1)
    overall = report.as_dict()["overall"]
    return {
        "numeric_questions": len(numeric),
        "answer_at_1": hits,
        "answer_at_1_share": round(hits / len(numeric), 4) if numeric else None,
        "missed": missed,
        "recall@k": overall["recall"],
        "papers_missing": sorted(r.question.qid for r in report.results if r.missing),
        "numeric_found": overall["numeric_found"],
    }


async def _measure(embeddings: str, top_k: int, data_dir: Path) -> dict[str, Any]:
    corpus = FakeCorpus.from_paths([GOLD / "records.xml", FIXTURES / "eutils"])
    questions = load_gold(GOLD / "questions.jsonl")
    with FakeEutilsServer(corpus) as server:
        settings = Settings(
            biomcp_data_dir=data_dir,
            biomcp_embeddings=embeddings,
            ncbi_eutils_base_url=server.base_url,
        )
        services = build_services(settings)
        try:
            for key, term in TOPICS.items():
                await services.sync.run(key, term)
            search = services.search
            sentences, neighbours = search.config.sentence_share, search.config.neighbour_share
            configs = {
                "before": (RerankWeights(numeric_first=False), sentences, neighbours),
                "after": (RerankWeights(), sentences, neighbours),
                "after_without_sentence_arm": (RerankWeights(), 0.0, neighbours),
                "after_without_neighbours": (RerankWeights(), sentences, 0.0),
            }
            figures: dict[str, Any] = {}
            for name, (weights, share, smoothing) in configs.items():
                config = replace(
                    search.config,
                    weights=weights,
                    sentence_share=share,
                    neighbour_share=smoothing,
                )
                corpus_search = SearchCorpus(
                    services.vectors, services.embedder, config=config, metadata=services.metadata
                )
                report = await GoldEvaluation(corpus_search, top_k=top_k).run(questions)
                figures[name] = _figures(report)
            return {"embedder": services.embedder.model_id, **figures}
        finally:
            await services.aclose()


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    del quick  # one size: 36 questions
    parser = argparse.ArgumentParser(prog="python -m benchmarks gold_answer")
    parser.add_argument("--embeddings", default="onnx", help="onnx (default), hf, deterministic")
    parser.add_argument("--top-k", type=int, default=10)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gold-answer-") as tmp:
        figures = asyncio.run(_measure(args.embeddings, args.top_k, Path(tmp)))
    after = figures["after"]["answer_at_1_share"] or 0.0
    return {
        "benchmark": "gold_answer",
        "machine": describe(),
        "config": {"embeddings": args.embeddings, "top_k": args.top_k},
        "goals": {
            "answer_at_1": goal(
                ">= 90% of the numeric gold questions get an answer chunk at rank 1",
                after,
                after >= 0.9,
            )
        },
        "figures": figures,
    }


if __name__ == "__main__":
    import sys

    print(json.dumps(run(False, sys.argv[1:]), indent=2))

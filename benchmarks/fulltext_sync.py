"""A saved query with and without full text: sync cost, and the full-text gold questions.

Setup: the fake E-utilities (in process) serve synthetic distractor records (half with
SYNTHETIC PMC full text) and the 8 real PMC articles of `../shared/data/ncbi_files/pmc/`
with their PubMed twins. Two temporary data folders sync the same two saved queries with the
configured embedder (default: the ONNX all-MiniLM-L6-v2): one without full text, one with.

Figures, side by side in one run:

* sync: seconds, records/s, chunks per paper, texts embedded, embedding seconds, PMC
  requests and characters of article text read;
* gold: every question of `tests/fixtures/gold/fulltext.jsonl` asked of both corpora:
  recall@10 of the answer (a top-10 chunk carries every answer term) and of the paper.

Run: `python -m benchmarks fulltext_sync [--embeddings onnx] [--distractors 300]`; prints JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks.machine import describe, goal
from biomcp.entrypoints.services import build_services
from biomcp.entrypoints.settings import Settings
from biomcp.eval.fulltext_gold import load_fulltext_gold
from biomcp.eval.fulltext_run import ask_fulltext_questions
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer
from biomcp.testing.eutils.pmc_twins import TWIN_TERM
from biomcp.testing.eutils.synthetic import generate_articles

REPO = Path(__file__).resolve().parents[1]
PMC_DIR = REPO.parent / "shared/data/ncbi_files/pmc"
GOLD = REPO / "tests/fixtures/gold/fulltext.jsonl"
DISTRACTOR_TERM = "Journal Article[pt]"


async def _one(
    mode: str, embeddings: str, data_dir: Path, base_url: str, top_k: int
) -> dict[str, Any]:
    settings = Settings(
        biomcp_data_dir=data_dir, biomcp_embeddings=embeddings, ncbi_eutils_base_url=base_url
    )
    services = build_services(settings)
    keep = mode == "fulltext"
    try:
        began = time.perf_counter()
        reports = [
            await services.sync.run("articles", TWIN_TERM, fulltext=keep),
            await services.sync.run("distractors", DISTRACTOR_TERM, fulltext=keep),
        ]
        seconds = time.perf_counter() - began
        records = sum(r.inserted for r in reports)
        full = [r.fulltext for r in reports if r.fulltext is not None]
        chunks = sum(r.chunks_written for r in reports) + sum(f.fulltext_chunks for f in full)
        papers = sum(f.indexed for f in full)
        sync = {
            "seconds": round(seconds, 2),
            "records": records,
            "records_per_s": round(records / seconds, 2) if seconds else None,
            "chunks": chunks,
            "chunks_per_record": round(chunks / records, 2) if records else None,
            "texts_embedded": sum(r.texts_embedded for r in reports)
            + sum(f.texts_embedded for f in full),
            "embed_seconds": round(
                sum(v for r in reports for k, v in r.timings.items() if k.endswith("embed")), 2
            ),
            "fulltext_papers": papers,
            "fulltext_chunks": sum(f.fulltext_chunks for f in full),
            "fulltext_statuses": _merged([f.statuses for f in full]),
            "pmc_requests": sum(f.requests for f in full),
            "pmc_chars_read": sum(f.chars_fetched for f in full),
        }
        questions = load_fulltext_gold(GOLD)
        report = await ask_fulltext_questions(services.search, questions, top_k=top_k)
        return {"sync": sync, "gold": report.summary(), "embedder": services.embedder.model_id}
    finally:
        await services.aclose()


def _merged(counts: list[dict[str, int]]) -> dict[str, int]:
    merged: dict[str, int] = {}
    for one in counts:
        for key, value in one.items():
            merged[key] = merged.get(key, 0) + value
    return dict(sorted(merged.items()))


async def _measure(embeddings: str, distractors: int, top_k: int, root: Path) -> dict[str, Any]:
    articles = generate_articles(
        distractors,
        start=date(2024, 1, 1),
        end=date(2024, 12, 31),
        seed=43,
        pmid_start=32_000_000,
        pmc_share=0.5,
    )
    corpus = FakeCorpus.from_xml_bytes(articles)
    with FakeEutilsServer(corpus, pmc_dir=PMC_DIR) as server:
        return {
            mode: await _one(mode, embeddings, root / mode, server.base_url, top_k)
            for mode in ("abstracts", "fulltext")
        }


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks fulltext_sync")
    parser.add_argument("--embeddings", default="onnx", help="onnx (default), hf, deterministic")
    parser.add_argument("--distractors", type=int, default=60 if quick else 300)
    parser.add_argument("--top-k", type=int, default=10)
    args = parser.parse_args(argv)
    if not PMC_DIR.is_dir():
        return {"benchmark": "fulltext_sync", "skipped": "the shared data folder is not here"}
    with tempfile.TemporaryDirectory(prefix="fulltext-sync-") as tmp:
        figures = asyncio.run(_measure(args.embeddings, args.distractors, args.top_k, Path(tmp)))
    recall = figures["fulltext"]["gold"]["overall"]["answer_recall"]
    return {
        "benchmark": "fulltext_sync",
        "machine": describe(),
        "config": {
            "embeddings": args.embeddings,
            "distractors": args.distractors,
            "top_k": args.top_k,
        },
        "goals": {
            "answer_recall": goal(
                "full-text gold questions: recall@10 >= 0.9 with full text", recall, recall >= 0.9
            )
        },
        "figures": figures,
    }


if __name__ == "__main__":
    import sys

    print(json.dumps(run(False, sys.argv[1:]), indent=2))

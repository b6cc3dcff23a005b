"""Domain throughput: classify + score + chunk every PubMedQA PQA-L abstract on one core.

Reads ../shared/data/pubmedqa/ori_pqal.json (or --data PATH). Reports the wall time of the whole
pass (best of --repeat runs), per-stage times, records/s and chunk statistics.
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks.comparators import comparator_losses
from benchmarks.machine import describe
from biomcp.domain import (
    ChunkingConfig,
    PubMedRecord,
    chunk_record,
    chunking_for_window,
    classify_evidence,
    score_quality,
)
from biomcp.eval.distribution import load_pubmedqa

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared/data/pubmedqa/ori_pqal.json"


def _one_pass(records: list[PubMedRecord], today: date, config: ChunkingConfig) -> dict[str, Any]:
    stages = {"classify": 0.0, "score": 0.0, "chunk": 0.0}
    chunk_counts: list[int] = []
    tokens: list[int] = []
    start = time.perf_counter()
    for record in records:
        t0 = time.perf_counter()
        evidence = classify_evidence(record)
        t1 = time.perf_counter()
        score_quality(record, today, evidence=evidence)
        t2 = time.perf_counter()
        chunks = chunk_record(record, config)
        t3 = time.perf_counter()
        stages["classify"] += t1 - t0
        stages["score"] += t2 - t1
        stages["chunk"] += t3 - t2
        chunk_counts.append(len(chunks))
        tokens.extend(c.token_count for c in chunks)
    total = time.perf_counter() - start
    return {"total_s": total, "stages_s": stages, "chunks": chunk_counts, "tokens": tokens}


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks domain")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    records = load_pubmedqa(args.data)
    if quick:
        records = records[:200]
    config = ChunkingConfig()
    today = date.today()
    runs = [_one_pass(records, today, config) for _ in range(1 if quick else args.repeat)]
    best = min(runs, key=lambda r: r["total_s"])
    return {
        "benchmark": "domain",
        "machine": describe(),
        "config": {
            "quick": quick,
            "records": len(records),
            "repeat": len(runs),
            "chunking": {
                "target_tokens": config.target_tokens,
                "max_tokens": config.max_tokens,
                "overlap_tokens": config.overlap_tokens,
            },
            "threads": 1,
        },
        "goals": {},  # no goal is set for the domain pass
        "figures": {
            "total_s": round(best["total_s"], 4),
            "records_per_s": round(len(records) / best["total_s"], 1),
            "stages_s": {k: round(v, 4) for k, v in best["stages_s"].items()},
            "chunks_total": sum(best["chunks"]),
            "chunks_per_record_mean": round(statistics.mean(best["chunks"]), 2),
            "chunk_tokens_p50": statistics.median(best["tokens"]),
            "chunk_tokens_max": max(best["tokens"]),
            # Comparisons no chunk holds whole (benchmarks/comparators.py), at the spec's
            # budget, all-MiniLM-L6-v2's window (the default embedder) and a tight budget.
            "comparator_loss": {
                f"max_{c.max_tokens}": comparator_losses(records, c).as_dict()
                for c in (
                    config,
                    chunking_for_window(256),
                    ChunkingConfig(target_tokens=100, max_tokens=120, overlap_tokens=25),
                )
            },
        },
    }

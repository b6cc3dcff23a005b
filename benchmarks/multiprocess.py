"""Many processes on one embedded store: a reader's search latency while another process
writes, and how soon a reader sees a writer's commit.

The reader is this process (an `EmbeddedVectorStore` on a collection of --chunks random
chunks); the writer is a child process upserting --batches batches of --batch-size chunks into
the same collection, one write turn each, printing the wall-clock time when each write
returned. The figures, measured in one run:

* hybrid search latency (p50 / p95) in the reader with no writer, then while the writer runs;
  the issue's goal is a p95 ratio under 1.5;
* the same while the same writer writes the same batches to a *copy* of the folder, which the
  reader never follows: what sharing two cores with a busy writer costs by itself, so the
  ratio of "same folder" to "copy" is what following another process's writes costs;
* commit-to-visible: for each write, the time from the writer's return to the first query of
  the reader that reflects it (the reader queries back to back; median and p95);
* the writer's own time per batch (its turn, including following the reader-free rows).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.machine import describe, goal, loadavg

DIM = 384
COLLECTION = "Bench"
WORDS = [
    "aspirin",
    "placebo",
    "randomized",
    "trial",
    "cohort",
    "mortality",
    "stroke",
    "diabetes",
    "insulin",
    "asthma",
    "inhaler",
    "hypertension",
    "statin",
    "cancer",
    "survival",
    "hazard",
    "ratio",
    "odds",
    "confidence",
    "interval",
    "mice",
    "neurons",
    "receptor",
    "expression",
    "pathway",
    "inflammation",
    "biomarker",
]
GOAL_RATIO = 1.5

CHILD = """
import asyncio, json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from benchmarks.multiprocess import COLLECTION, chunks
from biomcp.adapters.vectors import EmbeddedVectorStore

async def main() -> None:
    conf = json.loads(sys.argv[3])
    store = EmbeddedVectorStore(Path(sys.argv[1]))
    await store.count(COLLECTION)
    print("READY", flush=True)
    sys.stdin.readline()
    for batch in range(conf["batches"]):
        began = time.perf_counter()
        start = conf["offset"] + batch * conf["size"]
        await store.upsert_chunks(COLLECTION, chunks(start, conf["size"], seed=batch + 1))
        print(json.dumps({"batch": batch, "returned_at": time.time(),
                          "seconds": time.perf_counter() - began}), flush=True)
    await store.aclose()

asyncio.run(main())
"""


def chunks(start: int, n: int, *, seed: int = 0) -> list[Any]:
    """`n` chunks with ids from `start`: random unit vectors and texts of the WORDS."""
    from biomcp.ports.vectors import ChunkRecord

    rng = np.random.default_rng(seed * 1_000_003 + start)
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    out = []
    for i in range(n):
        words = rng.choice(WORDS, size=40)
        out.append(
            ChunkRecord(
                uuid=f"00000000-0000-4000-8000-{start + i:012d}",
                doc_id=f"pmid:{10_000_000 + (start + i) // 4}",
                chunk_id=f"s{(start + i) % 4}",
                text=" ".join(words),
                vector=vectors[i].tolist(),
                year=2000 + (start + i) % 25,
                evidence_type="clinical",
                quality_total=float((start + i) % 10),
            )
        )
    return out


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(samples),
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p95_ms": round(p95 * 1000, 3),
    }


async def _search_once(store: Any, rng: np.random.Generator) -> float:
    query = rng.standard_normal(DIM).astype(np.float32)
    query /= np.linalg.norm(query)
    text = " ".join(rng.choice(WORDS, size=6))
    from biomcp.usecases.ranking import hybrid_search

    began = time.perf_counter()
    await hybrid_search(store, COLLECTION, text, query.tolist(), limit=20, alpha=0.6)
    return time.perf_counter() - began


def _writer(root: Path, args: argparse.Namespace) -> subprocess.Popen[str]:
    """The writer child on `root`, ready and waiting for a line on its stdin to start."""
    conf = {"batches": args.batches, "size": args.batch_size, "offset": args.chunks}
    child = subprocess.Popen(  # noqa: S603 - this interpreter, our own script
        [sys.executable, "-c", CHILD, str(root), str(Path(__file__).parents[1]), json.dumps(conf)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "READY"
    return child


def _start(child: subprocess.Popen[str]) -> None:
    assert child.stdin is not None
    child.stdin.write("go\n")
    child.stdin.flush()


def _reports(child: subprocess.Popen[str]) -> list[dict[str, Any]]:
    assert child.stdout is not None
    out = [json.loads(line) for line in child.stdout.read().splitlines() if line.startswith("{")]
    child.wait()
    return out


async def _measure(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    from biomcp.adapters.vectors import EmbeddedVectorStore

    data, copy = root / "data", root / "copy"
    store = EmbeddedVectorStore(data)
    await store.ensure_schema(COLLECTION, dim=DIM, model_id="bench-random")
    for start in range(0, args.chunks, 5000):
        await store.upsert_chunks(COLLECTION, chunks(start, min(5000, args.chunks - start)))
    shutil.copytree(data, copy)  # nobody writes now: the copy is a consistent folder
    rng = np.random.default_rng(7)
    for _ in range(20):
        await _search_once(store, rng)
    idle = [await _search_once(store, rng) for _ in range(args.queries)]

    # The writer on the copy: the same work, nothing for the reader to follow.
    elsewhere = _writer(copy, args)
    _start(elsewhere)
    apart: list[float] = []
    while elsewhere.poll() is None:
        apart.append(await _search_once(store, rng))
    _reports(elsewhere)

    child = _writer(data, args)
    gen_before = (await store.index_counts(COLLECTION))["generation"]
    _start(child)
    during: list[float] = []
    seen_at: dict[int, float] = {}  # generation -> wall time the reader first reflected it
    while child.poll() is None:
        during.append(await _search_once(store, rng))
        generation = (await store.index_counts(COLLECTION))["generation"]
        seen_at.setdefault(generation, time.time())
    out = _reports(child)
    generation = (await store.index_counts(COLLECTION))["generation"]
    seen_at.setdefault(generation, time.time())
    await store.aclose()

    # The writer's k-th batch is generation gen_before + k + 1; the reader saw it at the first
    # recorded generation at or above it.
    delays = []
    for entry in out:
        target = gen_before + entry["batch"] + 1
        seen = min((t for g, t in seen_at.items() if g >= target), default=None)
        if seen is not None:
            delays.append(max(0.0, seen - entry["returned_at"]))
    idle_stats, during_stats, apart_stats = _stats(idle), _stats(during), _stats(apart)
    return {
        "search_idle": idle_stats,
        "search_while_writing": during_stats,
        "search_while_writing_a_copy": apart_stats,
        "p95_ratio": round(during_stats["p95_ms"] / idle_stats["p95_ms"], 3),
        "p95_ratio_copy_to_idle": round(apart_stats["p95_ms"] / idle_stats["p95_ms"], 3),
        "p95_ratio_same_to_copy": round(during_stats["p95_ms"] / apart_stats["p95_ms"], 3),
        "commit_to_visible": _stats(delays) if delays else None,
        "writer_batch": _stats([e["seconds"] for e in out]),
        "writes": len(out),
    }


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks multiprocess")
    parser.add_argument("--chunks", type=int, default=5_000 if quick else 50_000)
    parser.add_argument("--queries", type=int, default=200 if quick else 1000)
    parser.add_argument("--batches", type=int, default=20 if quick else 60)
    parser.add_argument("--batch-size", type=int, default=200)
    args = parser.parse_args(argv)
    before = loadavg()
    with tempfile.TemporaryDirectory(prefix="biomcp-bench-mp-") as scratch:
        figures = asyncio.run(_measure(Path(scratch), args))
    ratio = figures["p95_ratio"]
    return {
        "benchmark": "multiprocess",
        "machine": describe(),
        "config": {
            "quick": quick,
            "chunks": args.chunks,
            "queries": args.queries,
            "batches": args.batches,
            "batch_size": args.batch_size,
            "dim": DIM,
            "loadavg_before_after": [before, loadavg()],
        },
        "goals": {
            "search_p95_ratio_while_writing": goal(
                f"reader p95 while another process writes / idle p95 < {GOAL_RATIO}",
                ratio,
                ratio < GOAL_RATIO,
                same_folder_to_copy=figures["p95_ratio_same_to_copy"],
                copy_to_idle=figures["p95_ratio_copy_to_idle"],
            )
        },
        "figures": figures,
    }

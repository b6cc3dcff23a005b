"""The BM25 arm of each vector store on SciFact: the embedded store against Weaviate.

Both stores get the same chunks of the same SciFact documents, through the product's
chunk -> index path (`BeirEvaluation`). The vectors come from the hashing embedder, since only
the BM25 arm is scored: `bm25` mode ranks by keywords alone, so vectors play no part. Both
stores take their terms from `lexical_analysis.py`; a Weaviate class made before that searches
its words as written. What remains is each engine's own BM25 (length quantization, IDF).

Reported per store: nDCG@10, Recall@10, Recall@100 and MRR@10 on the chosen split, and the
per-query differences (queries better, worse, equal on the embedded store).

Run: `python -m benchmarks lexical_parity [--quick] [--split test] [--weaviate URL]`; prints
JSON. Weaviate's URL defaults to `BIOMCP_TEST_WEAVIATE_URL` (what `scripts/services.sh start
weaviate` prints); without one, only the embedded store is measured. Reads
`../shared/data/scifact`; skipped when absent.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import uuid
from pathlib import Path
from typing import Any

from benchmarks.machine import describe, loadavg
from biomcp.eval.beir import BeirDataset, BeirEvaluation, load_beir, modes_for
from biomcp.ports.vectors import Fusion

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "scifact"
#: The embedder window of the product's default model: chunks are cut as they are in a sync.
WINDOW = 256


async def _score(store: Any, data: BeirDataset, collection: str) -> dict[str, Any]:
    from biomcp.adapters.embeddings.hashing import HashingEmbedder

    embedder = HashingEmbedder(dim=64, max_tokens=WINDOW)
    evaluation = BeirEvaluation(store, embedder, collection=collection)
    try:
        await evaluation.index(data)
        (mode,) = modes_for(["bm25"], alpha=0.0, fusion=Fusion.RELATIVE_SCORE)
        result = await evaluation.score(data, mode)
    finally:
        await store.drop_collection(collection)
        await store.aclose()
    return {
        "metrics": {k: round(v, 4) for k, v in result.metrics.items()},
        "per_query": {qid: m["ndcg@10"] for qid, m in result.per_query.items()},
    }


def _compare(embedded: dict[str, float], weaviate: dict[str, float]) -> dict[str, int]:
    better = sum(embedded[q] > weaviate[q] + 1e-9 for q in embedded)
    worse = sum(embedded[q] + 1e-9 < weaviate[q] for q in embedded)
    return {
        "embedded_better": better,
        "embedded_worse": worse,
        "equal": len(embedded) - better - worse,
    }


async def _measure(data: BeirDataset, weaviate_url: str | None, grpc_port: int) -> dict[str, Any]:
    from biomcp.adapters.vectors import EmbeddedVectorStore

    out: dict[str, Any] = {}
    run = uuid.uuid4().hex[:8]  # a collection of its own: runs and tests may share a server
    with tempfile.TemporaryDirectory(prefix="biomcp-parity-") as scratch:
        embedded = await _score(EmbeddedVectorStore(Path(scratch)), data, f"Parity{run}")
    out["embedded"] = embedded["metrics"]
    if weaviate_url is None:
        out["weaviate"] = {"skipped": "no Weaviate URL: pass --weaviate or start the service"}
        return out
    from biomcp.adapters.vectors.weaviate_store import WeaviateVectorStore

    store = WeaviateVectorStore(weaviate_url, grpc_port=grpc_port)
    weaviate = await _score(store, data, f"Parity{run}")
    out["weaviate"] = weaviate["metrics"]
    out["per_query"] = _compare(embedded["per_query"], weaviate["per_query"])
    return out


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks lexical_parity")
    parser.add_argument("--data", type=Path, default=DATA, help="the SciFact BEIR folder")
    parser.add_argument("--split", default="test", help="the qrels split (train or test)")
    parser.add_argument(
        "--weaviate",
        default=os.environ.get("BIOMCP_TEST_WEAVIATE_URL"),
        help="Weaviate's URL (default: BIOMCP_TEST_WEAVIATE_URL)",
    )
    parser.add_argument(
        "--grpc-port",
        type=int,
        default=int(os.environ.get("BIOMCP_TEST_WEAVIATE_GRPC_PORT", "50051")),
        help="Weaviate's gRPC port (default: BIOMCP_TEST_WEAVIATE_GRPC_PORT or 50051)",
    )
    args = parser.parse_args(argv)
    out: dict[str, Any] = {"benchmark": "lexical_parity", "machine": describe()}
    if not (args.data / "corpus.jsonl").is_file():
        return {**out, "skipped": "no SciFact data at --data"}
    data = load_beir(args.data, args.split, max_queries=50 if quick else None)
    out.update(split=args.split, documents=len(data.documents), queries=len(data.queries))
    before = loadavg()
    out.update(asyncio.run(_measure(data, args.weaviate, args.grpc_port)))
    out["load_before"], out["load_after"] = before, loadavg()
    return out

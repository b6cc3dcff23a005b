"""`GET /readyz` latency with a corpus of 20,000 documents in the vector store.

Setup: a fresh data folder whose vector store (the embedded one, and Weaviate too when
BIOMCP_TEST_WEAVIATE_URL is set) is filled with 3 chunks per document by direct writes, with
small random unit vectors: no embedding model, no sync, nothing in SQL. Then `biomcp serve-http`
runs over it in a child process, and `/readyz` is probed over HTTP, one probe at a time.

Reported per backend: the fill; the index status as the probe computed it on every call before
(`maintenance.status()`, a scan of the whole collection), timed in this process; the first probe
(it waits, within its bound, for the process's first index status check); then the median and
p95 of the probes after it, with what each said of the corpus index.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import statistics
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from benchmarks.machine import describe, loadavg
from benchmarks.mcp_http import child_env, percentile_ms, running_server

DIM = 8
CHUNKS_PER_DOCUMENT = 3
BATCH = 2_000
GOAL_MS = 100.0
UNUSED_EUTILS = "http://127.0.0.1:9/"  # nothing here calls NCBI


def _unit(rng: random.Random) -> list[float]:
    vector = [rng.gauss(0.0, 1.0) for _ in range(DIM)]
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


async def _fill(settings: Any, documents: int) -> dict[str, Any]:
    """Write `documents` documents' chunks straight into the store; time the old probe path."""
    from biomcp.entrypoints.services import build_services
    from biomcp.ports.vectors import ChunkRecord

    services = build_services(settings)
    collection = settings.biomcp_collection
    rng = random.Random(documents)
    try:
        vectors = services.vectors
        await vectors.ensure_schema(collection, dim=DIM, model_id="readyz-benchmark-random")
        began = time.perf_counter()
        batch: list[ChunkRecord] = []
        for doc in range(documents):
            for part in range(CHUNKS_PER_DOCUMENT):
                batch.append(
                    ChunkRecord(
                        uuid=str(uuid.uuid5(uuid.NAMESPACE_URL, f"readyz:{doc}:{part}")),
                        doc_id=f"pmid:{doc + 1}",
                        chunk_id=str(part),
                        text=f"synthetic document {doc} part {part}",
                        vector=_unit(rng),
                    )
                )
            if len(batch) >= BATCH:
                await vectors.upsert_chunks(collection, batch)
                batch = []
        if batch:
            await vectors.upsert_chunks(collection, batch)
        fill_s = time.perf_counter() - began
        chunks = await vectors.count(collection)
        began = time.perf_counter()
        try:
            scan: str = (await services.maintenance.status()).describe()
        except Exception as exc:  # a figure too: the scan can outlast the store's query timeout
            scan = f"{type(exc).__name__}: {str(exc)[:160]}"
        scan_s = time.perf_counter() - began
    finally:
        await services.aclose()
    return {
        "documents": documents,
        "chunks": chunks,
        "fill_s": round(fill_s, 1),
        "index_status_scan_ms": round(scan_s * 1000, 1),
        "index_status_scan_said": scan,
    }


def _probe(http: httpx.Client) -> tuple[float, int, str]:
    began = time.perf_counter()
    response = http.get("/readyz")
    elapsed = time.perf_counter() - began
    body = response.json()
    return elapsed, response.status_code, str(body.get("corpus_index", body.get("checks")))


def _probes(env: dict[str, str], cwd: Path, probes: int) -> dict[str, Any]:
    with running_server(env, cwd) as server:
        base = server.url.removesuffix("/mcp")
        with httpx.Client(base_url=base, timeout=60) as http:
            while http.get("/health").status_code != 200:
                time.sleep(0.1)
            first_s, first_code, first_index = _probe(http)
            samples: list[float] = []
            codes: Counter[int] = Counter()
            said: Counter[str] = Counter()
            for _ in range(probes):
                elapsed, code, index = _probe(http)
                samples.append(elapsed)
                codes[code] += 1
                said[index] += 1
    return {
        "first_probe_ms": round(first_s * 1000, 1),
        "first_probe": {"status": first_code, "corpus_index": first_index},
        "probes": probes,
        "p50_ms": round(statistics.median(samples) * 1000, 2),
        "p95_ms": percentile_ms(samples, 95),
        "max_ms": percentile_ms(samples, 100),
        "statuses": {str(code): n for code, n in codes.items()},
        "corpus_index_said": dict(said),
    }


def _backend(name: str, work: Path, documents: int, probes: int) -> dict[str, Any]:
    from biomcp.entrypoints.settings import Settings

    data = work / name
    env = child_env(data, UNUSED_EUTILS, "deterministic", "warning")
    env["BIOMCP_VECTOR_BACKEND"] = name
    collection = f"ReadyzBench{uuid.uuid4().hex[:8]}"
    env["BIOMCP_COLLECTION"] = collection
    if name == "weaviate":
        env["WEAVIATE_URL"] = os.environ["BIOMCP_TEST_WEAVIATE_URL"]
        env["WEAVIATE_GRPC_PORT"] = os.environ.get("BIOMCP_TEST_WEAVIATE_GRPC_PORT", "50051")
    settings = Settings(
        _env_file=None,
        biomcp_data_dir=data,
        biomcp_embeddings="deterministic",
        biomcp_vector_backend=name,
        biomcp_collection=collection,
        weaviate_url=env.get("WEAVIATE_URL", "http://127.0.0.1:8080"),
        weaviate_grpc_port=int(env.get("WEAVIATE_GRPC_PORT", "50051")),
    )
    try:
        figures = asyncio.run(_fill(settings, documents))
        figures |= _probes(env, work, probes)
    finally:
        if name == "weaviate":
            asyncio.run(_drop(settings))
    figures["goal_p95_under_ms"] = GOAL_MS
    figures["goal_met"] = figures["p95_ms"] < GOAL_MS
    return figures


async def _drop(settings: Any) -> None:
    from biomcp.entrypoints.services import build_services

    services = build_services(settings)
    try:
        await services.vectors.drop_collection(settings.biomcp_collection)
    finally:
        await services.aclose()


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks readyz")
    parser.add_argument("--documents", type=int, default=None, help="20000 (quick 2000)")
    parser.add_argument("--probes", type=int, default=20, help="probes after the first")
    args = parser.parse_args(argv)
    documents = args.documents or (2_000 if quick else 20_000)
    backends = ["embedded"]
    if os.environ.get("BIOMCP_TEST_WEAVIATE_URL"):
        backends.append("weaviate")
    before = loadavg()
    with tempfile.TemporaryDirectory(prefix="biomcp-bench-readyz-") as scratch:
        figures = {name: _backend(name, Path(scratch), documents, args.probes) for name in backends}
    return {
        "benchmark": "readyz",
        "machine": describe(),
        "config": {
            "quick": quick,
            "documents": documents,
            "chunks_per_document": CHUNKS_PER_DOCUMENT,
            "dim": DIM,
            "loadavg_before_after": [before, loadavg()],
        },
        "goals": {
            f"{name}_p95_under_{GOAL_MS:g}_ms": result["goal_met"]
            for name, result in figures.items()
        },
        "figures": figures,
    }


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(run("--quick" in sys.argv, [a for a in sys.argv[1:] if a != "--quick"])))

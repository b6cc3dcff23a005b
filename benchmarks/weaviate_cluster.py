"""The Weaviate store on one node and on a three-node cluster on loopback.

Setup: `weaviate-server` processes (the binary `scripts/services.sh` builds) with their own
data folders; one collection of `--chunks` chunks with random unit vectors, replication factor
3 on the cluster. Searches go through the ranking rule (`hybrid_search`: two arms, then the
hits), one at a time and then `--concurrency` at a time.

Reported: schema requests per search with the per-process schema cache and with it cleared
before each search (what every search cost before the cache); search latency (median, p95) and
throughput on one node and on the cluster; CPU seconds of the Weaviate processes per search;
and failover time: from a SIGKILL of the node the store uses to the first search answered by
another node. On a two-core machine the ratios, not the absolute figures, are the point.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks.machine import describe, loadavg
from biomcp.adapters.vectors.weaviate_cluster import ReplicationPolicy
from biomcp.adapters.vectors.weaviate_store import WeaviateVectorStore
from biomcp.ports.vectors import ChunkRecord
from biomcp.testing.weaviate_cluster import WeaviateCluster, find_weaviate_binary
from biomcp.usecases.ranking import hybrid_search

DIM = 64
WORDS = [f"w{i}" for i in range(400)]


def _vector(rng: random.Random) -> list[float]:
    raw = [rng.gauss(0.0, 1.0) for _ in range(DIM)]
    norm = sum(x * x for x in raw) ** 0.5
    return [x / norm for x in raw]


def _chunks(count: int, rng: random.Random) -> list[ChunkRecord]:
    return [
        ChunkRecord(
            uuid=str(uuid.uuid5(uuid.NAMESPACE_OID, f"bench{i}")),
            doc_id=f"d{i // 3}",
            chunk_id=f"c{i % 3}",
            text=" ".join(rng.choices(WORDS, k=40)),
            vector=_vector(rng),
        )
        for i in range(count)
    ]


def _cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds of `pids` so far (from /proc)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _urls(cluster: WeaviateCluster) -> str:
    return ",".join(f"{n.url}?grpc_port={n.grpc_port}" for n in cluster.nodes if n.running)


async def _searches(
    store: WeaviateVectorStore, name: str, count: int, concurrency: int, rng: random.Random
) -> tuple[list[float], float]:
    """Latencies (ms) of `count` searches run `concurrency` at a time, and the wall time."""
    queries = [(" ".join(rng.choices(WORDS, k=3)), _vector(rng)) for _ in range(count)]
    latencies: list[float] = []
    gate = asyncio.Semaphore(concurrency)

    async def one(text: str, vector: list[float]) -> None:
        async with gate:
            start = time.perf_counter()
            await hybrid_search(store, name, text, vector, limit=10)
            latencies.append((time.perf_counter() - start) * 1000)

    start = time.perf_counter()
    await asyncio.gather(*(one(t, v) for t, v in queries))
    return latencies, time.perf_counter() - start


def _summary(latencies: list[float], wall_s: float) -> dict[str, float]:
    ordered = sorted(latencies)
    return {
        "median_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
        "searches_per_s": round(len(ordered) / wall_s, 1),
    }


async def _measure(
    cluster: WeaviateCluster, factor: int, args: argparse.Namespace
) -> dict[str, Any]:
    rng = random.Random(7)
    name = f"Bench{uuid.uuid4().hex[:8]}"
    store = WeaviateVectorStore(_urls(cluster), replication=ReplicationPolicy(factor=factor))
    await store.ensure_schema(name, dim=DIM, model_id="bench")
    chunks = _chunks(args.chunks, rng)
    for start in range(0, len(chunks), 1000):
        await store.upsert_chunks(name, chunks[start : start + 1000])
    await _searches(store, name, 20, 1, rng)  # warm up
    pids = [n.process.pid for n in cluster.nodes if n.process is not None]
    reads = store.schema_reads
    cpu = _cpu_s(pids)
    serial, wall = await _searches(store, name, args.searches, 1, rng)
    cached_reads = (store.schema_reads - reads) / args.searches
    cpu_per_search = (_cpu_s(pids) - cpu) / args.searches
    concurrent, concurrent_wall = await _searches(store, name, args.searches, args.concurrency, rng)
    uncached = 0
    for _ in range(20):  # every search without the cache, as before it
        store._forget()
        before = store.schema_reads
        await _searches(store, name, 1, 1, rng)
        uncached += store.schema_reads - before
    result = {
        "nodes": len(cluster.nodes),
        "replication_factor": factor,
        "serial": _summary(serial, wall),
        f"concurrency_{args.concurrency}": _summary(concurrent, concurrent_wall),
        "weaviate_cpu_ms_per_search": round(cpu_per_search * 1000, 2),
        "schema_requests_per_search_cached": round(cached_reads, 3),
        "schema_requests_per_search_uncached": round(uncached / 20, 3),
    }
    if len(cluster.nodes) > 1:
        result["failover_s"] = await _failover(cluster, store, name, rng)
    await store.aclose()
    return result


async def _failover(
    cluster: WeaviateCluster, store: WeaviateVectorStore, name: str, rng: random.Random
) -> float:
    """Seconds from killing the node in use to the next search answered elsewhere."""
    used = next(n for n in cluster.nodes if n.http_port == store._pool.node.http_port)
    cluster.kill(used)
    start = time.perf_counter()
    await _searches(store, name, 1, 1, rng)
    return round(time.perf_counter() - start, 2)


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks weaviate_cluster")
    parser.add_argument("--chunks", type=int, default=None, help="6000 (quick 1500)")
    parser.add_argument("--searches", type=int, default=None, help="200 (quick 50)")
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args(argv)
    args.chunks = args.chunks or (1_500 if quick else 6_000)
    args.searches = args.searches or (50 if quick else 200)
    binary = find_weaviate_binary()
    if not binary.is_file():
        raise SystemExit(f"no weaviate-server at {binary}: run scripts/services.sh start weaviate")
    before = loadavg()
    results = []
    for size, factor in ((1, 1), (3, 3)):
        with (
            tempfile.TemporaryDirectory(prefix="biomcp-bench-wv-") as root,
            WeaviateCluster(Path(root), size, binary=binary) as cluster,
        ):
            results.append(asyncio.run(_measure(cluster, factor, args)))
    return {
        "benchmark": "weaviate_cluster",
        "machine": describe(),
        "config": {
            "quick": quick,
            "chunks": args.chunks,
            "searches": args.searches,
            "concurrency": args.concurrency,
            "dim": DIM,
            "loadavg_before_after": [before, loadavg()],
        },
        "goals": {},
        "figures": {"one_node": results[0], "three_nodes": results[1]},
    }


if __name__ == "__main__":
    print(json.dumps(run("--quick" in sys.argv, [a for a in sys.argv[1:] if a != "--quick"])))

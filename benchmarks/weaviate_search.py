"""One Weaviate node: the agent's hybrid search, right after an import and once it settled.

Setup: for each memtable flush setting (`--flush-after`, seconds; Weaviate's own default is 60),
a fresh one-node `weaviate-server` (the binary `scripts/services.sh` builds) and one collection
of `--chunks` chunks shaped as a sync writes them: 384 dimensions, eight sentence vectors each,
180 words drawn from a Zipf vocabulary (a few common words, many rare ones).

Reported per setting: the import time; a timeline of search latency from the end of the import
(median per 5 s bucket, searches run back to back for `--watch` seconds); then, settled, the
median and p95 of `--searches` searches and the median of each store call a search makes
(`search_arms`, `sentence_scores`, `hits`). Searches go through `hybrid_search` with limit 20,
as `rag_search` asks. Weaviate answers BM25 from its in-memory memtable until it flushes it to
a segment, and that path is far slower: the timeline shows how long a write keeps search slow.

Also reported once (`terms_refresh`): a collection of `--chunks` chunks as an older bio-mcp made
it (no keyword terms), and the seconds the first write takes to derive its terms in place.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from benchmarks.machine import describe, loadavg
from biomcp.adapters.vectors.weaviate_store import WeaviateVectorStore
from biomcp.ports.vectors import ChunkRecord
from biomcp.testing.weaviate_cluster import (
    FLUSH_DIRTY_AFTER_S,
    FLUSH_SETTING,
    Node,
    WeaviateCluster,
    find_weaviate_binary,
)
from biomcp.testing.weaviate_older import make_older_collection
from biomcp.usecases.ranking import hybrid_search

DIM = 384
SENTENCES = 8
VOCABULARY = [f"term{i}" for i in range(20_000)]
#: Zipf weights: the word of rank r is drawn with weight 1/r.
CUMULATIVE = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(VOCABULARY))))
CALLS = ("search_arms", "sentence_scores", "hits")


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choices(VOCABULARY, cum_weights=CUMULATIVE, k=count))


def _vector(rng: random.Random) -> list[float]:
    raw = [rng.gauss(0.0, 1.0) for _ in range(DIM)]
    norm = sum(x * x for x in raw) ** 0.5
    return [x / norm for x in raw]


def _chunk(index: int, rng: random.Random) -> ChunkRecord:
    return ChunkRecord(
        uuid=str(uuid.uuid5(uuid.NAMESPACE_OID, f"bench-search-{index}")),
        doc_id=f"pmid:{index // 3}",
        chunk_id=f"c{index % 3}",
        text=_words(rng, 180),
        vector=_vector(rng),
        section="RESULTS",
        year=2020,
        journal="Journal",
        pub_types=("Journal Article",),
        metadata={"title": _words(rng, 12)},
        sentence_vectors=tuple(_vector(rng) for _ in range(SENTENCES)),
    )


def _timed(store: WeaviateVectorStore, times: dict[str, list[float]]) -> None:
    """Wrap the store calls a search makes so each call's seconds land in `times`."""
    for name in CALLS:
        call = getattr(store, name)

        def wrapper(
            call: Callable[..., Awaitable[Any]] = call, name: str = name
        ) -> Callable[..., Awaitable[Any]]:
            async def timed(*args: Any, **kwargs: Any) -> Any:
                start = time.perf_counter()
                try:
                    return await call(*args, **kwargs)
                finally:
                    times.setdefault(name, []).append(time.perf_counter() - start)

            return timed

        setattr(store, name, wrapper())


def _ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 1)


def _p95_ms(values: list[float]) -> float:
    ordered = sorted(values)
    return round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 1)


async def _measure(url: str, args: argparse.Namespace, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    store = WeaviateVectorStore(url)
    name = "BenchSearch"
    await store.ensure_schema(name, dim=DIM, model_id="bench")
    start = time.perf_counter()
    for first in range(0, args.chunks, 500):
        last = min(first + 500, args.chunks)
        await store.upsert_chunks(name, [_chunk(i, rng) for i in range(first, last)])
    imported = time.perf_counter()

    async def search() -> float:
        began = time.perf_counter()
        await hybrid_search(store, name, _words(rng, 10), _vector(rng), limit=20)
        return time.perf_counter() - began

    buckets: dict[int, list[float]] = {}
    while (since := time.perf_counter() - imported) < args.watch:
        buckets.setdefault(int(since // 5) * 5, []).append(await search())
    times: dict[str, list[float]] = {}
    _timed(store, times)
    settled = [await search() for _ in range(args.searches)]
    await store.aclose()
    return {
        "import_s": round(imported - start, 2),
        "after_import_median_ms": [
            {"from_s": start, "median_ms": _ms(values)} for start, values in sorted(buckets.items())
        ],
        "settled": {
            "median_ms": _ms(settled),
            "p95_ms": _p95_ms(settled),
            "call_median_ms": {name: _ms(times[name]) for name in CALLS if name in times},
        },
    }


async def _terms_refresh(node: Node, chunks: int) -> dict[str, Any]:
    """Seconds for the first write to derive the keyword terms of a collection an older
    bio-mcp made (no `terms`, no analyzer in its manifest), and that write's chunks/s."""
    rng = random.Random(11)
    name = "BenchOlder"
    records = [_chunk(i, rng) for i in range(chunks)]
    make_older_collection("127.0.0.1", node.http_port, node.grpc_port, name, DIM, records)
    store = WeaviateVectorStore(f"{node.url}?grpc_port={node.grpc_port}")
    try:
        began = time.perf_counter()
        await store.ensure_schema(name, dim=DIM, model_id="m")
        seconds = time.perf_counter() - began
        check = await store.verify(name)
    finally:
        await store.aclose()
    return {
        "chunks": chunks,
        "seconds": round(seconds, 2),
        "chunks_per_s": round(chunks / seconds),
        "problems_after": len(check.problems),
    }


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks weaviate_search")
    parser.add_argument("--chunks", type=int, default=None, help="6000 (quick 1500)")
    parser.add_argument("--searches", type=int, default=None, help="200 (quick 50)")
    parser.add_argument("--watch", type=float, default=None, help="seconds: 75 (quick 20)")
    parser.add_argument(
        "--flush-after",
        default=f"60,{FLUSH_DIRTY_AFTER_S}",
        help="memtable flush settings in s (60: Weaviate's own)",
    )
    args = parser.parse_args(argv)
    args.chunks = args.chunks or (1_500 if quick else 6_000)
    args.searches = args.searches or (50 if quick else 200)
    args.watch = args.watch or (20.0 if quick else 75.0)
    settings = [int(s) for s in args.flush_after.split(",") if s.strip()]
    binary = find_weaviate_binary()
    if not binary.is_file():
        raise SystemExit(f"no weaviate-server at {binary}: run scripts/services.sh start weaviate")
    before = loadavg()
    figures: dict[str, Any] = {}
    for setting in settings:
        env = {FLUSH_SETTING: str(setting)}
        with (
            tempfile.TemporaryDirectory(prefix="biomcp-bench-wvs-") as root,
            WeaviateCluster(Path(root), 1, binary=binary, extra_env=env) as cluster,
        ):
            node = cluster.nodes[0]
            url = f"{node.url}?grpc_port={node.grpc_port}"
            label = f"flush_after_{setting}s"
            figures[label] = asyncio.run(_measure(url, args, seed=7))
            if "terms_refresh" not in figures:
                figures["terms_refresh"] = asyncio.run(_terms_refresh(node, args.chunks))
    return {
        "benchmark": "weaviate_search",
        "machine": describe(),
        "config": {
            "quick": quick,
            "chunks": args.chunks,
            "searches": args.searches,
            "watch_s": args.watch,
            "dim": DIM,
            "sentence_vectors": SENTENCES,
            "loadavg_before_after": [before, loadavg()],
        },
        "goals": {},
        "figures": figures,
    }


if __name__ == "__main__":
    print(json.dumps(run("--quick" in sys.argv, [a for a in sys.argv[1:] if a != "--quick"])))

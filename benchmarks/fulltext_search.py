"""Search latency of the embedded store with full-text chunks mixed in, by source filter.

Corpus: the synthetic chunks of `benchmarks.vectors` (same words, vectors and metadata), where
a share of them (--fulltext-share, default 0.5) is made full-text-like: longer (a second
abstract-like text appended), prefixed with a section path (`Methods > Statistical analysis:`),
10 chunks per paper, with the facet `source=fulltext`. Abstract chunks carry no `source`
facet, as chunks indexed before the facet existed. Full-text chunks are interleaved with the
abstract ones (the first share of every 100 chunk ids), so neither sits in one block of rows.

Built once (build time), then measured in a FRESH process like `vectors`: hybrid (alpha 0.5,
limit 40), BM25-only and vector-only latency p50/p95 for three source filters: none, abstract
only (`exclude_facets` source in {fulltext}) and full text only (`facets` source in
{fulltext}); best of two rounds after a warm-up round; the query vector is given. Also the
first search of each filter after open (its facet sets are read then, and remembered).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.machine import describe
from benchmarks.vectors import (
    BATCH,
    DIM,
    REPO,
    Corpus,
    best_of,
    build_store,
    disk_mb,
    rss_mb,
    time_queries,
)

FULLTEXT = "fulltext"
PER_PAPER = 10  # full-text chunks per paper
PAPER_OFFSET = 50_000_000  # full-text papers' PMIDs, apart from the abstracts' `j // 3`
SECTIONS = (
    "Introduction", "Methods > Study population", "Methods > Statistical analysis",
    "Results > Baseline characteristics", "Results > Primary outcome",
    "Results > Subgroup analysis", "Discussion", "Discussion > Limitations",
)  # fmt: skip
COLLECTION = "Bench"


class MixedCorpus(Corpus):
    """`Corpus` with the first `share` of every 100 chunk ids full-text-like."""

    def __init__(self, share: float) -> None:
        super().__init__()
        self.share = share

    def is_fulltext(self, j: int) -> bool:
        return j % 100 < round(self.share * 100)

    def records(self, b: int, n_total: int) -> list[Any]:
        out = super().records(b, n_total)
        extra = self.texts(b + 1_000_000)  # a block of text no chunk id uses
        start = b * BATCH
        for i, record in enumerate(out):
            j = start + i
            if self.is_fulltext(j):
                path = SECTIONS[(j // PER_PAPER + j) % len(SECTIONS)]
                out[i] = replace(
                    record,
                    doc_id=f"pmid:{PAPER_OFFSET + j // PER_PAPER}",
                    text=f"{path}: {record.text} {extra[i]}",
                    section=path.split(" > ")[0].upper(),
                    facets={"source": (FULLTEXT,)},
                )
        return out


def source_filters() -> dict[str, Any]:
    from biomcp.ports.vectors import SearchFilters

    only = frozenset({FULLTEXT})
    return {
        "no_source_filter": None,
        "abstract_only": SearchFilters(exclude_facets=(("source", only),)),
        "fulltext_only": SearchFilters(facets=(("source", only),)),
    }


ARMS: dict[str, dict[str, Any]] = {
    "hybrid_limit40": {"limit": 40},
    "bm25_only": {"limit": 40, "vec": False},
    "vector_only": {"limit": 40, "alpha": 1.0},
}


def measure(path: str, queries_path: str) -> dict[str, Any]:
    """Run in a fresh process: open, then each source filter's searches."""
    from biomcp.adapters.vectors import EmbeddedVectorStore

    queries = json.loads(Path(queries_path).read_text())

    async def go() -> dict[str, Any]:
        store = EmbeddedVectorStore(Path(path))
        figures: dict[str, Any] = {"count": await store.count(COLLECTION)}
        for name, filters in source_filters().items():
            first = await time_queries(store, COLLECTION, queries[:1], filters=filters, limit=40)
            runs: dict[str, Any] = {"first_search_ms": round(first[0] * 1000, 2)}
            await time_queries(store, COLLECTION, queries, filters=filters, limit=40)  # warm-up
            for arm, kw in ARMS.items():
                rounds = [
                    await time_queries(store, COLLECTION, queries, filters=filters, **kw)
                    for _ in range(2)
                ]
                runs[arm] = best_of(rounds)
            figures[name] = runs
        figures["rss_mb_after_queries"] = rss_mb()["VmRSS"]
        await store.aclose()
        return figures

    return asyncio.run(go())


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks fulltext_search")
    parser.add_argument("--size", type=int, default=1_000_000, help="chunks in the store")
    parser.add_argument("--fulltext-share", type=float, default=0.5,
                        help="share of the chunks that are full text (0..1)")  # fmt: skip
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--data-dir", type=Path, default=None, help="keep the store here")
    parser.add_argument("--reuse", action="store_true", help="reuse the store in --data-dir")
    args = parser.parse_args(argv)
    if not 0.0 <= args.fulltext_share <= 1.0:
        parser.error("--fulltext-share must be between 0 and 1")
    size, n_queries = (10_000, 50) if quick else (args.size, args.queries)
    if size < 1:
        parser.error("--size must be at least 1")
    corpus = MixedCorpus(args.fulltext_share)
    root = args.data_dir or Path(tempfile.mkdtemp(prefix="bench-fulltext-"))
    root.mkdir(parents=True, exist_ok=True)
    share = round(corpus.share * 100)
    path = root / f"mixed-{size}-{share}"
    result: dict[str, Any] = {
        "benchmark": "fulltext_search",
        "machine": describe(),
        "config": {
            "quick": quick,
            "chunks": size,
            "fulltext_chunks": sum(min(share, max(0, size - s)) for s in range(0, size, 100)),
            "fulltext_share": share / 100,
            "fulltext_chunks_per_paper": PER_PAPER,
            "dim": DIM,
            "queries": n_queries,
            "search": "alpha 0.5 hybrid, limit 40 (top_k 20 oversampled x2); latency excludes "
            "query embedding; best of 2 rounds after a warm-up round",
        },
    }
    try:
        if not (args.reuse and (path / COLLECTION / "vectors.json").exists()):
            shutil.rmtree(path, ignore_errors=True)
            result["build"] = build_store(path, size, corpus)
        result["disk_mb"] = disk_mb(path / COLLECTION)
        qpath = root / f"queries-{size}.json"
        qpath.write_text(json.dumps(corpus.queries(n_queries, size)))
        result["searches"] = _in_fresh_process_here(str(path), str(qpath))
    finally:
        if args.data_dir is None:
            shutil.rmtree(root, ignore_errors=True)
    return result


def _in_fresh_process_here(path: str, queries_path: str) -> Any:
    """`measure` in a child interpreter (the store opened cold, as a server would)."""
    code = (
        "import json, sys\n"
        "from benchmarks.fulltext_search import measure\n"
        "print('RESULT ' + json.dumps(measure(*sys.argv[1:3])))\n"
    )
    done = subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-c", code, path, queries_path],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"measure failed:\n{done.stderr[-3000:]}")

"""PubMed XML parse throughput on one core: EFetch PubmedArticleSet bytes -> domain records.

Two corpora: the real EFetch files of ../shared/data/eutils (varied, some very large records
with hundreds of references) and a synthetic set of typical abstracts. Each is parsed --repeat
times; the best run gives records/s and MB/s.
"""

from __future__ import annotations

import argparse
import time
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks.machine import describe, goal
from biomcp.adapters.entrez.pubmed_xml import parse_pubmed_articles

SHARED = Path(__file__).resolve().parents[1].parent / "shared/data/eutils"


def _real_documents(root: Path) -> list[bytes]:
    docs = []
    for path in sorted(root.rglob("*.xml")):
        body = path.read_bytes()
        if b"<PubmedArticleSet" in body[:1000] and b"<PubmedArticle>" in body:
            docs.append(body)
    return docs


def _measure(docs: list[bytes], repeat: int) -> dict[str, Any]:
    best = float("inf")
    records = 0
    for _ in range(repeat):
        start = time.perf_counter()
        records = sum(len(parse_pubmed_articles(d).records) for d in docs)
        best = min(best, time.perf_counter() - start)
    size = sum(len(d) for d in docs)
    return {
        "documents": len(docs),
        "records": records,
        "megabytes": round(size / 1e6, 2),
        "seconds": round(best, 4),
        "records_per_s": round(records / best, 1),
        "mb_per_s": round(size / 1e6 / best, 2),
    }


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks parse")
    parser.add_argument("--synthetic", type=int, default=5000, help="synthetic records")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    repeat = 1 if quick else args.repeat
    figures: dict[str, Any] = {}
    if SHARED.exists():
        real = _real_documents(SHARED)
        # Repeat the small real set so timings are not dominated by timer noise.
        figures["real_eutils_x20"] = _measure(real * 20, repeat)
    from biomcp.testing.eutils.synthetic import generate_articles

    n = 1000 if quick else args.synthetic
    body = generate_articles(n, start=date(2024, 1, 1), end=date(2024, 12, 31), seed=1)
    figures["synthetic"] = _measure([body], repeat)
    return {
        "benchmark": "parse",
        "machine": describe(),
        "config": {
            "quick": quick,
            "repeat": repeat,
            "threads": 1,
            "parser": "lxml (hardened)",
            "synthetic_records": n,
        },
        "goals": _goals(figures),
        "figures": figures,
    }


def _goals(figures: dict[str, Any]) -> dict[str, Any]:
    """Parse >= 2,000 records/s (the goal), on typical abstracts (synthetic) and on the real
    EFetch files (some records carry hundreds of references)."""
    out: dict[str, Any] = {}
    for key, name in (("synthetic", "parse_synthetic"), ("real_eutils_x20", "parse_real_eutils")):
        if key in figures:
            rate = figures[key]["records_per_s"]
            out[f"{name}_records_per_s"] = goal(">= 2000 records/s", rate, rate >= 2000)
    return out

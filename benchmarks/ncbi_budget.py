"""NCBI's rate across processes: what the fake E-utilities receive when several processes on
one data folder send bursts at once, with the shared budget file and without it.

Each child process builds an `HttpEntrezClient`, opens its connection, and waits. All are
released together; each then sends --each searches at once. The fake logs when each request
arrived. The children report the starts their limiter was granted (the shared file's stamps,
or the process's own clock without the file). The figures, per mode:

* `arrivals_most_in_1s`: what NCBI counts, the most requests that arrived within any second
  (the rule: 3 without a key);
* `granted_most_in_span`: the most starts granted within any window plus margin (1.25 s);
* `lag_ms`: from a start to its arrival at the fake (paired in order within each process),
  with its spread (largest minus smallest). The margin covers a spread up to 250 ms.

The arrivals depend on how loaded the machine is; the granted starts do not. Tests assert on
the granted starts only, and this benchmark keeps the arrivals measured.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks.machine import describe, goal, loadavg

RATE = 3  # NCBI's requests per second without a key
TERM = "asthma"

#: Run after `tests.support.budget_audit.AUDITED_FILE_LOG`, which keeps the file's stamps.
_CHILD = """
import asyncio, json, sys, time
from pathlib import Path
from biomcp.adapters.entrez.client import EntrezSettings, HttpEntrezClient

async def main() -> None:
    base, folder, term, count = sys.argv[1:5]
    shared = folder != "-"
    client = HttpEntrezClient(
        EntrezSettings(base_url=base, budget_dir=Path(folder) if shared else None)
    )
    offset = time.time() - time.monotonic()
    try:
        await client.einfo()
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        await asyncio.gather(*(client.esearch(term, retmax=1) for _ in range(int(count))))
    finally:
        await client.aclose()
    starts = granted_starts() if shared else [offset + t for t in client._limiter.history()]
    print(json.dumps(starts[1:]))

asyncio.run(main())
"""


def _released_together(fake: Any, argvs: list[list[str]]) -> list[list[float]]:
    """Run one child per argument list, release them at once; each child's granted starts."""
    from tests.support.budget_audit import AUDITED_FILE_LOG
    from tests.support.in_step import run_in_step

    answers = run_in_step(fake, AUDITED_FILE_LOG + _CHILD, argvs, timeout_s=300)
    return [json.loads(out) for out, _ in answers]


def _round(fake: Any, folder: Path | None, processes: int, each: int) -> dict[str, Any]:
    from tests.support.virtual_time import most_in_span

    terms = [f"{TERM} {index}" for index in range(processes)]
    where = str(folder) if folder is not None else "-"
    granted = _released_together(fake, [[fake.base_url, where, t, str(each)] for t in terms])
    log = [entry for entry in fake.log if entry["endpoint"] == "esearch"]
    lags: list[float] = []
    for term, starts in zip(terms, granted, strict=True):
        arrived = sorted(entry["t"] for entry in log if entry["params"].get("term") == term)
        lags += [a - s for a, s in zip(arrived, sorted(starts), strict=False)]
    every_start = [start for starts in granted for start in starts]
    return {
        "requests": len(log),
        "arrivals_most_in_1s": most_in_span([entry["t"] for entry in log], 1.0),
        "granted_most_in_span": most_in_span(every_start, 1.25),
        "seconds": round(max(every_start) - min(every_start), 2) if every_start else 0.0,
        "lags": lags,
    }


def _mode(fake: Any, shared: bool, processes: int, each: int, rounds: int) -> dict[str, Any]:
    results = []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="biomcp-bench-budget-") as scratch:
            results.append(_round(fake, Path(scratch) if shared else None, processes, each))
    lags = [lag for result in results for lag in result.pop("lags")]
    return {
        "rounds": results,
        "arrivals_most_in_1s": max(r["arrivals_most_in_1s"] for r in results),
        "granted_most_in_span": max(r["granted_most_in_span"] for r in results),
        "lag_ms": {
            "p50": round(statistics.median(lags) * 1000, 1) if lags else None,
            "max": round(max(lags) * 1000, 1) if lags else None,
            "spread": round((max(lags) - min(lags)) * 1000, 1) if lags else None,
        },
    }


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles

    parser = argparse.ArgumentParser(prog="python -m benchmarks ncbi_budget")
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--each", type=int, default=4, help="searches per process, at once")
    parser.add_argument("--rounds", type=int, default=None, help="5 (quick 2) per mode")
    args = parser.parse_args(argv)
    rounds = args.rounds or (2 if quick else 5)
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(20, start=date(2021, 1, 1), end=date(2021, 6, 30), seed=5)
    )
    before = loadavg()
    with FakeEutilsServer(corpus) as fake:
        figures = {
            mode: _mode(fake, mode == "shared", args.processes, args.each, rounds)
            for mode in ("shared", "alone")
        }
    shared = figures["shared"]
    return {
        "benchmark": "ncbi_budget",
        "machine": describe(),
        "config": {
            "quick": quick,
            "processes": args.processes,
            "each": args.each,
            "rounds": rounds,
            "loadavg_before_after": [before, loadavg()],
        },
        "goals": {
            "arrivals_within_ncbis_rule": goal(
                f"<= {RATE} arrivals in any second, processes sharing one folder",
                shared["arrivals_most_in_1s"],
                shared["arrivals_most_in_1s"] <= RATE,
            )
        },
        "figures": figures,
    }

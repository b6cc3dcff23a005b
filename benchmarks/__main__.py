"""`python -m benchmarks <name> [--quick] [options]`: run one benchmark, print its JSON.

`python -m benchmarks all [--quick] [--only a,b] [--skip a,b]` runs every benchmark in turn,
each in a fresh interpreter (no state, memory or loaded model carried from one to the next),
and prints one JSON document: the machine, each benchmark's output (or its error), the seconds
each took with the load average before it, and every goal in one `goals` table.
`python -m benchmarks <name> --help` lists a benchmark's own options.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks import (
    design_audit,
    design_text,
    domain,
    embeddings,
    fulltext_search,
    fulltext_sync,
    gold_answer,
    lexical_parity,
    maintenance,
    mcp_http,
    multiprocess,
    ncbi_budget,
    parse,
    project_search,
    projects,
    readyz,
    replicas,
    scifact_variants,
    sentence_vectors,
    startup,
    sync,
    vectors,
    weaviate_cluster,
    weaviate_search,
)
from benchmarks.machine import describe, loadavg

#: In the order `all` runs them: cheapest first.
BENCHMARKS: dict[str, ModuleType] = {
    "domain": domain,
    "design_text": design_text,
    "design_audit": design_audit,
    "parse": parse,
    "startup": startup,
    "embeddings": embeddings,
    "sync": sync,
    "mcp_http": mcp_http,
    "vectors": vectors,
    "fulltext_search": fulltext_search,
    "projects": projects,
    "multiprocess": multiprocess,
    "ncbi_budget": ncbi_budget,
    "maintenance": maintenance,
    "readyz": readyz,
    "weaviate_cluster": weaviate_cluster,
    "weaviate_search": weaviate_search,
    "replicas": replicas,
    "gold_answer": gold_answer,
    "fulltext_sync": fulltext_sync,
    "scifact_variants": scifact_variants,
    "sentence_vectors": sentence_vectors,
    "project_search": project_search,
    "lexical_parity": lexical_parity,
}
REPO = Path(__file__).resolve().parents[1]


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = sorted(set(names) - set(BENCHMARKS))
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown benchmark(s): {', '.join(unknown)}")
    return names


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
    )
    parser.add_argument("name", nargs="?", choices=[*BENCHMARKS, "all"], help="what to run")
    parser.add_argument("--quick", action="store_true", help="a run under a minute (each)")
    parser.add_argument("--only", type=_names, default=None, help="all: just these (a,b)")
    parser.add_argument("--skip", type=_names, default=[], help="all: not these (a,b)")
    parser.add_argument("-h", "--help", action="store_true", help="this help, or a benchmark's")
    return parser


def run_all(quick: bool, only: list[str] | None, skip: list[str]) -> tuple[dict[str, Any], int]:
    """Every benchmark in a child interpreter; (the document, exit status)."""
    names = [n for n in BENCHMARKS if (only is None or n in only) and n not in skip]
    outputs: dict[str, Any] = {}
    runs: dict[str, Any] = {}
    goals: dict[str, Any] = {}
    status = 0
    began = time.perf_counter()
    for name in names:
        command = [sys.executable, "-m", "benchmarks", name, *(["--quick"] if quick else [])]
        load = loadavg()
        start = time.perf_counter()
        print(f"[benchmarks all] {name}{' --quick' if quick else ''} ...", file=sys.stderr)
        done = subprocess.run(  # noqa: S603 - our own interpreter and module
            command, cwd=REPO, capture_output=True, text=True, check=False
        )
        seconds = round(time.perf_counter() - start, 1)
        runs[name] = {"seconds": seconds, "loadavg_before": load, "returncode": done.returncode}
        try:
            output = json.loads(done.stdout) if done.returncode == 0 else None
        except json.JSONDecodeError:
            output = None
        if output is None:
            status = 1
            outputs[name] = {
                "benchmark": name,
                "error": f"exit status {done.returncode}",
                "stderr_tail": done.stderr[-3000:],
            }
            print(f"[benchmarks all] {name} FAILED ({seconds} s)", file=sys.stderr)
            continue
        outputs[name] = output
        for key, entry in (output.get("goals") or {}).items():
            goals[f"{name}.{key}"] = entry
        print(f"[benchmarks all] {name} done ({seconds} s)", file=sys.stderr)
    document = {
        "runner": "python -m benchmarks all" + (" --quick" if quick else ""),
        "machine": describe(),
        "total_seconds": round(time.perf_counter() - began, 1),
        "runs": runs,
        "goals": goals,
        "benchmarks": outputs,
    }
    return document, status


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args, rest = parser.parse_known_args(argv)
    if args.help:
        if args.name in BENCHMARKS:
            BENCHMARKS[args.name].run(quick=args.quick, argv=["--help"])  # exits
        parser.print_help()
        print("\nbenchmarks: " + ", ".join(BENCHMARKS) + ", all")
        return 0
    if args.name is None:
        parser.error("name a benchmark (or all)")
    if args.name == "all":
        if rest:
            parser.error(f"all takes no benchmark options: {' '.join(rest)}")
        result, status = run_all(args.quick, args.only, args.skip)
    else:
        result, status = BENCHMARKS[args.name].run(quick=args.quick, argv=rest), 0
    json.dump(result, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
    return status


if __name__ == "__main__":
    raise SystemExit(main())

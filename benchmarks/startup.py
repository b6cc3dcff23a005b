"""How soon a fresh process answers: `biomcp serve` over stdio and a cold
`biomcp search`, on a corpus of --chunks chunks in the embedded store.

Each run starts `biomcp serve` (the console script of this environment, the default local
embedder) as an MCP client does and speaks raw JSON-RPC on its stdin/stdout. Times are from the
process start to each answer:

* `initialize` (sent at once), then `tools/list`;
* the first `rag_search` (sent right after `tools/list`: the worst case for the background
  model load), and a second one (the warm cost);
* `biomcp search QUERY --json`, a cold CLI run to its exit;
* `python -c "import biomcp"`.

The corpus holds random unit vectors under the default embedder's model id, with texts of
biomedical words, written straight to the vector store (embedding 10k real chunks would take
minutes and measure the embedder, not the start-up). Median of --runs runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.machine import describe, goal, loadavg

GOALS_S = {"initialize": 1.0, "first_rag_search": 2.0, "cli_search": 2.5}
QUERY = "aspirin stroke mortality randomized trial"


def _biomcp() -> str:
    return str(Path(sys.executable).with_name("biomcp"))


async def _corpus(data: Path, chunks: int) -> None:
    from benchmarks.multiprocess import chunks as make_chunks
    from biomcp.adapters.embeddings.onnx import DIM, MODEL_ID
    from biomcp.adapters.vectors import EmbeddedVectorStore

    store = EmbeddedVectorStore(data / "vectors")
    await store.ensure_schema("PubMedChunk", dim=DIM, model_id=MODEL_ID)
    for start in range(0, chunks, 5000):
        await store.upsert_chunks("PubMedChunk", make_chunks(start, min(5000, chunks - start)))
    await store.aclose()


def _env(data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BIOMCP_", "MCP_"))}
    env["BIOMCP_DATA_DIR"] = str(data)
    env["NCBI_EUTILS_BASE_URL"] = "http://127.0.0.1:9/"  # nothing here talks to NCBI
    return env


def _serve_once(data: Path) -> dict[str, float]:
    began = time.perf_counter()
    child = subprocess.Popen(  # noqa: S603 - this environment's own console script
        [_biomcp(), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=_env(data),
        text=True,
    )
    assert child.stdin is not None
    assert child.stdout is not None
    marks: dict[str, float] = {}

    def ask(ident: int, method: str, params: dict[str, Any], mark: str) -> dict[str, Any]:
        assert child.stdin is not None
        assert child.stdout is not None
        message = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
        child.stdin.write(json.dumps(message) + "\n")
        child.stdin.flush()
        while True:
            line = child.stdout.readline()
            if not line:
                raise RuntimeError(f"biomcp serve exited before answering {method}")
            answer: dict[str, Any] = json.loads(line)
            if answer.get("id") == ident:
                marks[mark] = round(time.perf_counter() - began, 3)
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer

    try:
        ask(
            1,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "startup-bench", "version": "0"},
            },
            "initialize",
        )
        child.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        child.stdin.write("\n")
        child.stdin.flush()
        ask(2, "tools/list", {}, "tools_list")
        search = {"name": "rag_search", "arguments": {"query": QUERY, "top_k": 5}}
        first = ask(3, "tools/call", search, "first_rag_search")
        if first["result"].get("isError"):
            raise RuntimeError(f"rag_search failed: {first['result']}")
        t = time.perf_counter()
        ask(4, "tools/call", search, "second_rag_search_abs")
        marks["second_rag_search"] = round(time.perf_counter() - t, 3)
    finally:
        child.stdin.close()
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    marks.pop("second_rag_search_abs", None)
    return marks


def _timed(argv: list[str], env: dict[str, str]) -> float:
    began = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)  # noqa: S603
    elapsed = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:2]} exited {done.returncode}: {done.stderr[-500:]}")
    return round(elapsed, 3)


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks startup")
    parser.add_argument("--chunks", type=int, default=2_000 if quick else 10_000)
    parser.add_argument("--runs", type=int, default=2 if quick else 5)
    args = parser.parse_args(argv)
    before = loadavg()
    with tempfile.TemporaryDirectory(prefix="biomcp-bench-start-") as scratch:
        data = Path(scratch) / "data"
        asyncio.run(_corpus(data, args.chunks))
        # The first start records the SDK's handshake answers (entrypoints/mcp/prelude.py);
        # the later ones, like every start of an installed server after its first, replay them.
        first_start = _serve_once(data)
        serve_runs = [_serve_once(data) for _ in range(args.runs)]
        env = _env(data)
        cli = [_timed([_biomcp(), "search", QUERY, "--json"], env) for _ in range(args.runs)]
        imports = [_timed([sys.executable, "-c", "import biomcp"], env) for _ in range(args.runs)]
    figures: dict[str, Any] = {
        key: round(statistics.median(r[key] for r in serve_runs), 3) for key in serve_runs[0]
    }
    figures["first_start_ever"] = first_start
    figures["cli_search"] = round(statistics.median(cli), 3)
    figures["import_biomcp"] = round(statistics.median(imports), 3)
    figures["runs"] = {"serve": serve_runs, "cli_search": cli, "import_biomcp": imports}
    return {
        "benchmark": "startup",
        "machine": describe(),
        "config": {
            "quick": quick,
            "chunks": args.chunks,
            "runs": args.runs,
            "loadavg_before_after": [before, loadavg()],
        },
        "goals": {
            name: goal(
                f"{name} <= {limit} s from process start (median)",
                figures[name],
                figures[name] <= limit,
            )
            for name, limit in GOALS_S.items()
        },
        "figures": figures,
    }

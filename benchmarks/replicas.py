"""`rag_search` over Streamable HTTP on 1 or 2 `serve-http` replicas and 1 or 3 Weaviate nodes.

Setup, all on loopback: a fresh PostgreSQL database on the test server (BIOMCP_TEST_POSTGRES_URL,
dropped at the end); `--records` synthetic articles served by `biomcp fake-eutils`; the hashing
embedder, so no model weighs on the figures. First a one-node Weaviate cluster: `db upgrade`,
one `biomcp sync` of every article, then two `biomcp serve-http` replicas (stateless HTTP, each
its own data folder, log level warning). Then a three-node cluster (replication factor 3): the
same database's corpus goes into it with `biomcp index rebuild`, and two replicas again.

Configurations: (a) 1 replica + 1 node, (b) 2 replicas + 1 node, (c) 1 replica + 3 nodes,
(d) 2 replicas + 3 nodes. Every request goes through the tests' round-robin balancer
(`tests/support/balancer.py`, one upstream for one replica), in this process, so the balancer
costs the same in each. `--clients` clients send `tools/call rag_search` back to back (raw
JSON-RPC over httpx, protocol 2025-11-25, no session), cycling through a fixed set of
questions. Each cluster's two configurations alternate over `--rounds` rounds (1, 2, then 2, 1)
so that the machine's other load falls on both alike.

Reported per configuration: requests/s, p50 / p95 latency, CPU seconds per request of the
replicas, of the Weaviate nodes and of this process (clients and balancer), from
/proc/<pid>/stat; how many of the two cores were busy; the ratios b/a, d/c and c/a. On a
two-core machine shared by the client, the replicas and Weaviate, the ratios are the point.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from benchmarks.machine import describe, loadavg
from benchmarks.mcp_http import (
    QUERY_KEY,
    TERM,
    ServerProcess,
    child_env,
    percentile_ms,
    running_server,
)

PMID_START = 31_000_000
PROTOCOL = "2025-11-25"
QUESTIONS = 64
#: (name, replicas, Weaviate nodes); the nodes' replication factor is their count.
CONFIGS = (("a", 1, 1), ("b", 2, 1), ("c", 1, 3), ("d", 2, 3))
RATIOS = (("b_over_a", "b", "a"), ("d_over_c", "d", "c"), ("c_over_a", "c", "a"))
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": PROTOCOL,
}


def process_cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds of `pids` so far (a process gone counts nothing)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


@contextlib.contextmanager
def fresh_database(server_url: str) -> Iterator[str]:
    """A new, empty database on the server of `server_url`, dropped (forcibly) afterwards."""
    from sqlalchemy import create_engine, make_url

    base = make_url(server_url)
    name = f"biomcp_bench_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
        try:
            yield base.set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as connection:
                connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.dispose()


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """`biomcp ARGS` in a child process; its JSON output (timed)."""
    command = [sys.executable, "-c", "from biomcp.entrypoints.cli.main import main; main()"]
    began = time.perf_counter()
    done = subprocess.run(  # noqa: S603 - our own interpreter and CLI
        [*command, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=3600
    )
    wall = round(time.perf_counter() - began, 2)
    if done.returncode != 0:
        raise RuntimeError(f"biomcp {args[0]} failed ({done.returncode}): {done.stderr[-3000:]}")
    return {"wall_s": wall, "report": json.loads(done.stdout) if "--json" in args else None}


def _stack_env(
    base: dict[str, str], data: Path, database: str, cluster: Any, collection: str
) -> dict[str, str]:
    """A child's environment on the database and every node of `cluster`."""
    nodes = ",".join(f"{n.url}?grpc_port={n.grpc_port}" for n in cluster.nodes)
    return {
        **base,
        "BIOMCP_DATA_DIR": str(data),
        "BIOMCP_DATABASE_URL": database,
        "BIOMCP_VECTOR_BACKEND": "weaviate",
        "BIOMCP_COLLECTION": collection,
        "WEAVIATE_URL": nodes,
        "WEAVIATE_REPLICATION_FACTOR": str(len(cluster.nodes)),
        "MCP_HTTP_STATELESS": "true",
    }


async def _call(http: Any, url: str, question: str, call_id: int) -> None:
    """One `tools/call rag_search`; raises on an HTTP, JSON-RPC or tool error."""
    message = {
        "jsonrpc": "2.0",
        "id": call_id,
        "method": "tools/call",
        "params": {"name": "rag_search", "arguments": {"query": question}},
    }
    response = await http.post(url, content=json.dumps(message), headers=HEADERS)
    if response.status_code != 200:
        raise RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")
    data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
    reply = json.loads(data[-1]) if data else response.json()
    if "error" in reply or reply["result"].get("isError"):
        raise RuntimeError(str(reply.get("error") or reply["result"]["content"])[:200])


async def _drive(url: str, questions: list[str], requests: int, clients: int) -> dict[str, Any]:
    """`requests` calls by `clients` clients back to back; latencies, errors, wall time."""
    import httpx

    latencies: list[float] = []
    errors: list[str] = []
    turn = iter(range(requests))

    async def client() -> None:
        async with httpx.AsyncClient(timeout=httpx.Timeout(120.0)) as http:
            for n in turn:
                began = time.perf_counter()
                try:
                    await _call(http, url, questions[n % len(questions)], n)
                except Exception as exc:  # a figure too: counted and shown
                    errors.append(f"{type(exc).__name__}: {exc}"[:200])
                    continue
                latencies.append(time.perf_counter() - began)

    began = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return {"latencies": latencies, "errors": errors, "wall_s": time.perf_counter() - began}


async def _cell(
    replicas: list[ServerProcess],
    nodes: list[int],
    questions: list[str],
    requests: int,
    clients: int,
) -> dict[str, Any]:
    """One measured run through a balancer over `replicas`, with every process's CPU."""
    from tests.support.balancer import round_robin

    upstreams = [("127.0.0.1", int(r.url.rsplit(":", 1)[1].split("/")[0])) for r in replicas]
    async with round_robin(upstreams) as balancer:
        url = f"{balancer.base_url}/mcp"
        pids = [r.pid for r in replicas]
        cpu = (process_cpu_s(pids), process_cpu_s(nodes), time.process_time())
        done = await _drive(url, questions, requests, clients)
        after = (process_cpu_s(pids), process_cpu_s(nodes), time.process_time())
    done["cpu_s"] = [b - a for a, b in zip(cpu, after, strict=True)]
    return done


def _summary(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of one configuration over its rounds."""
    latencies = [x for c in cells for x in c["latencies"]]
    errors = [e for c in cells for e in c["errors"]]
    wall = sum(c["wall_s"] for c in cells)
    replica_s, weaviate_s, client_s = (sum(c["cpu_s"][i] for c in cells) for i in range(3))
    answered = max(len(latencies), 1)
    return {
        "requests": len(latencies) + len(errors),
        "errors": len(errors),
        "error_examples": sorted(set(errors))[:3],
        "requests_per_s": round(len(latencies) / wall, 2),
        "p50_ms": percentile_ms(latencies, 50) if latencies else None,
        "p95_ms": percentile_ms(latencies, 95) if latencies else None,
        "mean_ms": round(statistics.fmean(latencies) * 1000, 2) if latencies else None,
        "replica_cpu_ms_per_request": round(replica_s / answered * 1000, 2),
        "weaviate_cpu_ms_per_request": round(weaviate_s / answered * 1000, 2),
        "client_cpu_ms_per_request": round(client_s / answered * 1000, 2),
        "cores_busy": round((replica_s + weaviate_s + client_s) / wall, 2),
        "rounds_requests_per_s": [round(len(c["latencies"]) / c["wall_s"], 2) for c in cells],
    }


def _replicas(stack: ExitStack, env: dict[str, str], work: Path, count: int) -> list[Any]:
    """`count` replicas, each in its own folder (its data folder, its log), started in turn."""
    started = []
    for index in range(count):
        folder = work / f"replica{index + 1}"
        folder.mkdir(parents=True, exist_ok=True)
        replica_env = {**env, "BIOMCP_DATA_DIR": str(folder / "data")}
        started.append(stack.enter_context(running_server(replica_env, folder)))
    return started


def _cluster_configs(
    cluster: Any, env: dict[str, str], work: Path, args: argparse.Namespace
) -> dict[str, dict[str, Any]]:
    """The 1- and 2-replica configurations on `cluster`, alternating over the rounds."""
    from benchmarks.sync import questions

    asked = questions(QUESTIONS)
    size = len(cluster.nodes)
    names = {count: name for name, count, on in CONFIGS if on == size}
    nodes = [n.process.pid for n in cluster.nodes if n.process is not None]
    cells: dict[int, list[dict[str, Any]]] = {1: [], 2: []}
    per_round = max(args.requests // args.rounds, args.clients)
    with ExitStack() as stack:
        replicas = _replicas(stack, env, work, 2)
        # Warm both replicas (imports, connections, the schema cache) before any figure.
        asyncio.run(_cell(replicas, nodes, asked, 4 * args.clients, args.clients))
        for round_index in range(args.rounds):
            order = (1, 2) if round_index % 2 == 0 else (2, 1)
            for count in order:
                print(f"[replicas] {size} node(s), {count} replica(s), round {round_index + 1}",
                      file=sys.stderr)  # fmt: skip
                cell = _cell(replicas[:count], nodes, asked, per_round, args.clients)
                cells[count].append(asyncio.run(cell))
    return {names[count]: _summary(cells[count]) for count in (1, 2)}


def _ratios(figures: dict[str, dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    keys = (
        "requests_per_s",
        "p50_ms",
        "p95_ms",
        "replica_cpu_ms_per_request",
        "weaviate_cpu_ms_per_request",
    )
    out: dict[str, dict[str, float | None]] = {}
    for label, top, bottom in RATIOS:
        out[label] = {}
        for key in keys:
            num, den = figures[top][key], figures[bottom][key]
            out[label][key] = round(num / den, 3) if num is not None and den else None
    return out


def _measure(work: Path, database: str, eutils_url: str, args: argparse.Namespace) -> Any:
    """Both clusters in turn: the corpus into each, then its two configurations."""
    from biomcp.testing.weaviate_cluster import WeaviateCluster, find_weaviate_binary

    binary = find_weaviate_binary()
    if not binary.is_file():
        raise SystemExit(f"no weaviate-server at {binary}: run scripts/services.sh start weaviate")
    base = child_env(work / "cli", eutils_url, "hashing", "warning")
    collection = f"ReplicasBench{uuid.uuid4().hex[:8]}"
    figures: dict[str, dict[str, Any]] = {}
    loading: dict[str, Any] = {}
    for size in (1, 3):
        root = work / f"cluster{size}"
        with WeaviateCluster(root / "weaviate", size, binary=binary) as cluster:
            env = _stack_env(base, work / "cli", database, cluster, collection)
            if size == 1:
                _cli(["db", "upgrade"], env, work)
                sync = ["sync", "--query-key", QUERY_KEY, "--term", TERM, "--overlap-days", "0"]
                loading["sync_1_node"] = _cli([*sync, "--json", "--quiet"], env, work)
            else:
                rebuild = ["index", "rebuild", "--json", "--quiet"]
                loading["index_rebuild_3_nodes"] = _cli(rebuild, env, work)
            figures |= _cluster_configs(cluster, env, root, args)
    return figures, loading


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks replicas")
    parser.add_argument("--records", type=int, default=None, help="articles (400; quick 100)")
    parser.add_argument("--requests", type=int, default=None, help="per config (400; quick 40)")
    parser.add_argument("--clients", type=int, default=4, help="concurrent clients")
    parser.add_argument("--rounds", type=int, default=None, help="alternations (4; quick 2)")
    args = parser.parse_args(argv)
    records = args.records or (100 if quick else 400)
    args.requests = args.requests or (40 if quick else 400)
    args.rounds = args.rounds or (2 if quick else 4)
    server = os.environ.get("BIOMCP_TEST_POSTGRES_URL")
    if not server:
        raise SystemExit('set BIOMCP_TEST_POSTGRES_URL: eval "$(scripts/services.sh env)"')

    from benchmarks.sync import fake_eutils
    from biomcp.testing.eutils import generate_articles

    before = loadavg()
    end = date.today() - timedelta(days=1)
    body = generate_articles(
        records, start=end - timedelta(days=399), end=end, seed=40, pmid_start=PMID_START
    )
    work = Path(tempfile.mkdtemp(prefix="biomcp-bench-replicas-"))
    # SIGTERM unwinds like Ctrl+C, so every child process is stopped on the way out.
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        corpus = work / "corpus.xml"
        corpus.write_bytes(body)
        with fresh_database(server) as database, fake_eutils(corpus) as eutils_url:
            figures, loading = _measure(work, database, eutils_url, args)
    finally:
        signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(work, ignore_errors=True)
    sync_report = loading["sync_1_node"]["report"] or {}
    rebuild_report = loading["index_rebuild_3_nodes"]["report"] or {}
    return {
        "benchmark": "replicas",
        "machine": describe(),
        "config": {
            "quick": quick,
            "records": records,
            "requests_per_config": args.requests,
            "clients": args.clients,
            "rounds": args.rounds,
            "questions": QUESTIONS,
            "embedder": "hashing",
            "stores": "PostgreSQL (fresh database) + Weaviate cluster (factor = node count)",
            "server": "biomcp serve-http, MCP_HTTP_STATELESS=true, MCP_LOG_LEVEL=warning",
            "client": "raw JSON-RPC tools/call over httpx through tests/support/balancer.py",
            "loadavg_before_after": [before, loadavg()],
        },
        "goals": {},
        "figures": {
            "corpus": {
                "sync_1_node_wall_s": loading["sync_1_node"]["wall_s"],
                "sync_inserted": sync_report.get("inserted"),
                "sync_chunks_written": sync_report.get("chunks_written"),
                "index_rebuild_3_nodes_wall_s": loading["index_rebuild_3_nodes"]["wall_s"],
                "index_rebuild_report": rebuild_report,
            },
            "configs": figures,
            "ratios": _ratios(figures),
        },
    }


if __name__ == "__main__":
    print(json.dumps(run("--quick" in sys.argv, [a for a in sys.argv[1:] if a != "--quick"])))

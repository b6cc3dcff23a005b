"""Sync throughput, replay cost and `rag_search` latency, end to end over HTTP.

Setup: N synthetic PubMed articles (`generate_articles`, Entrez dates spread over the 400 days
before today) served by the fake E-utilities in a SEPARATE process (`biomcp fake-eutils`, so
the server's XML rendering does not share this process's GIL, as NCBI would not); the stores
and use cases come from `build_services(Settings(...))` exactly as the server builds them
(default: SQLite + the embedded vector store in a temporary data dir; `--database-url` /
`--weaviate-url` for PostgreSQL / Weaviate).

1. Sync: one first sync of every article (term `Journal Article[pt]`), wall time, records/s,
   and `SyncReport.timings` per stage (search; fetch = EFetch round trips + XML parse; derive =
   evidence, quality, hash; store = SQL upsert + "behind" query; chunk; embed; index = vector
   upsert, stale deletes, mark indexed), with "excluding embedding" = records / (wall - embed).
   A warm-up before it builds the fake's search index, migrates the database and (hf) loads
   the model, so the figure is the steady state of a sync.
2. Replay: the checkpoint is set back so that the window holds ~1,000 already-synced,
   unchanged records (`--replay`), and the sync is replayed (overlap 0) three times: wall time,
   embedding calls (counted by a pass-through wrapper) and vector writes (must both be 0).
   Each replay also re-checks the stored records outside its window for retractions; the
   fake lists `RETRACTED` retracted articles (the oldest, retracted before the first sync), as
   PubMed always lists some, so the re-check runs as it would against NCBI. It also asks for
   the records revised since the first sync (`revisions_found`: the synthetic articles whose
   DateRevised is today, fetched and skipped).
3. `rag_search` through the MCP server (`build_server` + an in-process `mcp.Client`): N calls
   (`--searches`) over a rotating set of questions, p50 / p95 / mean; the same queries through
   `SearchCorpus` directly show what the MCP layer adds.

`--embedder hf` syncs with the real all-MiniLM-L6-v2 (int8-quantized) instead of the
deterministic hashing embedder. `--profile` runs one more first sync of the same corpus in a
fresh data dir under cProfile, with worker-thread offloads (`asyncio.to_thread`) run inline
so the SQL and vector-store work is seen, and lists the top functions.

The client's rate limiter: the run sets `NCBI_API_KEY` (any string; the fake ignores it), which
lifts the limiter from 3 to 10 requests/s (starts 110 ms apart). A first sync of N records
sends 1 ESearch + N/500 EFetch requests, so the limiter's floor is ~0.11 s per 500 records
(<= 0.22 ms/record, a 4,500 records/s ceiling) and does not dominate; `config.rate_limit`
reports the floor of this run. `NCBI_REQUEST_DELAY_MS` could only make it slower.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import logging
import os
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Collection, Iterator, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.machine import describe, goal

TERM = "Journal Article[pt]"
#: Articles of the fake's corpus retracted before the first sync.
RETRACTED = 3
KEY = "bench_all"
RATE_PER_S_WITH_KEY = 10.0
CONDITIONS = [
    "asthma", "type 2 diabetes", "hypertension", "breast cancer", "COVID-19",
    "Alzheimer disease", "ischemic stroke", "obesity", "major depression", "sepsis",
    "heart failure", "chronic kidney disease",
]  # fmt: skip
INTERVENTIONS = [
    "metformin", "aspirin", "vitamin D supplementation", "exercise training",
    "cognitive behavioural therapy", "inhaled corticosteroids", "statin therapy",
    "mediterranean diet",
]  # fmt: skip
OUTCOMES = [
    "mortality", "hospital readmission", "quality of life", "blood pressure",
    "glycated haemoglobin", "symptom burden", "inflammatory markers", "functional decline",
]  # fmt: skip
LEADS = ["does", "randomized trial:", "effect of", "evidence for"]


def questions(count: int, offset: int = 0) -> list[str]:
    """`count` distinct questions in the corpus's vocabulary (3,072 before they repeat), so
    the embedding cache never answers for the query and each call embeds it."""
    out = []
    for i in range(offset, offset + count):
        condition = CONDITIONS[i % 12]
        intervention = INTERVENTIONS[(i // 12) % 8]
        outcome = OUTCOMES[(i // 96) % 8]
        lead = LEADS[(i // 768) % 4]
        out.append(f"{lead} {intervention} change {outcome} in {condition}")
    return out


# --- pass-through counters -------------------------------------------------------------------


class CountingEmbedder:
    """Counts `embed` calls and texts; everything else is the inner embedder's."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls = 0
        self.texts = 0

    @property
    def model_id(self) -> str:
        return str(self.inner.model_id)

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    @property
    def max_tokens(self) -> int | None:
        return self.inner.max_tokens  # type: ignore[no-any-return]

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        self.texts += len(texts)
        return await self.inner.embed(texts)  # type: ignore[no-any-return]


class CountingVectors:
    """Counts vector writes (upserts, deletes); reads pass through."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.writes = 0

    async def upsert_chunks(self, collection: str, chunks: Sequence[Any]) -> Any:
        self.writes += 1
        return await self.inner.upsert_chunks(collection, chunks)

    async def delete_chunks(
        self, collection: str, doc_id: str, *, keep: Collection[str] = ()
    ) -> int:
        self.writes += 1
        return int(await self.inner.delete_chunks(collection, doc_id, keep=keep))

    async def delete_documents(self, collection: str, doc_ids: Collection[str]) -> int:
        self.writes += 1
        return int(await self.inner.delete_documents(collection, doc_ids))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


# --- the fake NCBI in its own process ----------------------------------------------------------


_SERVERS: list[int] = []  # the pids of the running fake E-utilities (their CPU is reported)


def _child_cpu_s() -> float:
    """CPU seconds (user + system) the running fake E-utilities have used so far."""
    total = 0.0
    for pid in _SERVERS:
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


@contextlib.contextmanager
def fake_eutils(corpus_file: Path) -> Iterator[str]:
    """`biomcp fake-eutils` serving `corpus_file` in a child process; yields its base URL."""
    command = [
        sys.executable,
        "-c",
        "from biomcp.entrypoints.cli.main import main; main()",
        "fake-eutils",
        str(corpus_file),
    ]
    log = corpus_file.with_suffix(".log")
    with (
        log.open("w") as errors,
        subprocess.Popen(  # noqa: S603 - our own interpreter and CLI
            command, stdout=subprocess.PIPE, stderr=errors, text=True
        ) as child,
    ):
        try:
            assert child.stdout is not None
            line = child.stdout.readline()
            match = re.search(r"(http://\S+)", line)
            if match is None:
                raise RuntimeError(
                    f"the fake E-utilities did not start: {line!r} {log.read_text()[-2000:]}"
                )
            _SERVERS.append(child.pid)
            yield match.group(1)
        finally:
            with contextlib.suppress(ValueError):
                _SERVERS.remove(child.pid)
            child.terminate()
            try:
                child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def _retract(base_url: str, pmids: Sequence[str]) -> None:
    """Retract `pmids` in the fake E-utilities (its admin route), as PubMed would."""
    import httpx

    for number, pmid in enumerate(pmids):
        answer = httpx.post(
            f"{base_url}/_fake/retract",
            json={"pmid": pmid, "notice_pmid": str(39_000_001 + number)},
            timeout=30,
        )
        answer.raise_for_status()


@contextlib.contextmanager
def fresh_schema(url: str) -> Iterator[str]:
    """`url` pointed at a new PostgreSQL schema, migrated to head; dropped afterwards."""
    from sqlalchemy import create_engine, make_url

    from biomcp.adapters.sql import upgrade

    schema = f"bench_sync_{os.getpid()}_{time.monotonic_ns() % 10**9}"
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
        scoped = make_url(url).update_query_dict({"options": f"-csearch_path={schema}"})
        scoped_url = scoped.render_as_string(hide_password=False)
        upgrade(scoped_url)
        yield scoped_url
    finally:
        with engine.begin() as connection:
            connection.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        engine.dispose()


@contextlib.contextmanager
def _database(url: str | None) -> Iterator[str | None]:
    """None (SQLite in the data dir), or a fresh schema of the PostgreSQL database `url`."""
    if url is None:
        yield None
        return
    with fresh_schema(url) as scoped:
        yield scoped


# --- figures -------------------------------------------------------------------------------


def _ms(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    k = (len(ordered) - 1) * q / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return round((ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)) * 1000, 2)


def _latency(samples: Sequence[float]) -> dict[str, float]:
    return {
        "calls": len(samples),
        "p50_ms": _ms(samples, 50),
        "p95_ms": _ms(samples, 95),
        "mean_ms": round(statistics.fmean(samples) * 1000, 2),
        "max_ms": _ms(samples, 100),
    }


def _stages(report: Any, wall: float) -> dict[str, Any]:
    timings = dict(report.timings)
    accounted = sum(timings.values())
    return {
        "seconds": {k: round(v, 3) for k, v in timings.items()},
        "share_of_wall_pct": {k: round(100 * v / wall, 1) for k, v in timings.items()},
        "unattributed_s": round(wall - accounted, 3),
        "ms_per_record": {
            k: round(1000 * v / max(1, report.pmids_processed), 3) for k, v in timings.items()
        },
    }


def _settings(
    args: argparse.Namespace, data_dir: Path, base_url: str, database_url: str | None
) -> Any:
    from biomcp.entrypoints.settings import Settings

    values: dict[str, Any] = {
        "biomcp_data_dir": data_dir,
        "ncbi_eutils_base_url": base_url,
        "ncbi_api_key": "benchmark-key",
        "ncbi_request_delay_ms": 0,
        "biomcp_embeddings": args.embedder,
        "biomcp_onnx_precision": args.precision,
        "biomcp_embedding_cache": not args.no_embedding_cache,
        "biomcp_sync_batch_size": args.batch_size,
        "biomcp_sync_initial_days": 0,
        "biomcp_collection": f"BenchSync{os.getpid()}x{time.monotonic_ns() % 10**9}",
    }
    if database_url:
        values["biomcp_database_url"] = database_url
    if args.weaviate_url:
        values["biomcp_vector_backend"] = "weaviate"
        values["weaviate_url"] = args.weaviate_url
        values["weaviate_grpc_port"] = args.weaviate_grpc_port
    return Settings(**values)


def _sync_use_case(services: Any) -> tuple[Any, CountingEmbedder, CountingVectors]:
    """The services' SyncDelta, rebuilt around counting wrappers of their own adapters."""
    from biomcp.usecases.sync import SyncDelta

    embedder = CountingEmbedder(services.embedder)
    vectors = CountingVectors(services.vectors)
    # Syncs talk to NCBI directly (the services' `ncbi`), never through a response cache.
    entrez = services.ncbi
    sync = SyncDelta(
        entrez,
        services.metadata,
        vectors,
        embedder,
        clock=services.clock,
        config=services.sync.config,
    )
    return sync, embedder, vectors


async def _warm_up(services: Any, embedder: CountingEmbedder, sync: Any) -> None:
    await sync.run("bench_warmup", "zzqqxxnotaword")  # fake index, DB migration, job tables
    await embedder.embed(["warm-up: load the model"])


def _replay_start(edats: list[datetime], target: int) -> date:
    """The first day of a window holding at least `target` of the records (newest)."""
    days = sorted((e.astimezone(UTC).date() for e in edats), reverse=True)
    return days[min(target, len(days)) - 1]


async def _measure(
    args: argparse.Namespace,
    base_url: str,
    data_dir: Path,
    database_url: str | None,
    edats: list[datetime],
) -> dict[str, Any]:
    from mcp import Client

    from biomcp.entrypoints.mcp.server import build_server
    from biomcp.entrypoints.services import build_services

    services = build_services(_settings(args, data_dir, base_url, database_url))
    figures: dict[str, Any] = {}
    try:
        sync, embedder, vectors = _sync_use_case(services)
        began = time.perf_counter()
        await _warm_up(services, embedder, sync)
        figures["warm_up_s"] = round(time.perf_counter() - began, 3)

        embedder.calls = embedder.texts = 0
        began, cpu, served = time.perf_counter(), time.process_time(), _child_cpu_s()
        report = await sync.run(KEY, TERM, 0)
        wall = time.perf_counter() - began
        cpu, served = time.process_time() - cpu, _child_cpu_s() - served
        embed = report.timings.get("embed", 0.0)
        figures["sync"] = {
            "records": report.pmids_processed,
            "inserted": report.inserted,
            "chunks": report.chunks_written,
            "wall_s": round(wall, 3),
            # CPU of this process (every thread) over the sync, and the cores that kept busy
            "cpu_s": round(cpu, 3),
            "cores_busy": round(cpu / wall, 2),
            # ... and of the fake E-utilities serving it (NCBI's, in real use)
            "fake_eutils_cpu_s": round(served, 3),
            "records_per_s": round(report.pmids_processed / wall, 1),
            "records_per_s_excluding_embedding": round(report.pmids_processed / (wall - embed), 1),
            "embedding_calls": embedder.calls,
            "texts_embedded": embedder.texts,
            "chunks_per_s_embedding": round(embedder.texts / embed, 1) if embed else None,
            "stages": _stages(report, wall),
            "warnings": list(report.warnings),
        }

        start = _replay_start(edats, args.replay)
        rounds: list[dict[str, Any]] = []
        for _ in range(3):
            await services.saved_queries.set(
                KEY, datetime.combine(start, datetime.min.time(), UTC), reason="benchmark replay"
            )
            embedder.calls = embedder.texts = 0
            vectors.writes = 0
            began = time.perf_counter()
            replay = await sync.run(KEY, TERM, 0)
            seconds = time.perf_counter() - began
            rounds.append(
                {
                    "wall_s": round(seconds, 3),
                    "records": replay.pmids_processed,
                    "revisions_found": replay.revisions_found,
                    "inserted": replay.inserted,
                    "updated": replay.updated,
                    "skipped": replay.skipped,
                    "embedding_calls": embedder.calls,
                    "vector_writes": vectors.writes,
                    "retractions_rechecked": replay.retractions_rechecked,
                    "newly_retracted": len(replay.newly_retracted),
                    "stages_s": dict(replay.timings),
                }
            )
        walls = [r["wall_s"] for r in rounds]
        figures["replay"] = {
            "window_first_day": start.isoformat(),
            "records": rounds[0]["records"],
            "median_wall_s": round(statistics.median(walls), 3),
            "best_wall_s": min(walls),
            "embedding_calls": sum(r["embedding_calls"] for r in rounds),
            "vector_writes": sum(r["vector_writes"] for r in rounds),
            "rounds": rounds,
        }

        # The SDK's server configures the root logger (INFO, to stderr): keep ours as it was.
        root = logging.getLogger()
        level, handlers = root.level, list(root.handlers)
        server = build_server(services)
        root.setLevel(level)
        root.handlers[:] = handlers
        warm, queries = questions(3), questions(args.searches, offset=3)
        direct_queries = questions(args.searches, offset=3 + args.searches)
        async with Client(server) as client:
            for query in warm:  # warm-up: first-call costs (index open, schema cache)
                await client.call_tool("rag_search", {"query": query})
            samples, empty = [], 0
            for query in queries:
                began = time.perf_counter()
                result = await client.call_tool("rag_search", {"query": query})
                samples.append(time.perf_counter() - began)
                if result.is_error:
                    raise RuntimeError(f"rag_search failed: {result.content}")
                structured = result.structured_content or {}
                empty += not structured.get("results")
        direct = []
        for query in direct_queries:
            began = time.perf_counter()
            await services.search.run(query)
            direct.append(time.perf_counter() - began)
        figures["rag_search_mcp"] = {
            **_latency(samples),
            "top_k": 20,
            "empty_results": empty,
            "queries": "distinct (query embedding included: no cache hit)",
        }
        figures["rag_search_direct"] = _latency(direct)
    finally:
        await _close(services)
    return figures


async def _close(services: Any) -> None:
    """Close the services; drop the benchmark's Weaviate class when there was one."""
    await services.aclose()
    settings = services.settings
    if settings.biomcp_vector_backend == "weaviate":
        import httpx

        async with httpx.AsyncClient(base_url=settings.weaviate_url, timeout=60) as client:
            await client.delete(f"/v1/schema/{settings.biomcp_collection}")


@contextlib.contextmanager
def _inline_threads() -> Iterator[None]:
    """Run `asyncio.to_thread` work inline, so cProfile (main thread only) sees it."""
    original = asyncio.to_thread

    async def inline(func: Any, /, *args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    asyncio.to_thread = inline
    try:
        yield
    finally:
        asyncio.to_thread = original


async def _profile(
    args: argparse.Namespace, base_url: str, data_dir: Path, database_url: str | None
) -> dict[str, Any]:
    from biomcp.entrypoints.services import build_services

    services = build_services(_settings(args, data_dir, base_url, database_url))
    try:
        sync, embedder, _ = _sync_use_case(services)
        await _warm_up(services, embedder, sync)
        profiler = cProfile.Profile()
        with _inline_threads():
            began = time.perf_counter()
            profiler.enable()
            report = await sync.run(KEY, TERM, 0)
            profiler.disable()
            wall = time.perf_counter() - began
    finally:
        await _close(services)
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    rows = []
    for (filename, line, name), (_, calls, tottime, cumtime, _) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append((cumtime, tottime, calls, f"{_short(filename)}:{line}({name})"))
    top_cum = sorted(rows, reverse=True)[:30]
    top_tot = sorted(rows, key=lambda r: r[1], reverse=True)[:30]
    return {
        "note": "cProfile, to_thread work inlined; absolute times are inflated by profiling",
        "wall_s": round(wall, 3),
        "records": report.pmids_processed,
        "stages_s": dict(report.timings),
        "top_cumulative": [
            {"fn": fn, "cum_s": round(c, 3), "own_s": round(t, 3), "calls": n}
            for c, t, n, fn in top_cum
        ],
        "top_own_time": [
            {"fn": fn, "own_s": round(t, 3), "cum_s": round(c, 3), "calls": n}
            for c, t, n, fn in top_tot
        ],
    }


def _short(filename: str) -> str:
    for marker in ("site-packages/", "/src/", "/lib/python3"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks sync")
    parser.add_argument("--records", type=int, default=None, help="articles (3000; quick 1000)")
    parser.add_argument("--replay", type=int, default=1000, help="records in the replay window")
    parser.add_argument("--searches", type=int, default=None, help="rag_search calls (200; 50)")
    parser.add_argument(
        "--embedder", choices=["deterministic", "onnx", "hf"], default="deterministic"
    )
    parser.add_argument(
        "--precision",
        choices=["auto", "fp32", "int8"],
        default="auto",
        help="what --embedder onnx computes in (auto: int8 on a CPU with VNNI / AMX)",
    )
    parser.add_argument("--batch-size", type=int, default=500, help="records per sync batch")
    parser.add_argument("--no-embedding-cache", action="store_true")
    parser.add_argument("--database-url", default=None, help="PostgreSQL URL (default SQLite)")
    parser.add_argument("--weaviate-url", default=None, help="Weaviate (default: embedded)")
    parser.add_argument("--weaviate-grpc-port", type=int, default=50051)
    parser.add_argument("--profile", action="store_true", help="also a cProfile'd first sync")
    args = parser.parse_args(argv)
    records = args.records or (1000 if quick else 3000)
    args.replay = min(args.replay, records)
    args.searches = args.searches or (50 if quick else 200)
    if args.embedder == "hf":
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

    from biomcp.testing.eutils import FakeCorpus, generate_articles

    end = date.today() - timedelta(days=1)
    body = generate_articles(records, start=end - timedelta(days=399), end=end, seed=2024)
    dated = [(edat, e) for e in FakeCorpus.from_xml_bytes(body) if (edat := e.fields.edat)]
    edats = [edat for edat, _ in dated]
    # PubMed always lists retracted publications: the oldest few are retracted before the
    # first sync (so the re-check of every later sync finds them, flagged already).
    retracted = [e.pmid for _, e in sorted(dated, key=lambda pair: pair[0])][:RETRACTED]
    load_before = os.getloadavg()[0]
    work = Path(tempfile.mkdtemp(prefix="biomcp-bench-sync-"))
    try:
        corpus_file = work / "corpus.xml"
        corpus_file.write_bytes(body)
        with fake_eutils(corpus_file) as base_url:
            _retract(base_url, retracted)
            with _database(args.database_url) as database_url:
                figures = asyncio.run(_measure(args, base_url, work / "data", database_url, edats))
            if args.profile:
                with _database(args.database_url) as database_url:
                    figures["profile"] = asyncio.run(
                        _profile(args, base_url, work / "profiled", database_url)
                    )
    finally:
        shutil.rmtree(work, ignore_errors=True)

    sync, replay = figures["sync"], figures["replay"]
    requests = 1 + -(-records // args.batch_size)
    return {
        "benchmark": "sync",
        "machine": describe(),
        "config": {
            "quick": quick,
            "records": records,
            "term": TERM,
            "embedder": args.embedder,
            "onnx_precision": args.precision if args.embedder == "onnx" else None,
            "embedding_cache": not args.no_embedding_cache,
            "batch_size": args.batch_size,
            "metadata": "postgresql" if args.database_url else "sqlite",
            "vectors": "weaviate" if args.weaviate_url else "embedded",
            "fake_eutils": "separate process (biomcp fake-eutils), HTTP on 127.0.0.1",
            "rate_limit": {
                "setting": "NCBI_API_KEY set (any string): 10 requests/s, starts 110 ms apart",
                "requests_first_sync": requests,
                "limiter_floor_s": round((requests - 1) * 1.1 / RATE_PER_S_WITH_KEY, 2),
            },
            "replay_target": args.replay,
            "searches": args.searches,
            "loadavg_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        },
        "goals": {
            "sync_excluding_embedding_records_per_s": goal(
                ">= 500 records/s (end to end against the fake, embedding time excluded)",
                sync["records_per_s_excluding_embedding"],
                sync["records_per_s_excluding_embedding"] >= 500,
            ),
            "replay_unchanged_window": goal(
                "1,000 unchanged records < 2 s, 0 embedding calls",
                {
                    "records": replay["records"],
                    "median_wall_s": replay["median_wall_s"],
                    "embedding_calls": replay["embedding_calls"],
                    "vector_writes": replay["vector_writes"],
                },
                replay["records"] >= 1000
                and replay["median_wall_s"] < 2
                and replay["embedding_calls"] == 0,
            ),
        },
        "figures": figures,
    }

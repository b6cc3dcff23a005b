"""`biomcp index verify` and `biomcp index rebuild` on a synced corpus of about 100k chunks.

Setup: N synthetic articles served by `biomcp fake-eutils` in a child process, synced into a
fresh data folder (SQLite + the embedded store) with the deterministic embedder behind the
embedding cache, so the cache holds every chunk afterwards. Measured, through the container's
`IndexMaintenance`, as the CLI runs it:

* `verify`: every stored document re-chunked and its chunks looked up in the store, plus the
  store's own checks (rows, lexical index, snapshot checksums);
* `rebuild`: every document re-chunked and re-indexed, embedding through the cache (the hits
  and misses say whether anything was embedded again);
* `rebuild --reset`: the collection dropped and refilled from SQL;
* the recency pass every sync ends with (`usecases.rescoring`): when nothing is stale (one
  query over the score columns, what every sync of a year pays), and at the first sync six
  years on, when every record's recency moves (every score stored again and every chunk
  rewritten with its stored vector: the worst New Year);
* exporting the saved query's records (`biomcp export -k`) as RIS and as CSV, to a file;
* forgetting the saved query with its records (`biomcp checkpoint delete --records`), last:
  every record and chunk deleted.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from benchmarks.machine import describe, loadavg
from benchmarks.sync import fake_eutils

COLLECTION = "PubMedChunk"


async def _measure(data: Path, base_url: str) -> dict[str, Any]:
    from biomcp.entrypoints.services import build_services
    from biomcp.entrypoints.settings import Settings

    settings = Settings(
        _env_file=None,
        biomcp_data_dir=data,
        ncbi_eutils_base_url=base_url,
        ncbi_api_key="benchmark-key",
        ncbi_request_delay_ms=0,
        biomcp_embeddings="deterministic",
        biomcp_sync_initial_days=0,
    )
    services = build_services(settings)
    try:
        began = time.perf_counter()
        report = await services.sync.run("bench_v1", "humans[mh] OR animals[mh]")
        sync_s = time.perf_counter() - began
        stats = await services.vectors.stats(COLLECTION)
        cache: Any = services.embedder

        began = time.perf_counter()
        check = await services.maintenance.verify()
        verify_s = time.perf_counter() - began

        hits, misses = cache.hits, cache.misses
        began = time.perf_counter()
        rebuilt = await services.maintenance.rebuild()
        rebuild_s = time.perf_counter() - began
        rebuild_cache = {"hits": cache.hits - hits, "misses": cache.misses - misses}

        hits, misses = cache.hits, cache.misses
        began = time.perf_counter()
        await services.maintenance.rebuild(reset=True)
        reset_s = time.perf_counter() - began
        reset_cache = {"hits": cache.hits - hits, "misses": cache.misses - misses}
        after = await services.maintenance.verify()

        rescore = await _rescore(services)
        exported = await _export(services, data)
        forget = await _forget(services)
    finally:
        await services.aclose()
    return {
        "documents": report.inserted,
        "chunks": stats.count,
        "first_sync_s": round(sync_s, 2),
        "verify_s": round(verify_s, 2),
        "verify_ok": check.ok,
        "rebuild_from_cache_s": round(rebuild_s, 2),
        "rebuild_cache": rebuild_cache,
        "rebuild_chunks_written": rebuilt.chunks_written,
        "rebuild_reset_s": round(reset_s, 2),
        "rebuild_reset_cache": reset_cache,
        "verify_after_rebuilds_ok": after.ok,
        **rescore,
        **exported,
        **forget,
    }


async def _export(services: Any, data: Path) -> dict[str, Any]:
    """`biomcp export -k bench_v1 -f ris|csv -o FILE`: every record read from SQL, 500 at a
    time, and written out."""
    from biomcp.entrypoints.exporting import export_to

    figures: dict[str, Any] = {}
    for fmt in ("ris", "csv"):
        target = data / f"export.{fmt}"
        began = time.perf_counter()
        summary = await export_to(services, target, format=fmt, query_key="bench_v1")
        figures[f"export_{fmt}_s"] = round(time.perf_counter() - began, 2)
        figures[f"export_{fmt}_mb"] = round(target.stat().st_size / 1e6, 1)
    figures["export_records"] = summary.exported
    return figures


async def _forget(services: Any) -> dict[str, Any]:
    """Forgetting the saved query with its records (`biomcp checkpoint delete --records`):
    every record is its own, so every record and chunk goes."""
    began = time.perf_counter()
    gone = await services.saved_queries.forget("bench_v1", records=True)
    forget_s = time.perf_counter() - began
    return {
        "forget_with_records_s": round(forget_s, 2),
        "forget_records_deleted": gone.records_deleted,
        "forget_chunks_deleted": gone.chunks_deleted,
        "chunks_left": await services.vectors.count(COLLECTION),
        "records_left": await services.metadata.count_documents(),
    }


async def _rescore(services: Any) -> dict[str, Any]:
    from biomcp.usecases.indexing import INDEX_LOCK
    from biomcp.usecases.rescoring import rescore_stale

    sync = services.sync
    this_year = date.today()

    async def one_pass(today: date) -> tuple[float, Any]:
        began = time.perf_counter()
        outcome = await rescore_stale(
            services.metadata,
            sync.indexer,
            INDEX_LOCK,
            today=today,
            config=sync.config.quality,
            lock_timeout_s=60.0,
        )
        return time.perf_counter() - began, outcome

    idle_s, idle = await one_pass(this_year)
    moved_s, moved = await one_pass(date(this_year.year + 6, 1, 2))
    check = await services.maintenance.verify()
    return {
        "rescore_nothing_stale_s": round(idle_s, 3),
        "rescore_nothing_stale_checked": idle.checked,
        "rescore_every_record_s": round(moved_s, 2),
        "rescore_every_record": {
            "checked": moved.checked,
            "rescored": moved.rescored,
            "chunks_updated": moved.chunks_updated,
        },
        "verify_after_rescore_ok": check.ok,
    }


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks maintenance")
    parser.add_argument(
        "--records", type=int, default=None, help="articles (67000, ~100k chunks; quick 2000)"
    )
    args = parser.parse_args(argv)
    records = args.records or (2000 if quick else 67_000)
    from biomcp.testing.eutils import generate_articles

    end = date.today()
    before = loadavg()
    with tempfile.TemporaryDirectory(prefix="biomcp-bench-maint-") as scratch:
        work = Path(scratch)
        corpus_file = work / "corpus.xml"
        corpus_file.write_bytes(
            generate_articles(records, start=end - timedelta(days=399), end=end, seed=2025)
        )
        with fake_eutils(corpus_file) as base_url:
            figures = asyncio.run(_measure(work / "data", base_url))
    return {
        "benchmark": "maintenance",
        "machine": describe(),
        "config": {
            "quick": quick,
            "records": records,
            "embedder": "deterministic (behind the embedding cache)",
            "loadavg_before_after": [before, loadavg()],
        },
        "goals": {},  # the issue asks for the figures, with no target
        "figures": figures,
    }

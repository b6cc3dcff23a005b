"""SciFact stored as a project: what sentence vectors give `find_chunks` and `query_hybrid`.

An agent's own chunks are searched by the same ranking rule as the corpus. This stores every
SciFact abstract (title line, then the abstract) as one project item through the
`ProjectCollections` use case, on the embedded stores in a temporary folder, twice: into a
project whose store embeds each item's sentences too, and into one that does not. Then it asks
each claim of the chosen split of both projects with both tools (top 10 items) and prints
nDCG@10, Recall@10 and MRR@10 over items, all in one run on one machine.

Items longer than the embedder's window are stored as parts and found once by their best part,
as the tools do. The sentence share is the product's (`SENTENCE_SHARE`, chosen on SciFact's
train split); the default split here is test.

Run: `python -m benchmarks project_search [--quick] [--split test] [--cache FILE]`; prints JSON.
`--cache` keeps the embeddings between runs; `--alphas 0.6,0.7` also scores `query_hybrid` on the
project with sentence vectors at those alphas (the server's is `BIOMCP_SEARCH_ALPHA`).
Reads `../shared/data/scifact`; skipped when absent.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.machine import describe, loadavg
from biomcp.eval.beir import BeirDataset, load_beir
from biomcp.eval.metrics import score_ranking

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "scifact"
BATCH = 100
TOP = 10


def items(data: BeirDataset) -> list[dict[str, Any]]:
    """One project item per document: its title line, then its abstract."""
    return [
        {
            "id": doc.doc_id,
            "text": f"{doc.title.strip()}\n{doc.text.strip()}".strip(),
            "metadata": {"source": "scifact"},
        }
        for doc in data.documents
        if (doc.title + doc.text).strip()
    ]


async def _scores(data: BeirDataset, search: Any, project: str) -> dict[str, float]:
    """Mean figures of `search` (a project tool) over the split's claims, top TOP items."""
    rows = []
    for qid, claim in data.queries.items():
        found = await search(project, claim, top_k=TOP)
        rows.append(score_ranking([item["id"] for item in found["items"]], data.qrels[qid]))
    return _mean(rows)


def _mean(rows: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(sum(r[key] for r in rows) / len(rows), 4) for key in rows[0]}


async def _measure(
    data: BeirDataset, cache: Path | None, alphas: tuple[float, ...] = ()
) -> dict[str, Any]:
    from biomcp.adapters.embeddings import CachingEmbedder
    from biomcp.adapters.sql import SqlMetadataStore
    from biomcp.adapters.vectors import EmbeddedVectorStore
    from biomcp.entrypoints.backends import build_embedder
    from biomcp.entrypoints.settings import load_settings
    from biomcp.usecases.projects import ProjectCollections, ProjectLimits

    settings = load_settings()
    model = build_embedder(settings)
    embedder = CachingEmbedder(model, cache) if cache is not None else model
    limits = ProjectLimits(
        top_k_max=TOP,
        alpha=settings.biomcp_search_alpha,  # as the server runs the project tools
        store_timeout_s=3600,
        find_timeout_s=600,
        hybrid_timeout_s=600,
    )
    stored = items(data)
    out: dict[str, Any] = {
        "items": len(stored),
        "queries": len(data.queries),
        "alpha": limits.alpha,
    }
    with tempfile.TemporaryDirectory(prefix="biomcp-project-search-") as tmp:
        root = Path(tmp)
        registry = SqlMetadataStore(f"sqlite:///{root / 'meta.sqlite3'}")
        vectors = EmbeddedVectorStore(root / "vectors")
        try:
            for name, sentences in (("chunks alone", False), ("with sentence vectors", True)):
                tools = ProjectCollections(
                    registry, vectors, embedder, limits=limits, sentence_vectors=sentences
                )
                project = "scifact-sentences" if sentences else "scifact-chunks"
                await tools.create_project(project)
                began = time.perf_counter()
                warnings: list[str] = []
                for start in range(0, len(stored), BATCH):
                    done = await tools.store_chunks(project, stored[start : start + BATCH])
                    warnings += done["warnings"]
                figures: dict[str, Any] = {
                    "store_s": round(time.perf_counter() - began, 1),
                    "split_warnings": len(warnings),
                }
                for tool in ("find_chunks", "query_hybrid"):
                    figures[tool] = await _scores(data, getattr(tools, tool), project)
                for alpha in alphas if sentences else ():
                    tuned = ProjectCollections(
                        registry,
                        vectors,
                        embedder,
                        limits=replace(limits, alpha=alpha),
                        sentence_vectors=sentences,
                    )
                    figures[f"query_hybrid alpha {alpha:g}"] = await _scores(
                        data, tuned.query_hybrid, project
                    )
                out[name] = figures
        finally:
            await vectors.aclose()
            await registry.aclose()
            if isinstance(embedder, CachingEmbedder):
                embedder.close()
            closer = getattr(model, "aclose", None)
            if closer is not None:
                await closer()
    out["embedder"] = model.model_id
    return out


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks project_search")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--split", default="test")
    parser.add_argument("--cache", type=Path, help="embedding cache kept between runs")
    parser.add_argument(
        "--alphas", default="", help="query_hybrid also at these alphas, e.g. 0.6,0.7"
    )
    args = parser.parse_args(argv)
    if not (args.data / "corpus.jsonl").is_file():
        return {"benchmark": "project_search", "skipped": f"no SciFact data at {args.data}"}
    load_before = loadavg()
    data = load_beir(args.data, args.split, max_queries=30 if quick else None)
    if quick:
        wanted = {d for judged in data.qrels.values() for d in judged}
        kept = [d for d in data.documents if d.doc_id in wanted]
        others = [d for d in data.documents if d.doc_id not in wanted][:300]
        data = BeirDataset(data.name, data.split, tuple(kept + others), data.queries, data.qrels)
    out = {"benchmark": "project_search", "split": args.split, "quick": quick}
    alphas = tuple(float(a) for a in args.alphas.split(",") if a.strip())
    out.update(asyncio.run(_measure(data, args.cache, alphas)))
    out["machine"], out["load_before"], out["load_after"] = describe(), load_before, loadavg()
    return out

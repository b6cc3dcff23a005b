"""What sentence vectors cost: embedding work at sync, disk, and search latency.

Each chunk keeps the vectors of its sentences (`domain.chunking.sentence_units`), and a
search ranks its candidates by their best sentence as a third arm (`usecases.ranking`).
This measures, in one run on one machine:

- embedding: the configured embedder (default ONNX all-MiniLM-L6-v2) over the chunk texts of
  the first N SciFact documents, then over their distinct sentences, one after the other (a
  warm-up call first); the sentences' share of a sync's embedding time;
- disk: bytes of sentence vectors per chunk (half precision) beside the chunk's own vector;
- search: `hybrid_search` on the embedded store holding those chunks, limit 20, the same
  queries with the sentence arm (share 0.5) and without it (share 0), interleaved.

Run: `python -m benchmarks sentence_vectors [--quick] [--docs N] [--queries N]`; prints JSON.
Reads `../shared/data/scifact`; skipped when absent.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.machine import describe, loadavg
from biomcp.domain.chunking import chunk_record, chunking_for_window, sentence_units
from biomcp.domain.fusion import SENTENCE_SHARE
from biomcp.eval.beir import beir_pmids, beir_record, load_beir

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "scifact"
BATCH = 4096


async def _embed(embedder: Any, texts: list[str]) -> tuple[list[list[float]], float]:
    began = time.perf_counter()
    vectors: list[list[float]] = []
    for start in range(0, len(texts), BATCH):
        vectors.extend(await embedder.embed(texts[start : start + BATCH]))
    return vectors, time.perf_counter() - began


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered) * 1000, 2), "p95_ms": round(p95 * 1000, 2)}


async def _measure(data: Path, docs: int, queries: int) -> dict[str, Any]:
    from biomcp.adapters.vectors import EmbeddedVectorStore
    from biomcp.entrypoints.backends import build_embedder
    from biomcp.entrypoints.settings import load_settings
    from biomcp.ports.vectors import ChunkRecord
    from biomcp.usecases.ranking import hybrid_search

    dataset = load_beir(data, "test")
    chosen = dataset.documents[:docs]
    pmids = beir_pmids(d.doc_id for d in dataset.documents)
    embedder = build_embedder(load_settings())
    chunking = chunking_for_window(embedder.max_tokens)
    chunks = [c for d in chosen for c in chunk_record(beir_record(pmids[d.doc_id], d), chunking)]
    chunk_texts = list(dict.fromkeys(c.text for c in chunks))
    units = {c.uuid: sentence_units(c.text) for c in chunks}
    seen = set(chunk_texts)
    sentence_texts = list(dict.fromkeys(u for own in units.values() for u in own if u not in seen))

    await embedder.embed(chunk_texts[:32])  # warm-up: sessions and caches
    chunk_vectors, chunk_s = await _embed(embedder, chunk_texts)
    sentence_vectors, sentence_s = await _embed(embedder, sentence_texts)
    vector_of = dict(zip(chunk_texts, chunk_vectors, strict=True))
    vector_of.update(zip(sentence_texts, sentence_vectors, strict=True))
    dim = len(chunk_vectors[0])

    records = [
        ChunkRecord(
            uuid=c.uuid,
            doc_id=f"pmid:{c.uuid[:8]}",
            chunk_id=c.chunk_id,
            text=c.text,
            vector=vector_of[c.text],
            sentence_vectors=tuple(vector_of[u] for u in units[c.uuid]),
        )
        for c in chunks
    ]
    asked = list(dataset.queries.values())[:queries]
    query_vectors, _ = await _embed(embedder, asked)
    timings: dict[float, list[float]] = {SENTENCE_SHARE: [], 0.0: []}
    with tempfile.TemporaryDirectory(prefix="biomcp-sentences-") as tmp:
        store = EmbeddedVectorStore(Path(tmp))
        try:
            await store.ensure_schema("Bench", dim=dim, model_id=embedder.model_id)
            for start in range(0, len(records), 1000):
                await store.upsert_chunks("Bench", records[start : start + 1000])
            for text, vector in zip(asked, query_vectors, strict=True):
                for share in (SENTENCE_SHARE, 0.0):
                    began = time.perf_counter()
                    await hybrid_search(
                        store, "Bench", text, vector, limit=20, alpha=0.6, sentence_share=share
                    )
                    timings[share].append(time.perf_counter() - began)
        finally:
            await store.aclose()
            closer = getattr(embedder, "aclose", None)
            if closer is not None:
                await closer()

    with_units = sum(1 for own in units.values() if own)
    per_chunk = sum(len(own) for own in units.values()) / len(chunks)
    return {
        "embedder": embedder.model_id,
        "documents": len(chosen),
        "chunks": len(chunks),
        "chunks_with_sentence_vectors": with_units,
        "sentences_per_chunk": round(per_chunk, 2),
        "distinct_texts": {"chunks": len(chunk_texts), "sentences": len(sentence_texts)},
        "embedding_s": {
            "chunks": round(chunk_s, 2),
            "sentences": round(sentence_s, 2),
            "sentences_over_chunks": round(sentence_s / chunk_s, 2) if chunk_s else None,
        },
        "bytes_per_chunk": {
            "vector_float32": dim * 4,
            "sentence_vectors_float16": round(per_chunk * dim * 2),
            "per_million_chunks_gib": round(per_chunk * dim * 2 * 1e6 / 2**30, 2),
        },
        "search_limit20": {
            "queries": len(asked),
            "with_sentence_arm": _percentiles(timings[SENTENCE_SHARE]),
            "without": _percentiles(timings[0.0]),
        },
    }


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks sentence_vectors")
    parser.add_argument("--data", type=Path, default=DATA, help="the SciFact BEIR folder")
    parser.add_argument("--docs", type=int, default=None, help="documents (1000; quick 200)")
    parser.add_argument("--queries", type=int, default=None, help="searches (300; quick 50)")
    args = parser.parse_args(argv)
    out: dict[str, Any] = {"benchmark": "sentence_vectors", "machine": describe()}
    if not (args.data / "corpus.jsonl").is_file():
        return {**out, "skipped": "no SciFact data at --data"}
    before = loadavg()
    docs = args.docs or (200 if quick else 1000)
    queries = args.queries or (50 if quick else 300)
    out.update(asyncio.run(_measure(args.data, docs, queries)))
    out["load_before"], out["load_after"] = before, loadavg()
    return out

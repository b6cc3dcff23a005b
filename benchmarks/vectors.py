"""The embedded VectorStore: hybrid search latency, build time, memory, ANN recall; engines.

Corpus (synthetic, deterministic): abstract-like chunks of 60-250 words drawn from the unigram
distribution of the PubMedQA abstracts (../shared/data/pubmedqa; a built-in biomedical word
list when absent) plus 3% rare synthetic terms; metadata like PubMed's (year, evidence type,
quality, one of 500 journals, 3 chunks per document). Vectors: 384-d, calibrated on the real
all-MiniLM-L6-v2 embeddings of the 3,358 PubMedQA passages (pairwise cosine 0.123 +- 0.106,
mean-vector norm 0.354, nearest other passage 0.70, 10th 0.45, 100th 0.32, PCA 50/80/90% of
the variance in 38/120/176 dims): a mean direction of norm 0.354 plus an anisotropic Gaussian
(eigenvalues ~ i^-0.5 e^(-i/150)) shared by 100 domains (30% of the variance), 3,000 topics
(10%), the document (25%) and the chunk (35%); the synthetic set measures 0.131 +- 0.095,
0.361, 0.72 / 0.45 / 0.30 and 33/102/161 dims. Queries: claim-length sentences (10-35 words)
from the same abstracts, searched as OR queries, with the vector of a random chunk plus
noise (cosine ~0.74 to that chunk, as a sentence has to its passage).

For each size (10k, 100k, 1M unless --max-size / --quick): build a store with
`upsert_chunks` in batches (build time), then in a FRESH process open it (open time), run the
queries (hybrid search latency p50/p95 excluding query embedding, best of two rounds; also
BM25-only, vector-only and filtered), read the resident memory (RSS), and at the largest size
the ANN recall@10 of `alpha = 1` against exact brute force.

The Weaviate arm (same run, after the embedded sizes; 10k and 100k unless --weaviate-sizes):
the same chunks imported into a Weaviate server through `WeaviateVectorStore.upsert_chunks`
(import time, objects per s) in a class of its own (`BenchChunk10k`, dropped afterwards); after
--weaviate-settle seconds (65: Weaviate flushes its memtables after 60 s idle, and BM25 over
unflushed memtables is ~4x slower), the same queries and searches timed the same way, in this
process (the latency includes the client's work: `client_cpu_share` of the wall time).
`side_by_side` puts both stores' p50 / p95 / mean and import rates per size together. Server
from --weaviate-url / --weaviate-grpc-port (env BIOMCP_TEST_WEAVIATE_URL or WEAVIATE_URL,
BIOMCP_TEST_WEAVIATE_GRPC_PORT); without one, or when it does not answer, the arm is reported as
skipped with the reason. --quick runs it as a smoke test: 2k chunks, 30 queries, hybrid only,
no settling.

`--compare` (default on, not in --quick) measures the candidate engines at 100k in a fresh
process: tantivy, bm25s and SQLite FTS5 for BM25 over the same OR queries (top 100); numpy
brute force, faiss HNSW, hnswlib and usearch (f32, f16) for vectors (top 100, recall@10,
build time, memory growth, and a 10%-selective filter where the engine supports one).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib
import json
import math
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlparse

import numpy as np

from benchmarks.machine import describe, goal

if TYPE_CHECKING:
    from biomcp.ports.vectors import VectorStore

REPO = Path(__file__).resolve().parents[1]
PUBMEDQA = REPO.parent / "shared/data/pubmedqa/ori_pqal.json"
SEED = 20240601
DIM = 384
MEAN_NORM = 0.354
SHARES = (0.30, 0.10, 0.25)  # variance of domain, topic, document; the chunk has the rest
DOMAINS, TOPICS = 100, 3000
QUERY_NOISE = 0.9
BATCH = 10_000
EVIDENCE = ["rct", "meta_analysis", "systematic_review", "cohort", "case_control", "case_report",
            "review", "other"]  # fmt: skip
EVIDENCE_P = [0.10, 0.03, 0.04, 0.20, 0.08, 0.10, 0.15, 0.30]
NAMESPACE = uuid.UUID("a3a3f1c4-52ea-4d4e-9a64-36b0c59a1f2e")
FALLBACK_WORDS = [
    "patients", "study", "treatment", "clinical", "trial", "randomized", "placebo", "group",
    "outcome", "risk", "mortality", "cancer", "tumor", "cells", "expression", "protein", "gene",
    "mutation", "receptor", "insulin", "diabetes", "metformin", "hba1c", "blood", "pressure",
    "hypertension", "cardiovascular", "stroke", "infection", "sepsis", "antibiotic", "vaccine",
    "covid", "19", "il", "6", "tnf", "inflammation", "cohort", "hazard", "ratio", "ci", "95",
    "p", "0", "05", "significant", "increased", "decreased", "associated", "years", "months",
    "dose", "mg", "kg", "response", "survival", "therapy", "the", "of", "and", "in", "with",
]  # fmt: skip
TOKEN = re.compile(r"[^\W_]+")
WEAVIATE_SIZES = "10000,100000"
WEAVIATE_BATCH = 1_000  # chunks per `upsert_chunks` call (one gRPC batch request)
# Weaviate keeps new writes in memtables until they have been idle for 60 s (its default
# PERSISTENCE_MEMTABLES_FLUSH_IDLE_AFTER_SECONDS); BM25 over them is ~4x slower than over the
# flushed segments, so the arm waits this long after an import before timing the searches.
WEAVIATE_SETTLE_S = 65.0

Query = tuple[str, list[float]]
Queries = Sequence[Query]


def rss_mb() -> dict[str, float]:
    status = Path("/proc/self/status").read_text()
    values = dict(re.findall(r"^(VmRSS|VmHWM):\s+(\d+) kB", status, re.M))
    return {k: round(int(v) / 1024, 1) for k, v in values.items()}


def pct(samples: list[float], q: float) -> float:
    return round(float(np.percentile(np.asarray(samples) * 1000, q)), 2)


def best_of(rounds: list[list[float]]) -> dict[str, float]:
    best = min(rounds, key=lambda r: float(np.percentile(r, 95)))
    return {
        "p50_ms": pct(best, 50),
        "p95_ms": pct(best, 95),
        "mean_ms": round(float(np.mean(best)) * 1000, 2),
        "max_ms": pct(best, 100),
    }


# --- the synthetic corpus ------------------------------------------------------------------


class Corpus:
    """Deterministic chunks by global index; any batch can be regenerated on its own."""

    def __init__(self, dim: int = DIM, seed: int = SEED) -> None:
        self.dim, self.seed = dim, seed
        words, counts, self.sentences = _vocabulary()
        self.words = np.asarray(words, dtype=object)
        self.p = np.asarray(counts, dtype=np.float64) / sum(counts)
        rng = np.random.default_rng([seed, 0])
        i = np.arange(1, dim + 1)
        eigen = i**-0.5 * np.exp(-i / 150)
        self.sd = np.sqrt(eigen / eigen.sum() * (1 - MEAN_NORM**2)).astype(np.float32)
        basis, _ = np.linalg.qr(rng.standard_normal((dim, dim)))
        self.basis_t = np.ascontiguousarray(basis.T, dtype=np.float32)
        self.mean = (basis[:, -1] * MEAN_NORM).astype(np.float32)
        self.domains = (rng.standard_normal((DOMAINS, dim)) * self.sd).astype(np.float32)
        self.topics = (rng.standard_normal((TOPICS, dim)) * self.sd).astype(np.float32)
        self.topic_domain = rng.integers(0, DOMAINS, TOPICS)
        self.journals = [f"Journal of Synthetic Medicine {i}" for i in range(500)]

    def vectors(self, start: int, stop: int) -> np.ndarray:
        out = np.empty((stop - start, self.dim), np.float32)
        for b in range(start // BATCH, (stop - 1) // BATCH + 1):
            block = self._vector_batch(b)
            lo, hi = max(start, b * BATCH), min(stop, (b + 1) * BATCH)
            out[lo - start : hi - start] = block[lo - b * BATCH : hi - b * BATCH]
        return out

    def _documents(self, block: int) -> tuple[np.ndarray, np.ndarray]:
        """Topic and latent vector of documents block*BATCH .. (block+1)*BATCH - 1."""
        rng = np.random.default_rng([self.seed, 5, block])
        topic = rng.integers(0, TOPICS, BATCH)
        return topic, (rng.standard_normal((BATCH, self.dim)) * self.sd).astype(np.float32)

    def _vector_batch(self, b: int) -> np.ndarray:
        docs = np.arange(b * BATCH, (b + 1) * BATCH) // 3
        topic = np.empty(BATCH, np.int64)
        latent = np.empty((BATCH, self.dim), np.float32)
        for block in np.unique(docs // BATCH):
            t, z = self._documents(int(block))
            here = docs // BATCH == block
            topic[here] = t[docs[here] % BATCH]
            latent[here] = z[docs[here] % BATCH]
        rng = np.random.default_rng([self.seed, 1, b])
        own = rng.standard_normal((BATCH, self.dim)).astype(np.float32) * self.sd
        w_domain, w_topic, w_doc = (np.float32(math.sqrt(x)) for x in SHARES)
        w_own = np.float32(math.sqrt(1 - sum(SHARES)))
        z = (
            w_domain * self.domains[self.topic_domain[topic]]
            + w_topic * self.topics[topic]
            + w_doc * latent
            + w_own * own
        )
        v = self.mean + z @ self.basis_t
        normalized: np.ndarray = v / np.linalg.norm(v, axis=1, keepdims=True)
        return normalized

    def texts(self, b: int) -> list[str]:
        rng = np.random.default_rng([self.seed, 2, b])
        lengths = rng.integers(60, 251, BATCH)
        idx = rng.choice(len(self.words), size=int(lengths.sum()), p=self.p)
        words = self.words[idx]
        rare = rng.random(len(words)) < 0.03
        words[rare] = [f"xq{z}" for z in rng.zipf(1.3, int(rare.sum())) % 500_000]
        out, pos = [], 0
        for n in lengths:
            out.append(" ".join(words[pos : pos + n]))
            pos += n
        return out

    def records(self, b: int, n_total: int) -> list[Any]:
        from biomcp.ports.vectors import ChunkRecord

        start, stop = b * BATCH, min((b + 1) * BATCH, n_total)
        texts = self.texts(b)
        vectors = self._vector_batch(b)
        rng = np.random.default_rng([self.seed, 3, b])
        years = rng.integers(1990, 2026, BATCH)
        evidence = rng.choice(len(EVIDENCE), size=BATCH, p=EVIDENCE_P)
        quality = np.round(rng.uniform(0, 10, BATCH), 1)
        journal = rng.integers(0, len(self.journals), BATCH)
        return [
            ChunkRecord(
                uuid=str(uuid.uuid5(NAMESPACE, str(j))),
                doc_id=f"pmid:{j // 3}",
                chunk_id=str(j),
                text=texts[j - start],
                vector=vectors[j - start],
                year=int(years[j - start]),
                evidence_type=EVIDENCE[evidence[j - start]],
                quality_total=float(quality[j - start]),
                journal=self.journals[journal[j - start]],
                section="RESULTS",
            )
            for j in range(start, stop)
        ]

    def queries(self, n: int, corpus_size: int) -> list[Query]:
        rng = np.random.default_rng([self.seed, 4])
        picks = rng.integers(0, corpus_size, n)
        vectors = np.stack([self.vectors(int(j), int(j) + 1)[0] for j in picks])
        noise = rng.standard_normal(vectors.shape).astype(np.float32) * self.sd
        vectors += QUERY_NOISE * (noise / np.float32(math.sqrt(1 - MEAN_NORM**2))) @ self.basis_t
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        if self.sentences:
            texts = [self.sentences[int(i)] for i in rng.integers(0, len(self.sentences), n)]
        else:
            texts = [" ".join(rng.choice(self.words, 20, p=self.p)) for _ in range(n)]
        return [(t, v.tolist()) for t, v in zip(texts, vectors, strict=True)]


def _vocabulary() -> tuple[list[str], list[int], list[str]]:
    if not PUBMEDQA.exists():
        words = FALLBACK_WORDS
        return words, [len(words) - i for i in range(len(words))], []
    data = json.loads(PUBMEDQA.read_text(encoding="utf-8"))
    counts: Counter[str] = Counter()
    sentences: list[str] = []
    for item in data.values():
        for context in item["CONTEXTS"]:
            counts.update(t.lower() for t in TOKEN.findall(context))
            for sentence in re.split(r"(?<=[.!?])\s+", context):
                if 10 <= len(sentence.split()) <= 35:
                    sentences.append(sentence)
    words = sorted(counts)
    return words, [counts[w] for w in words], sentences


# --- exact neighbours ----------------------------------------------------------------------


def exact_top(corpus: Corpus, n: int, queries: np.ndarray, k: int = 10) -> np.ndarray:
    """Global indices of the exact top-k per query, streaming over the corpus."""
    best_s = np.full((len(queries), k), -np.inf, np.float32)
    best_i = np.zeros((len(queries), k), np.int64)
    for start in range(0, n, BATCH):
        stop = min(start + BATCH, n)
        sims = queries @ corpus.vectors(start, stop).T
        all_s = np.concatenate([best_s, sims], axis=1)
        all_i = np.concatenate([best_i, np.broadcast_to(np.arange(start, stop), sims.shape)], 1)
        top = np.argsort(-all_s, axis=1)[:, :k]
        best_s = np.take_along_axis(all_s, top, 1)
        best_i = np.take_along_axis(all_i, top, 1)
    return best_i


# --- our store: build, then measure in a fresh process -------------------------------------


def build_store(path: Path, n: int, corpus: Corpus) -> dict[str, Any]:
    from biomcp.adapters.vectors import EmbeddedVectorStore

    async def go() -> dict[str, Any]:
        store = EmbeddedVectorStore(path)
        await store.ensure_schema("Bench", dim=corpus.dim, model_id="synthetic-384")
        generate = upsert = 0.0
        for b in range((n + BATCH - 1) // BATCH):
            t0 = time.perf_counter()
            records = corpus.records(b, n)
            t1 = time.perf_counter()
            report = await store.upsert_chunks("Bench", records)
            upsert += time.perf_counter() - t1
            generate += t1 - t0
            assert not report.errors, report.errors[:3]
        t0 = time.perf_counter()
        await store.aclose()
        close = time.perf_counter() - t0
        return {
            "upsert_s": round(upsert, 1),
            "close_s": round(close, 1),
            "build_s": round(upsert + close, 1),
            "chunks_per_s": round(n / (upsert + close)),
            "generate_s": round(generate, 1),
        }

    return asyncio.run(go())


def search_runs() -> dict[str, dict[str, Any]]:
    """The searches every store is timed on: `hybrid_search` keywords, `vec=False` for BM25."""
    from biomcp.ports.vectors import Fusion, SearchFilters

    rct, journal = frozenset({"rct"}), frozenset({"journal of synthetic medicine 7"})
    saved_query = frozenset(f"pmid:{i * 5}" for i in range(2000))
    return {
        "hybrid_limit40": {"limit": 40},
        "hybrid_limit20": {"limit": 20},
        "bm25_only": {"limit": 40, "vec": False},
        "vector_only": {"limit": 40, "alpha": 1.0},
        "hybrid_ranked": {"limit": 40, "fusion": Fusion.RANKED},
        "hybrid_year_ge_2015": {"limit": 40, "filters": SearchFilters(year_min=2015)},
        "hybrid_rct_only": {"limit": 40, "filters": SearchFilters(evidence_types=rct)},
        "hybrid_one_journal": {"limit": 40, "filters": SearchFilters(journals=journal)},
        # A search within one saved query (`query_key`): its 2,000 records as a doc-id filter.
        "hybrid_2000_docs": {"limit": 40, "filters": SearchFilters(doc_ids=saved_query)},
    }


async def time_queries(store: VectorStore, collection: str, queries: Queries,
                       vec: bool = True, **kw: Any) -> list[float]:  # fmt: skip
    """Seconds per `hybrid_search`, one sample per query (the query vector is given)."""
    from biomcp.usecases.ranking import hybrid_search

    samples = []
    for text, vector in queries:
        start = time.perf_counter()
        await hybrid_search(store, collection, text, vector if vec else None, **kw)
        samples.append(time.perf_counter() - start)
    return samples


async def time_searches(store: VectorStore, collection: str, queries: Queries,
                        runs: dict[str, dict[str, Any]]) -> dict[str, Any]:  # fmt: skip
    """Warm up with one round of the first search, then each search's best of two rounds."""
    first = next(iter(runs.values()))
    await time_queries(store, collection, queries, **first)
    return {
        name: best_of([await time_queries(store, collection, queries, **kw) for _ in range(2)])
        for name, kw in runs.items()
    }


def measure_store(path: str, queries_path: str, recall: bool) -> dict[str, Any]:
    """Run in a fresh process: open, query, read memory."""
    from biomcp.adapters.vectors import EmbeddedVectorStore
    from biomcp.usecases.ranking import hybrid_search

    queries = json.loads(Path(queries_path).read_text())
    baseline = rss_mb()

    async def go() -> dict[str, Any]:
        store = EmbeddedVectorStore(Path(path))
        t0 = time.perf_counter()
        count = await store.count("Bench")
        open_s = time.perf_counter() - t0
        after_open = rss_mb()
        figures: dict[str, Any] = {"count": count, "open_s": round(open_s, 2)}
        figures.update(await time_searches(store, "Bench", queries, search_runs()))
        figures["rss_mb_after_open"] = after_open["VmRSS"]
        figures["rss_mb_after_queries"] = rss_mb()["VmRSS"]
        figures["rss_mb_peak"] = rss_mb()["VmHWM"]
        figures["rss_mb_interpreter_and_imports"] = baseline["VmRSS"]
        if recall:
            top = []
            for _, vector in queries:
                hits = await hybrid_search(store, "Bench", "", vector, alpha=1.0, limit=10)
                top.append([int(h.chunk_id) for h in hits])
            figures["_vector_top10"] = top
        counts = await store.index_counts("Bench")
        await store.aclose()
        figures["index_counts"] = counts
        return figures

    return asyncio.run(go())


def _in_fresh_process(function: str, *args: Any) -> Any:
    code = (
        "import json, sys\n"
        f"from benchmarks.vectors import {function}\n"
        "print('RESULT ' + json.dumps({function}(*json.loads(sys.argv[1]))))\n"
    ).replace("{function}", function)
    done = subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-c", code, json.dumps(list(args))],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{function} failed:\n{done.stderr[-3000:]}")


def disk_mb(path: Path) -> dict[str, float]:
    sizes: dict[str, float] = {}
    for item in path.rglob("*"):
        if item.is_file():
            key = "lexical" if "lexical" in item.parts[-2] + item.name else item.name.split("-")[0]
            key = "rows" if key.startswith("rows") else key.split(".")[0]
            sizes[key] = sizes.get(key, 0.0) + item.stat().st_size / 2**20
    return {k: round(v, 1) for k, v in sorted(sizes.items())}


def run_size(n: int, corpus: Corpus, root: Path, queries: list[Any], recall: bool,
             reuse: bool) -> dict[str, Any]:  # fmt: skip
    path = root / f"store-{n}"
    figures: dict[str, Any] = {"chunks": n}
    if not (reuse and (path / "Bench" / "vectors.json").exists()):
        shutil.rmtree(path, ignore_errors=True)
        figures["build"] = build_store(path, n, corpus)
    figures["disk_mb"] = disk_mb(path / "Bench")
    qpath = root / f"queries-{n}.json"
    qpath.write_text(json.dumps(queries))
    measured = _in_fresh_process("measure_store", str(path), str(qpath), recall)
    top = measured.pop("_vector_top10", None)
    figures.update(measured)
    if top is not None:
        exact = exact_top(corpus, n, np.asarray([v for _, v in queries], np.float32))
        hits = sum(len(set(t) & set(e.tolist())) for t, e in zip(top, exact, strict=True))
        figures["ann_recall_at_10"] = round(hits / (10 * len(queries)), 4)
    return figures


# --- the Weaviate store on a server, same chunks and queries --------------------------------


def weaviate_collection(n: int) -> str:
    """The benchmark's own class for `n` chunks (`BenchChunk10k`), dropped after use."""
    return f"BenchChunk{n // 1000}k" if n % 1000 == 0 else f"BenchChunk{n}"


def _weaviate_rest(url: str, method: str, path: str, timeout: float = 10.0) -> Any:
    """A REST call to the server (its JSON answer, or None when empty)."""
    if urlparse(url).scheme not in ("http", "https"):
        raise ValueError(f"not an http(s) URL: {url!r}")
    request = urllib.request.Request(url.rstrip("/") + path, method=method)  # noqa: S310
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - checked
        body = response.read()
    return json.loads(body) if body.strip() else None


def _drop_weaviate_class(url: str, name: str) -> None:
    _weaviate_rest(url, "DELETE", f"/v1/schema/{quote(name)}", timeout=120.0)


def weaviate_server(url: str) -> tuple[str | None, str | None]:
    """(server version, None) when the server answers ready, else (None, the reason)."""
    try:
        _weaviate_rest(url, "GET", "/v1/.well-known/ready", timeout=5.0)
        meta = _weaviate_rest(url, "GET", "/v1/meta", timeout=5.0)
    except (OSError, ValueError) as exc:
        return None, f"Weaviate at {url} does not answer: {type(exc).__name__}: {exc}"
    return str((meta or {}).get("version", "unknown")), None


@dataclass(frozen=True)
class WeaviateArm:
    """Where and how the Weaviate arm runs."""

    url: str | None
    grpc_port: int
    sizes: list[int]
    queries: int
    settle_s: float
    runs: list[str]


async def weaviate_size(arm: WeaviateArm, n: int, corpus: Corpus) -> dict[str, Any]:
    """Import `n` chunks through `WeaviateVectorStore.upsert_chunks`, settle, time the searches."""
    from biomcp.adapters.vectors.weaviate_store import WeaviateVectorStore
    from biomcp.ports.vectors import VectorStoreError

    assert arm.url is not None
    name = weaviate_collection(n)
    _drop_weaviate_class(arm.url, name)  # left over by an interrupted run
    store = WeaviateVectorStore(arm.url, grpc_port=arm.grpc_port, corpus_collection=name)
    try:
        await store.ensure_schema(name, dim=corpus.dim, model_id="synthetic-384")
        generate = upsert = 0.0
        for b in range((n + BATCH - 1) // BATCH):
            t0 = time.perf_counter()
            records = corpus.records(b, n)
            t1 = time.perf_counter()
            for start in range(0, len(records), WEAVIATE_BATCH):
                report = await store.upsert_chunks(name, records[start : start + WEAVIATE_BATCH])
                if report.errors:
                    raise VectorStoreError(f"import failed: {report.errors[:3]}")
            upsert += time.perf_counter() - t1
            generate += t1 - t0
        figures: dict[str, Any] = {
            "chunks": n,
            "collection": name,
            "import": {
                "import_s": round(upsert, 1),
                "objects_per_s": round(n / upsert),
                "generate_s": round(generate, 1),
            },
            "count": await store.count(name),
            "settle_s": arm.settle_s,
        }
        await asyncio.sleep(arm.settle_s)
        runs = {k: v for k, v in search_runs().items() if k in arm.runs}
        queries = corpus.queries(arm.queries, n)
        cpu, wall = time.process_time(), time.perf_counter()
        figures.update(await time_searches(store, name, queries, runs))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        figures["client_cpu_share"] = round(cpu / wall, 2)  # of the searches' wall time
        return figures
    finally:
        await store.aclose()
        with contextlib.suppress(OSError):
            _drop_weaviate_class(arm.url, name)


def run_weaviate(arm: WeaviateArm, corpus: Corpus) -> dict[str, Any]:
    """The Weaviate arm: figures per size, or `status: skipped` with the reason."""
    from biomcp.ports.vectors import VectorStoreError

    out: dict[str, Any] = {"url": arm.url, "grpc_port": arm.grpc_port, "sizes": {}}
    if not arm.url:
        hint = "no server: pass --weaviate-url or set BIOMCP_TEST_WEAVIATE_URL / WEAVIATE_URL"
        return out | {"status": "skipped", "reason": hint}
    if not arm.sizes:
        return out | {"status": "skipped", "reason": "no size left (--weaviate-sizes)"}
    version, reason = weaviate_server(arm.url)
    if reason is not None:
        return out | {"status": "skipped", "reason": reason}
    out["server_version"] = version
    for n in arm.sizes:
        try:
            out["sizes"][str(n)] = asyncio.run(weaviate_size(arm, n, corpus))
        except (VectorStoreError, OSError, TimeoutError) as exc:
            out["status"] = "partial" if out["sizes"] else "skipped"
            out["reason"] = f"at {n} chunks: {type(exc).__name__}: {exc}"
            return out
    return out | {"status": "ok"}


def side_by_side(embedded: dict[str, Any], weaviate: dict[str, Any]) -> dict[str, Any]:
    """Per size, each search's p50 / p95 / mean and the import rate of both stores."""
    stores = {"embedded": embedded, "weaviate": weaviate.get("sizes", {})}
    imports = {"build": ("build_s", "chunks_per_s"), "import": ("import_s", "objects_per_s")}
    table: dict[str, Any] = {}
    for size in sorted({*embedded, *stores["weaviate"]}, key=int):
        row: dict[str, Any] = {}
        for store, figures in stores.items():
            figs = figures.get(size, {})
            for run in search_runs():
                if run in figs:
                    timing = {k: figs[run][k] for k in ("p50_ms", "p95_ms", "mean_ms")}
                    row.setdefault(run, {})[store] = timing
            for key, (seconds, rate) in imports.items():  # no build when a store was reused
                if key in figs:
                    figure = {"seconds": figs[key][seconds], "chunks_per_s": figs[key][rate]}
                    row.setdefault("import", {})[store] = figure
        table[size] = row
    return table


# --- candidate engines at one size (fresh process) -----------------------------------------


def _optional(module: str, table: dict[str, Any]) -> Any:
    """`module` imported, or None with a note in `table`: the candidate engines other than
    tantivy and faiss are not dependencies (pip install bm25s hnswlib usearch to compare)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".")[0]
        table[package] = {"skipped": f"not installed (pip install {package})"}
        return None


def compare_engines(n: int, n_queries: int) -> dict[str, Any]:
    corpus = Corpus()
    texts = [t for b in range((n + BATCH - 1) // BATCH) for t in corpus.texts(b)][:n]
    xb = corpus.vectors(0, n)
    queries = corpus.queries(n_queries, n)
    xq = np.asarray([v for _, v in queries], np.float32)
    sims = xq @ xb.T
    exact10 = np.argsort(-sims, axis=1)[:, :10]
    mask = np.random.default_rng(5).random(n) < 0.10
    allowed = np.flatnonzero(mask)
    exact10_f = allowed[np.argsort(-sims[:, allowed], axis=1)[:, :10]]
    del sims
    from biomcp.adapters.vectors.lexical_analysis import ENGLISH_STOPWORDS

    def terms(text: str) -> list[str]:
        return [t for t in (w.lower() for w in TOKEN.findall(text)) if t not in ENGLISH_STOPWORDS]

    out: dict[str, Any] = {"chunks": n, "queries": n_queries, "lexical": {}, "vector": {}}

    def record(kind: str, name: str, build: Callable[[], Any], query: Callable[[Any, int], Any],
               extra: Callable[[Any], dict[str, Any]] | None = None) -> None:  # fmt: skip
        gc.collect()
        before = rss_mb()["VmRSS"]
        t0 = time.perf_counter()
        engine = build()
        build_s = time.perf_counter() - t0
        grown = rss_mb()["VmRSS"] - before
        rounds = []
        for _ in range(2):
            samples = []
            for i in range(n_queries):
                s = time.perf_counter()
                query(engine, i)
                samples.append(time.perf_counter() - s)
            rounds.append(samples)
        row: dict[str, Any] = {"build_s": round(build_s, 1), "rss_growth_mb": round(grown, 1)}
        row.update(best_of(rounds))
        if extra is not None:
            row.update(extra(engine))
        out[kind][name] = row
        del engine
        gc.collect()

    # Lexical: top 100 of an OR query.
    tmp = Path(tempfile.mkdtemp(prefix="bench-lexical-"))
    try:
        from biomcp.adapters.vectors.embedded_lexical import LexicalDoc, LexicalIndex
        from biomcp.adapters.vectors.lexical_analysis import query_terms

        def tantivy_build() -> Any:
            index = LexicalIndex(tmp, heap_bytes=128_000_000)
            for start in range(0, n, BATCH):
                index.add(LexicalDoc(i, texts[i], f"d{i}", 2000, None, None, None)
                          for i in range(start, min(n, start + BATCH)))  # fmt: skip
                index.commit(start)
            return index

        def tantivy_query(ix: Any, i: int) -> Any:
            return ix.search(query_terms(queries[i][0]), 100, None)

        record("lexical", "tantivy", tantivy_build, tantivy_query)

        bm25s = _optional("bm25s", out["lexical"])

        def bm25s_build() -> Any:
            retriever = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
            retriever.index([terms(t) for t in texts], show_progress=False)
            return retriever

        def bm25s_query(r: Any, i: int) -> Any:
            q = [t for t in terms(queries[i][0]) if t in r.vocab_dict] or ["patients"]
            return r.retrieve([q], k=100, show_progress=False, n_threads=1)

        if bm25s is not None:
            record("lexical", "bm25s", bm25s_build, bm25s_query)

        def fts5_build() -> Any:
            db = sqlite3.connect(tmp / "fts.sqlite")
            db.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize = 'unicode61')")
            db.executemany("INSERT INTO t (rowid, text) VALUES (?, ?)", enumerate(texts))
            db.commit()
            return db

        def fts5_query(db: Any, i: int) -> Any:
            q = " OR ".join(f'"{t}"' for t in dict.fromkeys(terms(queries[i][0]))) or '"x"'
            sql = "SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 100"
            return db.execute(sql, (q,)).fetchall()

        record("lexical", "sqlite_fts5", fts5_build, fts5_query)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    # Vector: top 100, recall@10 against exact, a 10% filter where supported.
    def recall_of(search: Callable[[np.ndarray], np.ndarray], truth: np.ndarray) -> float:
        got = sum(
            len(set(search(q)[:10].tolist()) & set(t.tolist()))
            for q, t in zip(xq, truth, strict=True)
        )
        return round(got / (10 * len(xq)), 4)  # fmt: skip

    record("vector", "numpy_exact", lambda: xb,
           lambda x, i: np.argpartition(-(x @ xq[i]), 100)[:100])  # fmt: skip

    import faiss

    def faiss_build() -> Any:
        index = faiss.IndexHNSWFlat(DIM, 32, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = 80
        index.add(xb)
        return index

    def faiss_params(sel: Any = None, ef: int = 128) -> Any:
        p = faiss.SearchParametersHNSW()  # type: ignore[attr-defined]
        p.efSearch = ef
        if sel is not None:
            p.sel = sel
        return p

    def faiss_query(ix: Any, i: int) -> Any:
        return ix.search(xq[i : i + 1], 100, params=faiss_params())[1][0]

    def faiss_extra(ix: Any) -> dict[str, Any]:
        bitmap = np.packbits(mask, bitorder="little")
        sel = faiss.IDSelectorBitmap(n, faiss.swig_ptr(bitmap))
        ef = 1280  # the store widens ef by 1 / selectivity
        f = [time.perf_counter()]
        found = [ix.search(q[None], 100, params=faiss_params(sel, ef))[1][0] for q in xq]
        f.append(time.perf_counter())
        hits = sum(
            len(set(r[:10].tolist()) & set(t.tolist()))
            for r, t in zip(found, exact10_f, strict=True)
        )
        return {
            "recall_at_10": recall_of(
                lambda q: ix.search(q[None], 100, params=faiss_params())[1][0], exact10
            ),
            "filtered_10pct_mean_ms": round((f[1] - f[0]) / len(xq) * 1000, 2),
            "filtered_10pct_recall_at_10": round(hits / (10 * len(xq)), 4),
        }  # fmt: skip

    record("vector", "faiss_hnsw_m32", faiss_build, faiss_query, faiss_extra)

    hnswlib = _optional("hnswlib", out["vector"])

    def hnsw_build() -> Any:
        index = hnswlib.Index("ip", DIM)
        index.init_index(n, M=32, ef_construction=80)
        index.add_items(xb, np.arange(n))
        index.set_ef(128)
        index.set_num_threads(1)
        return index

    def hnsw_extra(ix: Any) -> dict[str, Any]:
        allowed_list = mask.tolist()
        t0 = time.perf_counter()
        found = [ix.knn_query(q, k=100, filter=lambda j: allowed_list[j])[0][0] for q in xq]
        mean = (time.perf_counter() - t0) / len(xq) * 1000
        hits = sum(
            len(set(r[:10].tolist()) & set(t.tolist()))
            for r, t in zip(found, exact10_f, strict=True)
        )
        t0 = time.perf_counter()
        for i in range(20):
            ix.get_items(np.arange(i * 100, i * 100 + 100))
        return {
            "recall_at_10": recall_of(lambda q: ix.knn_query(q, k=100)[0][0], exact10),
            "filtered_10pct_mean_ms": round(mean, 2),
            "filtered_10pct_recall_at_10": round(hits / (10 * len(xq)), 4),
            "get_100_vectors_ms": round((time.perf_counter() - t0) / 20 * 1000, 2),
        }  # fmt: skip

    if hnswlib is not None:
        record(
            "vector",
            "hnswlib_m32",
            hnsw_build,
            lambda ix, i: ix.knn_query(xq[i], k=100),
            hnsw_extra,
        )

    usearch = _optional("usearch.index", out["vector"])

    for dtype in ("f32", "f16") if usearch is not None else ():

        def usearch_build(dtype: str = dtype) -> Any:
            index = usearch.Index(ndim=DIM, metric="ip", dtype=dtype, connectivity=32,
                           expansion_add=80, expansion_search=128)  # fmt: skip
            index.add(np.arange(n), xb)
            return index

        record("vector", f"usearch_{dtype}_m32", usearch_build,
               lambda ix, i: ix.search(xq[i], 100, threads=1),
               lambda ix: {
                   "recall_at_10": recall_of(lambda q: ix.search(q, 100, threads=1).keys, exact10),
                   "filtered": "not supported by the Python API",
               })  # fmt: skip
    return out


# --- entry point ---------------------------------------------------------------------------


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks vectors")
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--max-size", type=int, default=None)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--data-dir", type=Path, default=None, help="keep stores here")
    parser.add_argument("--reuse", action="store_true", help="reuse stores in --data-dir")
    parser.add_argument("--no-compare", action="store_true")
    parser.add_argument("--compare-size", type=int, default=100_000)
    weaviate_url = os.environ.get("BIOMCP_TEST_WEAVIATE_URL") or os.environ.get("WEAVIATE_URL")
    parser.add_argument("--weaviate-url", default=weaviate_url,
                        help="the Weaviate arm's server (env BIOMCP_TEST_WEAVIATE_URL, "
                        "WEAVIATE_URL); skipped when none or it does not answer")  # fmt: skip
    parser.add_argument("--weaviate-grpc-port", type=int,
                        default=int(os.environ.get("BIOMCP_TEST_WEAVIATE_GRPC_PORT", "50051")),
                        help="env BIOMCP_TEST_WEAVIATE_GRPC_PORT")  # fmt: skip
    parser.add_argument("--weaviate-sizes", default=WEAVIATE_SIZES, help="'' for none")
    parser.add_argument("--weaviate-settle", type=float, default=WEAVIATE_SETTLE_S,
                        help="seconds to wait after an import (memtable flush)")  # fmt: skip
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    weaviate_sizes = [int(s) for s in args.weaviate_sizes.split(",") if s.strip()]
    if args.max_size is not None:
        sizes = [s for s in sizes if s <= args.max_size]
        weaviate_sizes = [s for s in weaviate_sizes if s <= args.max_size]
    n_queries = args.queries
    arm = WeaviateArm(args.weaviate_url, args.weaviate_grpc_port, weaviate_sizes, n_queries,
                      args.weaviate_settle, list(search_runs()))  # fmt: skip
    if quick:  # Weaviate: a smoke test of the arm (2k chunks, one search, no settling)
        sizes, n_queries = [10_000], min(n_queries, 100)
        arm = replace(arm, sizes=[2_000], queries=30, settle_s=0.0, runs=["hybrid_limit40"])
    root = args.data_dir or Path(tempfile.mkdtemp(prefix="bench-vectors-"))
    root.mkdir(parents=True, exist_ok=True)
    corpus = Corpus()
    result: dict[str, Any] = {
        "benchmark": "vectors",
        "machine": describe(),
        "config": {
            "quick": quick,
            "dim": DIM,
            "vectors": {
                "mean_norm": MEAN_NORM,
                "variance_shares": SHARES,
                "domains": DOMAINS,
                "topics": TOPICS,
                "query_noise": QUERY_NOISE,
            },
            "queries": n_queries,
            "sizes": sizes,
            "batch": BATCH,
            "vocabulary": "pubmedqa" if PUBMEDQA.exists() else "built-in",
            "search": "hybrid, relative-score fusion, alpha 0.5 unless named; limit 40 is "
            "top_k 20 oversampled x2; latency excludes query embedding; best of 2 rounds",
            "engines": "tantivy BM25 + faiss HNSW (M 32, efConstruction 80, efSearch "
            "max(128, min(1024, n / 1000)) widened by 1/selectivity), exact scan when <= 20k "
            "vectors are allowed",
            "weaviate": {
                "sizes": arm.sizes,
                "queries": arm.queries,
                "searches": arm.runs,
                "settle_s": arm.settle_s,
                "store": "WeaviateVectorStore: bm25 and near_vector (HNSW, cosine) as two "
                "concurrent server queries, fused in the client as the embedded store does; "
                "timed in this process, so the latency includes the client's work",
                "import": f"upsert_chunks of {WEAVIATE_BATCH} chunks (one gRPC batch each)",
            },
        },
        "sizes": {},
    }
    try:
        for i, n in enumerate(sizes):
            queries = corpus.queries(n_queries, n)
            largest = i == len(sizes) - 1
            result["sizes"][str(n)] = run_size(n, corpus, root, queries, largest, args.reuse)
        result["weaviate"] = run_weaviate(arm, corpus)
        result["side_by_side"] = side_by_side(result["sizes"], result["weaviate"])
        if not quick and not args.no_compare:
            try:
                result["engines"] = _in_fresh_process(
                    "compare_engines", args.compare_size, n_queries
                )
            except RuntimeError as exc:  # an exploration: report it, keep the figures above
                result["engines"] = {"error": str(exc)[-2000:]}
    finally:
        if args.data_dir is None:
            shutil.rmtree(root, ignore_errors=True)
    result["goals"] = goals(result["sizes"])
    return result


#: The goals for the embedded store: hybrid p95 per size (ms), resident memory at 1M.
HYBRID_P95_GOALS_MS = {100_000: 15.0, 1_000_000: 75.0}
RSS_GOAL_MIB_AT_1M = 2.5 * 1024


def goals(sizes: dict[str, Any]) -> dict[str, Any]:
    """`met` per goal; None for a size this run did not measure (e.g. --quick, --max-size)."""
    out: dict[str, Any] = {}
    search = "hybrid_limit40"  # what rag_search runs: top_k 20, oversampled x2
    for n, limit in HYBRID_P95_GOALS_MS.items():
        figures = sizes.get(str(n), {}).get(search)
        p95 = figures["p95_ms"] if figures else None
        label = f"{n // 1_000_000}m" if n % 1_000_000 == 0 else f"{n // 1000}k"
        out[f"embedded_hybrid_p95_ms_at_{label}"] = goal(
            f"<= {limit:g} ms ({search}, query vector given)",
            p95,
            None if p95 is None else p95 <= limit,
        )
    rss = sizes.get("1000000", {}).get("rss_mb_after_queries")
    out["resident_memory_mib_at_1m"] = goal(
        f"<= 2.5 GiB ({RSS_GOAL_MIB_AT_1M:g} MiB) after open and queries",
        rss,
        None if rss is None else rss <= RSS_GOAL_MIB_AT_1M,
    )
    return out

"""The embedded store and Weaviate rank alike on one fixed corpus of a few hundred chunks.

The corpus is the product's own path: synthetic PubMed articles (the fake E-utilities
generator), parsed, chunked by the domain chunker, embedded by the deterministic embedder.
Pure vector search (alpha = 1) must give identical results: both compute the exact cosine order
at this size. Hybrid at alpha = 0.5 must overlap by at least 0.7 in the top 10: the stores share
the fusion (domain.fusion over max(limit * 5, 100) candidates per arm) but not the BM25 engine.
How the BM25 arms differ:

* Weaviate's `word` tokenizer keeps lower-cased alphanumeric runs and no stopword list; the
  embedded analyzer splits the same way but drops a short English stopword list.
* tantivy multiplies every BM25 term score by (k1 + 1) = 2.2 and Weaviate does not: a
  constant factor, no effect on order (raw `bm25` values differ by that factor).
* tantivy stores document lengths as a one-byte "fieldnorm", exact up to about 40 tokens and
  approximate beyond (as Lucene does); Weaviate uses exact lengths. On random texts built from
  a few hundred equally likely words (where BM25 scores crowd together) this alone brought
  the top-10 overlap down to 0.69; on the 400 real PubMedQA abstract sections it was 0.99
  for hybrid and 0.97 for BM25 alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from datetime import date
from pathlib import Path

import pytest

from biomcp.adapters.embeddings.hashing import HashingEmbedder
from biomcp.adapters.entrez.pubmed_xml import parse_pubmed_articles
from biomcp.adapters.vectors import EmbeddedVectorStore
from biomcp.adapters.vectors.weaviate_store import WeaviateVectorStore
from biomcp.domain.chunking import ChunkingConfig, chunk_record
from biomcp.ports.vectors import ChunkRecord, VectorHit, VectorStore
from biomcp.testing.eutils.synthetic import generate_articles
from biomcp.usecases.ranking import hybrid_search
from tests.support.services import weaviate_url

pytestmark = pytest.mark.integration

DIM = 64


async def _corpus_and_queries() -> tuple[list[ChunkRecord], list[tuple[str, list[float]]]]:
    body = generate_articles(200, start=date(2024, 1, 1), end=date(2024, 6, 30), seed=21)
    records = parse_pubmed_articles(body).records
    embedder = HashingEmbedder(dim=DIM)
    config = ChunkingConfig(target_tokens=48, max_tokens=64, overlap_tokens=8)
    chunks = [c for r in records[:150] for c in chunk_record(r, config)]
    vectors = await embedder.embed([c.text for c in chunks])
    corpus = [
        ChunkRecord(
            uuid=c.uuid, doc_id=f"pmid:{c.pmid}", chunk_id=c.chunk_id, text=c.text, vector=v
        )
        for c, v in zip(chunks, vectors, strict=True)
    ]
    questions = [r.title or "" for r in records[150:]]
    query_vectors = await embedder.embed(questions)
    return corpus, list(zip(questions, query_vectors, strict=True))


async def _results(
    store: VectorStore, name: str, queries: list[tuple[str, list[float]]], alpha: float
) -> list[list[VectorHit]]:
    return [await hybrid_search(store, name, t, v, limit=10, alpha=alpha) for t, v in queries]


def test_embedded_and_weaviate_agree_on_vector_and_hybrid_rankings(tmp_path: Path) -> None:
    url = weaviate_url()
    grpc = int(os.environ.get("BIOMCP_TEST_WEAVIATE_GRPC_PORT", "50051"))
    name = f"Agreement{uuid.uuid4().hex[:8]}"

    async def scenario() -> tuple[int, dict[str, list[list[VectorHit]]]]:
        corpus, queries = await _corpus_and_queries()
        embedded = EmbeddedVectorStore(tmp_path / "vectors")
        weaviate = WeaviateVectorStore(url, grpc_port=grpc)
        out: dict[str, list[list[VectorHit]]] = {}
        try:
            for label, store in (("embedded", embedded), ("weaviate", weaviate)):
                await store.ensure_schema(name, dim=DIM, model_id="agreement-test")
                report = await store.upsert_chunks(name, corpus)
                assert report.upserted == len(corpus)
                assert not report.errors
                out[f"{label}:1.0"] = await _results(store, name, queries, 1.0)
                out[f"{label}:0.5"] = await _results(store, name, queries, 0.5)
        finally:
            with contextlib.suppress(Exception):  # leave the shared server as it was
                await weaviate.drop_collection(name)
            await embedded.aclose()
            await weaviate.aclose()
        return len(corpus), out

    size, results = asyncio.run(scenario())
    assert 200 <= size <= 1000
    for emb, wv in zip(results["embedded:1.0"], results["weaviate:1.0"], strict=True):
        # Identical up to float32 rounding: the same cosine at every rank, and the same chunk
        # wherever the cosine is not tied (templated synthetic chunks repeat word for word).
        assert [h.sim for h in emb] == pytest.approx([h.sim for h in wv], abs=1e-5)
        for a, b in zip(emb, wv, strict=True):
            tied = sum(1 for h in emb if abs((h.sim or 0) - (a.sim or 0)) < 1e-5) > 1
            assert tied or a.uuid == b.uuid
    overlaps = [
        len({h.uuid for h in emb} & {h.uuid for h in wv}) / 10
        for emb, wv in zip(results["embedded:0.5"], results["weaviate:0.5"], strict=True)
    ]
    mean = sum(overlaps) / len(overlaps)
    print(f"{size} chunks, {len(overlaps)} queries: hybrid top-10 overlap {mean:.3f}")
    assert mean >= 0.7

"""The study design on the corpus: stored in SQL with the tier, carried by every
chunk, filterable in `rag_search`, and derived again for a corpus stored under older rules.

The fake E-utilities over HTTP, both store pairs (SQLite + embedded; PostgreSQL + Weaviate
in CI), the deterministic embedder; the tool through an in-process MCP client.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client

from biomcp.domain.design import StudyDesign, classify_design
from biomcp.domain.records import Chunk
from biomcp.entrypoints.mcp.contract import V11_OUTPUTS
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.services import Services
from biomcp.ports.documents import DocumentUpsert
from biomcp.testing.eutils import FakeEutilsServer
from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.indexing import chunk_record_of
from biomcp.usecases.maintenance import IndexMaintenance
from biomcp.usecases.search import SearchConfig, SearchCorpus
from tests.support.mcp_inprocess import call_json as _call
from tests.support.mcp_inprocess import serve, test_settings
from tests.support.sync_harness import (
    BackendSpec,
    SteppingClock,
    embedder,
    entrez_client,
    make_corpus,
    make_sync,
    matching,
    record_of,
    run,
)

pytestmark = pytest.mark.integration

N = 60
START, END = date(2024, 1, 1), date(2024, 6, 30)
NOW = datetime(2024, 7, 1, 12, tzinfo=UTC)
MESH = "Humans"
TERM = f"{MESH}[mh]"
KEY = "designs_v1"
QUERY = "randomized trial outcomes in adults"


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    with FakeEutilsServer(make_corpus(N, START, END, seed=23), warm=True) as server:
        yield server


def _designs(fake: FakeEutilsServer, pmids: list[str]) -> dict[str, str]:
    return {p: classify_design(record_of(fake.corpus, p)).design.value for p in pmids}


def test_a_sync_stores_the_design_and_rag_search_filters_by_it(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    expected = _designs(fake, matching(fake.corpus, MESH))
    counts = Counter(expected.values())
    assert len(counts) >= 3, counts  # the fixture spans several designs

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        counting = embedder()
        entrez = entrez_client(fake.base_url)
        async with backend.stores(clock) as (metadata, vectors):
            sync = make_sync(entrez, metadata, vectors, counting, clock, backend.collection)
            report = await sync.run(KEY, TERM)
            assert report.inserted == len(expected)

            stored = await metadata.get_documents(list(expected))
            for pmid, design in expected.items():
                kept = stored[pmid].evidence.design
                assert kept is not None
                assert kept.design.value == design
                assert kept.rule.split(".")[0] in {design, "other"}

            config = SearchConfig(collection=backend.collection, oversample=2)
            search = SearchCorpus(vectors, counting, config=config, metadata=metadata)
            unfiltered = await search.run(QUERY, top_k=50)
            assert {h.study_design for h in unfiltered} == {
                expected[h.doc_id.removeprefix("pmid:")] for h in unfiltered
            }
            for wanted in (["rct"], ["systematic_review", "animal"], ["observational"]):
                hits = await search.run(QUERY, top_k=50, study_designs=wanted)
                docs = {h.doc_id.removeprefix("pmid:") for h in hits}
                assert docs == {p for p, d in expected.items() if d in wanted}
                assert {h.study_design for h in hits} <= set(wanted)
                payload = {"results": [h.as_payload() for h in hits]}
                jsonschema.validate(payload, V11_OUTPUTS["rag.search"])
            none = await search.run(QUERY, top_k=5, study_designs=["in_vitro"])
            assert none == []
            with pytest.raises(InvalidRequestError, match="unknown study design 'cohort'"):
                await search.run(QUERY, top_k=5, study_designs=["rct", "cohort"])
        await entrez.aclose()

    run(scenario())


def test_rebuild_rederive_brings_a_corpus_stored_under_older_rules_up_to_date(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    """A corpus synced before designs were kept: SQL rows without a design and hashes of an
    older scheme, chunks without the design facet. The design filter finds nothing there;
    `rebuild(rederive=True)` stores the design (a new version) and re-indexes the chunks,
    re-embedding nothing new (the embedder's texts are the same)."""
    expected = _designs(fake, fake.corpus.pmids())

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        counting = embedder()
        async with backend.stores(clock) as (metadata, vectors):
            entrez = entrez_client(fake.base_url)
            sync = make_sync(entrez, metadata, vectors, counting, clock, backend.collection)
            records = [record_of(fake.corpus, p) for p in expected]
            old = []
            for record in records:
                current = sync.derive(record)
                evidence = replace(current.evidence, design=None)
                old_hash = "v2:" + current.content_hash.split(":", 1)[1]
                old.append(DocumentUpsert(record, evidence, current.quality, old_hash))
            summary = await metadata.upsert_documents(old)
            assert summary.inserted == len(records)
            docs = await metadata.get_documents(list(expected))
            assert all(d.evidence.design is None for d in docs.values())
            await sync.indexer.ensure_schema()
            chunks = []
            vectors_of = await counting.embed(
                [c.text for d in docs.values() for c in _chunks(sync, d)]
            )
            pieces = [(d, c) for d in docs.values() for c in _chunks(sync, d)]
            for (doc, chunk), vector in zip(pieces, vectors_of, strict=True):
                written = chunk_record_of(doc, chunk, vector)
                chunks.append(replace(written, metadata={}, facets={}))  # as written before
            await vectors.upsert_chunks(backend.collection, chunks)
            await metadata.mark_indexed({d.record.pmid: d.version for d in docs.values()})

            search = SearchCorpus(
                vectors,
                counting,
                config=SearchConfig(collection=backend.collection),
                metadata=metadata,
            )
            assert await search.run(QUERY, top_k=20, study_designs=["rct"]) == []
            assert all(h.study_design is None for h in await search.run(QUERY, top_k=20))

            maintenance = IndexMaintenance(metadata, sync.indexer, derive=sync.derive)
            drift = await maintenance.drift()
            assert (drift.checked, drift.classification, drift.quality) == (
                len(records),
                len(records),
                0,
            )
            assert drift.stale
            assert set(drift.examples) <= set(expected)
            assert len(drift.examples) == min(5, len(records))
            assert (await maintenance.drift(limit=2)).checked == 2
            report = await maintenance.rebuild(rederive=True)
            assert report.documents == len(records)
            assert report.rederived == len(records)
            after = await metadata.get_documents(list(expected))
            for pmid, design in expected.items():
                stored = after[pmid]
                assert stored.version == stored.indexed_version == 2
                assert stored.evidence.design is not None
                assert stored.evidence.design.design.value == design
            rcts = await search.run(QUERY, top_k=50, study_designs=["rct"])
            assert {h.doc_id.removeprefix("pmid:") for h in rcts} == {
                p for p, d in expected.items() if d == "rct"
            }
            # Nothing left to derive: a second pass changes no version.
            again = await maintenance.rebuild(rederive=True)
            assert again.rederived == 0
            assert not (await maintenance.drift()).stale
            assert (await metadata.get_document(records[0].pmid)).version == 2  # type: ignore[union-attr]
            await entrez.aclose()

    run(scenario())


def _chunks(sync: Any, doc: Any) -> tuple[Chunk, ...]:
    from biomcp.domain.chunking import chunk_record

    return chunk_record(doc.record, sync.indexer.chunking)


def test_the_rag_search_tool_takes_a_design_filter_and_names_each_hits_design(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    expected = _designs(fake, matching(fake.corpus, MESH))

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, report = await _call(client, "pubmed_sync_delta", {"query_key": KEY, "term": TERM})
        assert not error, report
        listed = {t.name: t for t in (await client.list_tools()).tools}
        prop = listed["rag_search"].input_schema["properties"]["study_design"]
        assert prop["items"]["enum"] == [d.value for d in StudyDesign]

        arguments = {"query": QUERY, "top_k": 30, "study_design": ["rct", "systematic_review"]}
        error, found = await _call(client, "rag_search", arguments)
        assert not error, found
        jsonschema.validate(found, V11_OUTPUTS["rag.search"])
        assert found["results"]
        for result in found["results"]:
            assert result["study_design"] in {"rct", "systematic_review"}
            assert expected[result["doc_id"].removeprefix("pmid:")] == result["study_design"]

        error, doc = await _call(client, "rag_get", {"doc_id": found["results"][0]["doc_id"]})
        assert not error, doc
        assert doc["study_design"] == found["results"][0]["study_design"]

        error, refused = await _call(
            client, "rag_search", {"query": QUERY, "study_design": ["cohort"]}
        )
        assert error
        assert refused["error"]["code"] == "VALIDATION"
        error, still = await _call(client, "rag_search", {"query": QUERY, "top_k": 3})
        assert not error, still  # the server keeps serving

    serve(test_settings(tmp_path, fake.base_url), body)

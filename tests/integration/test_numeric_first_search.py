"""A question asking for a figure gets the paper's Results chunk first, through `rag_search`:
a corpus synced from the fake E-utilities over HTTP (synthetic records, half of them with a
BACKGROUND and a RESULTS section), SQLite + the embedded store, the deterministic embedder,
an in-process MCP client. The chunks store their section's NLM category."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest
from mcp import Client

from biomcp.domain.rerank import RerankWeights
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.services import Services
from biomcp.testing.eutils import FakeEutilsServer
from biomcp.usecases.indexing import SECTION_CATEGORY
from biomcp.usecases.search import SearchCorpus, SearchHit
from tests.support.mcp_inprocess import call_json, serve, test_settings
from tests.support.sync_harness import make_corpus

pytestmark = pytest.mark.integration

#: The synthetic generator's background sentence: what the paper studied.
BACKGROUND = re.compile(r"The effect of (.+) on (.+) in (.+) is uncertain\.")


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    corpus = make_corpus(40, date(2020, 1, 1), date(2024, 12, 31), seed=42)
    with FakeEutilsServer(corpus, warm=True) as server:
        yield server


def first_section(results: list[dict[str, str]] | list[SearchHit], doc_id: str) -> str | None:
    for hit in results:
        got = hit if isinstance(hit, dict) else {"doc_id": hit.doc_id, "section": hit.section}
        if got["doc_id"] == doc_id:
            return got["section"]
    return None


def test_a_numeric_question_gets_the_results_chunk_of_its_paper_first(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, report = await call_json(
            client, "pubmed_sync_delta", {"query_key": "all_v1", "term": "Journal Article[pt]"}
        )
        assert not error, report
        metadata = services.metadata
        stored = await metadata.get_documents(await metadata.document_pmids())
        studied = {}
        for pmid, doc in stored.items():
            labels = [s.label for s in doc.record.abstract]
            match = BACKGROUND.fullmatch(doc.record.abstract[0].text)
            if labels == ["BACKGROUND", "RESULTS"] and match:
                studied[f"pmid:{pmid}"] = match.groups()
        assert len(studied) >= 10

        search = services.search
        plain = SearchCorpus(
            services.vectors,
            services.embedder,
            config=replace(search.config, weights=RerankWeights(numeric_first=False)),
        )
        flipped = 0
        for doc_id, (intervention, outcome, condition) in studied.items():
            question = f"How large is the effect of {intervention} on {outcome} in {condition}?"
            error, answer = await call_json(client, "rag_search", {"query": question, "top_k": 10})
            assert not error, answer
            if first_section(answer["results"], doc_id) is None:
                continue  # another paper on the same subject took the places
            assert first_section(answer["results"], doc_id) == "RESULTS", question
            before = await plain.run(question, 10)
            flipped += first_section(before, doc_id) == "BACKGROUND"
            # the papers keep their order: only chunks within a paper moved
            papers = list(dict.fromkeys(h["doc_id"] for h in answer["results"]))
            assert papers == list(dict.fromkeys(h.doc_id for h in before))
        assert flipped >= 3  # without the rule, Background came first for these papers

        # A question that asks for no figure keeps the plain order.
        doc_id, (intervention, outcome, condition) = next(iter(studied.items()))
        question = f"Why is the effect of {intervention} on {outcome} uncertain?"
        error, answer = await call_json(client, "rag_search", {"query": question, "top_k": 10})
        assert not error, answer
        before = await plain.run(question, 10)
        assert [h["uuid"] for h in answer["results"]] == [h.uuid for h in before]

        # Every stored chunk of a structured abstract names its section's NLM category.
        uuids = [h.uuid for h in await plain.run("effect", 100)]
        hits = await services.vectors.hits(search.config.collection, uuids)
        categories = {h.section: h.metadata.get(SECTION_CATEGORY) for h in hits}
        assert categories.get("RESULTS") == "RESULTS"
        assert categories.get("BACKGROUND") == "BACKGROUND"
        assert all(h.metadata.get(SECTION_CATEGORY) is None for h in hits if h.section is None)

    serve(test_settings(tmp_path, fake.base_url), body)

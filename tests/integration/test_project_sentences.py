"""Sentence vectors in project collections: the server embeds each sentence of the items it
embeds, so that one sentence of an item finds it. Through the use case on the embedded store
and on Weaviate, and through the MCP tools on the embedded default."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from biomcp.adapters.embeddings.hashing import HashingEmbedder
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.mcp.tools.projects import PROJECT_OUTPUTS
from biomcp.entrypoints.services import Services
from biomcp.usecases.projects import ProjectCollections, ProjectLimits
from tests.integration.test_project_collections import DIM, MODEL, Rig, item, scenario
from tests.support.mcp_inprocess import checked_call, expect_ok, serve, test_settings

pytestmark = pytest.mark.integration

QUERY = "statins lower stroke risk in older women"
#: One sentence answers QUERY; five more about a hospital day dilute the item's own vector.
ANSWER = (
    "Statins lower stroke risk in older women. Ward rounds began at dawn on the renal unit. "
    "Nurses charted fluid balance every hour. Porters moved beds between floors before noon. "
    "The canteen served porridge and tea to visitors. Parking permits were renewed each spring."
)
#: Shares three of QUERY's words in one short sentence: close to QUERY as a whole text.
NEAR = "Statins and stroke were discussed by lipid experts with women."
ITEMS = [item("answer", ANSWER), item("near", NEAR)]


@pytest.fixture(params=["embedded", "weaviate"])
def backend(request: pytest.FixtureRequest) -> str:
    from tests.support.services import postgres_url, weaviate_url

    if request.param == "weaviate":
        postgres_url()
        weaviate_url()
    return str(request.param)


def tools_of(rig: Rig, *, sentences: bool, **limits: Any) -> ProjectCollections:
    return ProjectCollections(
        rig.registry,
        rig.vectors,
        rig.embedder,
        limits=ProjectLimits(**limits),
        sentence_vectors=sentences,
    )


async def with_sentences(rig: Rig, project: str) -> dict[str, bool]:
    """Item id -> whether its stored chunk carries sentence vectors."""
    collection = (await rig.tools.inspect_collection(project))["collection"]
    chunks = await rig.vectors.page_chunks(collection)
    [axis] = await rig.embedder.embed([QUERY])
    carrying = await rig.vectors.sentence_scores(collection, [c.uuid for c in chunks], axis)
    return {c.doc_id: c.uuid in carrying for c in chunks}


def test_one_sentence_of_an_item_finds_it_only_with_sentence_vectors(
    tmp_path: Path, backend: str
) -> None:
    async def work(rig: Rig) -> None:
        scores: dict[tuple[bool, str], dict[str, float]] = {}
        for sentences in (False, True):
            tools = tools_of(rig, sentences=sentences)
            project = f"p{int(sentences)}"
            await tools.create_project(project)
            written = await tools.store_chunks(project, ITEMS)
            assert written["warnings"] == []
            for tool in ("find_chunks", "query_hybrid"):
                found = await getattr(tools, tool)(project, QUERY)
                scores[sentences, tool] = {i["id"]: i["score"] for i in found["items"]}
        # By vectors, the near text wins without sentences and loses with them.
        assert scores[False, "find_chunks"]["near"] > scores[False, "find_chunks"]["answer"]
        assert scores[True, "find_chunks"]["answer"] > scores[True, "find_chunks"]["near"]
        # Hybrid: BM25 already favours the answer; its best sentence lifts it further.
        hybrid = {s: scores[s, "query_hybrid"] for s in (False, True)}
        assert hybrid[True]["answer"] > hybrid[True]["near"]
        assert hybrid[True]["answer"] - hybrid[True]["near"] > (
            hybrid[False]["answer"] - hybrid[False]["near"]
        )
        assert await with_sentences(rig, "p1") == {"answer": True, "near": False}
        assert await with_sentences(rig, "p0") == {"answer": False, "near": False}

    scenario(tmp_path, backend, work)


def test_find_chunks_scores_the_item_by_its_cosine_blended_with_its_best_sentence(
    tmp_path: Path, backend: str
) -> None:
    async def work(rig: Rig) -> None:
        await rig.tools.create_project("p")
        await rig.tools.store_chunks("p", ITEMS)
        [axis, whole, near] = await rig.embedder.embed([QUERY, ANSWER, NEAR])

        def cosine(a: Sequence[float], b: Sequence[float]) -> float:
            return sum(x * y for x, y in zip(a, b, strict=True))

        found = {i["id"]: i["score"] for i in (await rig.tools.find_chunks("p", QUERY))["items"]}
        # The answer's first sentence is the query's words: its cosine is 1.
        assert found["answer"] == pytest.approx(0.5 * cosine(axis, whole) + 0.5, abs=1e-5)
        assert found["near"] == pytest.approx(cosine(axis, near), abs=1e-5)  # one sentence
        assert 0.0 <= found["near"] < found["answer"] <= 1.0

    scenario(tmp_path, backend, work)


def test_items_given_with_their_embedding_are_ranked_by_it_alone(
    tmp_path: Path, backend: str
) -> None:
    async def work(rig: Rig) -> None:
        await rig.tools.create_project("p")
        [own] = await rig.embedder.embed([ANSWER])
        given = {**item("answer", ANSWER, embed_model=MODEL), "embedding": own}
        await rig.tools.store_chunks("p", [given, item("other", ANSWER + " Beds were made.")])
        assert await with_sentences(rig, "p") == {"answer": False, "other": True}

    scenario(tmp_path, backend, work)


class SlowSentences(HashingEmbedder):
    """Embeds the items at once and never finishes the call that embeds their sentences."""

    def __init__(self) -> None:
        super().__init__(DIM, MODEL)
        self.calls = 0

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        if self.calls > 1 and "Statins lower stroke risk in older women." in texts:
            await asyncio.Event().wait()
        return await super().embed(texts)


def test_sentences_past_the_time_limit_leave_the_items_stored_without_them(
    tmp_path: Path,
) -> None:
    async def work(rig: Rig) -> None:
        rig.embedder = SlowSentences()
        rig.tools = tools_of(rig, sentences=True, store_timeout_s=1.0)
        await rig.tools.create_project("p")
        written = await rig.tools.store_chunks("p", ITEMS)
        assert written["chunks_written"] == 2
        [warning] = written["warnings"]
        assert warning.startswith("1 item(s) were stored without sentence vectors")
        assert "1 s limit" in warning
        assert await with_sentences(rig, "p") == {"answer": False, "near": False}
        found = await rig.tools.find_chunks("p", QUERY)
        assert [i["id"] for i in found["items"]] == ["near", "answer"]

    scenario(tmp_path, "embedded", work)


def test_the_tools_find_an_item_by_one_of_its_sentences(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "projects.toml").write_text('[projects."notes"]\n')

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        async def ok(name: str, arguments: dict[str, Any]) -> Any:
            return await expect_ok(checked_call(client, name, arguments, PROJECT_OUTPUTS[name]))

        listed = await client.list_tools()
        [store] = [t for t in listed.tools if t.name == "store_chunks"]
        assert "each sentence" in (store.description or "")
        await ok("store_chunks", {"project": "notes", "items": ITEMS})
        for tool in ("find_chunks", "query_hybrid"):
            found = await ok(tool, {"project": "notes", "query": QUERY})
            assert [i["id"] for i in found["items"]] == ["answer", "near"]

    serve(test_settings(data, "http://127.0.0.1:9"), body)

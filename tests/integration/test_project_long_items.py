"""Long project items are never cut silently: an item longer than the embedder's window is
stored as several parts, each its own vector, found once by its best part, replaced and
deleted as one. Through the use case on the embedded store and on Weaviate, and through the
MCP tools on the embedded default."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from biomcp.adapters.embeddings.hashing import HashingEmbedder
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.mcp.tools.projects import PROJECT_OUTPUTS
from biomcp.entrypoints.services import Services
from biomcp.usecases.projects import ProjectCollections
from tests.integration.test_project_collections import (
    DIM,
    MODEL,
    PartialStore,
    Rig,
    errors_of,
    item,
    scenario,
)
from tests.support.mcp_inprocess import checked_call, expect_ok, serve, test_settings

pytestmark = pytest.mark.integration

#: The window of the default embedder (all-MiniLM-L6-v2), in its tokens.
WINDOW = 256
KEY = "Metformin lowered HbA1c by 1.1% (95% CI 0.9 to 1.3) versus placebo."
QUERY = "metformin HbA1c placebo"


def filler(count: int, start: int = 0) -> str:
    """`count` sentences about software layers: none shares a word with QUERY."""
    return "".join(
        f"Paragraph {i} describes how layered systems keep their boundaries clean. "
        for i in range(start, start + count)
    )


#: The key sentence comes after about 360 words: past the window of the whole item.
LONG = filler(30) + KEY + " " + filler(20, 30)
SHORTER = filler(25) + "The trial was stopped early."
OTHERS = [
    item("n1", "Entities and value objects are distinct.", tags=["ddd"]),
    item("n2", "Use cases orchestrate the domain; adapters stay thin."),
]


def windowed(rig: Rig) -> ProjectCollections:
    """The rig's use case with an embedder that reads only the first WINDOW words."""
    rig.embedder = HashingEmbedder(DIM, MODEL, max_tokens=WINDOW)
    rig.tools = ProjectCollections(rig.registry, rig.vectors, rig.embedder)
    return rig.tools


async def stored(rig: Rig, project: str = "p") -> list[tuple[str, str]]:
    """(item id, chunk id) of every chunk the project's collection holds."""
    collection = (await rig.tools.inspect_collection(project))["collection"]
    return sorted((c.doc_id, c.chunk_id) for c in await rig.vectors.page_chunks(collection))


@pytest.fixture(params=["embedded", "weaviate"])
def backend(request: pytest.FixtureRequest) -> str:
    from tests.support.services import postgres_url, weaviate_url

    if request.param == "weaviate":
        postgres_url()
        weaviate_url()
    return str(request.param)


def test_a_sentence_past_the_window_is_found_and_its_item_named_once(
    tmp_path: Path, backend: str
) -> None:
    async def work(rig: Rig) -> None:
        tools = windowed(rig)
        await tools.create_project("p")
        written = await tools.store_chunks("p", [item("long", LONG, tags=["t"]), *OTHERS])
        assert written["chunks_written"] == 3
        [warning] = written["warnings"]
        assert f"{WINDOW}-token window" in warning
        assert "'long'" in warning
        parts = [c for d, c in await stored(rig) if d == "long"]
        assert len(parts) >= 3
        assert all(c.endswith(f"/{len(parts)}") for c in parts)

        for search in (tools.find_chunks, tools.query_hybrid):
            found = await search("p", QUERY, full_text=True)
            ids = [i["id"] for i in found["items"]]
            assert ids[0] == "long"
            assert sorted(ids) == ["long", "n1", "n2"]  # each item once
            top = found["items"][0]
            assert KEY in top["render_text"]
            assert len(top["render_text"]) < len(LONG) // 2  # the part that matched
            assert top["full_text"] == LONG
        tagged = await tools.find_chunks("p", QUERY, filters={"tags": "t"}, top_k=1)
        assert [i["id"] for i in tagged["items"]] == ["long"]
        shown = await tools.inspect_collection("p", sample=5)
        assert sorted(s["id"] for s in shown["sample"]) == ["long", "n1", "n2"]

    scenario(tmp_path, backend, work)


def test_parts_of_one_item_never_crowd_other_items_out_of_the_results(
    tmp_path: Path, backend: str
) -> None:
    crowded = "".join(f"Finding {i}: metformin lowered glucose again. " for i in range(200))
    other = "One note among many words, written today, mentions metformin once."

    async def work(rig: Rig) -> None:
        tools = windowed(rig)
        await tools.create_project("p")
        await tools.store_chunks("p", [item("crowded", crowded), item("other", other)])
        assert len(await stored(rig)) > 6
        for search in (tools.find_chunks, tools.query_hybrid):
            found = await search("p", "metformin", top_k=2)
            assert sorted(i["id"] for i in found["items"]) == ["crowded", "other"]

    scenario(tmp_path, backend, work)


def test_a_split_item_restored_or_deleted_leaves_no_orphan_parts(
    tmp_path: Path, backend: str
) -> None:
    async def work(rig: Rig) -> None:
        tools = windowed(rig)
        await tools.create_project("p")
        await tools.store_chunks("p", [item("long", LONG), OTHERS[0]])
        first = [c for d, c in await stored(rig) if d == "long"]

        await tools.store_chunks("p", [item("long", SHORTER)])  # fewer parts
        fewer = [c for d, c in await stored(rig) if d == "long"]
        assert 1 < len(fewer) < len(first)
        assert all(c.endswith(f"/{len(fewer)}") for c in fewer)
        found = await tools.query_hybrid("p", QUERY, full_text=True)
        assert [i["full_text"] for i in found["items"] if i["id"] == "long"] == [SHORTER]
        assert not [i for i in found["items"] if KEY in i["render_text"]]

        await tools.store_chunks("p", [item("long", "Now a short note.")])  # one part
        assert await stored(rig) == [("long", "0"), ("n1", "0")]
        await tools.store_chunks("p", [item("long", LONG)])  # split again
        assert [c for d, c in await stored(rig) if d == "long"] == first

        collection = (await tools.inspect_collection("p"))["collection"]
        assert await rig.vectors.delete_chunks(collection, "long") == len(first)
        assert await stored(rig) == [("n1", "0")]

    scenario(tmp_path, backend, work)


def test_a_given_embedding_of_a_long_item_gives_way_to_its_parts(
    tmp_path: Path, backend: str
) -> None:
    async def work(rig: Rig) -> None:
        tools = windowed(rig)
        await tools.create_project("p")
        [own] = await rig.embedder.embed([LONG])
        given = {**item("long", LONG, embed_model=MODEL), "embedding": own}
        written = await tools.store_chunks("p", [given])
        assert "not the given embedding of 1" in written["warnings"][0]
        found = await tools.find_chunks("p", QUERY)
        assert KEY in found["items"][0]["render_text"]

    scenario(tmp_path, backend, work)


def test_a_batch_taken_in_part_puts_back_every_part_of_a_split_item(tmp_path: Path) -> None:
    async def work(rig: Rig) -> None:
        tools = windowed(rig)
        await tools.create_project("p")
        await tools.store_chunks("p", [item("long", LONG)])
        before = await stored(rig)
        flaky = ProjectCollections(rig.registry, PartialStore(rig.vectors), rig.embedder)
        error = await errors_of(flaky.store_chunks("p", [item("long", SHORTER), OTHERS[0]]))
        assert error.code == "INDEX_UNAVAILABLE"
        assert await stored(rig) == before
        found = await tools.find_chunks("p", QUERY, full_text=True)
        assert found["items"][0]["full_text"] == LONG

    scenario(tmp_path, "embedded", work)


def test_the_tools_find_a_long_items_late_sentence_and_name_the_item_once(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "projects.toml").write_text('[projects."notes"]\n')

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        async def ok(name: str, arguments: dict[str, Any]) -> Any:
            return await expect_ok(checked_call(client, name, arguments, PROJECT_OUTPUTS[name]))

        listed = await client.list_tools()
        [store] = [t for t in listed.tools if t.name == "store_chunks"]
        assert "split at sentence ends" in (store.description or "")
        items = [{"id": "long", "text": LONG}, *OTHERS]
        written = await ok("store_chunks", {"project": "notes", "items": items})
        assert written["chunks_written"] == 3
        assert "'long'" in written["warnings"][0]
        for tool in ("find_chunks", "query_hybrid"):
            found = await ok(tool, {"project": "notes", "query": QUERY, "full_text": True})
            assert [i["id"] for i in found["items"]].count("long") == 1
            assert found["items"][0]["id"] == "long"
            assert KEY in found["items"][0]["render_text"]
            assert found["items"][0]["full_text"] == LONG

    serve(test_settings(data, "http://127.0.0.1:9"), body)

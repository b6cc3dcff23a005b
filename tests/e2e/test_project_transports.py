"""The project tools (spec 02) over both transports and both backend pairs, through real MCP
clients against real server processes: Streamable HTTP and stdio, on SQLite + the embedded
store and on PostgreSQL + Weaviate."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from biomcp.adapters.sql import upgrade
from biomcp.adapters.vectors.weaviate_store import WeaviateVectorStore
from biomcp.entrypoints.mcp.tools.projects import PROJECT_OUTPUTS
from tests.support.mcp_inprocess import assert_envelope
from tests.support.mcp_inprocess import call_structured as call
from tests.support.servers import mcp_http, mcp_stdio, serve_http, server_env
from tests.support.services import postgres_url, weaviate_url
from tests.support.sql_databases import postgres_schema

pytestmark = [pytest.mark.e2e]

NO_NCBI = "http://127.0.0.1:9"  # nothing here calls PubMed


async def exercise(client: Client, project: str) -> None:
    """Every project tool once, answers checked against their output schemas."""

    async def ok(name: str, arguments: dict[str, Any]) -> Any:
        error, answer = await call(client, name, arguments)
        assert not error, answer
        Draft202012Validator(PROJECT_OUTPUTS[name]).validate(answer)
        return answer

    listed = await ok("list_projects", {})
    assert project in [p["id"] for p in listed["projects"]]
    items = [
        {
            "id": "n1",
            "text": "Entities have identity; value objects are defined by their attributes.",
            "metadata": {"zotero": {"citekey": "evans2003", "tags": ["ddd"]}},
        },
        {
            "id": "n2",
            "text": "Adapters translate between the domain and the outside world.",
            "metadata": {"zotero": {"citekey": "cockburn2005", "tags": ["ports"]}},
        },
    ]
    assert (await ok("store_chunks", {"project": project, "items": items}))["chunks_written"] == 2
    found = await ok("find_chunks", {"project": project, "query": "value objects identity"})
    assert found["items"][0]["citekey"] == "evans2003"
    hybrid = await ok(
        "query_hybrid", {"project": project, "query": "adapters", "filters": {"tags": ["ports"]}}
    )
    assert [i["id"] for i in hybrid["items"]] == ["n2"]
    shown = await ok("inspect_collection", {"project": project, "sample": 2})
    assert shown["size"] == 2
    error, answer = await call(client, "find_chunks", {"project": f"{project}-nope", "query": "x"})
    assert error
    assert_envelope(answer, "INVALID_PROJECT")


def _declare(data: Path, project: str) -> None:
    data.mkdir(parents=True, exist_ok=True)
    (data / "projects.toml").write_text(f'[projects."{project}"]\n')


@pytest.fixture
def weaviate_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Settings of a server on PostgreSQL (a schema of its own, migrated) + Weaviate."""
    with postgres_schema(postgres_url()) as url:
        upgrade(url)
        yield {
            "BIOMCP_DATABASE_URL": url,
            "BIOMCP_VECTOR_BACKEND": "weaviate",
            "WEAVIATE_URL": weaviate_url(),
            "WEAVIATE_GRPC_PORT": os.environ.get("BIOMCP_TEST_WEAVIATE_GRPC_PORT", "50051"),
        }


def _drop(collections_of: str, env: dict[str, str]) -> None:
    async def drop() -> None:
        store = WeaviateVectorStore(env["WEAVIATE_URL"], grpc_port=int(env["WEAVIATE_GRPC_PORT"]))
        try:
            for name in await store.collections():
                if collections_of in name:
                    await store.drop_collection(name)
        finally:
            await store.aclose()

    asyncio.run(drop())


@pytest.mark.parametrize("backend", ["embedded", "weaviate"])
def test_over_streamable_http(tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> None:
    extra: dict[str, str] = {}
    if backend == "weaviate":
        extra = request.getfixturevalue("weaviate_env")
    tag = uuid.uuid4().hex[:8]
    project = f"e2e/http-{tag}"
    _declare(tmp_path / "data", project)
    env = server_env(tmp_path / "data", NO_NCBI, **extra)
    try:
        with serve_http(["--port", "0"], env=env, cwd=tmp_path) as server:

            async def scenario() -> None:
                async with mcp_http(server.url) as client:
                    await exercise(client, project)

            asyncio.run(scenario())
    finally:
        if backend == "weaviate":
            _drop(f"http_{tag}", extra)


def test_over_stdio_on_postgres_and_weaviate(tmp_path: Path, weaviate_env: dict[str, str]) -> None:
    tag = uuid.uuid4().hex[:8]
    project = f"e2e/stdio-{tag}"
    _declare(tmp_path / "data", project)
    env = server_env(tmp_path / "data", NO_NCBI, **weaviate_env)

    async def scenario() -> None:
        with (tmp_path / "server.log").open("w") as errlog:
            async with mcp_stdio(env, tmp_path, errlog) as client:
                await exercise(client, project)

    try:
        asyncio.run(scenario())
    finally:
        _drop(f"stdio_{tag}", weaviate_env)

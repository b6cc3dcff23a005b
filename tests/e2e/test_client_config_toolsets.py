"""`biomcp client-config --toolsets`: the entry it prints offers the toolsets asked for.

The real command prints a Claude Desktop entry; a real MCP stdio client then starts the server
from it, as the client would, and lists the tools.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from tests.support.cli import make_cli

pytestmark = pytest.mark.e2e

PROJECT_TOOLS = {"store_chunks", "find_chunks", "query_hybrid", "inspect_collection"}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(1, start=date(2022, 1, 1), end=date(2022, 1, 2), seed=1)
    )
    with FakeEutilsServer(corpus) as server:
        yield server


def _listed_tools(entry: dict[str, object], cwd: Path) -> set[str]:
    """The tool names a client gets from the server `entry` starts."""
    env = dict(entry["env"])  # type: ignore[call-overload]
    params = StdioServerParameters(
        command=str(entry["command"]),
        args=list(entry["args"]),  # type: ignore[call-overload]
        env={**env, "PATH": os.environ.get("PATH", "")},
        cwd=cwd,
    )

    async def scenario() -> set[str]:
        with (cwd / "server.log").open("w", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                return {tool.name for tool in (await client.list_tools()).tools}

    return asyncio.run(scenario())


def test_the_entry_offers_the_default_toolsets_and_the_ones_added(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    cli = make_cli(fake, tmp_path)
    done = cli.real("client-config", "claude-desktop", "--toolsets", "Default, projects")
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)["mcpServers"]["bio-mcp"]
    assert entry["env"]["BIOMCP_TOOLSETS"] == "default,projects"
    assert "# toolsets: default,projects" in done.stderr
    tools = _listed_tools(entry, tmp_path)
    assert PROJECT_TOOLS | {"list_projects", "rag_search", "pubmed_search_articles"} <= tools
    assert not {"search", "fetch", "pubmed_format_citations"} & tools  # off by default

    plain = cli.real("client-config", "claude-desktop")
    assert plain.returncode == 0, plain.stderr
    entry = json.loads(plain.stdout)["mcpServers"]["bio-mcp"]
    assert "BIOMCP_TOOLSETS" not in entry.get("env", {})
    assert "# toolsets: default" in plain.stderr
    tools = _listed_tools(entry, tmp_path)
    assert "rag_search" in tools
    assert not PROJECT_TOOLS & tools


def test_an_unknown_toolset_is_refused_with_the_known_ones(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    done = make_cli(fake, tmp_path)("client-config", "cursor", "--toolsets", "corpus,projetcs")
    assert done.returncode == 2
    assert "unknown toolset 'projetcs'" in done.stderr
    assert "projects" in done.stderr.split("unknown toolset")[1]
    assert done.stdout == ""

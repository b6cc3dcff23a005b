"""`biomcp client-config`: the entry it prints starts a working server, as a client would.

A corpus is synced from one folder with a relative data folder; the printed Claude Desktop
entry is then used as a client uses it: its command and arguments, only its environment (and
PATH), from another folder, through a real MCP stdio client.
"""

from __future__ import annotations

import asyncio
import json
import os
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from tests.support.cli import make_cli

pytestmark = pytest.mark.e2e

KEY = "known-key-4242"
RECORDS = 30


def test_the_printed_entry_starts_a_server_on_the_same_corpus_from_anywhere(
    tmp_path: Path,
) -> None:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(RECORDS, start=date(2022, 1, 1), end=date(2022, 3, 31), seed=9)
    )
    with FakeEutilsServer(corpus, api_keys={KEY}) as fake:
        cli = make_cli(fake, tmp_path)
        env = {**cli.env, "BIOMCP_DATA_DIR": "rel-data", "NCBI_API_KEY": KEY}
        synced = cli.json("sync", "-k", "cfg", "-t", "Journal Article[pt]", **env)
        assert synced["inserted"] == RECORDS
        assert (cli.cwd / "rel-data").is_dir()

        done = cli.real("client-config", "claude-desktop", **env)
        assert done.returncode == 0, done.stderr
        assert KEY not in done.stdout
        entry = json.loads(done.stdout)["mcpServers"]["bio-mcp"]
        assert Path(entry["command"]).is_absolute()
        assert Path(entry["command"]).is_file()
        assert entry["args"] == ["serve"]
        server_env = entry["env"]
        assert server_env["BIOMCP_DATA_DIR"] == str((cli.cwd / "rel-data").resolve())
        assert server_env["NCBI_API_KEY"] == "<NCBI_API_KEY>"
        assert "# claude-desktop: claude_desktop_config.json" in done.stderr
        assert "fill in <NCBI_API_KEY>" in done.stderr

        # The user fills the placeholder in; the client starts the server its own way.
        server_env["NCBI_API_KEY"] = KEY
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        params = StdioServerParameters(
            command=entry["command"],
            args=entry["args"],
            env={**server_env, "PATH": os.environ.get("PATH", "")},
            cwd=elsewhere,
        )

        async def scenario() -> tuple[dict[str, Any], int]:
            with (tmp_path / "server.log").open("w", encoding="utf-8") as errlog:
                async with Client(stdio_client(params, errlog=errlog)) as client:
                    overview = await client.call_tool("corpus_overview", {})
                    search = await client.call_tool(
                        "rag_search", {"query": "randomized trial", "top_k": 3}
                    )
                    live = await client.call_tool(
                        "pubmed_search_articles", {"queryTerm": "Journal Article[pt]"}
                    )
                    assert not live.is_error, live.content
                    found = json.loads(search.content[0].text)["results"]  # type: ignore[union-attr]
                    return json.loads(overview.content[0].text), len(found)  # type: ignore[union-attr]

        overview, hits = asyncio.run(scenario())
        assert overview["records"] == RECORDS
        assert [q["query_key"] for q in overview["queries"]] == ["cfg"]
        assert hits == 3
        # the key went to NCBI with the live call (and NCBI, here the fake, took it)
        assert fake.log[-1]["has_api_key"] is True
        assert fake.log[-1]["status"] == 200


def test_an_unknown_client_is_refused(tmp_path: Path) -> None:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(1, start=date(2022, 1, 1), end=date(2022, 1, 2), seed=1)
    )
    with FakeEutilsServer(corpus) as fake:
        done = make_cli(fake, tmp_path)("client-config", "windsurf")
    assert done.returncode == 2
    assert "unknown client 'windsurf'" in done.stderr
    assert done.stdout == ""

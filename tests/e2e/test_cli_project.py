"""`biomcp project ...` as a user runs it: processes on one data folder, and a server process
(stdio, driven by a real MCP client) seeing what the CLI stored. The commands that succeed are
forked from a process that imported bio-mcp already (`tests/support/forked`); the refused ones
run the installed console script."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.forked import run_cli
from tests.support.servers import mcp_stdio, run_biomcp, server_env

pytestmark = [pytest.mark.e2e]

ITEMS = [
    {
        "id": "evans-1",
        "text": "Entities have identity over time; value objects are defined by attributes.",
        "metadata": {"zotero": {"citekey": "evans2003", "tags": ["architecture", "ddd"]}},
    },
    {
        "id": "martin-1",
        "text": "Use cases orchestrate the domain; adapters stay thin.",
        "metadata": {"zotero": {"citekey": "martin2017", "tags": ["architecture"]}},
    },
]


def test_create_store_find_inspect_and_list_from_the_cli(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", "http://127.0.0.1:9")

    def biomcp(*args: str) -> dict[str, Any]:
        done = run_cli([*args, "--json"], env=env, cwd=tmp_path)
        assert done.returncode == 0, (done.stdout, done.stderr)
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer

    made = biomcp("project", "create", "citeloom/clean-arch")
    assert made["hybrid_enabled"] is True
    lines = tmp_path / "items.jsonl"
    lines.write_text("\n".join(json.dumps(i) for i in ITEMS))
    assert biomcp("project", "store", "citeloom/clean-arch", str(lines))["chunks_written"] == 2

    found = biomcp("project", "find", "citeloom/clean-arch", "entities identity")
    assert found["items"][0]["id"] == "evans-1"
    tagged = biomcp("project", "find", "citeloom/clean-arch", "domain", "--tag", "ddd", "--hybrid")
    assert [i["id"] for i in tagged["items"]] == ["evans-1"]
    shown = biomcp("project", "inspect", "citeloom/clean-arch", "--sample", "2")
    assert shown["size"] == 2
    listed = biomcp("project", "list")
    assert [p["id"] for p in listed["projects"]] == ["citeloom/clean-arch"]

    unknown = run_biomcp(["project", "find", "nope", "x"], env=env, cwd=tmp_path)
    assert unknown.returncode == 1
    assert "INVALID_PROJECT" in unknown.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    refused = run_biomcp(
        ["project", "store", "citeloom/clean-arch", str(bad)], env=env, cwd=tmp_path
    )
    assert refused.returncode == 2
    assert "VALIDATION" in refused.stderr

    # A server process on the same folder finds what the CLI stored.
    async def through_mcp() -> list[str]:
        with (tmp_path / "server.log").open("w") as errlog:
            async with mcp_stdio(env, tmp_path, errlog) as client:
                result = await client.call_tool(
                    "find_chunks", {"project": "citeloom/clean-arch", "query": "use cases"}
                )
                assert not result.is_error, result.content
                assert result.structured_content is not None
                return [i["id"] for i in result.structured_content["items"]]

    assert asyncio.run(through_mcp())[0] == "martin-1"

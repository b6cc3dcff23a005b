"""`biomcp serve` / `biomcp mcp` / `biomcp skill` as real child processes.

* stdin that ends before any MCP message (`true | biomcp serve`, `echo | biomcp serve`) prints
  the guidance, like a closed stdin, exits 0 and writes nothing on stdout;
* a client that initializes and then closes stdin still gets exit 0;
* `biomcp mcp` is `biomcp serve`, and its protocol errors carry the standard codes;
* `biomcp skill render` prints the body of `biomcp://help`, in the mode of its environment, and
  `biomcp skill show <slug>` the body of `biomcp://skill/<slug>`.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from tests.support.servers import START_TIMEOUT_S, biomcp_command, mcp_stdio, run_biomcp, server_env

pytestmark = pytest.mark.e2e

NO_NCBI = "http://127.0.0.1:9/"  # never called here


@pytest.mark.parametrize("command", ["serve", "mcp"])
@pytest.mark.parametrize(("shell", "stdin_text"), [("true |", ""), ("echo |", "\n")])
def test_stdin_ending_before_any_message_ends_cleanly_with_guidance(
    tmp_path: Path, command: str, shell: str, stdin_text: str
) -> None:
    env = server_env(tmp_path / "data", NO_NCBI)
    result = subprocess.run(  # noqa: S603 - our own entry point, fixed arguments
        [*biomcp_command(), command],
        input=stdin_text,  # a pipe that ends: what `true |` and `echo |` give
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, (shell, result)
    assert "serve-http" in result.stderr
    assert "stdin" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_a_client_that_initializes_then_closes_stdin_exits_0(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", NO_NCBI)
    initialize = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    }
    with subprocess.Popen(  # noqa: S603 - our own entry point, fixed arguments
        [*biomcp_command(), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
        text=True,
    ) as child:
        stdin, stdout, errors = child.stdin, child.stdout, child.stderr
        assert stdin is not None
        assert stdout is not None
        assert errors is not None

        def ask(ident: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
            message = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
            stdin.write(json.dumps(message) + "\n")
            stdin.flush()
            while True:  # like a client: wait for the answer before going on
                answer: dict[str, Any] = json.loads(stdout.readline())
                if answer.get("id") == ident:
                    return answer

        try:
            assert ask(1, "initialize", initialize)["result"]["serverInfo"]["name"] == "bio-mcp"
            stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            stdin.write("\n")
            prompts = {p["name"] for p in ask(2, "prompts/list", {})["result"]["prompts"]}
            assert prompts == {"research_plan", "pico_search", "evidence_review"}
            stdin.close()  # the client is done
            returncode = child.wait(timeout=START_TIMEOUT_S)
            stderr = errors.read()
        finally:
            if child.poll() is None:
                child.kill()
    assert returncode == 0, stderr
    assert "serve-http" not in stderr


@pytest.mark.parametrize(
    "mode", [{}, {"BIOMCP_TOOL_NAMES": "spec"}, {"BIOMCP_READ_ONLY": "true"}], ids=str
)
def test_skill_render_is_the_help_resource_and_mcp_is_serve(
    tmp_path: Path, mode: dict[str, str]
) -> None:
    env = server_env(tmp_path / "data", NO_NCBI, **mode)
    rendered = run_biomcp(["skill", "render"], env=env, cwd=tmp_path)
    assert rendered.returncode == 0, rendered
    shown = run_biomcp(["skill", "show", "keeping-corpus-fresh"], env=env, cwd=tmp_path)
    assert shown.returncode == 0, shown
    listed = run_biomcp(["skill", "list"], env=env, cwd=tmp_path)
    assert "keeping-corpus-fresh\tKeeping a corpus fresh\t" in listed.stdout
    unknown = run_biomcp(["skill", "show", "nope"], env=env, cwd=tmp_path)
    assert unknown.returncode == 2
    assert "keeping-corpus-fresh" in unknown.stderr

    async def scenario() -> tuple[str, str, set[str]]:
        with (tmp_path / "mcp.stderr").open("w", encoding="utf-8") as errlog:
            async with mcp_stdio(env, tmp_path, errlog, args=("mcp",)) as client:
                help_text = await client.read_resource("biomcp://help")
                skill = await client.read_resource("biomcp://skill/keeping-corpus-fresh")
                tools = {tool.name for tool in (await client.list_tools()).tools}
                # Protocol errors over the wire: the standard codes, never 0.
                with pytest.raises(MCPError) as unknown_tool:
                    await client.call_tool("no_such_tool", {})
                assert unknown_tool.value.code == INVALID_PARAMS
                assert "Tools: " in unknown_tool.value.message
                with pytest.raises(MCPError) as unknown_prompt:
                    await client.get_prompt("no_such_prompt", {})
                assert unknown_prompt.value.code == INVALID_PARAMS
                assert "pico_search" in unknown_prompt.value.message
                with pytest.raises(MCPError) as unknown_resource:
                    await client.read_resource("biomcp://skill/no-such-skill")
                assert unknown_resource.value.code == -32002
                assert "resource://pubmed/paper/{pmid}" in unknown_resource.value.message
                return (
                    help_text.contents[0].text,  # type: ignore[union-attr]
                    skill.contents[0].text,  # type: ignore[union-attr]
                    tools,
                )

    help_body, skill_body, tools = asyncio.run(scenario())
    assert rendered.stdout == help_body
    assert shown.stdout == skill_body
    search = "rag.search" if mode.get("BIOMCP_TOOL_NAMES") else "rag_search"
    assert search in tools
    assert f"`{search}`" in help_body
    sync = "pubmed.sync_delta" if mode.get("BIOMCP_TOOL_NAMES") else "pubmed_sync_delta"
    assert (sync in tools) is (sync in help_body) is (sync in skill_body)

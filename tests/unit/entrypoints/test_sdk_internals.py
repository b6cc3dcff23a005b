"""The MCP SDK internals bio-mcp relies on are named in `entrypoints/mcp/sdk.py` only, and
this test fails by name when an SDK upgrade removes one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from mcp.server.mcpserver import MCPServer

from biomcp.entrypoints.mcp import sdk

pytestmark = pytest.mark.unit

SRC = Path(sdk.__file__).resolve().parents[3]


def test_every_sdk_internal_bio_mcp_uses_is_in_the_installed_sdk() -> None:
    with sdk.sdk_logging_left_alone():
        server: MCPServer[object] = MCPServer("probe")
    assert sdk.missing_private_names(server) == []


def test_a_missing_internal_is_reported_by_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    with sdk.sdk_logging_left_alone():
        server: MCPServer[object] = MCPServer("probe")
    monkeypatch.delattr(MCPServer, "_tool_input_schema")
    del server._prompt_manager
    assert sdk.missing_private_names(server) == [
        "MCPServer._tool_input_schema",
        "MCPServer()._prompt_manager",
    ]


def test_no_other_module_names_the_sdk_internals() -> None:
    names = [name for _, name in sdk.PRIVATE_NAMES if name.startswith("_")]
    names += list(sdk.INSTANCE_NAMES)
    found = subprocess.run(  # noqa: S603 - grep over our own sources
        ["grep", "-rlnE", "|".join(names), str(SRC), "--include=*.py"],  # noqa: S607
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    users = sorted(str(Path(f).relative_to(SRC)) for f in found)
    # server.py overrides the hook by its name, as a subclass must.
    assert users == ["biomcp/entrypoints/mcp/sdk.py", "biomcp/entrypoints/mcp/server.py"]
    server_py = (SRC / "biomcp/entrypoints/mcp/server.py").read_text(encoding="utf-8")
    for name in sdk.INSTANCE_NAMES:
        assert name not in server_py

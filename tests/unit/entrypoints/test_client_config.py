"""`biomcp client-config`: which settings a client must pass, and each client's format."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from biomcp.entrypoints.cli.commands.clients import server_env, snippet

pytestmark = pytest.mark.unit


def test_the_settings_in_force_are_written_out_paths_absolute_secrets_as_placeholders(
    tmp_path: Path,
) -> None:
    environ = {
        "NCBI_API_KEY": "k-123",
        "NCBI_ADMIN_EMAIL": "ops@example.org",
        "BIOMCP_DATA_DIR": "corpus/data",  # relative: the client runs elsewhere
        "biomcp_search_alpha": "0.5",  # any case, as the settings read it
        "MCP_HTTP_PORT": "9000",  # serve-http only
        "MCP_AUTH_SECRET_KEY": "s" * 40,  # serve-http only, and a secret
        "BIOMCP_EMBEDDER": "onnx",  # no such setting
        "HOME": "/root",  # not ours
    }
    dotenv = {"NCBI_ADMIN_EMAIL": "old@example.org", "BIOMCP_READ_ONLY": "true", "EMPTY": None}
    env = server_env(environ, dotenv, tmp_path)
    assert env == {
        "BIOMCP_DATA_DIR": str(tmp_path / "corpus" / "data"),
        "BIOMCP_READ_ONLY": "true",  # from .env, which the client would not read
        "BIOMCP_SEARCH_ALPHA": "0.5",
        "NCBI_ADMIN_EMAIL": "ops@example.org",  # the environment wins over .env
        "NCBI_API_KEY": "<NCBI_API_KEY>",
    }
    revealed = server_env(environ, dotenv, tmp_path, with_secrets=True)
    assert revealed["NCBI_API_KEY"] == "k-123"
    assert server_env({"BIOMCP_DATA_DIR": "/srv/x"}, {}, tmp_path) == {"BIOMCP_DATA_DIR": "/srv/x"}


def test_each_client_gets_its_own_shape() -> None:
    command = ["/opt/bio mcp/bin/biomcp", "serve"]
    env = {"NCBI_ADMIN_EMAIL": "ops@example.org"}
    claude = json.loads(snippet("claude-desktop", "bio-mcp", command, env))
    assert claude == {
        "mcpServers": {
            "bio-mcp": {"command": "/opt/bio mcp/bin/biomcp", "args": ["serve"], "env": env}
        }
    }
    assert json.loads(snippet("cursor", "pubmed", command, {})) == {
        "mcpServers": {"pubmed": {"command": "/opt/bio mcp/bin/biomcp", "args": ["serve"]}}
    }
    vscode = json.loads(snippet("vscode", "bio-mcp", command, env))
    assert vscode["servers"]["bio-mcp"]["type"] == "stdio"
    line = snippet("claude-code", "bio-mcp", command, env)
    assert shlex.split(line) == [
        "claude", "mcp", "add", "bio-mcp", "-e", "NCBI_ADMIN_EMAIL=ops@example.org",
        "--", "/opt/bio mcp/bin/biomcp", "serve",
    ]  # fmt: skip

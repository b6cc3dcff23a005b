"""`biomcp client-config CLIENT`: what an MCP client needs to start this server.

It prints, on stdout, the entry to paste into the client's configuration (JSON, or the command
line for Claude Code): this install's `biomcp` by its absolute path, `serve`, and the bio-mcp
settings in force here. A client starts the server from its own folder and with its own
environment, so the settings are written out: those of the environment and of a `.env` in
this folder (which the client will not read), paths made absolute, the HTTP-only ones left
out. Secrets are placeholders to fill in, unless `--with-secrets`. `--toolsets` chooses the tool
families the client is offered (`BIOMCP_TOOLSETS`). Where the client keeps its configuration,
and what to check, goes to stderr.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args

import typer

__all__ = ["CLIENTS", "client_config", "server_command", "server_env", "snippet"]

#: client -> (where its configuration lives, the key its servers are under)
CLIENTS: dict[str, tuple[str, str | None]] = {
    "claude-desktop": (
        "claude_desktop_config.json (Claude Desktop: Settings > Developer > Edit Config; "
        "macOS ~/Library/Application Support/Claude/, Windows %APPDATA%\\Claude\\)",
        "mcpServers",
    ),
    "cursor": (
        "~/.cursor/mcp.json (every project) or .cursor/mcp.json (one project)",
        "mcpServers",
    ),
    "vscode": (".vscode/mcp.json in the workspace (or the user's mcp.json)", "servers"),
    "claude-code": ("a command to run once (it writes Claude Code's own configuration)", None),
}
#: settings of `biomcp serve-http` only: a client-started stdio server has no use for them
_HTTP_ONLY = ("MCP_HTTP_", "MCP_AUTH_", "MCP_ALLOWED_ORIGINS", "MCP_TRANSPORT_TYPE")


def _settings_typed(kind: type) -> frozenset[str]:
    """The names (as variables) of the settings declared of type `kind` (or `kind | None`)."""
    from biomcp.entrypoints.settings import Settings

    return frozenset(
        name.upper()
        for name, field in Settings.model_fields.items()
        if kind in (get_args(field.annotation) or (field.annotation,))
    )


def server_env(
    environ: Mapping[str, str],
    dotenv: Mapping[str, str | None],
    cwd: Path,
    *,
    with_secrets: bool = False,
) -> dict[str, str]:
    """The settings a client must pass to the server: each setting set in `environ` or
    `dotenv` (the environment wins, as it does for the settings), by name; relative paths (the
    settings typed `Path`) resolved against `cwd`; secrets (typed `SecretStr`) as `<NAME>`
    placeholders unless `with_secrets`."""
    from pydantic import SecretStr

    from biomcp.entrypoints.settings import Settings, old_names

    known = {name.upper() for name in [*Settings.model_fields, *old_names()]}
    secrets, paths = _settings_typed(SecretStr), _settings_typed(Path)
    merged: dict[str, str] = {k.upper(): v for k, v in dotenv.items() if v is not None}
    merged.update({k.upper(): v for k, v in environ.items()})
    out: dict[str, str] = {}
    for name in sorted(merged):
        if name not in known or name.startswith(_HTTP_ONLY):
            continue
        value = merged[name]
        if name in secrets and not with_secrets:
            value = f"<{name}>"
        elif name in paths and value:
            path = Path(value).expanduser()
            value = str(path if path.is_absolute() else (cwd / path).resolve())
        out[name] = value
    return out


def server_command(argv0: str = sys.argv[0]) -> list[str]:
    """How to start this install's server: its `biomcp` by absolute path, else this
    interpreter running the CLI."""
    launched = Path(argv0)
    if launched.name.startswith("biomcp") and launched.is_file():
        return [str(launched.resolve()), "serve"]
    beside = Path(sys.executable).parent / "biomcp"  # the venv's bin folder (not resolved)
    if beside.is_file():
        return [str(beside.absolute()), "serve"]
    code = "from biomcp.entrypoints.cli.main import main; main()"
    return [str(Path(sys.executable).resolve()), "-c", code, "serve"]


def snippet(client: str, name: str, command: list[str], env: Mapping[str, str]) -> str:
    """The text to paste into `client`'s configuration (or to run, for Claude Code)."""
    if client == "claude-code":
        # the name first: `-e` takes several values and would take the name as one more
        flags = [part for key, value in env.items() for part in ("-e", f"{key}={value}")]
        return shlex.join(["claude", "mcp", "add", name, *flags, "--", *command])
    entry: dict[str, Any] = {"command": command[0], "args": command[1:]}
    if client == "vscode":
        entry = {"type": "stdio", **entry}
    if env:
        entry["env"] = dict(env)
    key = CLIENTS[client][1] or "mcpServers"
    return json.dumps({key: {name: entry}}, indent=2, ensure_ascii=False)


def _ephemeral(path: str) -> bool:
    """Whether `path` is in the environment cache of `uvx` or `pipx run`, which they may empty:
    no place for a client's configuration to point at."""
    parts = [part.lower() for part in Path(path).parts]
    return "archive-v0" in parts or ("pipx" in parts and ".cache" in parts)


def _toolsets_value(value: str) -> str:
    """`--toolsets` checked and tidied (`Default, projects` -> `default,projects`); an unknown
    name ends the command with the usage error."""
    from biomcp.entrypoints.settings import toolset_names

    try:
        names = toolset_names(value)
    except ValueError as exc:
        typer.echo(f"error [VALIDATION]: --toolsets: {exc}", err=True)
        raise typer.Exit(code=2) from None
    return ",".join(names) or "default"


def client_config(
    client: str = typer.Argument(
        ..., help=f"The MCP client: {', '.join(CLIENTS)}.", show_default=False
    ),
    name: str = typer.Option("bio-mcp", help="The server's name in the client."),
    with_secrets: bool = typer.Option(
        False,
        "--with-secrets",
        help="Write the API keys' values instead of <NAME> placeholders.",
    ),
    toolsets: str | None = typer.Option(
        None,
        "--toolsets",
        help="The tool families the client is offered, comma-separated (BIOMCP_TOOLSETS): "
        "corpus, live, fulltext, mesh, references, projects, chatgpt; default and all name "
        "groups. Example: default,projects.",
        show_default=False,
    ),
) -> None:
    """Print the entry an MCP client needs to start this server (stdio): this install's
    biomcp by absolute path and the settings in force here, secrets as placeholders.

    Paste the JSON into the client's configuration (Claude Desktop, Cursor, VS Code), or
    run the printed command (Claude Code). `biomcp doctor`, run with the same settings,
    checks them first.
    """
    if client not in CLIENTS:
        typer.echo(
            f"error [VALIDATION]: unknown client {client!r}: one of {', '.join(CLIENTS)}",
            err=True,
        )
        raise typer.Exit(code=2)
    dotenv: dict[str, str | None] = {}
    if Path(".env").is_file():
        from dotenv import dotenv_values

        dotenv = dict(dotenv_values(Path(".env")))
    env = server_env(os.environ, dotenv, Path.cwd(), with_secrets=with_secrets)
    if toolsets is not None:
        env["BIOMCP_TOOLSETS"] = _toolsets_value(toolsets)
    command = server_command()
    typer.echo(snippet(client, name, command, env))
    where, _ = CLIENTS[client]
    typer.echo(f"# {client}: {where}", err=True)
    offered = env.get("BIOMCP_TOOLSETS", "default")
    typer.echo(f"# toolsets: {offered} (--toolsets chooses them, e.g. default,projects)", err=True)
    placeholders = [key for key, value in env.items() if value == f"<{key}>"]
    if placeholders:
        shown = ", ".join(f"<{p}>" for p in placeholders)
        typer.echo(f"# fill in {shown} (or run again with --with-secrets)", err=True)
    missing = [key for key in ("NCBI_API_KEY", "NCBI_ADMIN_EMAIL") if key not in env]
    if missing:
        typer.echo(
            f"# NCBI asks for {' and '.join(missing)}: add them to env (a key allows 10 "
            "requests/s instead of 3)",
            err=True,
        )
    if _ephemeral(command[0]):
        typer.echo(
            f"# {command[0]} is in a cache that may be emptied: install bio-mcp "
            "(pipx install, uv tool install) and run this command from there",
            err=True,
        )
    typer.echo("# then restart the client; `biomcp doctor` checks these settings", err=True)

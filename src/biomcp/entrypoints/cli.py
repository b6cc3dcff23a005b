"""The `biomcp` command line."""

from __future__ import annotations

import sys

import typer

from biomcp import __version__

app = typer.Typer(
    name="biomcp",
    help="bio-mcp: trustworthy PubMed evidence for LLM agents (MCP server, CLI, library).",
    no_args_is_help=True,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"bio-mcp {__version__}")
        raise typer.Exit


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """bio-mcp command line."""


@app.command()
def serve() -> None:
    """Run the MCP server over stdio on the configured (default: embedded) stores."""
    typer.echo(
        "biomcp serve: not implemented yet - the MCP server (tools, resources, stdio and "
        "HTTP transports) arrives with the corpus issue. The evidence domain is usable as a "
        "library today: `import biomcp.domain`.",
        err=True,
    )
    raise typer.Exit(code=2)


def main() -> None:
    """Console-script entry point."""
    sys.exit(app())

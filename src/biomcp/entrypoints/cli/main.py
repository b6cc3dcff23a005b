"""The `biomcp` command line."""

from __future__ import annotations

import sys

import typer

from biomcp import __version__
from biomcp.entrypoints.cli import (
    checkpoints,
    clients,
    corpus,
    db,
    doctor,
    export,
    fakes,
    index,
    project,
    pubmed,
    serve,
    skill,
    sync,
)
from biomcp.entrypoints.cli import eval as evaluation
from biomcp.entrypoints.cli.common import CommandGroup

app = typer.Typer(
    cls=CommandGroup,
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


fakes.register(app)
db.register(app)
serve.register(app)
sync.register(app)
corpus.register(app)
checkpoints.register(app)
export.register(app)
project.register(app)
index.register(app)
pubmed.register(app)
evaluation.register(app)
skill.register(app)
doctor.register(app)
clients.register(app)


def main() -> None:
    """Console-script entry point."""
    sys.exit(app())

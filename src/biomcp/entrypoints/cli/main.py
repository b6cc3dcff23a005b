"""The `biomcp` command line: the root app, and each command family of `cli.commands` added
to it."""

from __future__ import annotations

import sys

import typer

from biomcp import __version__
from biomcp.entrypoints.cli.commands import (
    backup,
    checkpoints,
    clients,
    corpus,
    db,
    doctor,
    eval_floor,
    export,
    fakes,
    index,
    project,
    pubmed,
    serve,
    skill,
    sync,
)
from biomcp.entrypoints.cli.commands import eval as evaluation
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


# Top-level commands are listed first, then the groups, each in the order added here.
app.command("fake-eutils")(fakes.fake_eutils)
app.add_typer(db.app)
app.command("serve")(serve.serve)
app.command("mcp")(serve.mcp)
app.command("serve-http")(serve.serve_http)
app.add_typer(sync.app)
app.command("search")(corpus.search)
app.command("get")(corpus.get)
app.add_typer(checkpoints.app)
app.command("export")(export.export)
app.add_typer(project.app)
app.add_typer(index.app)
app.command("backup")(backup.backup)
app.command("restore")(backup.restore)
app.add_typer(pubmed.app)
app.add_typer(evaluation.app)
evaluation.app.command("floor")(eval_floor.floor)  # a family of its own
app.add_typer(skill.app)
app.command("doctor")(doctor.doctor)
app.command("client-config")(clients.client_config)


def main() -> None:
    """Console-script entry point."""
    sys.exit(app())

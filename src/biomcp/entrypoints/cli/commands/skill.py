"""`biomcp skill`: the help guide and the worked examples an MCP client reads as resources,
printed for the tools of the configured mode (`BIOMCP_TOOL_NAMES`, `BIOMCP_READ_ONLY`).

* `biomcp skill render`: the help guide, the same body as `biomcp://help`.
* `biomcp skill list`: each skill's slug, title and description.
* `biomcp skill show <slug>`: one skill, the same body as `biomcp://skill/<slug>`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from biomcp.entrypoints.cli.common import EXIT_VALIDATION, CommandGroup
from biomcp.entrypoints.runtime import load_or_exit

if TYPE_CHECKING:
    from biomcp.entrypoints.mcp.guide import Guide

__all__ = ["app"]


app = typer.Typer(
    cls=CommandGroup,
    name="skill",
    help="The help guide and worked examples (skills) of the MCP server.",
    no_args_is_help=True,
)


def _guide() -> Guide:
    """The guide of the server this configuration would serve (builds it; connects to
    nothing)."""
    from biomcp.entrypoints.mcp.server import build_server
    from biomcp.entrypoints.services import build_services

    return build_server(build_services(load_or_exit())).guide


@app.command("render")
def render() -> None:
    """Print the help guide: the body of the `biomcp://help` resource."""
    typer.echo(_guide().help_text(), nl=False)


@app.command("list")
def list_skills() -> None:
    """List the skills: slug, title and what each is for."""
    for skill in _guide().skills():
        typer.echo(f"{skill.slug}\t{skill.title}\t{skill.description}")


@app.command("show")
def show(
    slug: str = typer.Argument(..., help="The skill's slug (see `biomcp skill list`)."),
) -> None:
    """Print one skill: the body of the `biomcp://skill/<slug>` resource."""
    guide = _guide()
    skill = guide.skill(slug)
    if skill is None:
        known = ", ".join(s.slug for s in guide.skills())
        typer.echo(f"error [VALIDATION]: unknown skill {slug[:64]!r}; skills: {known}", err=True)
        raise typer.Exit(code=EXIT_VALIDATION)
    typer.echo(skill.body, nl=not skill.body.endswith("\n"))

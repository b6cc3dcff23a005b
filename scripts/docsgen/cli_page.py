"""The command-line reference, walked from the Typer app that `biomcp` runs.

The walk uses the command tree Typer builds, so every command, argument and option appears
with the help text `biomcp COMMAND --help` prints. A hand-written walk is used because the only
Typer plugin on the registry is unmaintained, and Typer now carries its own copy of Click,
which Click's plugin does not read.
"""

from __future__ import annotations

from typing import Any

import typer
import typer.main
from typer.core import TyperArgument, TyperGroup

from biomcp.entrypoints.cli.main import app
from docsgen.markdown import code, table

__all__ = ["cli_page", "commands"]


def commands() -> list[tuple[str, Any]]:
    """Every command as (its full name, the Click command), groups before their members."""
    root = typer.main.get_command(app)
    found: list[tuple[str, Any]] = []

    def walk(name: str, command: Any) -> None:
        found.append((name, command))
        if isinstance(command, TyperGroup):
            context = typer.Context(command, info_name=name)
            for child in command.list_commands(context):
                sub = command.get_command(context, child)
                if sub is not None and not sub.hidden:
                    walk(f"{name} {child}", sub)

    walk("biomcp", root)
    return found


def _usage(name: str, command: Any) -> str:
    context = typer.Context(command, info_name=name)
    pieces = command.collect_usage_pieces(context)
    return " ".join([name, *pieces])


def _parameters(name: str, command: Any) -> str:
    context = typer.Context(command, info_name=name)
    rows = []
    for param in command.get_params(context):
        if getattr(param, "hidden", False):
            continue
        record = param.get_help_record(context)
        if record is None:
            continue
        flags, words = record
        kind = "argument" if isinstance(param, TyperArgument) else "option"
        rows.append((code(flags), kind, words))
    if not rows:
        return ""
    return table(["name", "kind", "meaning"], rows)


def _help(command: Any) -> str:
    text = (command.help or command.short_help or "").strip()
    return "\n".join(line.rstrip() for line in text.replace("\b\n", "").splitlines())


def cli_page() -> str:
    """The whole page: a list of commands, then each one's usage, help and options."""
    everything = commands()
    lines = [
        "# Command line\n",
        "This page is generated from the `biomcp` Typer app at build time.",
        "It shows what `biomcp COMMAND --help` prints, for every command.\n",
        table(
            ["command", "what it does"],
            [
                (
                    f"[{code(name)}](#{name.replace(' ', '-')})",
                    (cmd.short_help or _help(cmd)).split("\n")[0],
                )
                for name, cmd in everything[1:]
            ],
        ),
    ]
    for name, command in everything[1:]:
        depth = "##" if name.count(" ") == 1 else "###"
        lines.append(f"{depth} `{name}` {{#{name.replace(' ', '-')}}}\n")
        lines.append(f"```text\n{_usage(name, command)}\n```\n")
        lines.append(_help(command) + "\n")
        parameters = _parameters(name, command)
        if parameters:
            lines.append(parameters)
    return "\n".join(lines)

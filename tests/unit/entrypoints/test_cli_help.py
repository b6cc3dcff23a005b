"""`biomcp --help` and every group's help list their commands as reflowed paragraphs."""

from __future__ import annotations

import itertools
import re

import pytest
import typer
from typer.core import TyperGroup
from typer.testing import CliRunner

from biomcp.entrypoints.cli.main import app

WIDTH = 100
_ENTRY = re.compile(r"^│ (?P<name>[a-z][a-z-]*)(?P<gap> +)(?P<text>\S.*?) *│$")
_MORE = re.compile(r"^│ +(?P<text>\S.*?) *│$")


def _groups() -> list[tuple[str, ...]]:
    root = typer.main.get_command(app)
    assert isinstance(root, TyperGroup)
    found: list[tuple[str, ...]] = [()]
    found += [(name,) for name, cmd in root.commands.items() if isinstance(cmd, TyperGroup)]
    return found


def _entries(output: str) -> dict[str, list[tuple[str, int]]]:
    """Each command of the Commands panel: its description lines and the column's width."""
    panel = output.split("─ Commands ", 1)[1].split("╰", 1)[0].splitlines()[1:]
    entries: dict[str, list[tuple[str, int]]] = {}
    current: list[tuple[str, int]] = []
    for line in panel:
        entry = _ENTRY.match(line)
        more = _MORE.match(line)
        if entry:
            start = entry.start("text")
            current = entries.setdefault(entry["name"], [])
            current.append((entry["text"], len(line) - 2 - start))
        elif more:
            current.append((more["text"], len(line) - 2 - more.start("text")))
    return entries


@pytest.mark.parametrize("group", _groups(), ids=lambda g: " ".join(g) or "biomcp")
def test_commands_are_listed_as_reflowed_paragraphs(group: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*group, "--help"], env={"COLUMNS": str(WIDTH)})
    assert result.exit_code == 0, result.output
    entries = _entries(result.output)
    assert entries, result.output
    for name, lines in entries.items():
        # a wrapped paragraph breaks a line only where the next word would not fit
        for (text, width), (following, _) in itertools.pairwise(lines):
            next_word = following.split()[0]
            assert len(text) + 1 + len(next_word) > width, (name, text, following)

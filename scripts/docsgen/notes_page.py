"""The design notes page: the long module docstrings of `src/biomcp`, where the reasoning lives.

Several modules open with an essay on why they work the way they do. This page gathers every
module docstring of at least `MIN_WORDS` words, grouped by layer, so a reader finds them without
opening the source. The text is the docstring itself, so it cannot drift from the code.
"""

from __future__ import annotations

import ast
from pathlib import Path

__all__ = ["MIN_WORDS", "essays", "notes_page"]

MIN_WORDS = 150
LAYERS = ("domain", "ports", "usecases", "adapters", "eval", "entrypoints", "testing")


def essays(package: Path) -> list[tuple[str, str]]:
    """(dotted module name, docstring) for each long module docstring under `package`."""
    found = []
    for path in sorted(package.rglob("*.py")):
        text = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        if text and len(text.split()) >= MIN_WORDS:
            parts = path.relative_to(package.parent).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found.append((name, text))
    return found


def _layer(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "other"


def notes_page(package: Path) -> str:
    """The whole page, one section per layer, one subsection per module."""
    found = essays(package)
    lines = [
        "# Design notes from the source\n",
        "Some modules open with an essay on why they work the way they do.",
        f"This page is generated from every module docstring of at least {MIN_WORDS} words.",
        "The figures behind the decisions are on the [decisions](decisions.md) page.\n",
    ]
    for layer in (*LAYERS, "other"):
        members = [(n, t) for n, t in found if _layer(n) == layer]
        if not members:
            continue
        lines.append(f"## {layer}\n")
        for name, text in members:
            lines.append(f"### `{name}`\n")
            lines.append(text.replace("\n#", "\n\\#") + "\n")
    return "\n".join(lines)

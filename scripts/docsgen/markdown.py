"""Small markdown helpers shared by the page generators."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = ["cell", "code", "first_sentence", "table"]


def cell(text: object) -> str:
    """`text` made safe for one table cell: one line, pipes escaped."""
    flat = " ".join(str(text).split())
    return flat.replace("|", "\\|")


def code(text: object) -> str:
    """`text` as inline code, with a longer fence when it holds a backtick."""
    value = str(text)
    fence = "``" if "`" in value else "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def first_sentence(text: str) -> str:
    """The first sentence of `text` (up to the first full stop followed by a space)."""
    flat = " ".join(text.split())
    match = re.search(r"(?<![.\s][a-z])\.\s", flat)
    return flat[: match.start() + 1] if match else flat


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A markdown table; every cell goes through `cell`."""
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    lines.extend("| " + " | ".join(cell(value) for value in row) + " |" for row in rows)
    return "\n".join(lines) + "\n"

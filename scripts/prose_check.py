"""Average words per sentence of README.md and docs/**/*.md, and a limit they must keep.

The docs follow one rule of style: one idea per sentence, about 20 words on average. This
script measures it the same way each time. Code blocks, tables, headings, HTML comments and
front matter are skipped; inline code counts as one word; a link counts as its text. A
sentence ends at `.`, `?` or `!` before a space, or at the end of a paragraph or list item.

Limits: the whole set at most `MAX_AVERAGE` words per sentence on average, and each file at
most `MAX_FILE_AVERAGE`. For scale, the MCP Python SDK's README averages about 19 words and
httpx's about 8; this project's README averaged 34 before this rule. A file may run a little
longer than the whole when it explains one hard idea, hence the second, looser limit.

Usage: `python scripts/prose_check.py [FILE ...]` (default: README.md and docs/**/*.md).
Exits 1 when a limit is broken, printing every file's figures either way.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_AVERAGE = 20.0
MAX_FILE_AVERAGE = 24.0
LONG = 35  # a sentence over this many words counts as long

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_CODE = re.compile(r"``.+?``|`[^`\n]+`")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_END = re.compile(r"(?<=[.?!])[)\"'*]*\s+(?=[A-Z0-9`\"'(*\[])")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")


@dataclass(frozen=True)
class Figures:
    """Sentences and words of one text."""

    sentences: int
    words: int
    long: int

    @property
    def average(self) -> float:
        return self.words / self.sentences if self.sentences else 0.0


def units(markdown: str) -> list[str]:
    """The paragraphs and list items of `markdown` that hold prose, each as one line."""
    text = _COMMENT.sub("", _FENCE.sub("", markdown))
    text = _LINK.sub(r"\1", _CODE.sub("CODE", text))
    found: list[str] = []
    current: list[str] = []

    def close() -> None:
        if current:
            found.append(" ".join(current))
            current.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "|", "<", "---", "!!!")):
            close()
            continue
        if _ITEM.match(line):
            close()
            stripped = _ITEM.sub("", line).strip()
        current.append(stripped)
    close()
    return found


def sentences(markdown: str) -> list[str]:
    """Every sentence of the prose in `markdown`."""
    return [s for unit in units(markdown) for s in _END.split(unit) if s.strip()]


def measure(markdown: str) -> Figures:
    """The figures of one markdown text."""
    counts = [len(s.split()) for s in sentences(markdown)]
    return Figures(len(counts), sum(counts), sum(1 for c in counts if c > LONG))


def default_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def main(argv: list[str]) -> int:
    files = [Path(a) for a in argv] or default_files()
    total = Figures(0, 0, 0)
    broken = []
    for path in files:
        figures = measure(path.read_text(encoding="utf-8"))
        total = Figures(
            total.sentences + figures.sentences,
            total.words + figures.words,
            total.long + figures.long,
        )
        name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        print(
            f"{name}: {figures.average:.1f} words/sentence over {figures.sentences} sentences,"
            f" {figures.long} over {LONG} words"
        )
        if figures.average > MAX_FILE_AVERAGE:
            broken.append(f"{name} averages {figures.average:.1f} (limit {MAX_FILE_AVERAGE})")
    print(
        f"all: {total.average:.1f} words/sentence over {total.sentences} sentences,"
        f" {total.long} over {LONG} words"
    )
    if total.average > MAX_AVERAGE:
        broken.append(f"all files average {total.average:.1f} (limit {MAX_AVERAGE})")
    for line in broken:
        print(f"prose check failed: {line}", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

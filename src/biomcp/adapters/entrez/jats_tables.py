"""Read the grid of a JATS `<table-wrap>`: its column headers and its body rows.

The first `<table>` inside the wrap is read (a table given only as an image has none: no
header, no rows). Header rows are the `<thead>` rows, or, without a `<thead>`, the leading rows
made only of `<th>` cells. Every other row (`<tbody>`, `<tfoot>`, or directly in `<table>`) is
a body row, in document order.

Spans are laid out on a grid: a cell with `colspan` n fills n columns and one with `rowspan` m
fills that column in m rows, so each cell lines up with its header; a spanned cell's text is
repeated in every position it covers. A column's header joins the distinct texts of its header
rows with " / " ("Placebo / n (%)"). Rows without any text are left out, and every row has as
many cells as the widest row or header.

Sizes are bounded: at most `MAX_ROWS` body rows, `MAX_HEADER_ROWS` header rows, `MAX_COLUMNS`
columns, and `MAX_CELL_CHARS` characters a cell.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from lxml import etree

__all__ = ["MAX_CELL_CHARS", "MAX_COLUMNS", "MAX_HEADER_ROWS", "MAX_ROWS", "parse_table"]

MAX_ROWS = 2000
MAX_HEADER_ROWS = 10
MAX_COLUMNS = 64
MAX_CELL_CHARS = 1000

TextOf = Callable[[etree._Element], "str | None"]
Grid = list[list[str]]


def parse_table(
    wrap: etree._Element, text_of: TextOf
) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """The column headers and body rows of a `<table-wrap>` (see the module docstring).

    `text_of` gives an element's flattened text (the JATS reader's own, so MathML and inline
    markup read the same way in cells as elsewhere).
    """
    table = next(wrap.iter("table"), None)
    if table is None:
        return (), ()
    head_rows, body_rows = _split_rows(table)
    head = _grid(head_rows[:MAX_HEADER_ROWS], text_of, MAX_HEADER_ROWS)
    body = _grid(body_rows, text_of, MAX_ROWS)
    width = max((len(row) for row in (*head, *body)), default=0)
    header = tuple(_column_header(head, column) for column in range(width)) if head else ()
    rows = tuple(
        tuple(row) + ("",) * (width - len(row)) for row in body if any(cell for cell in row)
    )
    if not any(header):
        header = ()
    return header, rows


def _split_rows(table: etree._Element) -> tuple[list[etree._Element], list[etree._Element]]:
    """(header rows, body rows) in document order."""
    head: list[etree._Element] = []
    body: list[etree._Element] = []
    for child in table:
        if child.tag == "thead":
            head.extend(child.iterfind("tr"))
        elif child.tag in ("tbody", "tfoot"):
            body.extend(child.iterfind("tr"))
        elif child.tag == "tr":
            body.append(child)
        if len(body) > MAX_ROWS + MAX_HEADER_ROWS:
            break
    if not head:
        while body and _all_th(body[0]) and len(head) < MAX_HEADER_ROWS:
            head.append(body.pop(0))
    return head, body


def _all_th(row: etree._Element) -> bool:
    cells = [c for c in row if c.tag in ("th", "td")]
    return bool(cells) and all(c.tag == "th" for c in cells)


def _span(cell: etree._Element, name: str, limit: int) -> int:
    try:
        value = int((cell.get(name) or "1").strip())
    except ValueError:
        return 1
    return min(max(value, 1), limit)


def _grid(rows: Iterable[etree._Element], text_of: TextOf, max_rows: int) -> Grid:
    """Lay `rows` out on a grid, repeating spanned cells (at most `max_rows` rows)."""
    grid: Grid = []
    pending: dict[int, tuple[str, int]] = {}  # column -> (text, rows still to fill)
    for row in rows:
        if len(grid) >= max_rows:
            break
        line: list[str] = []
        for cell in row:
            if cell.tag not in ("th", "td"):
                continue
            _fill_pending(line, pending)
            text = (text_of(cell) or "")[:MAX_CELL_CHARS]
            across = _span(cell, "colspan", MAX_COLUMNS)
            down = _span(cell, "rowspan", max_rows)
            for _ in range(across):
                if len(line) >= MAX_COLUMNS:
                    break
                if down > 1:
                    pending[len(line)] = (text, down - 1)
                line.append(text)
        _fill_pending(line, pending, to_end=True)
        grid.append(line)
    return grid


def _fill_pending(
    line: list[str], pending: dict[int, tuple[str, int]], *, to_end: bool = False
) -> None:
    """Put the cells spanned down from earlier rows at the head of `line` (all of them when
    `to_end`), counting each use."""
    while len(line) in pending or (to_end and pending and len(line) < max(pending) + 1):
        column = len(line)
        if column not in pending:
            line.append("")
            continue
        text, left = pending[column]
        if left <= 1:
            del pending[column]
        else:
            pending[column] = (text, left - 1)
        line.append(text)


def _column_header(head: Grid, column: int) -> str:
    parts: list[str] = []
    for row in head:
        text = row[column] if column < len(row) else ""
        if text and (not parts or parts[-1] != text):
            parts.append(text)
    return " / ".join(parts)

"""Page ranges in each style's form.

Page ranges arrive in MEDLINE's abbreviated form (`100-10`) and are expanded for the styles
that print them in full (`100-110`).
"""

from __future__ import annotations

import re

from biomcp.domain.records import PubMedRecord

__all__ = ["abbreviate_pages", "expand_pages", "is_article_number", "mla_pages", "page_bounds"]

_RANGE = re.compile(r"^\s*([A-Za-z]*)(\d+)\s*[-–]\s*([A-Za-z]*)(\d+)\s*$")


def expand_pages(pages: str | None) -> str | None:
    """`100-10` -> `100-110`, `e123-e130` unchanged, `1234-5` -> `1234-1235`; anything else as
    given. The first range of a list (`100-10, 120`) is expanded the same way."""
    if not pages:
        return None
    first, sep, rest = pages.partition(",")
    match = _RANGE.match(first)
    if match is None:
        return pages.strip()
    prefix, start, prefix2, end = match.groups()
    if len(end) < len(start):
        end = start[: len(start) - len(end)] + end
    expanded = f"{prefix}{start}-{prefix2 or prefix}{end}"
    return expanded + (sep + rest if sep else "")


def abbreviate_pages(pages: str | None) -> str | None:
    """NLM style: the end page drops the leading digits it shares with the start (`100-110` ->
    `100-10`)."""
    full = expand_pages(pages)
    if full is None:
        return None
    match = _RANGE.match(full.partition(",")[0])
    if match is None:
        return full
    prefix, start, prefix2, end = match.groups()
    if prefix != (prefix2 or prefix) or len(start) != len(end):
        return full
    shared = 0
    while shared < len(start) - 1 and start[shared] == end[shared]:
        shared += 1
    return f"{prefix}{start}-{end[shared:]}"


def mla_pages(pages: str | None) -> str | None:
    """MLA 9 number ranges, en dash: `113-125` -> `113–25`, `103-104` -> `103–04`,
    `1608-1774` -> `1608–774`, `96-101` unchanged; ranges with letters are printed in full."""
    full = expand_pages(pages)
    if full is None:
        return None
    first, sep, rest = full.partition(",")
    match = _RANGE.match(first)
    if match is None:
        return full
    prefix, start, prefix2, end = match.groups()
    if prefix or prefix2 or len(start) < 3 or len(start) != len(end):
        return full.replace("-", "–", 1)
    differ = next((i for i, (a, b) in enumerate(zip(start, end, strict=True)) if a != b), 0)
    short = end[min(differ, len(end) - 2) :]
    return f"{start}–{short}" + (sep + rest if sep else "")


def page_bounds(pages: str | None) -> tuple[str | None, str | None]:
    """(first page, last page) of the first range, in full; (pages, None) when they are not a
    range."""
    full = expand_pages(pages)
    if full is None:
        return None, None
    match = _RANGE.match(full.partition(",")[0])
    if match is None:
        return full, None
    prefix, start, prefix2, end = match.groups()
    return f"{prefix}{start}", f"{prefix2 or prefix}{end}"


def is_article_number(record: PubMedRecord) -> bool:
    """A single locator that is an electronic article number, not a printed page: it has a
    letter (`e0021622`), a leading zero (`026002`), five or more digits (`119767`), or the DOI
    ends with it (`1034` in `10.3389/fphys.2018.01034`)."""
    pages = (record.pages or "").strip()
    if not pages or _RANGE.match(pages) or not re.fullmatch(r"[A-Za-z]*\d+", pages):
        return False
    if not pages.isdigit() or pages.startswith("0") or len(pages) >= 5:
        return True
    return bool(record.doi and re.search(rf"\D0*{pages}$", record.doi))

"""The shape of EFetch's MEDLINE text (`rettype=medline&retmode=text`), checked before use.

A MEDLINE record is a run of `TAG - value` lines (continuation lines indented by six spaces),
starting with its `PMID- ` line and ending with its `SO  - ` (source) line: NCBI prints the
source citation last in every record, articles and books alike. An answer whose last record
does not end with it was cut short (a connection or an NCBI backend that stopped mid-answer):
it must be retried, never taken for a success, never cached. A cut inside the `SO` line itself
cannot be told from a whole one; every other cut can.
"""

from __future__ import annotations

__all__ = ["incomplete_medline"]

_END_TAG = "SO"


def _tag(line: str) -> str | None:
    """The tag of a field line (`AB  - ...` gives `AB`), None for a continuation line."""
    if not line or line[0].isspace():
        return None
    head, dash, _ = line.partition("-")
    return head.strip() if dash else None


def incomplete_medline(text: str) -> str | None:
    """Why `text` (one or more MEDLINE records) is not whole, or None when it is. Text with no
    record at all is whole (NCBI's answer when no PMID was found)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    if _tag(lines[0]) != "PMID":
        return "it does not start with a PMID- line"
    last_tag = next((tag for line in reversed(lines) if (tag := _tag(line)) is not None), None)
    if last_tag != _END_TAG:
        start = next((line for line in reversed(lines) if _tag(line) == "PMID"), "")
        pmid = start.partition("-")[2].strip()[:20] or "?"
        return f"its last record (PMID {pmid}) has no closing SO line: the answer was cut short"
    return None

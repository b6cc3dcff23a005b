"""The shape of EFetch's MEDLINE text (`rettype=medline&retmode=text`), checked before use.

A MEDLINE record is a run of `TAG - value` lines (continuation lines indented by six spaces),
starting with its `PMID- ` line and ending with its `SO  - ` (source) line: NCBI prints the
source citation last in every record, articles and books alike. An answer whose last record
does not end with it was cut short (a connection or an NCBI backend that stopped mid-answer):
it must be retried, never taken for a success, never cached. A cut inside the `SO` line itself
cannot be told from a whole one; every other cut can.
"""

from __future__ import annotations

from biomcp.adapters.entrez.xmlsafe import parse_document
from biomcp.ports.entrez import EntrezResponseError

__all__ = ["incomplete_medline", "read_medline_text"]

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


def read_medline_text(body: bytes) -> str:
    """EFetch's MEDLINE text, whole.

    Raises:
        EntrezResponseError: an HTML page, XML that is not an NCBI error, or text cut short
            (retried by the caller).
        EntrezUnavailableError: an NCBI "backend failed" payload (retried by the caller).
        EntrezRequestError: an NCBI error naming the request (not retried).
    """
    text = body.decode("utf-8", "replace")
    if text.lstrip()[:1] == "<":
        # XML or HTML instead of text: read it as XML, so that an NCBI error payload is
        # classified like in every other mode (a backend failure is retried, a bad request
        # is not) and anything else is an unreadable answer.
        parse_document(body, expected_roots=frozenset(), what="MEDLINE text")
        raise EntrezResponseError("expected MEDLINE text, received XML")  # not reached
    problem = incomplete_medline(text)
    if problem is not None:
        raise EntrezResponseError(f"MEDLINE answer not whole: {problem}")
    return text

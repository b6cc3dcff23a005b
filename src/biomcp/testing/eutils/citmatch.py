"""The fake ECitMatch: `ecitmatch.cgi?db=pubmed&retmode=xml&bdata=...` over the corpus.

`bdata` holds citation strings `journal|year|volume|first_page|author|key|`, separated by
carriage returns (or line feeds). Each is answered on its own line, as NCBI documents: the six
fields echoed, then the PMID when exactly one article fits, `NOT_FOUND` when none does, and
`AMBIGUOUS` followed by the candidates' PMIDs (comma-separated) when several do. The answer is
plain text whatever `retmode` says, as NCBI's is. This answer format is SYNTHETIC: built from
NCBI's documentation and its documented examples, not recorded from NCBI.

An article fits when every non-empty field matches: the journal (any of its ISO abbreviation,
MedlineTA, title; case, accents and punctuation ignored), the publication year, the volume, the
first page, and the author (a prefix of one author's "surname initials", as NCBI's "may be
partial").
"""

from __future__ import annotations

import re
from xml.sax.saxutils import escape

from starlette.routing import Route

from biomcp.testing.eutils.corpus import CorpusEntry
from biomcp.testing.eutils.fields import fold, tokenize
from biomcp.testing.eutils.handlers import Params, Reply
from biomcp.testing.eutils.routes import request_route
from biomcp.testing.eutils.state import ServerState

__all__ = ["answer_ecitmatch", "citmatch_routes"]

_MAX_LINES = 500
_TEXT = "text/plain"
_LINES = re.compile(r"[\r\n]+")


def citmatch_routes(state: ServerState, prefixes: tuple[str, ...]) -> list[Route]:
    """`ecitmatch.cgi` under each of `prefixes` (GET and POST)."""
    endpoint = request_route(state, "ecitmatch", answer_ecitmatch, _error)
    return [
        Route(f"{prefix}/ecitmatch.cgi", endpoint, methods=["GET", "POST"]) for prefix in prefixes
    ]


def _error(message: str) -> Reply:
    """An in-band error, as the E-utilities state theirs: an `<ERROR>` element."""
    return Reply(f"<eCitMatchResult><ERROR>{escape(message)}</ERROR></eCitMatchResult>\n".encode())


def answer_ecitmatch(state: ServerState, params: Params) -> Reply:
    """One answer line per `bdata` citation string."""
    if (params.get("db") or "").lower() != "pubmed":
        return _error(f"Invalid db name specified: {params.get('db') or ''}")
    lines = [line for value in params.all("bdata") for line in _LINES.split(value) if line]
    if not lines:
        return _error("Empty bdata")
    if len(lines) > _MAX_LINES:
        return _error(f"Too many citations: at most {_MAX_LINES}")
    entries = state.corpus.entries()
    answered = [_answer(line, entries) for line in lines]
    return Reply("".join(f"{line}\n" for line in answered).encode(), _TEXT)


def _answer(line: str, entries: list[CorpusEntry]) -> str:
    fields = line.split("|")
    if len(fields) < 6:
        return f"{line}NOT_FOUND;INVALID_CITATION_STRING"
    journal, year, volume, page, author = (f.strip() for f in fields[:5])
    echoed = "|".join(fields[:6]) + "|"
    if not any((journal, year, volume, page, author)):
        return f"{echoed}NOT_FOUND"
    found = [e.pmid for e in entries if _fits(e, journal, year, volume, page, author)]
    if len(found) == 1:
        return f"{echoed}{found[0]}"
    if found:
        return f"{echoed}AMBIGUOUS {','.join(found[:20])}"
    return f"{echoed}NOT_FOUND"


def _fits(entry: CorpusEntry, journal: str, year: str, volume: str, page: str, author: str) -> bool:
    fields = entry.fields
    if journal and tokenize(journal) not in {tokenize(j) for j in fields.journals}:
        return False
    if year and (fields.pdat is None or str(fields.pdat.year) != year.strip()):
        return False
    if author and not any(
        fold(f"{last} {initials}".strip()).startswith(fold(author))
        for last, initials in fields.authors
    ):
        return False
    if volume or page:
        record = entry.record
        if record is None:
            return False
        if volume and fold(record.journal.volume or "") != fold(volume):
            return False
        first = re.split(r"[-,;\s]", (record.pages or "").strip(), maxsplit=1)[0]
        if page and fold(first) != fold(page):
            return False
    return True

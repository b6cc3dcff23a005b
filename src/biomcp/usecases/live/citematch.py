"""`pubmed_lookup_citation`: find the PMIDs of references given in pieces (journal, year,
volume, first page, first author, title words), up to 50 per call: to verify a reference list.

1. ECitMatch, one request for every reference with two or more of its five pieces;
2. the candidates' ESummaries, compared piece by piece with the reference;
3. for each reference without a candidate matching every piece it gives (ECitMatch found
   nothing, was ambiguous, or its PMID contradicts a piece), a fielded ESearch, most specific
   first (`fielded_queries`), stopping at the first that finds something; those candidates'
   ESummaries too;
4. the candidates ranked (most pieces matched, fewest contradicted), each reference
   `matched` (one best candidate, at least two pieces matched), `ambiguous` (several equally
   good) or `not_found`.

Every reference gets a status; ECitMatch's own verdict is shown beside it. Request count:
one ECitMatch, at most two ESummary rounds, and at most three ESearches per reference that
needs the fallback, at most 60 ESearches in all (`MAX_FALLBACK_SEARCHES`).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from typing import Any

from biomcp.domain.citematch import (
    MAX_PIECE_CHARS,
    Candidate,
    CitMatchAnswer,
    Comparison,
    Reference,
    citmatch_line,
    compare,
    fielded_queries,
    verdict,
)
from biomcp.ports.entrez import DocSummary, EntrezRequestError
from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.live.common import LiveContext, within_deadline
from biomcp.usecases.live.shapes import summary_retraction

__all__ = ["MAX_CANDIDATES", "MAX_FALLBACK_SEARCHES", "MAX_REFERENCES", "CitationLookup"]

MAX_REFERENCES = 50
#: Candidates shown per reference, best first.
MAX_CANDIDATES = 3
#: The most fallback ESearches of one call: 50 references x 3 queries would take 50 s at
#: NCBI's 3 requests/s without a key, past the call's deadline.
MAX_FALLBACK_SEARCHES = 60
_SEARCH_RETMAX = 5
_FIELDS = {
    "journal": "journal",
    "year": "year",
    "volume": "volume",
    "firstPage": "first_page",
    "firstAuthor": "first_author",
    "title": "title",
}
_KEY_CHARS = 100
_YEAR = re.compile(r"(1[6-9]|20|21)[0-9]{2}")


class CitationLookup:
    """Citation matching: ECitMatch, then a fielded ESearch."""

    def __init__(self, context: LiveContext) -> None:
        self.context = context

    @within_deadline
    async def lookup_citations(self, references: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The status and ranked candidates of each of `references`.

        Raises:
            InvalidRequestError: no references, more than 50, an unknown piece, a piece too
                long, or a reference with fewer than two pieces.
            EntrezError: NCBI failed.
        """
        parsed = _references(references)
        answers = await self._citmatch(parsed)
        first = {
            ref.key: list(answers[ref.key].pmids) if ref.key in answers else [] for ref in parsed
        }
        retracted: dict[str, dict[str, Any]] = {}
        facts = await self._facts({p for pmids in first.values() for p in pmids}, retracted)
        comparisons = {
            ref.key: [
                compare(ref, facts[p], via="ecitmatch", order=n)
                for n, p in enumerate(first[ref.key])
                if p in facts
            ]
            for ref in parsed
        }
        pending = [ref for ref in parsed if not _settled(ref, comparisons[ref.key])]
        more, notes = await self._fallback(pending)
        known = set(facts)
        facts.update(await self._facts({p for ps in more.values() for p in ps} - known, retracted))
        results = []
        for index, (ref, given) in enumerate(zip(parsed, references, strict=True)):
            found = comparisons[ref.key] + [
                compare(ref, facts[p], via="esearch", order=n)
                for n, p in enumerate(more.get(ref.key, []))
                if p in facts
            ]
            results.append(
                _result(
                    index, ref, given, found, answers.get(ref.key), notes.get(ref.key), retracted
                )
            )
        counts = {
            "matched": sum(r["status"] == "matched" for r in results),
            "ambiguous": sum(r["status"] == "ambiguous" for r in results),
            "notFound": sum(r["status"] == "not_found" for r in results),
        }
        return {"results": results, "counts": counts}

    async def _citmatch(self, references: list[Reference]) -> dict[str, CitMatchAnswer]:
        usable = [ref for ref in references if ref.citmatch_usable]
        if not usable:
            return {}
        answers = await self.context.call(
            self.context.entrez.ecitmatch([citmatch_line(r) for r in usable])
        )
        return {answer.key: answer for answer in answers}

    async def _facts(
        self, pmids: set[str], retracted: dict[str, dict[str, Any]]
    ) -> dict[str, Candidate]:
        """The candidates' facts from their ESummaries; adds the retracted ones to
        `retracted`, with their notices (summary_retraction)."""
        if not pmids:
            return {}
        docs = await self.context.call(self.context.entrez.esummary(sorted(pmids, key=int)))
        usable = [doc for doc in docs if doc.error is None]
        for doc in usable:
            shown = summary_retraction(doc)
            if shown["retracted"]:
                retracted[doc.pmid] = shown
        return {doc.pmid: _candidate(doc) for doc in usable}

    async def _fallback(
        self, references: list[Reference]
    ) -> tuple[dict[str, list[str]], dict[str, str]]:
        """The PMIDs of each reference's first fielded ESearch that finds any, tried in rounds
        (every reference's first query, then the second of those still without a hit...)
        within `MAX_FALLBACK_SEARCHES` per call; and a note per reference PubMed refused a
        query of, or the budget left unsearched."""
        queries = {ref.key: fielded_queries(ref) for ref in references}
        found: dict[str, list[str]] = {}
        notes: dict[str, str] = {}
        budget = MAX_FALLBACK_SEARCHES
        for tier in range(max((len(q) for q in queries.values()), default=0)):
            wanted = [(k, q[tier]) for k, q in queries.items() if len(q) > tier and k not in found]
            now, later = wanted[:budget], wanted[budget:]
            budget -= len(now)
            for key, _ in later:
                notes[key] = "not searched further: the call's fallback search budget is spent"
            results = await asyncio.gather(*(self._search(query) for _, query in now))
            for (key, query), (pmids, error) in zip(now, results, strict=True):
                if pmids:
                    found[key] = pmids
                if error is not None:
                    notes[key] = f"PubMed refused the fallback search {query!r}: {error}"[:300]
        return found, notes

    async def _search(self, query: str) -> tuple[list[str], str | None]:
        try:
            result = await self.context.call(
                self.context.entrez.esearch(query, retmax=_SEARCH_RETMAX)
            )
        except EntrezRequestError as exc:
            return [], str(exc)
        return list(result.pmids), None


def _references(references: Sequence[Mapping[str, Any]]) -> list[Reference]:
    if isinstance(references, str | bytes) or not isinstance(references, Sequence):
        raise InvalidRequestError("references must be a list", details={"field": "references"})
    if not 1 <= len(references) <= MAX_REFERENCES:
        raise InvalidRequestError(
            f"give 1 to {MAX_REFERENCES} references, got {len(references)}",
            details={"field": "references", "count": len(references)},
        )
    return [_reference(n, raw) for n, raw in enumerate(references)]


def _reference(index: int, raw: Mapping[str, Any]) -> Reference:
    where = f"references[{index}]"
    if not isinstance(raw, Mapping):
        raise InvalidRequestError(f"{where} must be an object", details={"field": where})
    unknown = sorted(set(raw) - set(_FIELDS) - {"key"})
    if unknown:
        raise InvalidRequestError(
            f"{where} has unknown fields: {', '.join(unknown)[:200]}",
            details={"field": where, "allowed": [*_FIELDS, "key"]},
        )
    values: dict[str, str | None] = {}
    for name, attribute in _FIELDS.items():
        value = raw.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if value is not None and not isinstance(value, str):
            raise InvalidRequestError(f"{where}.{name} must be a string", details={"field": where})
        text = " ".join((value or "").split())
        if len(text) > MAX_PIECE_CHARS:
            raise InvalidRequestError(
                f"{where}.{name} is longer than {MAX_PIECE_CHARS} characters",
                details={"field": f"{where}.{name}"},
            )
        values[attribute] = text or None
    if values["year"] is not None and not _YEAR.search(values["year"]):
        raise InvalidRequestError(
            f"{where}.year must hold a four-digit year, got {values['year'][:20]!r}",
            details={"field": f"{where}.year"},
        )
    reference = Reference(key=f"ref{index + 1}", **values)
    if len(reference.given()) < 2:
        raise InvalidRequestError(
            f"{where} needs at least two of {', '.join(_FIELDS)} (a journal and year, an "
            "author and title words...)",
            details={"field": where, "given": list(reference.given())},
        )
    return reference


def _candidate(doc: DocSummary) -> Candidate:
    year = _YEAR.search(doc.pdat or "") or _YEAR.search(doc.epubdate or "")
    names = tuple(n for n in (doc.source, doc.journal) if n)
    return Candidate(
        pmid=doc.pmid,
        title=doc.title,
        journal=doc.source or doc.journal,
        journal_names=names,
        year=year.group(0) if year else None,
        volume=doc.volume,
        pages=doc.pages,
        first_author=doc.authors[0] if doc.authors else None,
    )


def _settled(reference: Reference, comparisons: list[Comparison]) -> bool:
    """Whether ECitMatch's candidates leave nothing to search for: exactly one of them
    matches every piece the reference gives."""
    complete = [c for c in comparisons if c.score == len(reference.given()) and not c.unmatched]
    return len(complete) == 1


def _result(
    index: int,
    reference: Reference,
    given: Mapping[str, Any],
    comparisons: list[Comparison],
    citmatch: CitMatchAnswer | None,
    note: str | None,
    retracted: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    decided = verdict(comparisons)
    key = given.get("key")
    return {
        "index": index,
        "key": str(key)[:_KEY_CHARS] if key is not None else None,
        "status": decided.status,
        "pmid": decided.ranked[0].candidate.pmid if decided.status == "matched" else None,
        "given": list(reference.given()),
        "ecitmatch": citmatch.status if citmatch is not None else "not_asked",
        "candidates": [_shown(c, retracted) for c in decided.ranked[:MAX_CANDIDATES]],
        "note": note,
    }


def _shown(comparison: Comparison, retracted: dict[str, dict[str, Any]]) -> dict[str, Any]:
    candidate = comparison.candidate
    return {
        "pmid": candidate.pmid,
        "title": candidate.title,
        "journal": candidate.journal,
        "year": candidate.year,
        "volume": candidate.volume,
        "pages": candidate.pages,
        "firstAuthor": candidate.first_author,
        "matchedFields": list(comparison.matched),
        "unmatchedFields": list(comparison.unmatched),
        "via": comparison.via,
        **retracted.get(candidate.pmid, {"retracted": False}),
    }

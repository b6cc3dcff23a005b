"""Citations for many PMIDs at once (`pubmed_format_citations`): one EFetch, every style of
`biomcp.domain.citations` the caller asks for, and every PMID accounted for. A retracted
paper's citations say so (`biomcp.domain.retracted_citations`), and its entry has `retracted`.

A PMID PubMed does not return is listed in `notFoundPmids`, a book record in `bookPmids` (its
citation is not generated: the styles are those of journal articles); when not one of the
requested PMIDs can be cited the call fails with `NOT_FOUND` rather than answer an empty list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from biomcp.domain.citations import CitationStyle
from biomcp.domain.retracted_citations import cite
from biomcp.domain.sanitize import parse_pmids
from biomcp.usecases.errors import NotFoundError
from biomcp.usecases.live.common import LiveContext, check_choice, within_deadline

__all__ = ["MAX_CITATION_PMIDS", "STYLE_KEYS", "CitationFormatter"]

#: PMIDs per call (one EFetch: well under its batch and POST thresholds).
MAX_CITATION_PMIDS = 50
#: The tools' style names, as `getArticleRelationships` names them.
STYLE_KEYS: dict[str, CitationStyle] = {
    "ris": CitationStyle.RIS,
    "bibtex": CitationStyle.BIBTEX,
    "apa_string": CitationStyle.APA,
    "mla_string": CitationStyle.MLA,
    "vancouver_string": CitationStyle.VANCOUVER,
}


class CitationFormatter:
    """Citation strings for up to 50 PMIDs in one call."""

    def __init__(self, context: LiveContext) -> None:
        self.context = context

    @within_deadline
    async def format_citations(
        self, pmids: Sequence[str], *, styles: Sequence[str] = ("ris",)
    ) -> dict[str, Any]:
        """The citations of `pmids` (1 to 50, duplicates dropped, order kept) in `styles`,
        from one EFetch.

        Raises:
            InvalidRecordError, InvalidRequestError: a malformed PMID, none or more than 50,
                an unknown style.
            NotFoundError: not one of the PMIDs is a journal article PubMed has.
            EntrezError: NCBI failed.
        """
        wanted = parse_pmids(pmids, limit=MAX_CITATION_PMIDS)
        chosen = [check_choice("citationStyles", s, tuple(STYLE_KEYS)) for s in styles]
        chosen = list(dict.fromkeys(chosen)) or ["ris"]
        fetched = await self.context.call(self.context.entrez.efetch(wanted))
        by_pmid = {r.pmid: r for r in fetched.records}
        books = [p for p in wanted if p in set(fetched.book_pmids)]
        missing = [p for p in wanted if p not in by_pmid and p not in books]
        citations = [
            {
                "pmid": p,
                "citations": {s: cite(by_pmid[p], STYLE_KEYS[s]) for s in chosen},
                "retracted": by_pmid[p].is_retracted,
            }
            for p in wanted
            if p in by_pmid
        ]
        warnings = [
            f"PMID {p} is a book record: citations are generated for journal articles only"
            for p in books
        ]
        warnings += [f"PMID {p} was deleted from PubMed" for p in fetched.deleted_pmids]
        if not citations:
            raise NotFoundError(
                f"none of the {len(wanted)} PMID(s) is a journal article PubMed has: "
                f"{', '.join(wanted[:10])}{'...' if len(wanted) > 10 else ''}",
                details={"notFoundPmids": missing, "bookPmids": books},
            )
        return {
            "requestedPmids": list(wanted),
            "citationStyles": chosen,
            "articles": citations,
            "notFoundPmids": missing,
            "bookPmids": books,
            "eFetchUrl": self.context.url("efetch", [("id", ",".join(wanted)), ("retmode", "xml")]),
            "warnings": warnings,
        }

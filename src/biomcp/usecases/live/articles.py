"""Article details, relationships and citations of one article (spec 04's
`fetchArticleDetails` and `getArticleRelationships`).

`fetch` lists PMIDs PubMed does not return in `notFoundPmids`; where one PMID is the whole
request (relationships, citations) a PMID PubMed does not have raises `NotFoundError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, get_args

from biomcp.domain.retracted_citations import cite
from biomcp.domain.sanitize import parse_pmid, parse_pmids
from biomcp.ports.entrez import EntrezRequestError
from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.live.citations import STYLE_KEYS
from biomcp.usecases.live.common import (
    LiveContext,
    check_choice,
    check_range,
    missing,
    not_found,
    pubmed_url,
    within_deadline,
)
from biomcp.usecases.live.shapes import (
    abstract_plus,
    author_string,
    citation_data,
    similarity_scores,
    summary_retraction,
    unique_links,
)

__all__ = [
    "CITATION_STYLES",
    "DETAIL_LEVELS",
    "RELATIONSHIP_TYPES",
    "ArticleDetails",
    "split_medline",
]

DetailLevel = Literal["abstract_plus", "full_xml", "medline_text", "citation_data"]
RelationshipType = Literal[
    "pubmed_similar_articles", "pubmed_citedin", "pubmed_references", "citation_formats"
]
CitationKey = Literal["ris", "bibtex", "apa_string", "mla_string", "vancouver_string"]

DETAIL_LEVELS: tuple[str, ...] = get_args(DetailLevel)
RELATIONSHIP_TYPES: tuple[str, ...] = get_args(RelationshipType)
CITATION_STYLES: tuple[str, ...] = get_args(CitationKey)

_LINK_NAMES = {
    "pubmed_similar_articles": "pubmed_pubmed",
    "pubmed_citedin": "pubmed_pubmed_citedin",
    "pubmed_references": "pubmed_pubmed_refs",
}
_MAX_RELATED = 50


class ArticleDetails:
    """`fetch`, `relationships` and `cite`: what PubMed holds about given articles."""

    def __init__(self, context: LiveContext) -> None:
        self.context = context

    # --- fetchArticleDetails ---------------------------------------------------------------

    @within_deadline
    async def fetch(
        self,
        pmids: Sequence[str],
        *,
        detail_level: str = "abstract_plus",
        include_mesh: bool = True,
        include_grants: bool = False,
    ) -> dict[str, Any]:
        """EFetch `pmids` (at most 200) at `detail_level`: parsed (`abstract_plus`,
        `citation_data`), the raw PubmedArticle XML (`full_xml`) or MEDLINE text
        (`medline_text`). PMIDs PubMed does not return are listed in `notFoundPmids`.

        Raises:
            InvalidRecordError, InvalidRequestError: a malformed PMID, none or more than 200,
                an unknown detail level.
            EntrezError: NCBI failed.
        """
        level = check_choice("detailLevel", detail_level, DETAIL_LEVELS)
        wanted = parse_pmids(pmids)
        params: list[tuple[str, str]] = [("id", ",".join(wanted))]
        warnings: list[str] = []
        articles: list[dict[str, Any]]
        if level in ("abstract_plus", "citation_data"):
            params.append(("retmode", "xml"))
            fetched = await self.context.call(self.context.entrez.efetch(wanted))
            by_pmid = {r.pmid: r for r in fetched.records}
            shape = abstract_plus if level == "abstract_plus" else citation_data
            articles = [
                shape(by_pmid[p], include_mesh=include_mesh, include_grants=include_grants)
                for p in wanted
                if p in by_pmid
            ]
            found = set(by_pmid)
            warnings += [
                f"PMID {p} is a book record (PubmedBookArticle), which is not parsed: ask for "
                "detailLevel full_xml or medline_text to read it"
                for p in fetched.book_pmids
            ]
            warnings += [f"PMID {p} was deleted from PubMed" for p in fetched.deleted_pmids]
            warnings += list(fetched.problems)
        elif level == "full_xml":
            params.append(("retmode", "xml"))
            pieces = await self.context.call(self.context.entrez.efetch_xml_articles(wanted))
            articles = [{"pmid": p, "fullXml": pieces[p]} for p in wanted if p in pieces]
            found = set(pieces)
        else:
            params += [("rettype", "medline"), ("retmode", "text")]
            text = await self.context.call(self.context.entrez.efetch_medline(wanted))
            records = split_medline(text)
            articles = [{"pmid": p, "medlineText": records[p]} for p in wanted if p in records]
            found = set(records)
        return {
            "requestedPmids": list(wanted),
            "articles": articles,
            "notFoundPmids": [p for p in wanted if p not in found],
            "eFetchDetails": {
                "urls": [self.context.url("efetch", params)],
                "requestMethod": "POST"
                if len(wanted) > self.context.config.post_threshold
                else "GET",
            },
            "detailLevel": level,
            "warnings": warnings,
        }

    # --- getArticleRelationships -----------------------------------------------------------

    @within_deadline
    async def relationships(
        self,
        source_pmid: str,
        *,
        relationship_type: str = "pubmed_similar_articles",
        max_results: int = 5,
        citation_styles: Sequence[str] = ("ris",),
    ) -> dict[str, Any]:
        """Articles linked to `source_pmid` (similar, citing, cited: ELink, then ESummary for
        titles and authors), or its citation in `citation_styles` (EFetch).

        A similar article's `score` is in [0, 1], relative to the most similar one (see
        `similarity_scores`); `rawScore` is NCBI's integer. Other links have neither.

        An article without links gives an empty `relatedArticles`; an unknown PMID raises.

        Raises:
            InvalidRecordError, InvalidRequestError: a malformed PMID or argument.
            NotFoundError: PubMed has no article `source_pmid`.
            EntrezError: NCBI failed.
        """
        kind = check_choice("relationshipType", relationship_type, RELATIONSHIP_TYPES)
        check_range("maxRelatedResults", max_results, 1, _MAX_RELATED)
        source = parse_pmid(source_pmid)
        if kind == "citation_formats":
            styles = [check_choice("citationStyles", s, CITATION_STYLES) for s in citation_styles]
            return await self._citations(source, list(dict.fromkeys(styles)) or ["ris"])
        linkname = _LINK_NAMES[kind]
        scored = kind == "pubmed_similar_articles"
        try:
            linksets = await self.context.call(
                self.context.entrez.elink([source], linkname=linkname, with_scores=scored)
            )
        except EntrezRequestError:
            await self._require(source)  # PubMed's error may mean "no such PMID"
            raise
        links = unique_links(linksets, source, linkname)
        scores = similarity_scores(links)  # over every link: truncation keeps the scale
        top = links[:max_results]
        docs = await self.context.call(
            self.context.entrez.esummary([source, *(link.pmid for link in top)])
        )
        by_pmid = {doc.pmid: doc for doc in docs}
        if missing(by_pmid.get(source)):
            raise not_found(source)
        related = []
        for link in top:
            doc = by_pmid.get(link.pmid)
            summary = None if missing(doc) else doc  # linked, but without a summary
            related.append(
                {
                    "pmid": link.pmid,
                    "title": summary.title if summary else None,
                    "authors": author_string(summary.authors) if summary else None,
                    "score": scores[link.pmid][0],
                    "rawScore": scores[link.pmid][1],
                    "linkUrl": pubmed_url(link.pmid),
                    **summary_retraction(summary),
                }
            )
        cmd = "neighbor_score" if scored else "neighbor"
        return {
            "sourcePmid": source,
            "relationshipType": kind,
            "relatedArticles": related,
            "citations": {},
            "retrievedCount": len(related),
            "eLinkUrl": self.context.url(
                "elink",
                [("dbfrom", "pubmed"), ("cmd", cmd), ("linkname", linkname), ("id", source)],
            ),
            "totalLinked": len(links),
            "eSummaryUrl": self.context.url(
                "esummary",
                [("version", "2.0"), ("id", ",".join([source, *(x.pmid for x in top)]))],
            ),
        }

    async def _citations(self, source: str, styles: list[str]) -> dict[str, Any]:
        fetched = await self.context.call(self.context.entrez.efetch([source]))
        record = next((r for r in fetched.records if r.pmid == source), None)
        if record is None:
            if source in fetched.book_pmids:
                raise InvalidRequestError(
                    f"PMID {source} is a book record; citations are generated for journal "
                    "articles only",
                    details={"pmid": source},
                )
            raise not_found(source)
        return {
            "sourcePmid": source,
            "relationshipType": "citation_formats",
            "relatedArticles": [],
            "citations": {s: cite(record, STYLE_KEYS[s]) for s in styles},
            "retrievedCount": 0,
            "eLinkUrl": None,
            "eFetchUrl": self.context.url("efetch", [("id", source), ("retmode", "xml")]),
        }

    async def _require(self, pmid: str) -> None:
        docs = await self.context.call(self.context.entrez.esummary([pmid]))
        if missing(next((d for d in docs if d.pmid == pmid), None)):
            raise not_found(pmid)

    @within_deadline
    async def cite(self, pmid: str, styles: Sequence[str] = CITATION_STYLES) -> dict[str, str]:
        """The citation strings of `pmid` in `styles` (every style by default).

        Raises:
            as `relationships` with `citation_formats`.
        """
        answer = await self.relationships(
            pmid, relationship_type="citation_formats", citation_styles=styles
        )
        return dict(answer["citations"])


def split_medline(text: str) -> dict[str, str]:
    """{PMID: its MEDLINE record} of MEDLINE text (records start with a `PMID- ` line)."""
    records: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("PMID-"):
            current = records.setdefault(line.partition("-")[2].strip(), [])
            current.append(line)
        elif current is not None and line.strip():
            current.append(line)
    return {pmid: "\n".join(lines) for pmid, lines in records.items() if pmid}

"""The live PubMed tools of spec 04: search, fetch and relationships.

Tools (portable names; the spec's names under BIOMCP_TOOL_NAMES=spec):

* `pubmed_search_articles` (`searchPubMedArticles`)
* `pubmed_fetch_article_details` (`fetchArticleDetails`)
* `pubmed_article_relationships` (`getArticleRelationships`)

Their schemas are in `schemas`; the `pubmed-connect://` resources in `mcp.resources`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.context import Context

from biomcp.entrypoints.mcp.tools.live.schemas import LIVE_INPUTS, LIVE_OUTPUTS, PORTABLE_NAMES
from biomcp.entrypoints.mcp.toolspec import READING_LIVE, ToolSpec

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services

__all__ = ["specs"]

_DESCRIPTIONS = {
    "searchPubMedArticles": (
        "Search PubMed (live, via NCBI ESearch) for articles matching queryTerm, in PubMed "
        "query syntax. Optional dateRange (pdat/mdat/edat) and filterByPublicationTypes are "
        "folded into the term. Returns the effective term, the total count, up to maxResults "
        "PMIDs and, with fetchBriefSummaries > 0, ESummary v2.0 summaries (title, authors, "
        "source, dates) of the top PMIDs, plus the E-utility URLs used (API key removed). "
        "Page with offset or cursor=nextCursor (goes past 9,999). A likely misspelling gets "
        "ESpell's suggestion (spelling), searched only if the query finds nothing. "
        "Use pubmed_fetch_article_details to read the articles."
    ),
    "fetchArticleDetails": (
        "Fetch up to 200 PubMed articles by PMID (NCBI EFetch). detailLevel: abstract_plus "
        "(parsed: title, abstract, authors with affiliations, journal and standardized date, "
        "publication types, keywords, MeSH with qualifiers and major-topic flags, optional "
        "grants, DOI), full_xml (raw PubmedArticle XML), medline_text (MEDLINE format) or "
        "citation_data (minimal data to cite). PMIDs PubMed does not have are listed in "
        "notFoundPmids. Repeated fetches are served from a response cache."
    ),
    "getArticleRelationships": (
        "Articles related to a PMID (NCBI ELink): pubmed_similar_articles (with scores), "
        "pubmed_citedin (articles citing it), pubmed_references (articles it cites), each "
        "enriched with title, authors and link; or citation_formats: its citation as RIS, "
        "BibTeX, APA 7, MLA 9 or Vancouver strings. An article without links gives an empty "
        "list; an unknown PMID gives a NOT_FOUND error."
    ),
}
_TITLES = {
    "searchPubMedArticles": "Search PubMed",
    "fetchArticleDetails": "Fetch PubMed article details",
    "getArticleRelationships": "Related articles and citations",
}


def specs(services: Services) -> list[ToolSpec]:
    """The three live tools, as `ToolSpec`s with their own schemas."""

    async def search(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await services.live.search(
            args["queryTerm"],
            max_results=args["maxResults"],
            sort_by=args["sortBy"],
            date_range=args.get("dateRange"),
            publication_types=args.get("filterByPublicationTypes"),
            brief_summaries=args["fetchBriefSummaries"],
            offset=args.get("offset"),
            cursor=args.get("cursor"),
        )

    async def fetch(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await services.live.fetch(
            args["pmids"],
            detail_level=args["detailLevel"],
            include_mesh=args["includeMeshTerms"],
            include_grants=args["includeGrantInfo"],
        )

    async def related(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await services.live.relationships(
            args["sourcePmid"],
            relationship_type=args["relationshipType"],
            max_results=args["maxRelatedResults"],
            citation_styles=args["citationStyles"],
        )

    handlers = {
        "searchPubMedArticles": search,
        "fetchArticleDetails": fetch,
        "getArticleRelationships": related,
    }
    return [
        ToolSpec(
            name,
            PORTABLE_NAMES[name],
            _TITLES[name],
            _DESCRIPTIONS[name],
            handler,
            writes=False,
            annotations=READING_LIVE,
            input_schema=LIVE_INPUTS[name],
            output_schema=LIVE_OUTPUTS[name],
        )
        for name, handler in handlers.items()
    ]

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
        "Search PubMed live (ESearch) with queryTerm in PubMed syntax. "
        "dateRange (pdat/mdat/edat) and filterByPublicationTypes are folded into the term. "
        "Returns the effective term, the count, up to maxResults PMIDs, with "
        "fetchBriefSummaries > 0 summaries of the top ones (title, authors, source, dates, "
        "retraction), and the E-utility URLs (no API key). "
        "Page with offset or cursor=nextCursor (past 9,999). A likely misspelling gets "
        "ESpell's suggestion, searched only if the query finds nothing. "
        "Read them with pubmed_fetch_article_details."
    ),
    "fetchArticleDetails": (
        "Fetch up to 200 PubMed articles by PMID (NCBI EFetch). detailLevel: abstract_plus "
        "(parsed: title, abstract, authors, affiliations, journal, date, types, keywords, "
        "MeSH with qualifiers and major topics, grants, DOI, retraction), full_xml "
        "(PubmedArticle XML), medline_text (MEDLINE format) or citation_data (data to cite). "
        "Missing PMIDs are in notFoundPmids. Fetches are cached."
    ),
    "getArticleRelationships": (
        "Articles related to a PMID (NCBI ELink): pubmed_similar_articles (with scores), "
        "pubmed_citedin (articles citing it), pubmed_references (articles it cites), each "
        "with title, authors, link and retraction; or citation_formats: its citation as "
        "RIS, BibTeX, APA 7, MLA 9 or Vancouver strings. An unknown PMID: NOT_FOUND."
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

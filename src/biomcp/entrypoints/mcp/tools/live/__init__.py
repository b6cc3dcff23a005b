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

__all__ = ["TOOLSET", "specs"]

#: The toolset of these tools: `BIOMCP_TOOLSETS` names it to offer them.
TOOLSET = "live"

_DESCRIPTIONS = {
    "searchPubMedArticles": (
        "Search PubMed live (ESearch) with queryTerm in PubMed syntax, dateRange and "
        "publication types folded in. Returns the effective term, the count, up to "
        "maxResults PMIDs and, with fetchBriefSummaries, summaries of the top ones. Paging "
        "and spelling: biomcp://help. Read articles with pubmed_fetch_article_details."
    ),
    "fetchArticleDetails": (
        "Fetch up to 200 PubMed articles by PMID (EFetch): parsed abstract, authors, "
        "journal, MeSH, grants, DOI and retraction (abstract_plus), or full_xml, "
        "medline_text or citation_data. Missing PMIDs: notFoundPmids."
    ),
    "getArticleRelationships": (
        "Articles related to a PMID (ELink): similar (with scores), citing it (citedin) or "
        "cited by it (references), with titles and retraction; or citation_formats: its "
        "citation as RIS, BibTeX, APA, MLA or Vancouver."
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

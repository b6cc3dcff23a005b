"""LivePubMed: PubMed itself, asked now (spec 04): search, article details, relationships and
citations, server information and database statistics.

Every method answers a JSON-ready dict in the shape of spec 04's outputs (camelCase keys;
fields the spec does not print are additive). Failures are never disguised as empty answers:

* a request that cannot be served as asked raises `InvalidRequestError`, or the domain's
  `InvalidQueryError` / `InvalidRecordError` (all `VALIDATION`);
* a PMID PubMed does not have raises `NotFoundError` where one PMID is the whole request
  (relationships, citations); `fetch` lists such PMIDs in `notFoundPmids` instead;
* NCBI failures pass through as the port's `EntrezError`s (`RATE_LIMIT`, `UPSTREAM`, `ENTREZ`,
  `TIMEOUT`), and so does a search whose terms PubMed could not read at all (an ESearch
  ErrorList with nothing found), which is not "no results".
* Each call has one overall deadline (`LiveConfig.deadline_s`, NCBI_TOTAL_DEADLINE_MS), however
  many E-utility requests and retries it makes: past it, `EntrezTimeoutError` (`TIMEOUT`).

The E-utility URLs in answers are rebuilt from the configuration, never from the client, so
the API key cannot appear in them.

`LivePubMed` is a facade: one job object per concern (`LiveSearch`, `ArticleDetails`,
`FullText`, `IdConverter`, `CitationLookup`, `CitationFormatter`, `MeshLookup`,
`ServerResources`), all over one `LiveContext`, each public method forwarding to one of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from biomcp.ports.entrez import EntrezClient
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.vectors import VectorStore
from biomcp.usecases.live.articles import CITATION_STYLES, ArticleDetails
from biomcp.usecases.live.citations import CitationFormatter
from biomcp.usecases.live.citematch import CitationLookup
from biomcp.usecases.live.common import ClientStatus, LiveConfig, LiveContext
from biomcp.usecases.live.fulltext import FullText
from biomcp.usecases.live.identifiers import IdConverter
from biomcp.usecases.live.mesh import MeshLookup
from biomcp.usecases.live.resources import ServerResources
from biomcp.usecases.live.search import LiveSearch

__all__ = ["LivePubMed"]


class LivePubMed:
    """The live PubMed tools over an `EntrezClient`.

    `metadata` and `vectors` are only read for the corpus summary of `server_info` (leave them
    None outside a server); `status` reports the client's figures.
    """

    def __init__(
        self,
        entrez: EntrezClient,
        *,
        config: LiveConfig | None = None,
        metadata: MetadataStore | None = None,
        vectors: VectorStore | None = None,
        status: Callable[[], ClientStatus] | None = None,
    ) -> None:
        self.context = LiveContext(entrez, config or LiveConfig())
        self.config = self.context.config
        self._search = LiveSearch(self.context)
        self._articles = ArticleDetails(self.context)
        self._fulltext = FullText(self.context)
        self._identifiers = IdConverter(self.context)
        self._citematch = CitationLookup(self.context)
        self._citations = CitationFormatter(self.context)
        self._mesh = MeshLookup(self.context)
        self._resources = ServerResources(
            self.context, metadata=metadata, vectors=vectors, status=status or ClientStatus
        )

    async def search(
        self,
        query_term: str,
        *,
        max_results: int = 20,
        sort_by: str = "relevance",
        date_range: Mapping[str, Any] | None = None,
        publication_types: Sequence[str] | None = None,
        brief_summaries: int = 0,
        offset: int | None = None,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """`searchPubMedArticles`: see `LiveSearch.search`."""
        return await self._search.search(
            query_term,
            max_results=max_results,
            sort_by=sort_by,
            date_range=date_range,
            publication_types=publication_types,
            brief_summaries=brief_summaries,
            offset=offset,
            cursor=cursor,
        )

    async def fetch(
        self,
        pmids: Sequence[str],
        *,
        detail_level: str = "abstract_plus",
        include_mesh: bool = True,
        include_grants: bool = False,
    ) -> dict[str, Any]:
        """`fetchArticleDetails`: see `ArticleDetails.fetch`."""
        return await self._articles.fetch(
            pmids,
            detail_level=detail_level,
            include_mesh=include_mesh,
            include_grants=include_grants,
        )

    async def relationships(
        self,
        source_pmid: str,
        *,
        relationship_type: str = "pubmed_similar_articles",
        max_results: int = 5,
        citation_styles: Sequence[str] = ("ris",),
    ) -> dict[str, Any]:
        """`getArticleRelationships`: see `ArticleDetails.relationships`."""
        return await self._articles.relationships(
            source_pmid,
            relationship_type=relationship_type,
            max_results=max_results,
            citation_styles=citation_styles,
        )

    async def cite(self, pmid: str, styles: Sequence[str] = CITATION_STYLES) -> dict[str, str]:
        """The citation strings of `pmid`: see `ArticleDetails.cite`."""
        return await self._articles.cite(pmid, styles)

    async def format_citations(
        self, pmids: Sequence[str], *, styles: Sequence[str] = ("ris",)
    ) -> dict[str, Any]:
        """`pubmed_format_citations`: see `CitationFormatter.format_citations`."""
        return await self._citations.format_citations(pmids, styles=styles)

    async def lookup_citations(self, references: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """`pubmed_lookup_citation`: see `CitationLookup.lookup_citations`."""
        return await self._citematch.lookup_citations(references)

    async def fetch_fulltext(
        self,
        ids: Sequence[str],
        *,
        sections: Sequence[str] = (),
        max_chars: int = 20_000,
        max_section_chars: int = 6_000,
        outline: bool = False,
        include_references: bool = False,
        include_captions: bool = True,
    ) -> dict[str, Any]:
        """`pubmed_fetch_fulltext`: see `FullText.fetch_fulltext`."""
        return await self._fulltext.fetch_fulltext(
            ids,
            sections=sections,
            max_chars=max_chars,
            max_section_chars=max_section_chars,
            outline=outline,
            include_references=include_references,
            include_captions=include_captions,
        )

    async def convert_ids(self, ids: Sequence[str]) -> dict[str, Any]:
        """`pubmed_convert_ids`: see `IdConverter.convert_ids`."""
        return await self._identifiers.convert_ids(ids)

    async def lookup_mesh(self, term: str, *, max_results: int = 5) -> dict[str, Any]:
        """`pubmed_lookup_mesh`: see `MeshLookup.lookup_mesh`."""
        return await self._mesh.lookup_mesh(term, max_results=max_results)

    async def server_info(self, *, mcp_spec_version: str) -> dict[str, Any]:
        """`pubmed-connect://info`: see `ServerResources.server_info`."""
        return await self._resources.server_info(mcp_spec_version=mcp_spec_version)

    async def database_stats(self, db: str = "pubmed") -> dict[str, Any]:
        """`pubmed-connect://stats/pubmed`: see `ServerResources.database_stats`."""
        return await self._resources.database_stats(db)

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

"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Literal, get_args

from biomcp.domain.citations import CitationStyle, format_citation
from biomcp.domain.sanitize import parse_pmid, parse_pmids
from biomcp.ports.entrez import (
    EntrezClient,
    EntrezRequestError,
)
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.vectors import VectorStore
from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.live.citations import CitationsMixin
from biomcp.usecases.live.citematch import CitationLookupMixin
from biomcp.usecases.live.common import (
    ClientStatus,
    LiveBase,
    LiveConfig,
    _bounded,
    _choice,
    _missing,
    _not_found,
    _pubmed_url,
    _within_deadline,
)
from biomcp.usecases.live.documents import _split_article_xml, _split_medline
from biomcp.usecases.live.fulltext import FullTextMixin
from biomcp.usecases.live.identifiers import IdentifiersMixin
from biomcp.usecases.live.mesh import MeshMixin
from biomcp.usecases.live.resources import ResourcesMixin
from biomcp.usecases.live.search import SORT_ORDERS, SearchMixin
from biomcp.usecases.live.shapes import (
    _abstract_plus,
    _author_string,
    _citation_data,
    _links,
)

__all__ = [
    "CITATION_STYLES",
    "DETAIL_LEVELS",
    "RELATIONSHIP_TYPES",
    "SORT_ORDERS",
    "ClientStatus",
    "LiveConfig",
    "LivePubMed",
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
_CITATION_STYLES = {
    "ris": CitationStyle.RIS,
    "bibtex": CitationStyle.BIBTEX,
    "apa_string": CitationStyle.APA,
    "mla_string": CitationStyle.MLA,
    "vancouver_string": CitationStyle.VANCOUVER,
}
_MAX_RELATED = 50


class LivePubMed(
    FullTextMixin,
    IdentifiersMixin,
    CitationLookupMixin,
    CitationsMixin,
    SearchMixin,
    MeshMixin,
    ResourcesMixin,
    LiveBase,
):
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
        self._entrez = entrez
        self.config = config or LiveConfig()
        self._metadata = metadata
        self._vectors = vectors
        self._status = status or ClientStatus
        self._last_call: tuple[datetime, str | None] | None = None

    # --- fetchArticleDetails ---------------------------------------------------------------

    @_within_deadline
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
        level = _choice("detailLevel", detail_level, DETAIL_LEVELS)
        wanted = parse_pmids(pmids)
        params: list[tuple[str, str]] = [("id", ",".join(wanted))]
        warnings: list[str] = []
        articles: list[dict[str, Any]]
        if level in ("abstract_plus", "citation_data"):
            params.append(("retmode", "xml"))
            fetched = await self._call(self._entrez.efetch(wanted))
            by_pmid = {r.pmid: r for r in fetched.records}
            shape = _abstract_plus if level == "abstract_plus" else _citation_data
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
            xml = await self._call(self._entrez.efetch_xml(wanted))
            pieces = _split_article_xml(xml)
            articles = [{"pmid": p, "fullXml": pieces[p]} for p in wanted if p in pieces]
            found = set(pieces)
        else:
            params += [("rettype", "medline"), ("retmode", "text")]
            text = await self._call(self._entrez.efetch_medline(wanted))
            records = _split_medline(text)
            articles = [{"pmid": p, "medlineText": records[p]} for p in wanted if p in records]
            found = set(records)
        return {
            "requestedPmids": list(wanted),
            "articles": articles,
            "notFoundPmids": [p for p in wanted if p not in found],
            "eFetchDetails": {
                "urls": [self._url("efetch", params)],
                "requestMethod": "POST" if len(wanted) > self.config.post_threshold else "GET",
            },
            "detailLevel": level,
            "warnings": warnings,
        }

    # --- getArticleRelationships -----------------------------------------------------------

    @_within_deadline
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

        An article without links gives an empty `relatedArticles`; an unknown PMID raises.

        Raises:
            InvalidRecordError, InvalidRequestError: a malformed PMID or argument.
            NotFoundError: PubMed has no article `source_pmid`.
            EntrezError: NCBI failed.
        """
        kind = _choice("relationshipType", relationship_type, RELATIONSHIP_TYPES)
        _bounded("maxRelatedResults", max_results, 1, _MAX_RELATED)
        source = parse_pmid(source_pmid)
        if kind == "citation_formats":
            styles = [_choice("citationStyles", s, CITATION_STYLES) for s in citation_styles]
            return await self._citations(source, list(dict.fromkeys(styles)) or ["ris"])
        linkname = _LINK_NAMES[kind]
        scored = kind == "pubmed_similar_articles"
        try:
            linksets = await self._call(
                self._entrez.elink([source], linkname=linkname, with_scores=scored)
            )
        except EntrezRequestError:
            await self._require(source)  # PubMed's error may mean "no such PMID"
            raise
        links = _links(linksets, source, linkname)
        top = links[:max_results]
        docs = await self._call(self._entrez.esummary([source, *(link.pmid for link in top)]))
        by_pmid = {doc.pmid: doc for doc in docs}
        if _missing(by_pmid.get(source)):
            raise _not_found(source)
        related = []
        for link in top:
            doc = by_pmid.get(link.pmid)
            summary = None if _missing(doc) else doc  # linked, but without a summary
            related.append(
                {
                    "pmid": link.pmid,
                    "title": summary.title if summary else None,
                    "authors": _author_string(summary.authors) if summary else None,
                    "score": link.score,
                    "linkUrl": _pubmed_url(link.pmid),
                }
            )
        cmd = "neighbor_score" if scored else "neighbor"
        return {
            "sourcePmid": source,
            "relationshipType": kind,
            "relatedArticles": related,
            "citations": {},
            "retrievedCount": len(related),
            "eLinkUrl": self._url(
                "elink",
                [("dbfrom", "pubmed"), ("cmd", cmd), ("linkname", linkname), ("id", source)],
            ),
            "totalLinked": len(links),
            "eSummaryUrl": self._url(
                "esummary",
                [("version", "2.0"), ("id", ",".join([source, *(x.pmid for x in top)]))],
            ),
        }

    async def _citations(self, source: str, styles: list[str]) -> dict[str, Any]:
        fetched = await self._call(self._entrez.efetch([source]))
        record = next((r for r in fetched.records if r.pmid == source), None)
        if record is None:
            if source in fetched.book_pmids:
                raise InvalidRequestError(
                    f"PMID {source} is a book record; citations are generated for journal "
                    "articles only",
                    details={"pmid": source},
                )
            raise _not_found(source)
        return {
            "sourcePmid": source,
            "relationshipType": "citation_formats",
            "relatedArticles": [],
            "citations": {s: format_citation(record, _CITATION_STYLES[s]) for s in styles},
            "retrievedCount": 0,
            "eLinkUrl": None,
            "eFetchUrl": self._url("efetch", [("id", source), ("retmode", "xml")]),
        }

    async def _require(self, pmid: str) -> None:
        docs = await self._call(self._entrez.esummary([pmid]))
        if _missing(next((d for d in docs if d.pmid == pmid), None)):
            raise _not_found(pmid)

    @_within_deadline
    async def cite(self, pmid: str, styles: Sequence[str] = CITATION_STYLES) -> dict[str, str]:
        """The citation strings of `pmid` in `styles` (every style by default).

        Raises:
            as `relationships` with `citation_formats`.
        """
        answer = await self.relationships(
            pmid, relationship_type="citation_formats", citation_styles=styles
        )
        return dict(answer["citations"])

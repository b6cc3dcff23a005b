"""`corpus.pubmed`: live PubMed from the library, as the MCP tools and `biomcp pubmed` ask it.

    with biomcp.open_corpus() as corpus:
        found = corpus.pubmed.search("asthma[mh] AND children", fetch_brief_summaries=5)
        for summary in found.summaries:
            print(summary.pmid, summary.title)
        article = corpus.pubmed.fetch(found.pmids[:1]).articles[0]

The methods take the tools' arguments in snake_case (`maxResults` is `max_results`), with
the tools' defaults. They call the same use cases as the tools, through the same Entrez
client, response cache and rate limiter. Failures raise the same typed errors as the corpus
calls: `InvalidRequestError` for a bad argument, `NotFoundError`, the port's `EntrezError`s.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from biomcp.entrypoints.library.live_results import (
    Articles,
    Citations,
    PubMedSearch,
    Relationships,
)
from biomcp.entrypoints.library.lookup_results import (
    CitationMatches,
    ConvertedIds,
    FullTexts,
    MeshLookup,
)
from biomcp.entrypoints.services import Services

__all__ = ["AsyncPubMed", "PubMed"]

T = TypeVar("T")
Ids = Sequence[str | int] | str | int


class Runs(Protocol):
    """How a corpus runs a coroutine on its private loop."""

    def __call__(self, make: Callable[[], Coroutine[Any, Any, T]]) -> Coroutine[Any, Any, T]: ...


class Waits(Protocol):
    """How a blocking corpus waits for a coroutine run on its private loop."""

    def __call__(self, call: Coroutine[Any, Any, T]) -> T: ...


class AsyncPubMed:
    """Live PubMed for async code: `await corpus.pubmed.search(...)` on an `AsyncCorpus`."""

    def __init__(self, services: Services, run: Runs) -> None:
        self._services = services
        self._run = run

    async def search(
        self,
        query_term: str,
        *,
        max_results: int = 20,
        sort_by: str = "relevance",
        date_range: Mapping[str, str] | None = None,
        filter_by_publication_types: Sequence[str] | None = None,
        fetch_brief_summaries: int = 0,
        offset: int | None = None,
        cursor: str | None = None,
    ) -> PubMedSearch:
        """Search PubMed (ESearch) with `query_term` in PubMed syntax; the
        `pubmed_search_articles` tool. `date_range` holds `min_date`, `max_date` (`YYYY`,
        `YYYY/MM` or `YYYY/MM/DD`) and `date_type` (`pdat`, `mdat`, `edat`).
        `fetch_brief_summaries` adds summaries of the first PMIDs. Page on with `offset`, or
        past PubMed's offset limit with `cursor=found.next_cursor`."""
        window = _camel_keys(date_range)
        answer = await self._run(
            lambda: self._services.live.search(
                query_term,
                max_results=max_results,
                sort_by=sort_by,
                date_range=window,
                publication_types=filter_by_publication_types,
                brief_summaries=fetch_brief_summaries,
                offset=offset,
                cursor=cursor,
            )
        )
        return PubMedSearch.of(answer)

    async def fetch(
        self,
        pmids: Ids,
        *,
        detail_level: str = "abstract_plus",
        include_mesh_terms: bool = True,
        include_grant_info: bool = False,
    ) -> Articles:
        """Fetch up to 200 articles by PMID (EFetch); the `pubmed_fetch_article_details`
        tool. `detail_level` is `abstract_plus` (parsed), `citation_data`, `full_xml` or
        `medline_text`. PMIDs PubMed lacks are in `not_found_pmids`."""
        wanted = _ids(pmids)
        answer = await self._run(
            lambda: self._services.live.fetch(
                wanted,
                detail_level=detail_level,
                include_mesh=include_mesh_terms,
                include_grants=include_grant_info,
            )
        )
        return Articles.of(answer)

    async def related(
        self,
        source_pmid: str | int,
        *,
        relationship_type: str = "pubmed_similar_articles",
        max_related_results: int = 5,
        citation_styles: Sequence[str] = ("ris",),
    ) -> Relationships:
        """Articles linked to `source_pmid` (ELink); the `pubmed_article_relationships`
        tool. `relationship_type` is `pubmed_similar_articles` (scored in [0, 1]),
        `pubmed_citedin`, `pubmed_references` or `citation_formats`.

        Raises:
            NotFoundError: PubMed has no article `source_pmid`.
        """
        answer = await self._run(
            lambda: self._services.live.relationships(
                str(source_pmid),
                relationship_type=relationship_type,
                max_results=max_related_results,
                citation_styles=list(_strings(citation_styles)),
            )
        )
        return Relationships.of(answer)

    async def cite(
        self, pmids: Ids, *, citation_styles: Sequence[str] | str = ("ris",)
    ) -> Citations:
        """Citation strings of up to 50 articles (EFetch); the `pubmed_format_citations`
        tool. Styles: `ris`, `bibtex`, `apa_string`, `mla_string`, `vancouver_string`.

        Raises:
            NotFoundError: PubMed has none of the PMIDs.
        """
        wanted = _ids(pmids)
        styles = list(_strings(citation_styles))
        answer = await self._run(
            lambda: self._services.live.format_citations(wanted, styles=styles)
        )
        return Citations.of(answer)

    async def fulltext(
        self,
        ids: Ids,
        *,
        sections: Sequence[str] | str = (),
        max_chars: int = 20_000,
        max_section_chars: int = 6_000,
        outline: bool = False,
        include_references: bool = False,
    ) -> FullTexts:
        """PubMed Central full text by PMID or PMCID (`PMC123`); the `pubmed_fetch_fulltext`
        tool. Each id has a status. An article over `max_chars` comes as an outline: ask
        again with `sections` (title words or types such as `methods`)."""
        wanted = _ids(ids)
        chosen = list(_strings(sections))
        answer = await self._run(
            lambda: self._services.live.fetch_fulltext(
                wanted,
                sections=chosen,
                max_chars=max_chars,
                max_section_chars=max_section_chars,
                outline=outline,
                include_references=include_references,
            )
        )
        return FullTexts.of(answer)

    async def mesh(self, term: str, *, max_results: int = 5) -> MeshLookup:
        """MeSH records for a term or a MeSH UI (`D009203`); the `pubmed_lookup_mesh` tool.

        Raises:
            NotFoundError: no MeSH record matches.
        """
        answer = await self._run(
            lambda: self._services.live.lookup_mesh(term, max_results=max_results)
        )
        return MeshLookup.of(answer)

    async def ids(self, ids: Ids) -> ConvertedIds:
        """PMIDs, PMCIDs and DOIs converted into each other (NCBI's PMC ID converter); the
        `pubmed_convert_ids` tool. Only articles in PubMed Central convert."""
        wanted = _ids(ids)
        answer = await self._run(lambda: self._services.live.convert_ids(wanted))
        return ConvertedIds.of(answer)

    async def match(self, references: Sequence[Mapping[str, Any]]) -> CitationMatches:
        """The PMIDs of up to 50 references given in pieces (ECitMatch, then a fielded
        search); the `pubmed_lookup_citation` tool. Each reference has at least two of
        `journal`, `year`, `volume`, `first_page`, `first_author`, `title`, and an optional
        `key` echoed back."""
        given = (
            [_camel_keys(reference) for reference in references]
            if isinstance(references, Sequence) and not isinstance(references, str)
            else references  # the use case says what it wants
        )
        answer = await self._run(lambda: self._services.live.lookup_citations(given))
        return CitationMatches.of(answer)


def _twin_docs(cls: type[PubMed]) -> type[PubMed]:
    """Give each blocking method the docstring of its `AsyncPubMed` twin."""
    for name, member in vars(cls).items():
        twin = getattr(AsyncPubMed, name, None)
        if inspect.isfunction(member) and member.__doc__ is None and twin is not None:
            member.__doc__ = twin.__doc__
    return cls


@_twin_docs
class PubMed:
    """Live PubMed, blocking: `corpus.pubmed.search(...)` on a `Corpus`. Each method is its
    `AsyncPubMed` twin's, run on the corpus's private loop while the caller waits."""

    def __init__(self, aio: AsyncPubMed, wait: Waits) -> None:
        self._aio = aio
        self._wait = wait

    def search(
        self,
        query_term: str,
        *,
        max_results: int = 20,
        sort_by: str = "relevance",
        date_range: Mapping[str, str] | None = None,
        filter_by_publication_types: Sequence[str] | None = None,
        fetch_brief_summaries: int = 0,
        offset: int | None = None,
        cursor: str | None = None,
    ) -> PubMedSearch:
        return self._wait(
            self._aio.search(
                query_term,
                max_results=max_results,
                sort_by=sort_by,
                date_range=date_range,
                filter_by_publication_types=filter_by_publication_types,
                fetch_brief_summaries=fetch_brief_summaries,
                offset=offset,
                cursor=cursor,
            )
        )

    def fetch(
        self,
        pmids: Ids,
        *,
        detail_level: str = "abstract_plus",
        include_mesh_terms: bool = True,
        include_grant_info: bool = False,
    ) -> Articles:
        return self._wait(
            self._aio.fetch(
                pmids,
                detail_level=detail_level,
                include_mesh_terms=include_mesh_terms,
                include_grant_info=include_grant_info,
            )
        )

    def related(
        self,
        source_pmid: str | int,
        *,
        relationship_type: str = "pubmed_similar_articles",
        max_related_results: int = 5,
        citation_styles: Sequence[str] = ("ris",),
    ) -> Relationships:
        return self._wait(
            self._aio.related(
                source_pmid,
                relationship_type=relationship_type,
                max_related_results=max_related_results,
                citation_styles=citation_styles,
            )
        )

    def cite(self, pmids: Ids, *, citation_styles: Sequence[str] | str = ("ris",)) -> Citations:
        return self._wait(self._aio.cite(pmids, citation_styles=citation_styles))

    def fulltext(
        self,
        ids: Ids,
        *,
        sections: Sequence[str] | str = (),
        max_chars: int = 20_000,
        max_section_chars: int = 6_000,
        outline: bool = False,
        include_references: bool = False,
    ) -> FullTexts:
        return self._wait(
            self._aio.fulltext(
                ids,
                sections=sections,
                max_chars=max_chars,
                max_section_chars=max_section_chars,
                outline=outline,
                include_references=include_references,
            )
        )

    def mesh(self, term: str, *, max_results: int = 5) -> MeshLookup:
        return self._wait(self._aio.mesh(term, max_results=max_results))

    def ids(self, ids: Ids) -> ConvertedIds:
        return self._wait(self._aio.ids(ids))

    def match(self, references: Sequence[Mapping[str, Any]]) -> CitationMatches:
        return self._wait(self._aio.match(references))


def _ids(value: Ids) -> list[str]:
    """One id or many, as the strings the use cases take."""
    if isinstance(value, str | int):
        return [str(value)]
    return [str(item) for item in value]


def _strings(value: Sequence[str] | str) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


_SNAKE = re.compile(r"_([a-z])")


def _camel_keys(given: Any) -> Any:
    """A mapping's snake_case keys spelled as the tools spell them (`min_date`: `minDate`).
    CamelCase keys stay; anything but a mapping is left for the use case to refuse."""
    if not isinstance(given, Mapping):
        return given
    return {_SNAKE.sub(lambda m: m.group(1).upper(), str(k)): v for k, v in given.items()}

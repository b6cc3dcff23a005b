"""`corpus.pubmed`: live PubMed from the library, against the fake E-utilities over real HTTP.

Every method runs twice: blocking on a `Corpus`, and awaited on its `AsyncCorpus`
(`corpus.aio.pubmed`). The fake serves SYNTHETIC articles (each with SYNTHETIC PMC full text),
its SYNTHETIC MeSH vocabulary and its ID converter; similar articles are the fake's own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

import biomcp
from biomcp.domain.errors import InvalidRecordError
from biomcp.domain.records import PubMedRecord
from biomcp.entrypoints.library import (
    Articles,
    CitationMatches,
    Citations,
    ConvertedIds,
    Corpus,
    FullTexts,
    MeshLookup,
    PubMedSearch,
    Relationships,
    open_async_corpus,
    open_corpus,
)
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from biomcp.usecases.errors import InvalidRequestError, NotFoundError

pytestmark = pytest.mark.integration

MODES = ["blocking", "awaited"]
MISSING = "99999999"
PMC_OFFSET = 100_000_000  # the fake's PMCID of a synthetic article: PMC + (PMID + offset)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(40, start=date(2021, 1, 1), end=date(2022, 6, 30), seed=8, pmc_share=1)
    )
    with FakeEutilsServer(corpus) as server:
        yield server


@pytest.fixture(scope="module")
def records(fake: FakeEutilsServer) -> list[PubMedRecord]:
    found = [entry.record for entry in fake.corpus if entry.record is not None]
    return sorted(found, key=lambda record: int(record.pmid))


def settings_for(fake: FakeEutilsServer, data_dir: Path) -> dict[str, Any]:
    return {
        "biomcp_data_dir": data_dir,
        "biomcp_embeddings": "deterministic",
        "ncbi_eutils_base_url": fake.base_url,
        "ncbi_idconv_base_url": fake.base_url + "/tools/idconv/api/v1/articles/",
        "ncbi_max_retries": 0,
    }


@pytest.fixture(scope="module")
def corpus(fake: FakeEutilsServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    with open_corpus(**settings_for(fake, tmp_path_factory.mktemp("pubmed"))) as opened:
        yield opened


def ask(corpus: Corpus, mode: str, method: str, *args: Any, **kwargs: Any) -> Any:
    """`corpus.pubmed.<method>(...)` blocking, or awaited on the corpus's `AsyncCorpus`."""
    if mode == "blocking":
        return getattr(corpus.pubmed, method)(*args, **kwargs)

    async def awaited() -> Any:
        return await getattr(corpus.aio.pubmed, method)(*args, **kwargs)

    return asyncio.run(awaited())


def logged(fake: FakeEutilsServer, endpoint: str) -> list[dict[str, Any]]:
    return [entry for entry in fake.log if entry["endpoint"] == endpoint]


@pytest.mark.parametrize("mode", MODES)
def test_search_gives_the_term_count_pmids_and_typed_summaries(
    corpus: Corpus, records: list[PubMedRecord], mode: str
) -> None:
    found = ask(corpus, mode, "search", "hypertension[mh]", max_results=2, fetch_brief_summaries=1)
    assert isinstance(found, PubMedSearch)
    matching = [r.pmid for r in records if any(h.descriptor == "Hypertension" for h in r.mesh)]
    assert found.total_found == len(matching) >= 3
    assert len(found.pmids) == 2
    assert set(found.pmids) <= set(matching)
    titles = {r.pmid: r.title for r in records}
    assert [(s.pmid, s.title) for s in found.summaries] == [(p, titles[p]) for p in found.pmids[:1]]
    assert found.as_payload()["pmids"] == list(found.pmids)
    assert found.as_payload() is not found.as_payload()  # a copy: the result stays as it was


@pytest.mark.parametrize("mode", MODES)
def test_search_takes_the_tools_date_range_in_snake_case(corpus: Corpus, mode: str) -> None:
    found = ask(
        corpus,
        mode,
        "search",
        "hypertension[mh]",
        date_range={"min_date": "2022", "max_date": "2022/12", "date_type": "edat"},
        filter_by_publication_types=["Review"],
    )
    echoed = found.as_payload()["searchParameters"]
    assert echoed["dateRange"] == {"minDate": "2022", "maxDate": "2022/12", "dateType": "edat"}
    assert "2022[edat]" in found.effective_term or "2022/12" in found.effective_term
    assert '"Review"[Publication Type]' in found.effective_term


@pytest.mark.parametrize("mode", MODES)
def test_fetch_reads_articles_and_lists_the_missing(
    corpus: Corpus, records: list[PubMedRecord], mode: str
) -> None:
    first = records[0]
    fetched = ask(corpus, mode, "fetch", [first.pmid, MISSING], include_grant_info=True)
    assert isinstance(fetched, Articles)
    [article] = fetched.articles
    assert (article.pmid, article.title, article.doi) == (first.pmid, first.title, first.doi)
    assert article.abstract == first.abstract_text
    assert article.mesh_terms == tuple(h.descriptor for h in first.mesh)
    assert article.pmcid == f"PMC{int(first.pmid) + PMC_OFFSET}"
    assert "grantList" in article.as_payload()
    assert fetched.not_found_pmids == (MISSING,)
    medline = ask(corpus, mode, "fetch", int(first.pmid), detail_level="medline_text")
    assert medline.detail_level == "medline_text"
    assert medline.articles[0].medline_text.startswith(f"PMID- {first.pmid}")


@pytest.mark.parametrize("mode", MODES)
def test_related_scores_similar_articles_in_zero_to_one(
    corpus: Corpus, records: list[PubMedRecord], mode: str
) -> None:
    source = records[0].pmid
    related = ask(corpus, mode, "related", source, max_related_results=4)
    assert isinstance(related, Relationships)
    assert related.relationship_type == "pubmed_similar_articles"
    assert 1 <= len(related.related) <= 4
    scores = [article.score or 0.0 for article in related.related]
    assert scores[0] == 1.0  # the most similar: NCBI's scores are made relative to it
    assert scores == sorted(scores, reverse=True)
    assert all(0 < score <= 1 for score in scores)
    raw = [article.raw_score or 0 for article in related.related]
    assert all(value > 0 for value in raw)
    assert scores == [round(value / raw[0], 4) for value in raw]
    assert source not in {article.pmid for article in related.related}


@pytest.mark.parametrize("mode", MODES)
def test_related_gives_citation_formats_and_refuses_an_unknown_pmid(
    corpus: Corpus, records: list[PubMedRecord], mode: str
) -> None:
    source = records[1].pmid
    cited = ask(
        corpus,
        mode,
        "related",
        source,
        relationship_type="citation_formats",
        citation_styles=["ris", "bibtex"],
    )
    assert set(cited.citations) == {"ris", "bibtex"}
    assert cited.citations["ris"].startswith("TY  - ")
    assert cited.related == ()
    with pytest.raises(NotFoundError, match=f"PMID {MISSING} is not in PubMed"):
        ask(corpus, mode, "related", MISSING)


@pytest.mark.parametrize("mode", MODES)
def test_cite_formats_many_articles(corpus: Corpus, records: list[PubMedRecord], mode: str) -> None:
    pmids = [records[2].pmid, records[3].pmid]
    cited = ask(corpus, mode, "cite", [*pmids, MISSING], citation_styles="vancouver_string")
    assert isinstance(cited, Citations)
    assert cited.styles == ("vancouver_string",)
    assert [a.pmid for a in cited.articles] == pmids
    for article, record in zip(cited.articles, records[2:4], strict=True):
        assert set(article.citations) == {"vancouver_string"}
        assert (record.title or "").rstrip(".") in article.citations["vancouver_string"]
    assert cited.not_found_pmids == (MISSING,)
    with pytest.raises(NotFoundError):
        ask(corpus, mode, "cite", MISSING)


@pytest.mark.parametrize("mode", MODES)
def test_fulltext_gives_pmc_sections_with_a_status(
    corpus: Corpus, records: list[PubMedRecord], mode: str
) -> None:
    pmid = records[4].pmid
    pmcid = f"PMC{int(pmid) + PMC_OFFSET}"
    found = ask(corpus, mode, "fulltext", [pmid, "PMC1"], max_chars=8_000)
    assert isinstance(found, FullTexts)
    article, absent = found.articles
    assert (article.id, article.status, article.pmcid) == (pmid, "available", pmcid)
    assert article.mode == "full"
    assert article.sections
    assert all(s.text for s in article.sections)
    assert article.text.startswith(article.abstract or article.sections[0].text or "")
    assert 0 < found.used_chars <= found.max_chars == 8_000
    assert absent.status == "not_in_pmc"
    outline = ask(corpus, mode, "fulltext", pmcid, outline=True)
    assert outline.articles[0].mode == "outline"
    assert all(s.text is None for s in outline.articles[0].sections)


@pytest.mark.parametrize("mode", MODES)
def test_mesh_finds_descriptors_and_refuses_nonsense(corpus: Corpus, mode: str) -> None:
    found = ask(corpus, mode, "mesh", "asthma", max_results=3)
    assert isinstance(found, MeshLookup)
    assert found.term == "asthma"
    asthma = next(d for d in found.descriptors if d.name == "Asthma")
    assert asthma.ui.startswith("D")
    assert "Asthma[mh]" in asthma.suggested_query
    with pytest.raises(NotFoundError):
        ask(corpus, mode, "mesh", "qqqxyzzy")


@pytest.mark.parametrize("mode", MODES)
def test_ids_convert_pmids_and_pmcids(
    corpus: Corpus, records: list[PubMedRecord], mode: str
) -> None:
    pmid = records[5].pmid
    pmcid = f"PMC{int(records[6].pmid) + PMC_OFFSET}"
    converted = ask(corpus, mode, "ids", [pmid, pmcid])
    assert isinstance(converted, ConvertedIds)
    by_id = {r.requested_id: r for r in converted.records}
    assert (by_id[pmid].id_type, by_id[pmid].status) == ("pmid", "found")
    assert by_id[pmid].pmcid == f"PMC{int(pmid) + PMC_OFFSET}"
    assert (by_id[pmcid].id_type, by_id[pmcid].pmid) == ("pmcid", records[6].pmid)
    assert (converted.found, converted.not_found) == (2, 0)


@pytest.mark.parametrize("mode", MODES)
def test_match_finds_a_reference_given_in_snake_case_pieces(
    corpus: Corpus, records: list[PubMedRecord], mode: str
) -> None:
    record = records[7]
    author = record.authors[0]
    reference = {
        "journal": record.journal.iso_abbreviation,
        "year": str(record.pdat.year if record.pdat else ""),
        "volume": record.journal.volume,
        "first_page": (record.pages or "").split("-")[0],
        "first_author": f"{author.last_name} {author.initials}",
        "key": "ref-a",
    }
    matches = ask(corpus, mode, "match", [reference])
    assert isinstance(matches, CitationMatches)
    [result] = matches.results
    assert (result.key, result.status, result.pmid) == ("ref-a", "matched", record.pmid)
    assert result.candidates[0].pmid == record.pmid
    assert "journal" in result.candidates[0].matched_fields
    assert matches.matched == 1
    with pytest.raises(InvalidRequestError, match="at least two"):
        ask(corpus, mode, "match", [{"title": "one piece only"}])


@pytest.mark.parametrize("mode", MODES)
def test_bad_arguments_raise_the_librarys_typed_errors(corpus: Corpus, mode: str) -> None:
    with pytest.raises(InvalidRequestError, match="maxResults"):
        ask(corpus, mode, "search", "hypertension", max_results=0)
    with pytest.raises(InvalidRequestError, match="detailLevel"):
        ask(corpus, mode, "fetch", "123", detail_level="everything")
    with pytest.raises(InvalidRecordError):
        ask(corpus, mode, "fetch", ["not-a-pmid"])
    with pytest.raises(InvalidRequestError, match="dateRange has unknown fields: since"):
        ask(corpus, mode, "search", "hypertension", date_range={"since": "2020"})


def test_the_calls_share_the_tools_client_and_response_cache(
    fake: FakeEutilsServer, corpus: Corpus, records: list[PubMedRecord]
) -> None:
    pmid = records[8].pmid
    fake.clear_log()
    first = corpus.pubmed.fetch(pmid)
    [request] = logged(fake, "efetch")
    assert request["params"]["tool"] == corpus.services.live.config.tool
    again = corpus.pubmed.fetch(pmid)  # answered by the response cache the tools use
    assert len(logged(fake, "efetch")) == 1
    assert again == first
    assert corpus.pubmed.fetch(pmid, include_mesh_terms=False).articles[0].mesh_terms == ()


def test_an_async_corpus_and_a_running_event_loop_both_reach_pubmed(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    async def notebook_cell() -> tuple[str, str]:
        asyncio.get_running_loop()  # as in Jupyter: a loop runs while the cell does
        async with open_async_corpus(**settings_for(fake, tmp_path / "a")) as aio:
            awaited = (await aio.pubmed.mesh("asthma")).descriptors[0].ui
        with open_corpus(**settings_for(fake, tmp_path / "b")) as blocking:
            waited = blocking.pubmed.mesh("asthma").descriptors[0].ui
        return awaited, waited

    awaited, waited = asyncio.run(notebook_cell())
    assert awaited == waited
    assert biomcp.PubMedSearch is PubMedSearch

"""EFetch answers split per article (`adapters.entrez.splitting`), and the client's
`efetch_xml_articles`, which the live `full_xml` detail level reads."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from biomcp.adapters.entrez.client import EntrezSettings, HttpEntrezClient
from biomcp.adapters.entrez.ratelimit import RateLimiter
from biomcp.adapters.entrez.splitting import split_article_set, split_article_xml
from biomcp.ports.entrez import EntrezResponseError

pytestmark = pytest.mark.unit

ARTICLE = (
    '<PubmedArticle>\n  <MedlineCitation Status="MEDLINE"  Owner="NLM">'
    '<PMID Version="1"> 111 </PMID><Article><ArticleTitle>Tumour &amp; <i>β</i>-cells'
    '</ArticleTitle></Article><CommentsCorrectionsList><CommentsCorrections RefType="Cites">'
    "<PMID>999</PMID></CommentsCorrections></CommentsCorrectionsList></MedlineCitation>\n"
    "</PubmedArticle>"
)
BOOK = "<PubmedBookArticle><BookDocument><PMID>222</PMID></BookDocument></PubmedBookArticle>"
SET = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
    '"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n'
    f"<PubmedArticleSet>\n{ARTICLE}\n{BOOK}\n"
    "<DeleteCitation><PMID>333</PMID></DeleteCitation>\n</PubmedArticleSet>\n"
).encode()


def test_each_article_comes_back_exactly_as_written_under_its_own_pmid() -> None:
    assert split_article_xml(SET) == {"111": ARTICLE, "222": BOOK}


def test_a_pmid_cited_inside_an_article_does_not_name_it() -> None:
    assert "999" not in split_article_xml(SET)


@pytest.mark.parametrize(
    "declaration",
    ['<!ENTITY boom "boom">', '<!ENTITY leak SYSTEM "http://attacker.test/x">'],
)
def test_a_set_declaring_entities_is_refused(declaration: str) -> None:
    xml = f"<!DOCTYPE PubmedArticleSet [{declaration}]><PubmedArticleSet/>".encode()
    with pytest.raises(EntrezResponseError, match="entities"):
        split_article_xml(xml)


def test_an_unreadable_set_is_the_ports_response_error() -> None:
    with pytest.raises(EntrezResponseError, match="unreadable"):
        split_article_xml(b"<PubmedArticleSet><PubmedArticle>")


def test_the_cache_splitter_keeps_the_same_articles_and_lists_deleted_ones() -> None:
    articles, deleted = split_article_set(SET)
    assert sorted(articles) == ["111", "222"]
    assert deleted == ["333"]


def test_the_client_answers_the_articles_of_an_efetch_by_pmid() -> None:
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, content=SET)

    settings = EntrezSettings(base_url="http://ncbi.test", max_retries=0)
    client = HttpEntrezClient(
        settings, limiter=RateLimiter(1000), transport=httpx.MockTransport(answer)
    )

    async def scenario() -> dict[str, str]:
        try:
            return await client.efetch_xml_articles(["111", "222", "444"])
        finally:
            await client.aclose()

    pieces = asyncio.run(scenario())
    assert pieces == {"111": ARTICLE, "222": BOOK}
    assert sent[0].url.params["id"] == "111,222,444"

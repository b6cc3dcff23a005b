"""`pubmed_convert_ids` and `pubmed_lookup_citation` over both transports: `biomcp serve`
(stdio) and `biomcp serve-http` (Streamable HTTP) as child processes, on the fake E-utilities.

The corpus is SYNTHETIC: `generate_articles` plus one made-up article (PMID 39900011,
PMC9900011, DOI 10.5555/synthetic.lookup) carrying every piece a citation lookup uses. The
fake's converter and ECitMatch answers are SYNTHETIC too, written after NCBI's documented
formats.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from tests.support.servers import exercise_over_http, exercise_over_stdio, server_env

pytestmark = pytest.mark.e2e

API_KEY = "e2e-lookup-key-not-secret"
ARTICLE = b"""<PubmedArticleSet><PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM">
<PMID Version="1">39900011</PMID><Article PubModel="Print"><Journal>
<ISSN IssnType="Print">0000-0001</ISSN><JournalIssue CitedMedium="Print"><Volume>12</Volume>
<PubDate><Year>2022</Year><Month>Mar</Month></PubDate></JournalIssue>
<Title>Synthetic Lookup Journal</Title><ISOAbbreviation>Synth Lookup J</ISOAbbreviation>
</Journal><ArticleTitle>A synthetic record for identifier lookups.</ArticleTitle>
<Pagination><MedlinePgn>101-109</MedlinePgn></Pagination><AuthorList CompleteYN="Y">
<Author ValidYN="Y"><LastName>Roe</LastName><ForeName>Rita</ForeName><Initials>R</Initials>
</Author></AuthorList><Language>eng</Language><PublicationTypeList>
<PublicationType UI="D016428">Journal Article</PublicationType></PublicationTypeList>
</Article><MedlineJournalInfo><MedlineTA>Synth Lookup J</MedlineTA></MedlineJournalInfo>
</MedlineCitation><PubmedData><History><PubMedPubDate PubStatus="entrez"><Year>2022</Year>
<Month>3</Month><Day>1</Day></PubMedPubDate></History><ArticleIdList>
<ArticleId IdType="pubmed">39900011</ArticleId><ArticleId IdType="pmc">PMC9900011</ArticleId>
<ArticleId IdType="doi">10.5555/synthetic.lookup</ArticleId></ArticleIdList></PubmedData>
</PubmedArticle></PubmedArticleSet>"""
REFERENCE = {"journal": "Synth Lookup J", "year": "2022", "volume": "12", "firstPage": "101",
             "firstAuthor": "Roe R"}  # fmt: skip


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    today = date.today()
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(5, start=today - timedelta(days=10), end=today, seed=18), ARTICLE
    )
    with FakeEutilsServer(corpus) as server:
        yield server


def _env(tmp_path: Path, fake: FakeEutilsServer) -> dict[str, str]:
    return server_env(
        tmp_path / "data",
        fake.base_url,
        NCBI_IDCONV_BASE_URL=f"{fake.base_url}/tools/idconv/api/v1/articles/",
        NCBI_API_KEY=API_KEY,
    )


async def _structured(client: Client, name: str, arguments: dict[str, Any]) -> Any:
    result = await client.call_tool(name, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert API_KEY not in text
    assert not result.is_error, text
    assert json.loads(text) == result.structured_content
    return result.structured_content


async def _exercise(client: Client) -> None:
    names = {tool.name for tool in (await client.list_tools()).tools}
    assert {"pubmed_convert_ids", "pubmed_lookup_citation"} <= names
    converted = await _structured(
        client, "pubmed_convert_ids", {"ids": ["39900011", "doi:10.5555/SYNTHETIC.lookup"]}
    )
    assert [(r["status"], r["pmcid"]) for r in converted["records"]] == [
        ("found", "PMC9900011"),
        ("found", "PMC9900011"),
    ]
    looked = await _structured(client, "pubmed_lookup_citation", {"references": [REFERENCE]})
    (result,) = looked["results"]
    assert (result["status"], result["pmid"]) == ("matched", "39900011")
    invalid = await client.call_tool("pubmed_convert_ids", {"ids": ["nonsense"]})
    assert invalid.is_error
    assert json.loads(invalid.content[0].text)["error"]["code"] == "VALIDATION"  # type: ignore[union-attr]


def test_both_tools_answer_over_stdio(tmp_path: Path, fake: FakeEutilsServer) -> None:
    exercise_over_stdio(_env(tmp_path, fake), tmp_path, _exercise)
    endpoints = [entry["endpoint"] for entry in fake.log]
    assert endpoints.count("idconv") >= 2
    assert "ecitmatch" in endpoints


def test_both_tools_answer_over_streamable_http(tmp_path: Path, fake: FakeEutilsServer) -> None:
    exercise_over_http(_env(tmp_path, fake), tmp_path, _exercise)

"""The live PubMed tools and resources (spec 04) through an in-process MCP client.

The server is the one `biomcp serve` builds, on the fake E-utilities over real HTTP, serving
real PubMed records from ../shared/data/eutils (the module is skipped when that folder is
absent). Expected values were read from the XML files themselves: a collective author
(34843274), structured abstracts (29768149, 27797938, 23657305), inline markup (37167981,
27797938), a MedlineDate (23657305), abbreviated pages (24084238) and 22 authors (27797938).
Every answer is validated against the tool's declared output schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from lxml import etree
from mcp import Client
from mcp.shared.exceptions import MCPError

from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.mcp.tools.live.schemas import LIVE_INPUTS, LIVE_OUTPUTS, PORTABLE_NAMES
from biomcp.entrypoints.services import Services
from biomcp.entrypoints.settings import Settings
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, article_extras, to_medline
from tests.conftest import shared_data_path
from tests.support.live_tools import API_KEY, FILES, fails, ok, requests
from tests.support.mcp_inprocess import serve, test_settings
from tests.support.servers import clean_fake  # noqa: F401 - autouse: no faults, empty log

pytestmark = pytest.mark.integration

COLLECTIVE = "34843274"
STRUCTURED = "29768149"
INLINE = "37167981"
MANY_AUTHORS = "27797938"
MEDLINE_DATE = "23657305"
SHORT_PAGES = "24084238"
UNKNOWN = "99999999"
RELATIONS = {
    "pubmed_pubmed": {
        STRUCTURED: [[STRUCTURED, 2_147_483_647], [MANY_AUTHORS, 31_000_000],
                     [UNKNOWN, 30_000_000], [COLLECTIVE, 12_000_000]],
    },
    "pubmed_pubmed_citedin": {STRUCTURED: [COLLECTIVE, INLINE]},
    "pubmed_pubmed_refs": {COLLECTIVE: [STRUCTURED, MANY_AUTHORS, MEDLINE_DATE]},
}  # fmt: skip
TOOLS = tuple(PORTABLE_NAMES.values())


# --- fixtures --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    folder = shared_data_path("eutils")
    corpus = FakeCorpus.from_paths([folder / name for name in FILES])
    with FakeEutilsServer(corpus, relations=RELATIONS) as server:
        yield server


def _settings(tmp_path: Path, fake: FakeEutilsServer, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"ncbi_api_key": API_KEY, "ncbi_admin_email": "ops@example.org"}
    return test_settings(tmp_path / "data", fake.base_url, **{**values, **overrides})


async def still_serving(client: Client) -> None:
    answer = await ok(client, "pubmed_fetch_article_details", {"pmids": [COLLECTIVE]})
    assert [a["pmid"] for a in answer["articles"]] == [COLLECTIVE]


# --- listing ---------------------------------------------------------------------------------


def test_the_three_tools_are_listed_read_only_with_their_schemas(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        for spec_name, portable in PORTABLE_NAMES.items():
            tool = listed[portable]
            assert tool.input_schema == LIVE_INPUTS[spec_name]
            assert tool.output_schema == LIVE_OUTPUTS[spec_name]
            Draft202012Validator.check_schema(tool.input_schema)
            Draft202012Validator.check_schema(tool.output_schema)
            assert tool.input_schema["additionalProperties"] is False
            assert tool.description
            assert tool.annotations is not None
            assert tool.annotations.read_only_hint is True
            assert tool.annotations.open_world_hint is True
        search = listed["pubmed_search_articles"].input_schema["properties"]
        assert search["maxResults"] == {
            "type": "integer",
            "exclusiveMinimum": 0,
            "maximum": 1000,
            "default": 20,
            "description": "Max results per query. ESearch's retmax is used.",
        }
        assert search["dateRange"]["properties"]["dateType"]["default"] == "pdat"
        styles = listed["pubmed_article_relationships"].input_schema["properties"]
        assert styles["citationStyles"]["items"]["enum"][-1] == "vancouver_string"
        resources = {str(r.uri) for r in (await client.list_resources()).resources}
        assert {"pubmed-connect://info", "pubmed-connect://stats/pubmed"} <= resources

    serve(_settings(tmp_path, fake), body)


def test_the_spec_names_setting_exposes_the_specs_tool_names(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert set(PORTABLE_NAMES) <= names
        assert not set(TOOLS) & names
        result = await client.call_tool("fetchArticleDetails", {"pmids": [INLINE]})
        assert not result.is_error

    serve(_settings(tmp_path, fake, biomcp_tool_names="spec"), body)


# --- searchPubMedArticles --------------------------------------------------------------------


def test_search_returns_pmids_brief_summaries_and_the_urls_without_the_key(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(
            client,
            "pubmed_search_articles",
            {
                "queryTerm": "asthma[mh] OR depression[mh] OR pancreatic",
                "sortBy": "pub_date",
                "fetchBriefSummaries": 2,
            },
        )
        assert answer["searchParameters"] == {
            "queryTerm": "asthma[mh] OR depression[mh] OR pancreatic",
            "maxResults": 20,
            "sortBy": "pub_date",
            "fetchBriefSummaries": 2,
        }
        assert answer["effectiveESearchTerm"] == "asthma[mh] OR depression[mh] OR pancreatic"
        assert answer["pmids"] == [COLLECTIVE, STRUCTURED, MANY_AUTHORS]  # newest first
        assert answer["totalFound"] == answer["retrievedPmidCount"] == 3
        assert answer["briefSummaries"] == [
            {
                "pmid": COLLECTIVE,
                "title": "Summary of the clinical practice guideline for the treatment of "
                "depression across three age cohorts.",
                "authors": "Guideline Development Panel for the Treatment of Depressive Disorders",
                "source": "Am Psychol. 2022 Sep",
                "pubDate": "2022-09",
                "epubDate": "2021-11-29",
                "retracted": False,
            },
            {
                "pmid": STRUCTURED,
                "title": "Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma.",
                "authors": "O'Byrne PM, FitzGerald JM, Bateman ED, et al.",
                "source": "N Engl J Med. 2018 May 17",
                "pubDate": "2018-05-17",
                "epubDate": None,
                "retracted": False,
            },
        ]
        assert "api_key" not in answer["eSearchUrl"]
        assert answer["eSearchUrl"].startswith(f"{fake.base_url}/esearch.fcgi?db=pubmed&term=")
        assert "usehistory=y" in answer["eSearchUrl"]
        assert "sort=pub_date" in answer["eSearchUrl"]
        assert "version=2.0" in answer["eSummaryUrl"]
        assert "WebEnv=MCID_" in answer["eSummaryUrl"]
        assert "api_key" not in answer["eSummaryUrl"]
        [search] = requests(fake, "esearch")
        [summary] = requests(fake, "esummary")
        assert search["params"]["usehistory"] == "y"
        assert search["has_api_key"] is True
        assert summary["params"]["version"] == "2.0"
        assert summary["params"]["WebEnv"].startswith("MCID_")
        assert summary["params"]["retmax"] == "2"

    serve(_settings(tmp_path, fake), body)


def test_date_range_and_publication_types_are_folded_into_the_term(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(
            client,
            "pubmed_search_articles",
            {
                "queryTerm": "humans[mh]",
                "maxResults": 10,
                "dateRange": {"minDate": "2017/06", "maxDate": "2022"},
                "filterByPublicationTypes": ["Journal Article", "Review"],
            },
        )
        assert answer["effectiveESearchTerm"] == (
            'humans[mh] AND (2017/06:2022[pdat]) AND ("Journal Article"[Publication Type] '
            'OR "Review"[Publication Type])'
        )
        assert answer["searchParameters"]["dateRange"] == {
            "minDate": "2017/06",
            "maxDate": "2022",
            "dateType": "pdat",
        }
        assert set(answer["pmids"]) == {COLLECTIVE, STRUCTURED, MANY_AUTHORS}
        assert answer["briefSummaries"] == []
        assert answer["eSummaryUrl"] is None
        assert requests(fake, "esummary") == []  # no summaries asked, none fetched
        assert "usehistory" not in requests(fake, "esearch")[0]["params"]

        nothing = await ok(
            client, "pubmed_search_articles", {"queryTerm": "humans[mh] AND 1990[pdat]"}
        )
        assert nothing["totalFound"] == 0
        assert nothing["pmids"] == []  # PubMed read the query and found nothing: no error

    serve(_settings(tmp_path, fake), body)


def test_a_publication_type_pubmed_does_not_know_is_refused_or_named_never_dropped(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    # PubMed leaves a type it finds nowhere out of the term: alone, the search would come
    # back unfiltered under a filter the agent believes in.
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        reviews = await ok(
            client,
            "pubmed_search_articles",
            {"queryTerm": "humans[mh]", "filterByPublicationTypes": ["Review"]},
        )
        assert reviews["totalFound"] > 0
        unfiltered = await ok(client, "pubmed_search_articles", {"queryTerm": "humans[mh]"})
        assert reviews["totalFound"] < unfiltered["totalFound"]  # the filter filters

        answer = await fails(
            client,
            "pubmed_search_articles",
            {
                "queryTerm": "humans[mh]",
                "filterByPublicationTypes": ["Randomised  Controlled Trial"],
            },
            "VALIDATION",
        )
        assert "no publication type 'Randomised Controlled Trial'" in answer["error"]["message"]
        assert answer["error"]["details"]["field"] == "filterByPublicationTypes"

        mixed = await ok(
            client,
            "pubmed_search_articles",
            {
                "queryTerm": "humans[mh]",
                "filterByPublicationTypes": ["Review", "Randomised Controlled Trial"],
            },
        )
        assert mixed["pmids"] == reviews["pmids"]
        assert any(
            "no publication type 'Randomised Controlled Trial'" in w for w in mixed["warnings"]
        )
        await still_serving(client)

    serve(_settings(tmp_path, fake), body)


def test_an_esearch_errorlist_is_an_error_when_nothing_was_found_else_a_warning(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await fails(
            client, "pubmed_search_articles", {"queryTerm": "zzqxnotaword"}, "ENTREZ"
        )
        assert "PhraseNotFound" in answer["error"]["message"]
        assert "zzqxnotaword" in answer["error"]["message"]
        partial = await ok(
            client, "pubmed_search_articles", {"queryTerm": "asthma[mh] OR zzqxnotaword"}
        )
        assert partial["pmids"] == [STRUCTURED]
        assert any("PhraseNotFound" in w for w in partial["warnings"])
        await still_serving(client)

    serve(_settings(tmp_path, fake), body)


@pytest.mark.parametrize(
    "arguments",
    [
        {"queryTerm": "ab"},
        {"queryTerm": "asthma", "maxResults": 0},
        {"queryTerm": "asthma", "maxResults": 1001},
        {"queryTerm": "asthma", "sortBy": "title"},
        {"queryTerm": "asthma", "fetchBriefSummaries": 101},
        {"queryTerm": "asthma", "dateRange": {"minDate": "2020-01-01"}},
        {"queryTerm": "asthma", "dateRange": {"minDate": "2021", "maxDate": "2020"}},
        {"queryTerm": "asthma", "dateRange": {"dateType": "crdt"}},
        {"queryTerm": "asthma\x00 OR copd"},
        {"queryTerm": "(asthma OR copd"},
        {"queryTerm": "asthma " * 700},
        {"queryTerm": "asthma", "filterByPublicationTypes": ['Review"[pt]']},
        {"queryTerm": "asthma", "extra": True},
    ],
)
def test_bad_search_arguments_are_validation_errors(
    tmp_path: Path, fake: FakeEutilsServer, arguments: dict[str, Any]
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        await fails(client, "pubmed_search_articles", arguments, "VALIDATION")
        assert requests(fake, "esearch") == []  # refused before NCBI was asked

    serve(_settings(tmp_path, fake), body)


# --- fetchArticleDetails ---------------------------------------------------------------------

EXPECTED_ARTICLES: dict[str, dict[str, Any]] = {
    COLLECTIVE: {
        "title": "Summary of the clinical practice guideline for the treatment of depression "
        "across three age cohorts.",
        "authors": [
            {
                "lastName": None,
                "firstName": None,
                "initials": None,
                "affiliation": None,
                "collectiveName": "Guideline Development Panel for the Treatment of "
                "Depressive Disorders",
            }
        ],
        "journalInfo": {
            "title": "The American psychologist",
            "isoAbbreviation": "Am Psychol",
            "volume": "77",
            "issue": "6",
            "pages": "770-780",
            "publicationDate": {
                "year": 2022,
                "month": "Sep",
                "day": None,
                "medlineDate": "2022 Sep",
                "isoDate": "2022-09",
            },
        },
        "publicationTypes": ["Journal Article", "Research Support, Non-U.S. Gov't"],
        "keywords": [],
        "doi": "10.1037/amp0000904",
        "pmcid": None,
        "mesh_count": 8,
        "mesh_sample": {
            "descriptorName": "Depression",
            "qualifierName": "therapy",
            "isMajorTopic": True,
            "ui": "D003863",
            "qualifiers": [{"qualifierName": "therapy", "ui": "Q000628", "isMajorTopic": False}],
        },
        "abstract_start": "The American Psychological Association (APA) developed this clinical",
        "abstract_end": "(PsycInfo Database Record (c) 2022 APA, all rights reserved).",
        "sections": None,
    },
    STRUCTURED: {
        "title": "Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma.",
        "author_count": 10,
        "first_author": {
            "lastName": "O'Byrne",
            "firstName": "Paul M",
            "initials": "PM",
            "affiliation_start": "From the Firestone Institute for Respiratory Health",
        },
        "journalInfo": {
            "title": "The New England journal of medicine",
            "isoAbbreviation": "N Engl J Med",
            "volume": "378",
            "issue": "20",
            "pages": "1865-1876",
            "publicationDate": {
                "year": 2018,
                "month": "May",
                "day": 17,
                "medlineDate": "2018 May 17",
                "isoDate": "2018-05-17",
            },
        },
        "publicationTypes": [
            "Clinical Trial, Phase III",
            "Comparative Study",
            "Journal Article",
            "Multicenter Study",
            "Randomized Controlled Trial",
            "Research Support, Non-U.S. Gov't",
        ],
        "keywords": [],
        "doi": "10.1056/NEJMoa1715274",
        "pmcid": None,
        "mesh_count": 23,
        "mesh_sample": {
            "descriptorName": "Bronchodilator Agents",
            "qualifierName": "administration & dosage, adverse effects",
            "isMajorTopic": True,
            "ui": "D001993",
            "qualifiers": [
                {"qualifierName": "administration & dosage", "ui": "Q000008", "isMajorTopic": True},
                {"qualifierName": "adverse effects", "ui": "Q000009", "isMajorTopic": False},
            ],
        },
        "abstract_start": "BACKGROUND: In patients with mild asthma, as-needed use of",
        "abstract_end": None,
        "sections": ["BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS"],
    },
    INLINE: {
        "title": "Monte Carlo simulation of micro-x-ray fluorescence (μ-XRF) based detection of "
        "immunomagnetically labeled tumor cells.",
        "authors": [
            {
                "lastName": "Zambianchi",
                "firstName": "P",
                "initials": "P",
                "affiliation": "Federal University of Technology - Paraná, Curitiba, Brazil.",
                "orcid": "0000-0002-3105-7515",
            },
            {
                "lastName": "Zambianchi",
                "firstName": "J K",
                "initials": "JK",
                "affiliation": "Federal University of Technology - Paraná, Curitiba, Brazil.",
                "orcid": "0000-0002-9987-0959",
            },
        ],
        "journalInfo": {
            "title": "Physics in medicine and biology",
            "isoAbbreviation": "Phys Med Biol",
            "volume": "68",
            "issue": "11",
            "pages": None,
            "publicationDate": {
                "year": 2023,
                "month": "May",
                "day": 30,
                "medlineDate": "2023 May 30",
                "isoDate": "2023-05-30",
            },
        },
        "publicationTypes": ["Journal Article"],
        "keywords": [
            "MCNP",
            "Monte Carlo simulations",
            "magnetic nanoparticles (MNPs)",
            "micro-x-ray fluorescence (μ-XRF)",
            "tumor cells",
        ],
        "doi": "10.1088/1361-6560/acd48e",
        "pmcid": None,
        "mesh_count": 7,
        "mesh_sample": {
            "descriptorName": "Metal Nanoparticles",
            "qualifierName": None,
            "isMajorTopic": True,
            "ui": "D053768",
        },
        "abstract_start": "Objective. Circulating tumor cells (CTCs)",
        "abstract_end": "has the potential to be innovative in the field of liquid biopsy.",
        "abstract_contains": ["Fe3O4@SiO2", "(μ-XRF).Approach", "20μm cancer cell lines"],
        "sections": None,
    },
    MEDLINE_DATE: {
        "title": "Hfe mutations and iron overload in patients with alcoholic liver disease.",
        "author_count": 6,
        "journalInfo": {
            "title": "Arquivos de gastroenterologia",
            "isoAbbreviation": "Arq Gastroenterol",
            "volume": "50",
            "issue": "1",
            "pages": "35-41",
            "publicationDate": {
                "year": 2013,
                "month": None,  # "Jan-Mar" names no one month
                "day": None,
                "medlineDate": "2013 Jan-Mar",
                "isoDate": "2013",
            },
        },
        "doi": "10.1590/s0004-28032013000100008",
        "sections": ["CONTEXT", "OBJECTIVES", "METHODS", "RESULTS", "CONCLUSION"],
        "categories": ["BACKGROUND", "OBJECTIVE", "METHODS", "RESULTS", "CONCLUSIONS"],
    },
    SHORT_PAGES: {
        "title": "Challenges in the miRNA research.",
        "journalInfo": {
            "title": "International journal of bioinformatics research and applications",
            "isoAbbreviation": "Int J Bioinform Res Appl",
            "volume": "9",
            "issue": "6",
            "pages": "576-583",
            "publicationDate": {
                "year": 2013,
                "month": None,
                "day": None,
                "medlineDate": "2013",
                "isoDate": "2013",
            },
        },
        "keywords": [
            "STS",
            "bioinformatics",
            "hypothetical proteins",
            "mRNAs",
            "miRNA development",
            "miRNA evolution",
            "miRNAs",
            "microRNA",
            "target prediction",
        ],
    },
}


def _check_article(article: dict[str, Any], expected: dict[str, Any]) -> None:
    for field in ("title", "journalInfo", "publicationTypes", "keywords", "doi", "pmcid"):
        if field in expected:
            assert article[field] == expected[field], field
    if "authors" in expected:
        assert article["authors"] == expected["authors"]
    if "author_count" in expected:
        assert len(article["authors"]) == expected["author_count"]
    if "first_author" in expected:
        first = dict(article["authors"][0])
        start = expected["first_author"]["affiliation_start"]
        assert first.pop("affiliation").startswith(start)
        assert first == {k: v for k, v in expected["first_author"].items() if k in first}
    text = article["abstractText"] or ""
    assert "<i>" not in text  # inline markup flattened
    assert "</" not in text
    assert "  " not in text
    if expected.get("abstract_start"):
        assert text.startswith(expected["abstract_start"])
    if expected.get("abstract_end"):
        assert text.endswith(expected["abstract_end"])
    for fragment in expected.get("abstract_contains", ()):
        assert fragment in text
    if "sections" in expected:
        if expected["sections"] is None:
            assert "abstractSections" not in article
        else:
            sections = article["abstractSections"]
            assert [s["label"] for s in sections] == expected["sections"]
            for section in sections:
                assert f"{section['label']}: {section['text']}" in text
    if "categories" in expected:
        assert [s["nlmCategory"] for s in article["abstractSections"]] == expected["categories"]
    if "mesh_count" in expected:
        assert len(article["meshTerms"]) == expected["mesh_count"]
        sample = expected["mesh_sample"]
        assert sample in article["meshTerms"]


def test_abstract_plus_parses_real_records_field_by_field(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    wanted = [COLLECTIVE, STRUCTURED, INLINE, "1", MEDLINE_DATE, SHORT_PAGES, UNKNOWN]

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(client, "pubmed_fetch_article_details", {"pmids": wanted})
        assert answer["requestedPmids"] == wanted
        assert answer["notFoundPmids"] == ["1", UNKNOWN]
        assert [a["pmid"] for a in answer["articles"]] == [
            COLLECTIVE,
            STRUCTURED,
            INLINE,
            MEDLINE_DATE,
            SHORT_PAGES,
        ]
        by_pmid = {a["pmid"]: a for a in answer["articles"]}
        for pmid, expected in EXPECTED_ARTICLES.items():
            _check_article(by_pmid[pmid], expected)
            assert "grantList" not in by_pmid[pmid]  # includeGrantInfo defaults to false
        details = answer["eFetchDetails"]
        assert details["requestMethod"] == "GET"
        [url] = details["urls"]
        assert url.startswith(f"{fake.base_url}/efetch.fcgi?db=pubmed&id=34843274%2C29768149")
        assert "retmode=xml" in url
        assert "api_key" not in url
        [request] = requests(fake, "efetch")
        assert request["params"]["id"].split(",") == wanted
        assert request["has_api_key"] is True

    serve(_settings(tmp_path, fake), body)


def test_mesh_terms_and_grants_follow_their_switches(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(
            client,
            "pubmed_fetch_article_details",
            {"pmids": [MANY_AUTHORS], "includeMeshTerms": False, "includeGrantInfo": True},
        )
        [article] = answer["articles"]
        assert "meshTerms" not in article
        assert len(article["grantList"]) == 35
        assert article["grantList"][0] == {
            "grantId": "KL2 TR001100",
            "agency": "NCATS NIH HHS",
            "country": "United States",
            "acronym": "TR",
        }
        assert article["title"] == (
            "Leucocyte telomere length, genetic variants at the TERT gene region and risk of "
            "pancreatic cancer."
        )
        assert "95% CI 1.07 to 2.78; ptrend=0.048)" in article["abstractText"]  # <sub>
        assert "disequilibrium r2<0.25)" in article["abstractText"]  # <sup>
        assert len(article["authors"]) == 22
        assert article["pmcid"] == "PMC5442267"
        assert article["keywords"] == ["PANCREATIC CANCER"]

    serve(_settings(tmp_path, fake), body)


def test_full_xml_is_each_pubmedarticle_as_ncbi_sent_it(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    def canonical(xml: str | bytes) -> bytes:
        data = xml.encode() if isinstance(xml, str) else xml
        return etree.tostring(etree.fromstring(data), method="c14n")

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(
            client,
            "pubmed_fetch_article_details",
            {"pmids": [INLINE, UNKNOWN, MANY_AUTHORS], "detailLevel": "full_xml"},
        )
        assert answer["notFoundPmids"] == [UNKNOWN]
        assert [a["pmid"] for a in answer["articles"]] == [INLINE, MANY_AUTHORS]
        for article in answer["articles"]:
            xml = article["fullXml"]
            assert xml.startswith("<PubmedArticle>")
            assert xml.endswith("</PubmedArticle>")
            raw = fake.corpus.raw(article["pmid"])
            assert raw is not None
            assert canonical(xml) == canonical(raw)
        inline = answer["articles"][0]["fullXml"]
        assert "<i>μ</i>-XRF" in inline  # inline markup kept, unlike abstract_plus
        assert "Fe<sub>3</sub>O<sub>4</sub>" in inline

    serve(_settings(tmp_path, fake), body)


def test_medline_text_is_the_medline_record_of_each_pmid(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(
            client,
            "pubmed_fetch_article_details",
            {"pmids": [COLLECTIVE, "1", STRUCTURED], "detailLevel": "medline_text"},
        )
        assert answer["notFoundPmids"] == ["1"]
        for article in answer["articles"]:
            entry = fake.corpus.get(article["pmid"])
            assert entry is not None
            assert entry.record is not None
            expected = to_medline(entry.record, article_extras(entry.raw)).strip()
            assert article["medlineText"] == expected
        collective = answer["articles"][0]["medlineText"].splitlines()
        assert collective[0] == f"PMID- {COLLECTIVE}"
        assert "CN  - Guideline Development Panel for the Treatment of Depressive Disorders" in (
            collective
        )
        assert "MH  - *Depression/therapy" in collective
        [request] = requests(fake, "efetch")
        assert request["params"]["rettype"] == "medline"
        assert request["params"]["retmode"] == "text"
        assert "rettype=medline" in answer["eFetchDetails"]["urls"][0]

    serve(_settings(tmp_path, fake), body)


def test_citation_data_is_the_minimal_parsed_record(tmp_path: Path, fake: FakeEutilsServer) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(
            client,
            "pubmed_fetch_article_details",
            {"pmids": [COLLECTIVE, INLINE], "detailLevel": "citation_data"},
        )
        collective, inline = answer["articles"]
        assert set(collective) == {
            "pmid", "title", "authors", "journalInfo", "publicationTypes", "doi", "pmcid",
            "pubmedUrl", "meshTerms",
        }  # fmt: skip
        assert collective["authors"] == [
            {
                "lastName": None,
                "firstName": None,
                "initials": None,
                "collectiveName": "Guideline Development Panel for the Treatment of "
                "Depressive Disorders",
            }
        ]
        assert collective["journalInfo"] == EXPECTED_ARTICLES[COLLECTIVE]["journalInfo"]
        assert collective["pubmedUrl"] == f"https://pubmed.ncbi.nlm.nih.gov/{COLLECTIVE}/"
        assert inline["authors"][1] == {
            "lastName": "Zambianchi",
            "firstName": "J K",
            "initials": "JK",
            "orcid": "0000-0002-9987-0959",
        }
        assert inline["doi"] == "10.1088/1361-6560/acd48e"
        no_mesh = await ok(
            client,
            "pubmed_fetch_article_details",
            {"pmids": [INLINE], "detailLevel": "citation_data", "includeMeshTerms": False},
        )
        assert "meshTerms" not in no_mesh["articles"][0]

    serve(_settings(tmp_path, fake), body)


def test_a_second_identical_fetch_makes_no_request_to_ncbi(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        arguments = {"pmids": [STRUCTURED, INLINE]}
        first = await ok(client, "pubmed_fetch_article_details", arguments)
        assert len(requests(fake, "efetch")) == 1
        second = await ok(client, "pubmed_fetch_article_details", arguments)
        assert second == first
        assert len(requests(fake, "efetch")) == 1  # answered from the cache
        raw = await ok(
            client,
            "pubmed_fetch_article_details",
            {"pmids": [INLINE, STRUCTURED], "detailLevel": "full_xml"},
        )
        assert len(raw["articles"]) == 2
        cited = await ok(
            client,
            "pubmed_article_relationships",
            {"sourcePmid": STRUCTURED, "relationshipType": "citation_formats"},
        )
        assert cited["citations"]["ris"].startswith("TY  - JOUR")
        assert len(requests(fake, "efetch")) == 1  # the same articles, in every form
        mixed = await ok(
            client, "pubmed_fetch_article_details", {"pmids": [INLINE, COLLECTIVE, UNKNOWN]}
        )
        assert mixed["notFoundPmids"] == [UNKNOWN]
        efetches = requests(fake, "efetch")
        assert len(efetches) == 2
        assert efetches[-1]["params"]["id"] == f"{COLLECTIVE},{UNKNOWN}"  # only what is new
        await ok(client, "pubmed_fetch_article_details", {"pmids": [INLINE, COLLECTIVE, UNKNOWN]})
        assert requests(fake, "efetch")[-1]["params"]["id"] == UNKNOWN  # misses are not cached
        assert (tmp_path / "data" / "ncbi-cache.sqlite3").exists()

    serve(_settings(tmp_path, fake), body)


def test_with_the_cache_off_every_fetch_asks_ncbi(tmp_path: Path, fake: FakeEutilsServer) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        for _ in range(2):
            await ok(client, "pubmed_fetch_article_details", {"pmids": [INLINE]})
        assert len(requests(fake, "efetch")) == 2
        assert not (tmp_path / "data" / "ncbi-cache.sqlite3").exists()

    serve(_settings(tmp_path, fake, biomcp_ncbi_cache_ttl_s=0), body)


@pytest.mark.parametrize(
    "arguments",
    [
        {"pmids": []},
        {"pmids": ["abc"]},
        {"pmids": ["12 34"]},
        {"pmids": ["0123"]},
        {"pmids": ["0"]},
        {"pmids": ["123456789012"]},
        {"pmids": [str(n) for n in range(1, 202)]},
        {"pmids": [INLINE], "detailLevel": "summary"},
        {"pmids": INLINE},
    ],
)
def test_invalid_pmids_are_validation_errors(
    tmp_path: Path, fake: FakeEutilsServer, arguments: dict[str, Any]
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        await fails(client, "pubmed_fetch_article_details", arguments, "VALIDATION")
        assert fake.log == []
        await still_serving(client)

    serve(_settings(tmp_path, fake), body)


# --- getArticleRelationships -----------------------------------------------------------------


def test_similar_articles_come_with_scores_titles_and_authors(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(
            client,
            "pubmed_article_relationships",
            {"sourcePmid": STRUCTURED, "maxRelatedResults": 2},
        )
        assert answer["sourcePmid"] == STRUCTURED
        assert answer["relationshipType"] == "pubmed_similar_articles"
        assert answer["relatedArticles"] == [
            {
                "pmid": MANY_AUTHORS,
                "title": "Leucocyte telomere length, genetic variants at the TERT gene region "
                "and risk of pancreatic cancer.",
                "authors": "Bao Y, Prescott J, Yuan C, et al.",
                "score": 1.0,  # the most similar link scores 1; the others relative to it
                "rawScore": 31_000_000,
                "linkUrl": f"https://pubmed.ncbi.nlm.nih.gov/{MANY_AUTHORS}/",
                "retracted": False,
            },
            {
                "pmid": UNKNOWN,  # linked, but PubMed has no summary for it
                "title": None,
                "authors": None,
                "score": round(30 / 31, 4),
                "rawScore": 30_000_000,
                "linkUrl": f"https://pubmed.ncbi.nlm.nih.gov/{UNKNOWN}/",
                "retracted": False,
            },
        ]
        assert answer["retrievedCount"] == 2
        assert answer["totalLinked"] == 3  # the source itself is not its own neighbour
        assert answer["citations"] == {}
        assert "cmd=neighbor_score" in answer["eLinkUrl"]
        assert "linkname=pubmed_pubmed&" in answer["eLinkUrl"]
        assert "api_key" not in answer["eLinkUrl"]
        [link] = requests(fake, "elink")
        assert link["params"]["cmd"] == "neighbor_score"
        assert link["params"]["id"] == STRUCTURED

    serve(_settings(tmp_path, fake), body)


def test_cited_in_and_references_use_their_link_names(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        cited = await ok(
            client,
            "pubmed_article_relationships",
            {"sourcePmid": STRUCTURED, "relationshipType": "pubmed_citedin"},
        )
        assert [(a["pmid"], a["score"]) for a in cited["relatedArticles"]] == [
            (COLLECTIVE, None),
            (INLINE, None),
        ]
        assert cited["relatedArticles"][0]["authors"] == (
            "Guideline Development Panel for the Treatment of Depressive Disorders"
        )
        assert cited["relatedArticles"][1]["authors"] == "Zambianchi P, Zambianchi JK"
        assert "linkname=pubmed_pubmed_citedin" in cited["eLinkUrl"]
        refs = await ok(
            client,
            "pubmed_article_relationships",
            {"sourcePmid": COLLECTIVE, "relationshipType": "pubmed_references"},
        )
        assert [a["pmid"] for a in refs["relatedArticles"]] == [
            STRUCTURED,
            MANY_AUTHORS,
            MEDLINE_DATE,
        ]
        assert refs["relatedArticles"][2]["title"] == (
            "Hfe mutations and iron overload in patients with alcoholic liver disease."
        )
        assert refs["retrievedCount"] == 3
        assert [e["params"]["linkname"] for e in requests(fake, "elink")] == [
            "pubmed_pubmed_citedin",
            "pubmed_pubmed_refs",
        ]
        assert [e["params"]["cmd"] for e in requests(fake, "elink")] == ["neighbor", "neighbor"]

    serve(_settings(tmp_path, fake), body)


def test_no_links_is_an_empty_list_and_an_unknown_pmid_is_not_found(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        empty = await ok(
            client,
            "pubmed_article_relationships",
            {"sourcePmid": INLINE, "relationshipType": "pubmed_citedin"},
        )
        assert empty["relatedArticles"] == []
        assert empty["retrievedCount"] == 0
        for kind in ("pubmed_similar_articles", "pubmed_citedin", "pubmed_references"):
            answer = await fails(
                client,
                "pubmed_article_relationships",
                {"sourcePmid": UNKNOWN, "relationshipType": kind},
                "NOT_FOUND",
            )
            assert answer["error"]["details"] == {"pmid": UNKNOWN}
        await fails(
            client,
            "pubmed_article_relationships",
            {"sourcePmid": UNKNOWN, "relationshipType": "citation_formats"},
            "NOT_FOUND",
        )
        await fails(client, "pubmed_article_relationships", {"sourcePmid": "12a"}, "VALIDATION")
        await fails(client, "pubmed_article_relationships", {"sourcePmid": "007"}, "VALIDATION")
        await fails(
            client,
            "pubmed_article_relationships",
            {"sourcePmid": INLINE, "maxRelatedResults": 51},
            "VALIDATION",
        )
        fake.faults.sequence(["503"] * 2, endpoint="elink")
        await fails(
            client,
            "pubmed_article_relationships",
            {"sourcePmid": STRUCTURED, "relationshipType": "pubmed_citedin"},
            "UPSTREAM",
        )  # NCBI failing is an error, never an empty list
        await still_serving(client)

    serve(_settings(tmp_path, fake, ncbi_max_retries=1), body)


ALL_STYLES = ["ris", "bibtex", "apa_string", "mla_string", "vancouver_string"]


def _cite(pmid: str, fake: FakeEutilsServer, tmp_path: Path) -> dict[str, str]:
    found: dict[str, str] = {}

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(
            client,
            "pubmed_article_relationships",
            {
                "sourcePmid": pmid,
                "relationshipType": "citation_formats",
                "citationStyles": ALL_STYLES,
            },
        )
        assert answer["relatedArticles"] == []
        assert answer["retrievedCount"] == 0
        assert answer["eLinkUrl"] is None
        assert set(answer["citations"]) == set(ALL_STYLES)
        found.update(answer["citations"])

    serve(_settings(tmp_path, fake), body)
    return found


def test_citations_of_22_authors_truncate_by_each_styles_rule(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    cites = _cite(MANY_AUTHORS, fake, tmp_path)
    apa = cites["apa_string"]
    # APA 7: 21 or more authors give the first 19, an ellipsis, then the final author.
    assert apa.startswith("Bao, Y., Prescott, J., Yuan, C.,")
    assert "Fuchs, C. S., . . . Wolpin, B. M. (2017)." in apa
    assert "De Vivo" not in apa
    assert "Amundadottir" not in apa
    assert apa.count(".,") == 19  # each listed author ends with "., "
    assert "*Gut*, *66*(6), 1116–1122." in apa
    assert apa.endswith("https://doi.org/10.1136/gutjnl-2016-312510")
    mla = cites["mla_string"]
    # MLA 9: title case, page ranges abbreviated
    assert mla.startswith(
        "Bao, Ying, et al. “Leucocyte Telomere Length, Genetic Variants at the TERT"
    )
    assert "*Gut*, vol. 66, no. 6, June 2017, pp. 1116–22, https://doi.org/" in mla
    vancouver = cites["vancouver_string"]
    assert vancouver.startswith(
        "Bao Y, Prescott J, Yuan C, Zhang M, Kraft P, Babic A, et al. Leucocyte telomere"
    )
    assert (
        "Gut. 2017 Jun;66(6):1116-22. doi: 10.1136/gutjnl-2016-312510. PMID: 27797938; "
        "PMCID: PMC5442267."  # as NLM's own samples end
    ) in vancouver
    assert "*" not in vancouver  # no italics markers in Vancouver
    bibtex = cites["bibtex"]
    assert bibtex.startswith("@article{Bao2017_27797938,")
    authors = next(line for line in bibtex.splitlines() if line.startswith("  author = "))
    assert authors.count(" and ") == 21
    assert "pages = {1116--1122}" in bibtex
    assert "doi = {10.1136/gutjnl-2016-312510}" in bibtex
    assert "pmcid = {PMC5442267}" in bibtex
    ris = cites["ris"].splitlines()
    assert ris[0] == "TY  - JOUR"
    assert ris[-1] == "ER  - "
    assert sum(line.startswith("AU  - ") for line in ris) == 22
    assert ris[1] == "AU  - Bao, Ying"
    assert "SP  - 1116" in ris
    assert "EP  - 1122" in ris
    assert "DO  - 10.1136/gutjnl-2016-312510" in ris


def test_citations_of_a_collective_author(tmp_path: Path, fake: FakeEutilsServer) -> None:
    cites = _cite(COLLECTIVE, fake, tmp_path)
    group = "Guideline Development Panel for the Treatment of Depressive Disorders"
    title = "Summary of the clinical practice guideline for the treatment of depression across "
    title += "three age cohorts"
    # APA and MLA: the journal's name in title case, not NLM's catalogue title
    assert cites["apa_string"] == (
        f"{group}. (2022). {title}. *American Psychologist*, *77*(6), 770–780. "
        "https://doi.org/10.1037/amp0000904"
    )
    mla_title = (
        "Summary of the Clinical Practice Guideline for the Treatment of Depression across "
        "Three Age Cohorts"  # MLA 9 keeps every preposition lower case
    )
    assert cites["mla_string"] == (
        f"{group}. “{mla_title}.” *American Psychologist*, vol. 77, no. 6, Sept. 2022, "
        "pp. 770–80, https://doi.org/10.1037/amp0000904."
    )
    assert cites["vancouver_string"] == (
        f"{group}. {title}. Am Psychol. 2022 Sep;77(6):770-80. doi: 10.1037/amp0000904. "
        "PMID: 34843274."
    )
    assert f"author = {{{{{group}}}}}" in cites["bibtex"]  # a group is braced, never split
    assert f"AU  - {group}" in cites["ris"].splitlines()


def test_citations_of_two_authors_and_inline_markup(tmp_path: Path, fake: FakeEutilsServer) -> None:
    cites = _cite(INLINE, fake, tmp_path)
    title = (
        "Monte Carlo simulation of micro-x-ray fluorescence (μ-XRF) based detection of "
        "immunomagnetically labeled tumor cells"
    )
    assert cites["apa_string"] == (
        f"Zambianchi, P., & Zambianchi, J. K. (2023). {title}. *Physics in Medicine and "
        "Biology*, *68*(11). https://doi.org/10.1088/1361-6560/acd48e"
    )
    assert cites["mla_string"].startswith(
        "Zambianchi, P., and J. K. Zambianchi. “Monte Carlo Simulation of Micro-X-Ray "
        "Fluorescence (μ-XRF) Based Detection of Immunomagnetically Labeled Tumor Cells.”"
    )
    assert cites["vancouver_string"] == (
        f"Zambianchi P, Zambianchi JK. {title}. Phys Med Biol. 2023 May 30;68(11). "
        "doi: 10.1088/1361-6560/acd48e. PMID: 37167981."
    )
    assert "<i>" not in "".join(cites.values())


def test_citations_expand_or_abbreviate_short_page_ranges(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    cites = _cite(SHORT_PAGES, fake, tmp_path)
    assert "*9*(6), 576–583." in cites["apa_string"]
    assert "2013;9(6):576-83." in cites["vancouver_string"]
    assert "pages = {576--583}" in cites["bibtex"]
    assert {"SP  - 576", "EP  - 583"} <= set(cites["ris"].splitlines())
    assert "pp. 576–83" in cites["mla_string"]  # MLA abbreviates the second number


def test_citation_styles_default_to_ris(tmp_path: Path, fake: FakeEutilsServer) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(
            client,
            "pubmed_article_relationships",
            {"sourcePmid": MEDLINE_DATE, "relationshipType": "citation_formats"},
        )
        assert list(answer["citations"]) == ["ris"]
        assert "AN  - 23657305" in answer["citations"]["ris"]
        assert "efetch.fcgi" in answer["eFetchUrl"]
        await fails(
            client,
            "pubmed_article_relationships",
            {"sourcePmid": MEDLINE_DATE, "relationshipType": "citation_formats",
             "citationStyles": ["chicago"]},
            "VALIDATION",
        )  # fmt: skip

    serve(_settings(tmp_path, fake), body)


# --- NCBI failing ----------------------------------------------------------------------------


def test_ncbi_failures_give_their_envelopes_and_the_server_keeps_answering(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    storm = [{"kind": "429", "retry_after": 0.01}] * 3

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        fake.faults.sequence(storm, endpoint="esearch")
        answer = await fails(
            client, "pubmed_search_articles", {"queryTerm": "asthma"}, "RATE_LIMIT"
        )
        assert answer["error"]["details"]["retry_after"] == pytest.approx(0.01)
        assert len(requests(fake, "esearch")) == 2  # the first try and one retry
        await still_serving(client)

        fake.faults.sequence([{"kind": "429", "retry_after": 0.01}], endpoint="esearch")
        recovered = await ok(client, "pubmed_search_articles", {"queryTerm": "asthma[mh]"})
        assert recovered["pmids"] == [STRUCTURED]  # one 429 is retried away

        fake.faults.sequence(["html"] * 2, endpoint="efetch")
        answer = await fails(
            client, "pubmed_fetch_article_details", {"pmids": [MANY_AUTHORS]}, "ENTREZ"
        )
        assert "HTML" in answer["error"]["message"]
        await still_serving(client)

        fake.faults.sequence(["503"] * 2, endpoint="esummary")
        await fails(
            client,
            "pubmed_search_articles",
            {"queryTerm": "asthma[mh]", "fetchBriefSummaries": 1},
            "UPSTREAM",
        )
        fake.faults.sequence(["ncbi_error"] * 2, endpoint="efetch")
        await fails(client, "pubmed_fetch_article_details", {"pmids": [MEDLINE_DATE]}, "UPSTREAM")
        await still_serving(client)
        info = json.loads((await client.read_resource("pubmed-connect://info")).contents[0].text)  # type: ignore[union-attr]
        assert info["operationalStatus"]["ncbiStatus"] == "Nominal"
        assert info["operationalStatus"]["retries"] >= 4

    serve(_settings(tmp_path, fake, ncbi_max_retries=1), body)


# --- resources -------------------------------------------------------------------------------


def test_the_info_resource_reports_compliance_status_and_the_corpus(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def read(client: Client) -> dict[str, Any]:
        result = await client.read_resource("pubmed-connect://info")
        content = result.contents[0]
        assert content.mime_type == "application/json"
        data: dict[str, Any] = json.loads(content.text)  # type: ignore[union-attr]
        return data

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        before = await read(client)
        assert before["serverName"] == "bio-mcp"
        assert before["contactEmail"] == "ops@example.org"
        assert before["mcpSpecVersion"]
        compliance = before["ncbiCompliance"]
        assert compliance["apiUsageStatus"] == "NCBI API Key in use"
        assert compliance["toolIdentifier"].startswith("bio-mcp/")
        assert compliance["targetRequestsPerSecond"] == 10
        assert "<10 requests/sec" in compliance["currentRateLimitAdherence"]
        assert before["supportedEutilities"] == [
            "ESearch",
            "EFetch",
            "ESummary",
            "ELink",
            "EInfo",
            "ESpell",
            "ECitMatch",
        ]
        status = before["operationalStatus"]
        assert status["lastNcbiConnectivityCheck"] is None
        assert status["ncbiStatus"].startswith("Unknown")
        assert status["internalQueueLength"] == 0
        assert before["corpus"] == {"records": 0, "chunks": 0, "queries": [], "index": "ok"}
        assert before["responseCache"]["enabled"] is True
        assert API_KEY not in json.dumps(before)

        synced = await ok_sync(client)
        assert synced["inserted"] == 1
        after = await read(client)
        assert after["operationalStatus"]["lastNcbiConnectivityCheck"].endswith("Z")
        assert after["operationalStatus"]["ncbiStatus"] == "Nominal"
        assert after["operationalStatus"]["requestsSent"] >= 2
        corpus = after["corpus"]
        assert corpus["records"] == 1
        assert corpus["chunks"] >= 1
        assert corpus["index"] == "ok"
        [query] = corpus["queries"]
        assert query["queryKey"] == "asthma_v1"
        assert query["lastEdat"].endswith("Z")
        assert query["lastSync"]["status"] == "succeeded"
        assert query["lastSync"]["term"] == "asthma[mh]"  # what a sync of the key takes again
        assert query["lastSync"]["inserted"] == 1
        assert query["pendingPmids"] == 0
        assert query["coversFrom"] is None  # the whole history
        assert (query["records"], query["recordsTracked"]) == (1, True)

        # A second key whose record EFetch does not return yet: one PMID pending for it.
        [pmid] = await services.metadata.document_pmids()
        fake.withhold([pmid])
        try:
            pending = await client.call_tool(
                "pubmed_sync_delta", {"query_key": "asthma_v2", "term": "asthma[mh]"}
            )
        finally:
            fake.withhold([])
        assert not pending.is_error, pending.content
        queries = {q["queryKey"]: q for q in (await read(client))["corpus"]["queries"]}
        assert (queries["asthma_v1"]["pendingPmids"], queries["asthma_v2"]["pendingPmids"]) == (
            0,
            1,
        )
        # The withheld record is the first key's only: the second holds none yet.
        assert (queries["asthma_v1"]["records"], queries["asthma_v2"]["records"]) == (1, 0)

    async def ok_sync(client: Client) -> Any:
        result = await client.call_tool(
            "pubmed_sync_delta", {"query_key": "asthma_v1", "term": "asthma[mh]"}
        )
        assert not result.is_error, result.content
        return json.loads(result.content[0].text)  # type: ignore[union-attr]

    serve(_settings(tmp_path, fake), body)


def test_the_info_resource_without_a_key_targets_three_requests_a_second(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        result = await client.read_resource("pubmed-connect://info")
        info = json.loads(result.contents[0].text)  # type: ignore[union-attr]
        assert info["ncbiCompliance"]["apiKeyInUse"] is False
        assert info["ncbiCompliance"]["targetRequestsPerSecond"] == 3
        assert "NCBI_API_KEY" in info["ncbiCompliance"]["apiUsageStatus"]

    serve(_settings(tmp_path, fake, ncbi_api_key=None), body)


def test_the_stats_resource_is_einfo_for_pubmed_and_cached(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        fake.faults.sequence(["503"] * 2, endpoint="einfo")
        with pytest.raises(MCPError) as raised:
            await client.read_resource("pubmed-connect://stats/pubmed")
        assert raised.value.data["error"]["code"] == "UPSTREAM"
        for _ in range(2):
            result = await client.read_resource("pubmed-connect://stats/pubmed")
            content = result.contents[0]
            assert content.mime_type == "application/json"
            stats = json.loads(content.text)  # type: ignore[union-attr]
            assert stats["databaseName"] == "PubMed"
            assert stats["totalRecordCount"] == len(fake.corpus)
            assert stats["lastUpdate"][:4].isdigit()
            assert "T" in stats["lastUpdate"]
            fields = {f["name"]: f for f in stats["availableSearchFields"]}
            assert fields["MESH"]["fullName"] == "MeSH Terms"
            assert fields["PDAT"]["isDate"] is True
            assert fields["UID"]["isNumerical"] is True
            links = {link["name"]: link for link in stats["availableLinkNames"]}
            assert links["pubmed_pubmed_citedin"]["dbTo"] == "pubmed"
            assert stats["eInfoUrl"].startswith(f"{fake.base_url}/einfo.fcgi?db=pubmed")
        assert [e["status"] for e in requests(fake, "einfo")] == [503, 503, 200]
        await still_serving(client)

    serve(_settings(tmp_path, fake, ncbi_max_retries=1), body)

"""`pubmed_convert_ids` and `pubmed_lookup_citation` through an in-process MCP client.

The server is the one `biomcp serve` builds, on the fake E-utilities over real HTTP: its ID
converter and ECitMatch answer from real PubMed records of ../shared/data/eutils (the module is
skipped when that folder is absent) plus two SYNTHETIC articles (PMIDs 39900001-2, made up to
share journal, year, volume and first author, the case ECitMatch calls ambiguous). The
answers of the converter and of ECitMatch are SYNTHETIC too (there is no recorded NCBI answer
of either): the fake writes them after NCBI's documented formats. Expected ids and citation
pieces were read from the XML files: 32292800 (PMC7156113), 32935693 (PMC7864896, Nat Prod
Rep 2021;38:130-239, Montalbán-López M), 34529508 (PMC8561171), 33119379 (no PMCID).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.mcp.tools.lookups import LOOKUP_INPUTS, LOOKUP_NAMES, LOOKUP_OUTPUTS
from biomcp.entrypoints.services import Services
from biomcp.entrypoints.settings import Settings
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer
from tests.conftest import shared_data_path
from tests.support.mcp_inprocess import checked_call, expect_error, expect_ok, serve, test_settings
from tests.support.servers import clean_fake  # noqa: F401 - autouse: no faults, empty log

pytestmark = pytest.mark.integration

FILES = ("32292800", "32935693", "33119379", "34529508", "35856662", "39382274")
API_KEY = "lookup-test-key-not-secret"
CONVERT = "pubmed_convert_ids"
LOOKUP = "pubmed_lookup_citation"
IDCONV_PATH = "/tools/idconv/api/v1/articles/"

_SYNTHETIC_ARTICLE = """<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM">
<PMID Version="1">{pmid}</PMID><Article PubModel="Print"><Journal>
<ISSN IssnType="Print">0000-0000</ISSN><JournalIssue CitedMedium="Print"><Volume>5</Volume>
<Issue>1</Issue><PubDate><Year>2020</Year><Month>Jan</Month></PubDate></JournalIssue>
<Title>Journal of Synthetic Test Data</Title><ISOAbbreviation>J Synth Test</ISOAbbreviation>
</Journal><ArticleTitle>{title}</ArticleTitle><Pagination><MedlinePgn>{pages}</MedlinePgn>
</Pagination><AuthorList CompleteYN="Y"><Author ValidYN="Y"><LastName>Doe</LastName>
<ForeName>Jane</ForeName><Initials>J</Initials></Author></AuthorList><Language>eng</Language>
<PublicationTypeList><PublicationType UI="D016428">Journal Article</PublicationType>
</PublicationTypeList></Article><MedlineJournalInfo><MedlineTA>J Synth Test</MedlineTA>
</MedlineJournalInfo></MedlineCitation><PubmedData><History>
<PubMedPubDate PubStatus="entrez"><Year>2020</Year><Month>1</Month><Day>2</Day></PubMedPubDate>
</History><ArticleIdList><ArticleId IdType="pubmed">{pmid}</ArticleId></ArticleIdList>
</PubmedData></PubmedArticle>"""
#: SYNTHETIC articles: same journal, year, volume and first author, different first pages.
SYNTHETIC = (
    "<PubmedArticleSet>"
    + _SYNTHETIC_ARTICLE.format(pmid="39900001", title="Synthetic alpha trial.", pages="10-19")
    + _SYNTHETIC_ARTICLE.format(pmid="39900002", title="Synthetic beta cohort.", pages="20-29")
    + "</PubmedArticleSet>"
).encode()


# --- fixtures --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    folder = shared_data_path("eutils")
    corpus = FakeCorpus.from_paths([folder / "metapub" / f"{name}.xml" for name in FILES])
    corpus.add(SYNTHETIC, source="<synthetic>")
    with FakeEutilsServer(corpus) as server:
        yield server


def _settings(tmp_path: Path, fake: FakeEutilsServer, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "ncbi_api_key": API_KEY,
        "ncbi_admin_email": "ops@example.org",
        "ncbi_idconv_base_url": fake.base_url + IDCONV_PATH,
    }
    return test_settings(tmp_path / "data", fake.base_url, **{**values, **overrides})


async def call(client: Client, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    """(is_error, the answer), the answer checked against the tool's declared schema."""
    spec_name = next(k for k, v in LOOKUP_NAMES.items() if v == name)
    return await checked_call(client, name, arguments, LOOKUP_OUTPUTS[spec_name], secret=API_KEY)


async def ok(client: Client, name: str, arguments: dict[str, Any]) -> Any:
    return await expect_ok(call(client, name, arguments))


async def fails(client: Client, name: str, arguments: dict[str, Any], code: str) -> Any:
    return await expect_error(call(client, name, arguments), code)


def requests(fake: FakeEutilsServer, endpoint: str) -> list[dict[str, Any]]:
    return [entry for entry in fake.log if entry["endpoint"] == endpoint]


# --- listing ---------------------------------------------------------------------------------


def test_both_tools_are_listed_read_only_with_their_schemas(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        for spec_name, portable in LOOKUP_NAMES.items():
            tool = listed[portable]
            assert tool.input_schema == LOOKUP_INPUTS[spec_name]
            assert tool.output_schema == LOOKUP_OUTPUTS[spec_name]
            Draft202012Validator.check_schema(tool.input_schema)
            Draft202012Validator.check_schema(tool.output_schema)
            assert tool.annotations is not None
            assert tool.annotations.read_only_hint is True
            entry = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
            assert len(json.dumps(entry, separators=(",", ":"), ensure_ascii=False)) / 4 < 500

    serve(_settings(tmp_path, fake), body)


def test_spec_names_mode_lists_the_camel_case_names(tmp_path: Path, fake: FakeEutilsServer) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert set(LOOKUP_NAMES) <= names
        assert not set(LOOKUP_NAMES.values()) & names

    serve(_settings(tmp_path, fake, biomcp_tool_names="spec"), body)


# --- pubmed_convert_ids ----------------------------------------------------------------------


def test_a_mix_of_ids_is_converted_one_request_per_kind(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    ids = [
        "32292800",
        "PMID: 33119379",
        "pmc7864896.2",
        "https://doi.org/10.2105/AJPH.2021.306453",
        "10.1037/rep0000367",
        "PMC1",
    ]

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(client, CONVERT, {"ids": ids})
        rows = {row["requestedId"]: row for row in answer["records"]}
        assert [row["requestedId"] for row in answer["records"]] == ids
        assert rows["32292800"] == {
            "requestedId": "32292800",
            "idType": "pmid",
            "status": "found",
            "pmid": "32292800",
            "pmcid": "PMC7156113",
            "pmcidVersion": None,
            "doi": "10.1142/S2339547819500067",
            "reason": None,
        }
        assert rows["pmc7864896.2"]["pmid"] == "32935693"
        assert rows["pmc7864896.2"]["pmcid"] == "PMC7864896"
        assert rows["pmc7864896.2"]["pmcidVersion"] == "PMC7864896.2"
        doi = rows["https://doi.org/10.2105/AJPH.2021.306453"]
        assert (doi["idType"], doi["pmid"], doi["pmcid"]) == ("doi", "34529508", "PMC8561171")
        for missing in ("PMID: 33119379", "10.1037/rep0000367", "PMC1"):
            assert rows[missing]["status"] == "not_found"
            assert rows[missing]["pmid"] is None
            assert rows[missing]["reason"] == "Identifier not found in PMC"
        assert (answer["found"], answer["notFound"], answer["requests"]) == (3, 3, 3)

    serve(_settings(tmp_path, fake), body)
    sent = requests(fake, "idconv")
    assert sorted(e["params"]["idtype"] for e in sent) == ["doi", "pmcid", "pmid"]
    by_type = {e["params"]["idtype"]: e["params"] for e in sent}
    assert by_type["pmid"]["ids"] == "32292800,33119379"
    assert by_type["pmcid"]["ids"] == "PMC7864896,PMC1"
    assert by_type["doi"]["ids"] == "10.2105/AJPH.2021.306453,10.1037/rep0000367"
    for params in by_type.values():
        assert params["format"] == "json"
        assert params["email"] == "ops@example.org"
        assert params["tool"]
        assert params["api_key"] == "***"  # sent, and masked by the fake's log


def test_invalid_ids_are_a_validation_error_naming_them_without_a_request(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await fails(
            client, CONVERT, {"ids": ["32292800", "not-an-id", "PMC12x", "10.1/x"]}, "VALIDATION"
        )
        assert "'not-an-id'" in answer["error"]["message"]
        assert "'PMC12x'" in answer["error"]["message"]
        assert answer["error"]["details"]["invalid"] == ["not-an-id", "PMC12x", "10.1/x"]
        await fails(client, CONVERT, {"ids": []}, "VALIDATION")
        await fails(client, CONVERT, {"ids": [str(n) for n in range(1, 202)]}, "VALIDATION")

    serve(_settings(tmp_path, fake), body)
    assert requests(fake, "idconv") == []


def test_200_ids_go_in_one_request(tmp_path: Path, fake: FakeEutilsServer) -> None:
    ids = ["32292800", *(str(n) for n in range(10_000_001, 10_000_200))]

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(client, CONVERT, {"ids": ids})
        assert (answer["found"], answer["notFound"], answer["requests"]) == (1, 199, 1)
        assert len(answer["records"]) == 200

    serve(_settings(tmp_path, fake), body)
    assert len(requests(fake, "idconv")) == 1


def test_converter_faults_are_retried_then_reported_in_the_envelope(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        fake.faults.sequence(["503", "truncated", "ncbi_error"])
        answer = await ok(client, CONVERT, {"ids": ["32292800"]})
        assert answer["records"][0]["pmcid"] == "PMC7156113"
        assert [e["fault"] for e in requests(fake, "idconv")] == [
            "503", "truncated", "ncbi_error", None,
        ]  # fmt: skip
        fake.clear_log()
        fake.faults.sequence(["html"] * 4)
        answer = await fails(client, CONVERT, {"ids": ["32292800"]}, "ENTREZ")
        assert "received markup" in answer["error"]["message"]
        assert len(requests(fake, "idconv")) == 4

    serve(_settings(tmp_path, fake, ncbi_max_retries=3), body)


# --- pubmed_lookup_citation ------------------------------------------------------------------


def test_references_are_matched_ambiguous_or_not_found_with_ranked_candidates(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    references = [
        {"journal": "Nat Prod Rep", "year": "2021", "volume": "38", "firstPage": "130",
         "firstAuthor": "Montalban-Lopez M", "key": "exact"},
        {"journal": "J Synth Test", "year": "2020", "volume": "5", "firstAuthor": "Doe J"},
        {"journal": "J Synth Test", "year": "2020", "firstPage": "20", "firstAuthor": "Doe J"},
        {"journal": "Lancet", "year": "1999", "firstAuthor": "Nobody X"},
    ]  # fmt: skip

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(client, LOOKUP, {"references": references})
        exact, twins, paged, absent = answer["results"]
        assert (exact["status"], exact["pmid"], exact["key"]) == ("matched", "32935693", "exact")
        assert exact["ecitmatch"] == "found"
        assert exact["candidates"][0]["matchedFields"] == [
            "journal", "year", "volume", "firstPage", "firstAuthor",
        ]  # fmt: skip
        assert exact["candidates"][0]["unmatchedFields"] == []
        assert exact["candidates"][0]["firstAuthor"] == "Montalbán-López M"
        assert (twins["status"], twins["pmid"], twins["ecitmatch"]) == (
            "ambiguous", None, "ambiguous",
        )  # fmt: skip
        assert [c["pmid"] for c in twins["candidates"]] == ["39900001", "39900002"]
        assert (paged["status"], paged["pmid"]) == ("matched", "39900002")
        assert absent["status"] == "not_found"
        assert absent["candidates"] == []
        assert answer["counts"] == {"matched": 2, "ambiguous": 1, "notFound": 1}

    serve(_settings(tmp_path, fake), body)
    (citmatch,) = requests(fake, "ecitmatch")
    assert citmatch["params"]["bdata"].split("\r") == [
        "nat prod rep|2021|38|130|montalban-lopez m|ref1|",
        "j synth test|2020|5||doe j|ref2|",
        "j synth test|2020||20|doe j|ref3|",
        "lancet|1999|||nobody x|ref4|",
    ]
    assert citmatch["params"]["retmode"] == "xml"
    assert citmatch["params"]["db"] == "pubmed"


def test_the_fielded_search_finds_what_ecitmatch_misses_and_names_the_contradiction(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    # A wrong volume: ECitMatch finds nothing; the search with every piece finds it, because
    # PubMed (and the fake) drops a term that matches nothing ("PhraseNotFound").
    wrong_volume = {"journal": "Nat Prod Rep", "year": "2021", "volume": "7777",
                    "firstAuthor": "Montalbán-López M"}  # fmt: skip
    titled = {"title": "New developments in RiPP discovery, enzymology", "year": "2021"}
    # A wrong year: every search with the year finds nothing; the title with the journal does.
    wrong_year = {"journal": "Nat Prod Rep", "year": "2020", "firstAuthor": "Montalbán-López M",
                  "title": "RiPP discovery"}  # fmt: skip

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(client, LOOKUP, {"references": [wrong_volume, titled, wrong_year]})
        first, second, third = answer["results"]
        assert (first["status"], first["pmid"], first["ecitmatch"]) == (
            "matched", "32935693", "not_found",
        )  # fmt: skip
        best = first["candidates"][0]
        assert best["via"] == "esearch"
        assert best["matchedFields"] == ["journal", "year", "firstAuthor"]
        assert best["unmatchedFields"] == ["volume"]
        assert (second["status"], second["pmid"], second["ecitmatch"]) == (
            "matched", "32935693", "not_asked",
        )  # fmt: skip
        assert second["candidates"][0]["matchedFields"] == ["year", "title"]
        assert (third["status"], third["pmid"], third["ecitmatch"]) == (
            "matched", "32935693", "not_found",
        )  # fmt: skip
        assert third["candidates"][0]["matchedFields"] == ["journal", "firstAuthor", "title"]
        assert third["candidates"][0]["unmatchedFields"] == ["year"]
        assert answer["counts"] == {"matched": 3, "ambiguous": 0, "notFound": 0}

    serve(_settings(tmp_path, fake), body)
    terms = [e["params"]["term"] for e in requests(fake, "esearch")]
    every_piece = '"Nat Prod Rep"[ta] AND 2021[dp] AND 7777[vi] AND "Montalbán-López M"[au]'
    fewer = '"Nat Prod Rep"[ta] AND 2021[dp] AND "Montalbán-López M"[au]'
    by_title = (
        "new[ti] AND developments[ti] AND ripp[ti] AND discovery[ti] AND enzymology[ti] "
        "AND 2021[dp]"
    )
    year_first = '"Nat Prod Rep"[ta] AND 2020[dp] AND "Montalbán-López M"[au]'
    year_title = 'ripp[ti] AND discovery[ti] AND "Montalbán-López M"[au] AND 2020[dp]'
    title_journal = 'ripp[ti] AND discovery[ti] AND "Nat Prod Rep"[ta]'
    expected = [every_piece, by_title, year_first, year_title, title_journal]
    assert sorted(terms) == sorted(expected)  # each reference stopped at its first hit
    assert terms.index(year_first) < terms.index(year_title) < terms.index(title_journal)
    assert fewer not in terms
    assert len(requests(fake, "ecitmatch")) == 1  # the titled reference is not sent to it


def test_bad_references_are_validation_errors_before_any_request(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await fails(
            client, LOOKUP, {"references": [{"year": "2020"}, {"journal": "Gut"}]}, "VALIDATION"
        )
        assert "references[0]" in answer["error"]["message"]
        await fails(client, LOOKUP, {"references": []}, "VALIDATION")
        await fails(client, LOOKUP, {"references": [{"journal": "Gut", "year": "n.d."}]},
                    "VALIDATION")  # fmt: skip
        too_many = [{"journal": "Gut", "year": "2020"}] * 51
        await fails(client, LOOKUP, {"references": too_many}, "VALIDATION")
        await fails(client, LOOKUP, {"references": [{"journal": "Gut", "pages": "1"}]},
                    "VALIDATION")  # fmt: skip

    serve(_settings(tmp_path, fake), body)
    assert fake.log == []


def test_fifty_references_take_one_ecitmatch_request(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    one = {"journal": "Nat Prod Rep", "year": "2021", "volume": "38", "firstPage": "130",
           "firstAuthor": "Montalban-Lopez M"}  # fmt: skip

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(client, LOOKUP, {"references": [one] * 50})
        assert answer["counts"] == {"matched": 50, "ambiguous": 0, "notFound": 0}
        assert [r["index"] for r in answer["results"]] == list(range(50))

    serve(_settings(tmp_path, fake), body)
    assert len(requests(fake, "ecitmatch")) == 1
    assert requests(fake, "ecitmatch")[0]["method"] == "POST"  # 50 lines: too long for a URL
    assert len(requests(fake, "esummary")) == 1
    assert requests(fake, "esearch") == []


def test_ecitmatch_faults_are_retried_and_a_persistent_one_is_reported(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    one = {"journal": "Nat Prod Rep", "year": "2021", "volume": "38",
           "firstAuthor": "Montalban-Lopez M"}  # fmt: skip

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        fake.faults.sequence(["truncated", "ncbi_error"])
        answer = await ok(client, LOOKUP, {"references": [one]})
        assert answer["results"][0]["pmid"] == "32935693"
        assert [e["fault"] for e in requests(fake, "ecitmatch")] == [
            "truncated", "ncbi_error", None,
        ]  # fmt: skip
        fake.faults.sequence(["503", "503", "503"])
        await fails(client, LOOKUP, {"references": [one]}, "UPSTREAM")

    serve(_settings(tmp_path, fake, ncbi_max_retries=2), body)


def test_faults_are_aimed_at_the_lookups_by_name_and_spare_the_other_endpoints(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    one = {"journal": "Nat Prod Rep", "year": "2021", "volume": "38",
           "firstAuthor": "Montalban-Lopez M"}  # fmt: skip
    aimed = httpx.post(
        f"{fake.base_url}/_fake/faults",
        json={"sequence": ["503"], "endpoint": "idconv"},
        timeout=30,
    )
    assert aimed.status_code == 200, aimed.text
    fake.faults.clear()
    refused = httpx.post(
        f"{fake.base_url}/_fake/faults", json={"sequence": ["503"], "endpoint": "idconvx"}
    )
    assert refused.status_code == 400

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        fake.faults.sequence(["503", "503"], endpoint="ecitmatch")
        answer = await ok(client, LOOKUP, {"references": [one]})
        assert answer["results"][0]["pmid"] == "32935693"
        assert [e["fault"] for e in requests(fake, "ecitmatch")] == ["503", "503", None]
        assert requests(fake, "esummary")  # the candidates were checked, never faulted
        assert all(e["fault"] is None for e in requests(fake, "esummary"))
        fake.clear_log()
        fake.faults.sequence(["502"], endpoint="idconv")
        converted = await ok(client, CONVERT, {"ids": ["32292800"]})
        assert converted["records"][0]["pmcid"] == "PMC7156113"
        assert [e["fault"] for e in requests(fake, "idconv")] == ["502", None]

    serve(_settings(tmp_path, fake, ncbi_max_retries=2), body)


def test_an_oversized_converter_answer_is_refused_while_streaming_and_not_retried(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        fake.faults.sequence([{"kind": "oversized", "size": 50_000_000}])
        answer = await fails(client, CONVERT, {"ids": ["32292800"]}, "ENTREZ")
        assert "NCBI_MAX_RESPONSE_MB" in answer["error"]["message"]
        assert len(requests(fake, "idconv")) == 1
        assert fake.faults.bytes_streamed < 10_000_000  # the client hung up near 1 MiB

    serve(_settings(tmp_path, fake, ncbi_max_response_mb=1), body)


def test_the_fallback_searches_of_one_call_are_bounded(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    nowhere = {"journal": "Lancet", "year": "1999", "volume": "1", "firstAuthor": "Nobody X",
               "title": "nothing here at all"}  # fmt: skip

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(client, LOOKUP, {"references": [nowhere] * 50})
        assert answer["counts"] == {"matched": 0, "ambiguous": 0, "notFound": 50}
        notes = [r["note"] for r in answer["results"]]
        # 50 first queries, 10 second ones, then the budget is spent: no third query at all
        assert all(n and "budget is spent" in n for n in notes)

    serve(_settings(tmp_path, fake), body)
    assert len(requests(fake, "esearch")) == 60
    assert len(requests(fake, "ecitmatch")) == 1

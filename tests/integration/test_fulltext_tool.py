"""`pubmed_fetch_fulltext` through an in-process MCP client, on the fake E-utilities over real
HTTP (ELink `pubmed_pmc`, EFetch `db=pmc`).

The fake's PMC serves NCBI's real EFetch db=pmc answer (../shared/data/eutils/biopython/
efetch_pmc.xml: PMID 34527728, PMC8435807, an open-access correction; the module is skipped
when that folder is absent) and SYNTHETIC articles it builds (testing/eutils/pmc.py). Every
answer is validated against the tool's declared output schema.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.mcp.tools.fulltext import FULLTEXT_INPUT, FULLTEXT_OUTPUT
from biomcp.entrypoints.services import Services
from biomcp.entrypoints.settings import Settings
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer
from biomcp.testing.eutils.pmc import pmc_store
from tests.conftest import shared_data_path
from tests.support.mcp_inprocess import checked_call, expect_error, expect_ok, serve, test_settings
from tests.support.servers import clean_fake  # noqa: F401 - autouse: no faults, empty log

pytestmark = pytest.mark.integration

TOOL = "pubmed_fetch_fulltext"
REAL_PMID, REAL_PMCID = "34527728", "PMC8435807"
OPEN, BIG, RESTRICTED, WITHDRAWN, MANUSCRIPT = (
    ("30000001", "PMC7000001"),
    ("30000002", "PMC7000002"),
    ("30000003", "PMC7000003"),
    ("30000004", "PMC7000004"),
    ("30000005", "PMC7000005"),
)
NOT_IN_PMC = "30000009"
API_KEY = "fulltext-test-key-not-secret"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    folder = shared_data_path("eutils")
    corpus = FakeCorpus.from_paths([folder / "biopython" / "pubmed4.xml"])
    with FakeEutilsServer(corpus) as server:
        store = pmc_store(server.state)
        assert store.add_file(folder / "biopython" / "efetch_pmc.xml") == [REAL_PMCID]
        store.add_synthetic(*OPEN)
        store.add_synthetic(*BIG, paragraph_chars=3_000)
        store.add_synthetic(*RESTRICTED, kind="restricted")
        store.add_synthetic(*WITHDRAWN, kind="withdrawn")
        store.add_synthetic(*MANUSCRIPT, kind="manuscript")
        yield server


def _settings(tmp_path: Path, fake: FakeEutilsServer, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"ncbi_api_key": API_KEY, "ncbi_max_retries": 1}
    return test_settings(tmp_path / "data", fake.base_url, **{**values, **overrides})


async def call(client: Client, arguments: dict[str, Any], name: str = TOOL) -> tuple[bool, Any]:
    return await checked_call(client, name, arguments, FULLTEXT_OUTPUT, secret=API_KEY)


async def ok(client: Client, arguments: dict[str, Any]) -> Any:
    return await expect_ok(call(client, arguments))


async def fails(client: Client, arguments: dict[str, Any], code: str) -> Any:
    return await expect_error(call(client, arguments), code)


def requests(fake: FakeEutilsServer) -> list[tuple[str, str | list[str]]]:
    return [(e["endpoint"], e["params"]["db"]) for e in fake.log]


def test_the_tool_is_listed_read_only_with_its_schemas(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        tool = listed[TOOL]
        assert tool.input_schema == FULLTEXT_INPUT
        assert tool.output_schema == FULLTEXT_OUTPUT
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True

    serve(_settings(tmp_path, fake), body)


def test_spec_names_call_it_fetch_full_text(tmp_path: Path, fake: FakeEutilsServer) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "fetchFullText" in names
        assert TOOL not in names

    serve(_settings(tmp_path, fake, biomcp_tool_names="spec"), body)


def test_the_real_jats_article_by_pmid_in_outline_and_in_full(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        outline = await ok(client, {"ids": [REAL_PMID], "outline": True})
        [article] = outline["articles"]
        assert (article["status"], article["pmid"], article["pmcid"]) == (
            "available",
            REAL_PMID,
            REAL_PMCID,
        )
        assert (article["mode"], article["outlineReason"]) == ("outline", "requested")
        assert article["sections"] == [{"path": "1", "level": 1, "title": "", "chars": 290}]
        assert article["license"]["url"] == "https://creativecommons.org/licenses/by-nc/4.0/"
        assert (article["access"], article["articleType"]) == ("open_access", "correction")
        assert article["url"] == f"https://pmc.ncbi.nlm.nih.gov/articles/{REAL_PMCID}/"
        assert outline["usedChars"] == 0
        assert requests(fake) == [("elink", "pmc"), ("efetch", "pmc")]
        elink, efetch = fake.log
        assert elink["params"]["linkname"] == "pubmed_pmc"
        assert elink["params"]["dbfrom"] == "pubmed"
        assert efetch["params"]["id"] == "8435807"
        assert all("api_key" in e["params"] for e in fake.log)  # sent, masked in the log

        full = await ok(client, {"ids": [REAL_PMCID]})
        [article] = full["articles"]
        assert article["mode"] == "full"
        [section] = article["sections"]
        assert "corrected to −15.1%" in section["text"]
        assert full["usedChars"] == 290
        assert [u.split("?")[0].rsplit("/", 1)[1] for u in full["eutilsUrls"]] == [
            "efetch.fcgi"
        ]  # a PMCID needs no ELink

    serve(_settings(tmp_path, fake), body)


def test_every_id_gets_a_status_in_the_order_asked_from_two_requests(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        ids = [
            OPEN[0],
            RESTRICTED[1],
            WITHDRAWN[0],
            NOT_IN_PMC,
            "PMC1",
            MANUSCRIPT[1],
            "pmc7000001",
        ]
        answer = await ok(client, {"ids": ids})
        shown = [(a["id"], a["status"]) for a in answer["articles"]]
        assert shown == [
            (OPEN[0], "available"),
            (RESTRICTED[1], "not_open_access"),
            (WITHDRAWN[0], "withdrawn"),
            (NOT_IN_PMC, "not_in_pmc"),
            ("PMC1", "not_in_pmc"),
            (MANUSCRIPT[1], "available"),
            (OPEN[1], "available"),  # pmc7000001 normalized
        ]
        by_id = {a["id"]: a for a in answer["articles"]}
        assert by_id[RESTRICTED[1]]["access"] == "restricted"
        assert "sections" not in by_id[RESTRICTED[1]]
        assert by_id[RESTRICTED[1]]["abstract"].startswith("Synthetic abstract of PMC")
        assert "abstract" not in by_id[WITHDRAWN[0]]
        assert "publisher" in by_id[RESTRICTED[1]]["message"]
        assert by_id[MANUSCRIPT[1]]["access"] == "author_manuscript"
        assert by_id[NOT_IN_PMC]["message"]
        opened = by_id[OPEN[0]]
        assert opened["pmcid"] == OPEN[1]
        assert [(c["kind"], c["label"]) for c in opened["captions"]] == [
            ("figure", "Figure 1"),
            ("table", "Table 1"),
        ]
        assert opened["captions"][0]["caption"] == "Synthetic outcome curve."
        assert "references" not in opened
        assert opened["counts"] == {
            "sections": 8,
            "figures": 1,
            "tables": 1,
            "supplements": 0,
            "references": 3,
        }
        assert requests(fake) == [("elink", "pmc"), ("efetch", "pmc")]

    serve(_settings(tmp_path, fake), body)


def test_over_the_budget_an_outline_then_the_sections_asked_for(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(client, {"ids": [BIG[1]], "maxChars": 5_000})
        [article] = answer["articles"]
        assert (article["mode"], article["outlineReason"]) == ("outline", "budget")
        assert [(s["path"], s["title"], s["chars"]) for s in article["sections"][:4]] == [
            ("1", "Introduction", 3_000),
            ("2", "Methods", 3_000),
            ("2.1", "Participants", 3_000),
            ("2.2", "Statistical analysis", 3_000),
        ]
        assert all("text" not in s for s in article["sections"])

        narrowed = await ok(
            client,
            {"ids": [BIG[1]], "maxChars": 5_000, "maxSectionChars": 1_000, "sections": ["methods"]},
        )
        [article] = narrowed["articles"]
        assert article["mode"] == "full"
        assert [s["path"] for s in article["sections"]] == ["2", "2.1", "2.2"]
        assert all(s["truncated"] and len(s["text"]) <= 1_000 for s in article["sections"])
        assert narrowed["usedChars"] <= 5_000

        nothing = await ok(client, {"ids": [BIG[1]], "sections": ["supplementary"]})
        assert nothing["articles"][0]["outlineReason"] == "no_section_matched"

    serve(_settings(tmp_path, fake), body)


def test_the_budget_is_shared_by_the_articles_of_a_call_in_order(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(
            client, {"ids": [OPEN[1], BIG[1], REAL_PMCID], "maxChars": 3_500, "outline": False}
        )
        modes = [(a["id"], a["mode"]) for a in answer["articles"]]
        assert modes == [(OPEN[1], "full"), (BIG[1], "outline"), (REAL_PMCID, "full")]
        assert answer["usedChars"] <= 3_500

        refs = await ok(client, {"ids": [OPEN[1]], "includeReferences": True})
        references = refs["articles"][0]["references"]
        assert [(r["label"], r["pmid"]) for r in references] == [
            ("1", "10000001"),
            ("2", "10000002"),
            ("3", "10000003"),
        ]

    serve(_settings(tmp_path, fake), body)


def test_upstream_failures_are_per_id_unless_every_id_failed(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        fake.faults.sequence(["503"] * 2, endpoint="elink")  # the first try and its retry
        answer = await ok(client, {"ids": [REAL_PMID, OPEN[1]]})
        assert [(a["id"], a["status"]) for a in answer["articles"]] == [
            (REAL_PMID, "upstream_error"),
            (OPEN[1], "available"),
        ]
        assert "503" in answer["articles"][0]["message"]

        fake.faults.sequence(["503"] * 2, endpoint="efetch")
        await fails(client, {"ids": [OPEN[1], REAL_PMCID]}, "UPSTREAM")

        fake.faults.sequence(["truncated"] * 2, endpoint="efetch")
        await fails(client, {"ids": [OPEN[1]]}, "ENTREZ")

        fake.clear_log()
        fake.faults.sequence(["503"], endpoint="efetch")  # one transient failure: retried
        answer = await ok(client, {"ids": [OPEN[1]]})
        assert answer["articles"][0]["status"] == "available"
        assert [e["status"] for e in fake.log] == [503, 200]

    serve(_settings(tmp_path, fake), body)


@pytest.mark.parametrize(
    "arguments",
    [
        {"ids": []},
        {"ids": [str(n) for n in range(1, 12)]},
        {"ids": ["abc"]},
        {"ids": ["PMC"]},
        {"ids": ["1"], "maxChars": 10},
        {"ids": ["1"], "maxSectionChars": 10**6},
        {"ids": ["1"], "sections": [""]},
        {"ids": ["1"], "unknown": True},
    ],
)
def test_bad_arguments_are_validation_errors_without_a_request(
    tmp_path: Path, fake: FakeEutilsServer, arguments: dict[str, Any]
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        await fails(client, arguments, "VALIDATION")
        assert fake.log == []

    serve(_settings(tmp_path, fake), body)


def test_the_use_case_checks_its_own_bounds(tmp_path: Path, fake: FakeEutilsServer) -> None:
    """The library path has no schema in front of it: the use case refuses the same input."""
    from biomcp.usecases.errors import InvalidRequestError

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        for ids in ([], ["x1"], ["1"] * 11, "123"):
            with pytest.raises(InvalidRequestError):
                await services.live.fetch_fulltext(ids)
        with pytest.raises(InvalidRequestError):
            await services.live.fetch_fulltext(["1"], max_chars=999)
        assert fake.log == []

    serve(_settings(tmp_path, fake), body)

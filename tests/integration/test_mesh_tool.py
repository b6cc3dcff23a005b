"""`pubmed_lookup_mesh` through an in-process MCP client, on the fake E-utilities over real HTTP.

The fake serves `db=mesh` from its SYNTHETIC vocabulary (biomcp/testing/eutils/mesh.py): there
is no real MeSH answer in ../shared/data/eutils. Every answer is validated against the tool's
declared output schema, every failure against spec 01's error envelope.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from biomcp.domain.queries import TopicTerms, tier_a_query
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.mcp.tools.mesh import MESH_INPUT, MESH_OUTPUT
from biomcp.entrypoints.services import Services
from biomcp.entrypoints.settings import Settings
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer
from tests.support.mcp_inprocess import checked_call, expect_error, expect_ok, serve, test_settings
from tests.support.servers import clean_fake  # noqa: F401 - autouse: no faults, empty log

pytestmark = pytest.mark.integration

TOOL = "pubmed_lookup_mesh"
API_KEY = "mesh-test-key-not-secret"
FIXTURE = Path(__file__).parents[1] / "fixtures" / "eutils" / "synthetic_mixed_set.xml"
#: What the tool's entry may add to the tools/list catalogue (characters / 4 of compact JSON).
TOKEN_ALLOWANCE = 500


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    with FakeEutilsServer(FakeCorpus.from_paths([FIXTURE])) as server:
        yield server


def _settings(tmp_path: Path, fake: FakeEutilsServer, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"ncbi_api_key": API_KEY, "ncbi_max_retries": 1, **overrides}
    return test_settings(tmp_path / "data", fake.base_url, **values)


async def call(client: Client, arguments: dict[str, Any], name: str = TOOL) -> tuple[bool, Any]:
    return await checked_call(client, name, arguments, MESH_OUTPUT, secret=API_KEY)


async def ok(client: Client, arguments: dict[str, Any]) -> Any:
    return await expect_ok(call(client, arguments))


async def fails(client: Client, arguments: dict[str, Any], code: str) -> Any:
    return await expect_error(call(client, arguments), code)


def requests(fake: FakeEutilsServer, endpoint: str) -> list[dict[str, Any]]:
    return [entry for entry in fake.log if entry["endpoint"] == endpoint]


def test_the_tool_is_listed_read_only_with_its_schemas_within_its_token_allowance(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        [tool] = [t for t in (await client.list_tools()).tools if t.name == TOOL]
        assert tool.input_schema == MESH_INPUT
        assert tool.output_schema == MESH_OUTPUT
        Draft202012Validator.check_schema(tool.input_schema)
        Draft202012Validator.check_schema(tool.output_schema)
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.open_world_hint is True
        entry = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
        compact = json.dumps(entry, separators=(",", ":"), ensure_ascii=False)
        assert len(compact) / 4 <= TOKEN_ALLOWANCE

    serve(_settings(tmp_path, fake), body)


def test_a_synonym_finds_its_descriptor_with_everything_the_tool_promises(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(client, {"term": "heart attack"})
        assert answer["term"] == "heart attack"
        assert answer["totalFound"] == 1
        assert answer["queryTranslation"].startswith('"myocardial infarction"[MeSH Terms]')
        [record] = answer["descriptors"]
        assert record["ui"] == "D009203"
        assert record["name"] == "Myocardial Infarction"
        assert record["recordType"] == "descriptor"
        assert record["treeNumbers"][0] == "C14.280.647.500"
        assert len(record["treeNumbers"]) == 4
        assert "Heart Attack" in record["entryTerms"]
        assert "Myocardial Infarction" not in record["entryTerms"]
        assert record["entryTermCount"] == len(record["entryTerms"]) == 5
        assert record["scopeNote"].startswith("(synthetic)")
        assert {"name": "drug therapy", "abbreviation": "DT"} in record["allowedQualifiers"]
        assert record["suggestedQuery"] == (
            '("Myocardial Infarction"[mh] OR "Myocardial Infarction"[tiab])'
        )
        # the suggestion is the tier templates' own indication group
        tier_a = tier_a_query(TopicTerms.of("Myocardial Infarction"))
        assert tier_a.startswith(record["suggestedQuery"] + "\n")
        assert record["url"] == "https://www.ncbi.nlm.nih.gov/mesh/68009203"
        [search] = requests(fake, "esearch")
        [summary] = requests(fake, "esummary")
        assert search["params"]["db"] == "mesh"
        assert search["params"]["term"] == "heart attack"
        assert search["has_api_key"] is True
        assert summary["params"]["db"] == "mesh"
        assert summary["params"]["version"] == "2.0"
        assert summary["params"]["id"] == "68009203"
        assert answer["eSearchUrl"].startswith(f"{fake.base_url}/esearch.fcgi?db=mesh&term=")
        assert "id=68009203" in answer["eSummaryUrl"]
        assert "api_key" not in answer["eSearchUrl"] + answer["eSummaryUrl"]

    serve(_settings(tmp_path, fake), body)


def test_the_exact_heading_comes_first_and_max_results_bounds_the_answer(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        # The fake, like NCBI, lists Anti-Obesity Agents before Obesity.
        answer = await ok(client, {"term": "obesity"})
        assert [d["name"] for d in answer["descriptors"]] == ["Obesity", "Anti-Obesity Agents"]
        assert answer["descriptors"][0]["suggestedQuery"] == "(Obesity[mh] OR Obesity[tiab])"
        one = await ok(client, {"term": "Obesity", "maxResults": 1})
        assert [d["ui"] for d in one["descriptors"]] == ["D009765"]
        assert one["totalFound"] == 2
        many = await ok(client, {"term": "glp 1 receptor", "maxResults": 20})
        assert [d["ui"] for d in many["descriptors"]] == ["D000067757", "D000097789"]
        # an inverted heading suggests its natural word order for titles and abstracts
        nsclc = await ok(client, {"term": "NSCLC"})
        assert nsclc["descriptors"][0]["suggestedQuery"] == (
            '("Carcinoma, Non-Small-Cell Lung"[mh] OR "Non-Small-Cell Lung Carcinoma"[tiab])'
        )

    serve(_settings(tmp_path, fake), body)


def test_a_mesh_ui_is_summarized_directly_without_a_search(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(client, {"term": "d002289"})
        assert [d["ui"] for d in answer["descriptors"]] == ["D002289"]
        assert answer["totalFound"] is None
        assert answer["eSearchUrl"] is None
        assert requests(fake, "esearch") == []
        [summary] = requests(fake, "esummary")
        assert summary["params"]["id"] == "68002289"
        scr = await ok(client, {"term": "C000591245"})
        [record] = scr["descriptors"]
        assert record["recordType"] == "supplementary"
        assert record["mappedTo"] == ["Glucagon-Like Peptides"]
        assert record["suggestedQuery"] == "(semaglutide[nm] OR semaglutide[tiab])"

    serve(_settings(tmp_path, fake), body)


def test_nothing_found_is_a_not_found_error_with_advice(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await fails(client, {"term": "qwertyuiop"}, "NOT_FOUND")
        assert "qwertyuiop" in answer["error"]["message"]
        assert "synonym" in answer["error"]["message"]
        assert answer["error"]["details"] == {"term": "qwertyuiop"}
        assert requests(fake, "esummary") == []  # nothing to summarize: no ESummary
        unknown = await fails(client, {"term": "D999999"}, "NOT_FOUND")
        assert "D999999" in unknown["error"]["message"]

    serve(_settings(tmp_path, fake), body)


def test_bad_arguments_are_validation_errors_that_ask_ncbi_nothing(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        for arguments in (
            {"term": ""},
            {"term": "x" * 201},
            {"term": "obesity", "maxResults": 0},
            {"term": "obesity", "maxResults": 21},
            {"term": "obesity", "extra": 1},
            {},
        ):
            await fails(client, arguments, "VALIDATION")
        await fails(client, {"term": "   "}, "VALIDATION")  # blank after trimming
        assert fake.log == []

    serve(_settings(tmp_path, fake), body)


def test_ncbi_failures_are_retried_then_reported_in_the_envelope(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        fake.faults.sequence(["503"], endpoint="esearch")
        answer = await ok(client, {"term": "asthma"})  # one 503 is retried away
        assert answer["descriptors"][0]["ui"] == "D001249"
        assert [r["fault"] for r in requests(fake, "esearch")] == ["503", None]
        fake.clear_log()
        fake.faults.sequence(["503"] * 2, endpoint="esummary")
        await fails(client, {"term": "asthma"}, "UPSTREAM")  # never an empty success
        assert len(requests(fake, "esummary")) == 2
        fake.faults.sequence(["truncated"] * 2, endpoint="esummary")
        await fails(client, {"term": "D001249"}, "ENTREZ")
        assert (await ok(client, {"term": "D001249"}))["descriptors"][0]["name"] == "Asthma"

    serve(_settings(tmp_path, fake), body)


def test_the_spec_names_setting_names_it_lookup_mesh(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "lookupMesh" in names
        assert TOOL not in names
        error, answer = await call(client, {"term": "hypertension"}, name="lookupMesh")
        assert not error
        assert answer["descriptors"][0]["ui"] == "D006973"

    serve(_settings(tmp_path, fake, biomcp_tool_names="spec"), body)

"""`pubmed_fetch_fulltext` on real PMC articles (../shared/data/ncbi_files/pmc, skipped when
absent) served by the fake E-utilities over real HTTP: references as citations with their
parts, table footnotes, supplementary material, the references' own budget, and the CLI's view
of the same answer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from biomcp.entrypoints.cli.commands.pubmed.lookups import _fulltext_view
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.mcp.tools.fulltext import FULLTEXT_OUTPUT
from biomcp.entrypoints.services import Services
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer
from biomcp.testing.eutils.pmc import pmc_store
from tests.conftest import shared_data_path
from tests.support.mcp_inprocess import checked_call, expect_ok, serve, test_settings
from tests.support.servers import clean_fake  # noqa: F401 - autouse: no faults, empty log

pytestmark = pytest.mark.integration

TOOL = "pubmed_fetch_fulltext"
PLOS = "PMC3460867"  # pone.0046493: 58 references, 3 tables with footnotes, 4 supplements


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    folder = shared_data_path("ncbi_files", "pmc")
    with FakeEutilsServer(FakeCorpus()) as server:
        assert pmc_store(server.state).add_file(folder / "pone.0046493.nxml") == [PLOS]
        yield server


async def ok(client: Client, arguments: dict[str, Any]) -> Any:
    return await expect_ok(checked_call(client, TOOL, arguments, FULLTEXT_OUTPUT))


def test_references_footnotes_and_supplements_reach_the_tool_and_the_cli_view(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        answer = await ok(client, {"ids": [PLOS], "includeReferences": True, "maxChars": 100_000})
        [article] = answer["articles"]
        assert article["mode"] == "full"
        assert "referencesOmitted" not in article
        references = article["references"]
        assert len(references) == article["counts"]["references"] == 58
        first = references[0]
        assert first == {
            "label": "1",
            "text": "Chakroborty A. Drug-resistant tuberculosis: an insurmountable epidemic? "
            "Inflammopharmacology. 2011;19:131-7.",
            "authors": ["Chakroborty A"],
            "title": "Drug-resistant tuberculosis: an insurmountable epidemic?",
            "journal": "Inflammopharmacology",
            "year": "2011",
            "volume": "19",
            "pages": "131-137",
            "pmid": "21127999",
        }
        assert sum(1 for r in references if r.get("etAl")) == 35
        supplements = [c for c in article["captions"] if c["kind"] == "supplement"]
        assert [(s["label"], s["files"]) for s in supplements] == [
            (f"Table S{n}", [f"pone.0046493.s00{n}.doc"]) for n in range(1, 5)
        ]
        noted = [c for c in article["captions"] if c.get("footnotes")]
        assert [len(c["footnotes"]) for c in noted] == [6, 2]
        assert article["counts"]["supplements"] == 4
        view = _fulltext_view(answer)
        assert "\n  [1] Chakroborty A. Drug-resistant tuberculosis" in view
        assert "\n      PMID 21127999\n" in view
        assert "\n  Table S1: Genes and physical properties" in view
        assert "\n    b Chain lengths tested include C4, C5, C8, C10, C12 and C14." in view

    serve(test_settings(tmp_path / "data", fake.base_url), body)


def test_references_take_what_the_budget_leaves_and_say_how_many_did_not_fit(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        alone = await ok(client, {"ids": [PLOS], "maxChars": 100_000})
        room = alone["usedChars"] + 2_000
        answer = await ok(client, {"ids": [PLOS], "includeReferences": True, "maxChars": room})
        [article] = answer["articles"]
        assert article["mode"] == "full"
        shown = article["references"]
        assert 0 < len(shown) < 58
        assert [r["label"] for r in shown] == [str(n) for n in range(1, len(shown) + 1)]
        assert len(shown) + article["referencesOmitted"] == article["counts"]["references"]
        assert alone["usedChars"] < answer["usedChars"] <= room
        assert f"... {article['referencesOmitted']} more references" in _fulltext_view(answer)

    serve(test_settings(tmp_path / "data", fake.base_url), body)

"""`pico_search` looks its elements up in MeSH and finds the trials: through the use case and
through `prompts/get`, on the fake E-utilities over real HTTP (the SYNTHETIC gold records and
MeSH vocabulary)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from biomcp.domain.pico import pico_query
from biomcp.domain.queries import TopicTerms, tier_a_query
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.services import Services, build_services
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer
from biomcp.usecases.pico_query import build_pico_search
from tests.support.mcp_inprocess import serve, test_settings
from tests.support.servers import clean_fake  # noqa: F401 - autouse: no faults, empty log

pytestmark = pytest.mark.integration

GOLD = Path(__file__).parents[1] / "fixtures" / "gold" / "records.xml"
#: Spec 03's KRAS example (section 11) as a PICO question: its indication and target terms.
KRAS: dict[str, Any] = {
    "population": "non-small cell lung cancer; NSCLC",
    "intervention": "KRAS G12C; sotorasib; adagrasib",
}
#: Spec 03's Tier A template (1.2) over the KRAS example's indication line.
SPEC_TIER_A = "\n".join(
    [
        '("Carcinoma, Non-Small-Cell Lung"[mh] OR "non-small cell lung cancer"[tiab] OR '
        "NSCLC[tiab])",
        *tier_a_query(TopicTerms.of("x")).splitlines()[1:],
    ]
)
LONG = "KRAS G12C-mutated non-small cell lung cancer"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    with FakeEutilsServer(FakeCorpus.from_paths([GOLD])) as server:
        yield server


def _settings(tmp_path: Path, fake: FakeEutilsServer) -> Any:
    return test_settings(tmp_path / "data", fake.base_url, ncbi_max_retries=0)


def _live(tmp_path: Path, fake: FakeEutilsServer, run: Any) -> Any:
    async def main() -> Any:
        services = build_services(_settings(tmp_path, fake))
        try:
            return await run(services)
        finally:
            await services.aclose()

    return asyncio.run(main())


async def _found(services: Services, term: str) -> set[str]:
    answer = await services.live.search(term, max_results=100)
    return {str(pmid) for pmid in answer["pmids"]}


def test_the_kras_query_finds_every_trial_spec_03s_tier_a_query_finds(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def run(services: Services) -> tuple[set[str], set[str], Any]:
        built = await build_pico_search(services.live, **KRAS)
        return await _found(services, SPEC_TIER_A), await _found(services, built.query.term), built

    spec, pico, built = _live(tmp_path, fake, run)
    assert len(spec) >= 6
    assert spec <= pico
    assert built.query.headings == (("population", '"Carcinoma, Non-Small-Cell Lung"[mh]'),)
    assert [element for element, _, _ in built.not_in_mesh] == ["intervention"]
    assert built.notes == ()
    lookups = [e for e in fake.log if e["endpoint"] == "esearch" and e["params"]["db"] == "mesh"]
    assert sorted(e["params"]["term"] for e in lookups) == [
        "KRAS G12C",
        "non-small cell lung cancer",
    ]


def test_a_long_population_phrase_gives_a_query_pubmed_accepts(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def run(services: Services) -> tuple[Any, Any]:
        built = await build_pico_search(services.live, LONG, "sotorasib; adagrasib")
        return built, await services.live.search(built.query.term, max_results=100)

    built, answer = _live(tmp_path, fake, run)
    assert built.not_in_mesh[0][:2] == ("population", LONG)
    assert f'"{LONG}"' not in built.query.term
    assert not [w for w in answer["warnings"] if "G12C-mutated" in str(w)]
    assert 0 < answer["totalFound"] < len(FakeCorpus.from_paths([GOLD]))


def test_an_upstream_failure_degrades_to_free_text_with_a_note(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    fake.faults.sequence(["503"] * 4, endpoint="esearch")

    async def run(services: Services) -> Any:
        return await build_pico_search(services.live, "obesity", "semaglutide")

    built = _live(tmp_path, fake, run)
    assert built.notes == (
        "the MeSH lookup of population, intervention failed (NCBI failed): searched as free text",
    )
    assert built.query.term == pico_query("obesity", "semaglutide").term


def _prompt_text(got: Any) -> str:
    return str(got.messages[0].content.text)


def test_the_prompt_answers_with_the_query_its_headings_and_what_mesh_lacks(
    tmp_path: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        text = _prompt_text(await client.get_prompt("pico_search", KRAS))
        term = re.search(r"```text\n(.*?)\n```", text, re.S)
        assert term is not None
        expected = await build_pico_search(services.live, **KRAS)
        assert term.group(1) == expected.query.term
        assert await _found(services, SPEC_TIER_A) <= await _found(services, term.group(1))
        assert 'MeSH headings used: "Carcinoma, Non-Small-Cell Lung"[mh] (population).' in text
        assert "Not found in MeSH, searched as free text: intervention 'KRAS G12C'." in text
        assert expected.query.query_key in text

        tier_b = _prompt_text(
            await client.get_prompt(
                "pico_search",
                {"population": "obesity", "intervention": "semaglutide", "outcome": "weight loss",
                 "tier": "B"},
            )
        )  # fmt: skip
        assert "Obesity[mh]" in tier_b
        assert "semaglutide[nm]" in tier_b
        assert "Not searched in this tier: outcome" in tier_b

    serve(_settings(tmp_path, fake), body)

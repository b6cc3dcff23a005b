"""Paper-level results and the relevance verdict on every surface: `SearchCorpus.search`,
`rag_search` (v1.1 and v1.0), the ChatGPT `search` tool and `biomcp search`.

One corpus is synced from the fake E-utilities over HTTP into the embedded store with the
deterministic embedder; each test reads it. Floors are set through the settings: the
deterministic embedder's cosines are not those of the model the calibrated floor is for.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

import biomcp
from biomcp.entrypoints.mcp.contract import V11_OUTPUTS
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.services import Services
from biomcp.testing.eutils import FakeEutilsServer
from biomcp.usecases.paper_results import SearchOutcome
from tests.support.mcp_inprocess import call_structured as call
from tests.support.mcp_inprocess import serve, test_settings
from tests.support.servers import recent_fake, run_biomcp, server_env
from tests.support.spec01 import spec_schemas

pytestmark = pytest.mark.integration

TERM = "humans[mh] OR animals[mh]"
QUERY = "randomized trial outcomes"
OFF_TOPIC = "zzzzqqq nonexistent gibberish"
#: No cosine of two different texts reaches it.
UNREACHABLE = 0.99
SAID = "Nothing in the corpus looks relevant to this question"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    with recent_fake(40, seed=11) as server:
        yield server


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory, fake: FakeEutilsServer) -> Path:
    """A data folder holding the synced corpus."""
    folder = tmp_path_factory.mktemp("paper") / "data"

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, report = await call(client, "pubmed_sync_delta", {"query_key": "q", "term": TERM})
        assert not error, report
        assert report["inserted"] > 10

    serve(test_settings(folder, fake.base_url), body)
    return folder


async def ok(client: Client, name: str, arguments: dict[str, Any]) -> Any:
    error, answer = await call(client, name, arguments)
    assert not error, answer
    return answer


def test_rag_search_by_paper_answers_each_paper_once_with_its_best_chunk_first(
    data: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        papers = await ok(client, "rag_search", {"query": QUERY, "top_k": 5, "group_by": "paper"})
        Draft202012Validator(V11_OUTPUTS["rag.search"]).validate(papers)
        results = papers["results"]
        assert len(results) == 5  # top_k papers, though papers have several chunks each
        assert len({r["doc_id"] for r in results}) == 5
        scores = [r["score"] for r in results]
        assert scores == sorted(scores, reverse=True)
        assert any(r["other_chunks"] for r in results)
        for result in results:
            assert len(result["other_chunks"]) <= 2
            assert all(c["score"] <= result["score"] for c in result["other_chunks"])
            assert result["chunk_id"] not in {c["chunk_id"] for c in result["other_chunks"]}
        assert papers["nothing_relevant"] is False  # no floor for this embedder: not judged
        assert papers["warnings"] == []

        chunks = await ok(client, "rag_search", {"query": QUERY, "top_k": 20})
        assert "other_chunks" not in chunks["results"][0]
        assert chunks["results"][0]["doc_id"] == results[0]["doc_id"]
        assert len({r["doc_id"] for r in chunks["results"]}) < 20  # chunks repeat papers

        outcome = await services.search.search(QUERY, 5, group_by="paper")
        assert outcome.papers is not None
        assert [p.doc_id for p in outcome.papers] == [r["doc_id"] for r in results]
        assert all(c.doc_id == p.doc_id for p in outcome.papers for c in p.chunks)
        assert outcome.nothing_relevant is None

    serve(test_settings(data, fake.base_url), body)


def test_with_no_hit_over_the_floor_rag_search_says_so_and_search_goes_to_pubmed(
    data: Path, fake: FakeEutilsServer
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        found = await ok(client, "rag_search", {"query": OFF_TOPIC, "top_k": 5})
        Draft202012Validator(V11_OUTPUTS["rag.search"]).validate(found)
        assert found["nothing_relevant"] is True
        assert len(found["warnings"]) == 1
        assert found["warnings"][0].startswith(SAID)
        assert f"floor {UNREACHABLE:.2f}" in found["warnings"][0]
        assert found["results"]  # the closest hits are still shown

        fake.clear_log()
        answer = await ok(client, "search", {"query": "humans[mh]"})
        assert answer["source"] == "pubmed"
        assert answer["results"]
        assert "esearch" in [entry["endpoint"] for entry in fake.log]

        unusable = await ok(client, "search", {"query": OFF_TOPIC})  # PubMed finds none of it
        assert unusable == {"results": [], "source": "pubmed"}

    serve(test_settings(data, fake.base_url, biomcp_relevance_floor=UNREACHABLE), body)


def test_with_a_hit_over_the_floor_search_answers_from_the_corpus_one_paper_each(
    data: Path, fake: FakeEutilsServer
) -> None:
    best: list[float] = []

    async def measure(client: Client, server: BioMcpServer, services: Services) -> None:
        found = await ok(client, "rag_search", {"query": QUERY, "top_k": 20})
        best.append(max(r["sim"] for r in found["results"] if r["sim"] is not None))

    serve(test_settings(data, fake.base_url), measure)
    assert best[0] > 0.02, best  # the query shares words with the synthetic abstracts

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        found = await ok(client, "rag_search", {"query": QUERY, "top_k": 20})
        assert found["nothing_relevant"] is False
        assert found["warnings"] == []
        fake.clear_log()
        answer = await ok(client, "search", {"query": QUERY})
        assert answer["source"] == "corpus"
        assert len({r["id"] for r in answer["results"]}) == len(answer["results"]) == 10
        assert fake.log == []

    floor = round(best[0] - 0.01, 4)
    serve(test_settings(data, fake.base_url, biomcp_relevance_floor=floor), body)


def test_under_contract_1_0_group_by_is_accepted_and_the_answer_stays_spec_01s(
    data: Path, fake: FakeEutilsServer
) -> None:
    spec = spec_schemas()["rag.search"]["response"]

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        for arguments in (
            {"query": QUERY, "top_k": 5, "group_by": "paper"},
            {"query": OFF_TOPIC, "top_k": 5},
        ):
            answer = await ok(client, "rag_search", arguments)
            Draft202012Validator(spec).validate(answer)
            assert set(answer) == {"results"}
        papers = await ok(client, "rag_search", {"query": QUERY, "top_k": 5, "group_by": "paper"})
        assert len({r["doc_id"] for r in papers["results"]}) == 5  # one hit per paper

    settings = test_settings(
        data, fake.base_url, biomcp_contract="1.0", biomcp_relevance_floor=UNREACHABLE
    )
    serve(settings, body)


def test_an_unknown_grouping_is_a_validation_error(data: Path, fake: FakeEutilsServer) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, answer = await call(client, "rag_search", {"query": QUERY, "group_by": "author"})
        assert error
        assert answer["error"]["code"] == "VALIDATION"

    serve(test_settings(data, fake.base_url), body)


def test_the_cli_lists_papers_and_says_in_words_when_nothing_is_relevant(
    data: Path, fake: FakeEutilsServer, tmp_path: Path
) -> None:
    env = server_env(data, fake.base_url, BIOMCP_RELEVANCE_FLOOR=str(UNREACHABLE))
    table = run_biomcp(["search", OFF_TOPIC, "-n", "5"], env=env, cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    first, *rest = table.stdout.splitlines()
    assert first.startswith(SAID)
    assert f"floor {UNREACHABLE:.2f}" in first
    assert rest[0].startswith("5 results for")  # the closest papers, below the words

    done = run_biomcp(["search", OFF_TOPIC, "-n", "5", "--json"], env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["nothing_relevant"] is True
    assert answer["warnings"][0].startswith(SAID)
    assert len({r["doc_id"] for r in answer["results"]}) == 5

    plain = server_env(data, fake.base_url)
    papers = json.loads(run_biomcp(["search", QUERY, "--json"], env=plain, cwd=tmp_path).stdout)
    chunks = run_biomcp(["search", QUERY, "--json", "--chunks"], env=plain, cwd=tmp_path)
    hits = json.loads(chunks.stdout)["results"]
    assert papers["nothing_relevant"] is False
    assert len({r["doc_id"] for r in papers["results"]}) == len(papers["results"])
    assert len({r["doc_id"] for r in hits}) < len(hits)  # chunk rows repeat papers
    assert all("other_chunks" not in r for r in hits)


def test_the_library_answers_papers_and_the_verdict_when_asked_and_a_list_otherwise(
    data: Path, fake: FakeEutilsServer
) -> None:
    options: dict[str, Any] = {
        "biomcp_data_dir": data,
        "biomcp_embeddings": "deterministic",
        "ncbi_eutils_base_url": fake.base_url,
        "biomcp_relevance_floor": UNREACHABLE,
    }
    with biomcp.open_corpus(**options) as corpus:
        plain = corpus.search(QUERY, 5)
        assert isinstance(plain, list)
        assert len(plain) == 5
        outcome = corpus.search(QUERY, 5, group_by="paper")
        assert isinstance(outcome, SearchOutcome)
        assert outcome.papers is not None
        assert len({p.doc_id for p in outcome.papers}) == 5
        assert outcome.nothing_relevant is True
        assert outcome.floor == UNREACHABLE
        assert outcome.as_payload()["warnings"] == outcome.warnings
        chunks = asyncio.run(corpus.aio.search(QUERY, 5, group_by="chunk"))
        assert chunks.papers is None
        assert [h.doc_id for h in chunks.hits] == [h.doc_id for h in plain]

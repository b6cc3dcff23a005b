"""Trial registry ids on the corpus: a sync from the fake E-utilities stores the NCT ids of
the synthetic trials' DataBankLists, every chunk carries them, and `rag_search` (the use case
on both store pairs, and the MCP tool) keeps only records naming a given id, or any id.

The fake over HTTP, both store pairs (SQLite + embedded; PostgreSQL + Weaviate in CI), the
deterministic embedder; the tool through an in-process MCP client.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import jsonschema
import pytest
from mcp import Client

from biomcp.entrypoints.mcp.contract import V11_OUTPUTS
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.services import Services
from biomcp.testing.eutils import FakeEutilsServer
from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.search import SearchConfig, SearchCorpus
from tests.support.mcp_inprocess import call_json as _call
from tests.support.mcp_inprocess import serve, test_settings
from tests.support.sync_harness import (
    BackendSpec,
    SteppingClock,
    embedder,
    entrez_client,
    make_corpus,
    make_sync,
    matching,
    record_of,
    run,
)

pytestmark = pytest.mark.integration

N = 60
START, END = date(2024, 1, 1), date(2024, 6, 30)
NOW = datetime(2024, 7, 1, 12, tzinfo=UTC)
TERM = "Humans[mh]"
KEY = "trials_v1"
QUERY = "randomized trial outcomes in adults"


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    with FakeEutilsServer(make_corpus(N, START, END, seed=23), warm=True) as server:
        yield server


def _trials(fake: FakeEutilsServer) -> dict[str, tuple[str, ...]]:
    """PMID -> registry ids of the records the query brings (only those naming some)."""
    records = (record_of(fake.corpus, p) for p in matching(fake.corpus, "Humans"))
    return {r.pmid: r.trial_ids for r in records if r.trial_ids}


def test_a_synced_corpus_is_searched_by_a_registry_id_or_by_any(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    trials = _trials(fake)
    assert len(trials) >= 3, trials  # the fixture has several registered trials
    pmid, (nct,) = next(iter(trials.items()))

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        counting = embedder()
        entrez = entrez_client(fake.base_url)
        async with backend.stores(clock) as (metadata, vectors):
            sync = make_sync(entrez, metadata, vectors, counting, clock, backend.collection)
            await sync.run(KEY, TERM)
            stored = await metadata.get_documents(list(trials))
            assert {p: d.record.trial_ids for p, d in stored.items()} == trials

            config = SearchConfig(collection=backend.collection)
            search = SearchCorpus(vectors, counting, config=config, metadata=metadata)
            one = await search.run(QUERY, top_k=50, trial_id=nct.lower().replace("nct", "NCT "))
            assert {h.doc_id for h in one} == {f"pmid:{pmid}"}
            anything = await search.run(QUERY, top_k=100, trial_id="any")
            assert {h.doc_id.removeprefix("pmid:") for h in anything} == set(trials)
            both = await search.run(QUERY, top_k=50, trial_id="any", study_designs=["animal"])
            assert both == []  # the synthetic trials are human studies
            assert await search.run(QUERY, top_k=5, trial_id="NCT00000000") == []
            with pytest.raises(InvalidRequestError, match="not a trial registry id"):
                await search.run(QUERY, top_k=5, trial_id="NCT-123")
        await entrez.aclose()

    run(scenario())


def test_the_rag_tools_filter_by_and_show_a_registry_id(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    trials = _trials(fake)
    pmid, (nct,) = sorted(trials.items())[-1]

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, report = await _call(client, "pubmed_sync_delta", {"query_key": KEY, "term": TERM})
        assert not error, report

        error, found = await _call(client, "rag_search", {"query": QUERY, "trial_id": nct})
        assert not error, found
        jsonschema.validate(found, V11_OUTPUTS["rag.search"])
        assert {r["doc_id"] for r in found["results"]} == {f"pmid:{pmid}"}

        error, doc = await _call(client, "rag_get", {"doc_id": f"pmid:{pmid}"})
        assert not error, doc
        jsonschema.validate(doc, V11_OUTPUTS["rag.get"])
        assert doc["trial_ids"] == [nct]

        error, refused = await _call(client, "rag_search", {"query": QUERY, "trial_id": "x1"})
        assert error
        assert refused["error"]["code"] == "VALIDATION"

    serve(test_settings(tmp_path, fake.base_url), body)


def test_under_contract_1_0_rag_get_has_no_registry_ids(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    pmid = next(iter(_trials(fake)))

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, report = await _call(client, "pubmed_sync_delta", {"query_key": KEY, "term": TERM})
        assert not error, report
        error, doc = await _call(client, "rag_get", {"doc_id": f"pmid:{pmid}"})
        assert not error, doc
        assert "trial_ids" not in doc

    serve(test_settings(tmp_path, fake.base_url, biomcp_contract="1.0"), body)

"""`corpus_overview`: what the corpus holds and every saved query (key, term, checkpoint, last
sync's status, PMIDs pending), through an in-process MCP client on a corpus synced from the
fake E-utilities over HTTP (SQLite + the embedded store, the deterministic embedder)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path

import jsonschema
import pytest
from mcp import Client

from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.mcp.tools.corpus.schemas import CORPUS_OVERVIEW_OUTPUT
from biomcp.entrypoints.services import Services
from biomcp.ports.jobs import SyncJob
from biomcp.testing.eutils import FakeEutilsServer
from tests.support.mcp_inprocess import call_json, serve, test_settings
from tests.support.sync_harness import make_corpus, matching

pytestmark = pytest.mark.integration

MESH = "Humans"


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    with FakeEutilsServer(make_corpus(40, date(2024, 1, 1), date(2024, 6, 30)), warm=True) as f:
        yield f


def test_corpus_overview_lists_every_saved_query_with_its_term(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    humans = matching(fake.corpus, MESH)

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, empty = await call_json(client, "corpus_overview", {})
        assert not error, empty
        assert empty == {
            "records": 0,
            "chunks": 0,
            "queries_total": 0,
            "fulltext": {},
            "queries": [],
        }

        term = f"{MESH}[mh]"
        error, synced = await call_json(
            client, "pubmed_sync_delta", {"query_key": "humans_v1", "term": term}
        )
        assert not error, synced
        error, _ = await call_json(
            client, "corpus_checkpoint_set", {"query_key": "planned", "last_edat": "2024-01-01"}
        )
        assert not error
        # a key whose first sync failed: a job, no checkpoint
        [job] = await services.metadata.list_jobs("humans_v1", limit=1)
        await services.metadata.record_job(
            SyncJob("sync_failed_1", "broken_v1", "x[ti]", job.started_at, None, "failed")
        )

        error, overview = await call_json(client, "corpus_overview", {})
        assert not error, overview
        jsonschema.validate(overview, CORPUS_OVERVIEW_OUTPUT)
        assert overview["records"] == len(humans)
        assert overview["chunks"] >= len(humans)
        assert overview["queries_total"] == 3
        by_key = {q["query_key"]: q for q in overview["queries"]}
        assert list(by_key) == ["broken_v1", "humans_v1", "planned"]
        assert by_key["humans_v1"] == {
            "query_key": "humans_v1",
            "term": term,
            "last_edat": synced["max_edat_seen"],
            "last_sync": "succeeded",
            "records": len(humans),
            "pending_pmids": 0,
            "fulltext": False,
        }
        assert overview["fulltext"] == {}  # no saved query keeps full text
        assert by_key["planned"]["term"] is None  # set by hand, never synced
        assert by_key["planned"]["records"] == by_key["broken_v1"]["records"] == 0
        assert by_key["planned"]["last_edat"] == "2024-01-01T00:00:00Z"
        assert (by_key["broken_v1"]["term"], by_key["broken_v1"]["last_edat"]) == ("x[ti]", None)
        assert by_key["broken_v1"]["last_sync"] == "failed"

        listed = {t.name: t for t in (await client.list_tools()).tools}["corpus_overview"]
        assert listed.annotations is not None
        assert listed.annotations.read_only_hint is True

    serve(test_settings(tmp_path, fake.base_url), body)


def test_a_read_only_server_lists_corpus_overview_without_the_sync_advice(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert "pubmed_sync_delta" not in listed
        description = listed["corpus_overview"].description or ""
        assert "pubmed_sync_delta" not in description
        assert "<!--" not in description
        error, overview = await call_json(client, "corpus_overview", {})
        assert not error, overview

    serve(test_settings(tmp_path, fake.base_url, biomcp_read_only=True), body)

"""A relative `BIOMCP_DATA_DIR` is read against the working folder once, at start: the corpus
tools and the warm-up then work on it as on an absolute one (through an in-process MCP client,
on a corpus synced from the fake E-utilities over HTTP)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest
from mcp import Client

from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.services import Services, build_services
from biomcp.testing.eutils import FakeEutilsServer
from tests.support.mcp_inprocess import call_json, serve, test_settings
from tests.support.sync_harness import make_corpus, matching

pytestmark = pytest.mark.integration


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    with FakeEutilsServer(make_corpus(20, date(2024, 1, 1), date(2024, 3, 31)), warm=True) as f:
        yield f


def test_a_relative_data_dir_serves_the_overview_and_the_warm_up(
    fake: FakeEutilsServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = test_settings(Path("corpus"), fake.base_url)
    assert settings.biomcp_data_dir == tmp_path / "corpus"
    humans = matching(fake.corpus, "Humans")

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, synced = await call_json(
            client, "pubmed_sync_delta", {"query_key": "humans_v1", "term": "Humans[mh]"}
        )
        assert not error, synced
        error, overview = await call_json(client, "corpus_overview", {})
        assert not error, overview
        assert overview["records"] == len(humans) > 0
        assert [q["query_key"] for q in overview["queries"]] == ["humans_v1"]

    serve(settings, body)
    assert (tmp_path / "corpus" / "biomcp.sqlite3").is_file()

    caplog.set_level("INFO", logger="biomcp.services")
    services = build_services(settings)

    async def warm() -> None:
        try:
            await services.warm_up()
        finally:
            await services.aclose()

    asyncio.run(warm())
    records = [r for r in caplog.records if r.name == "biomcp.services"]
    assert [r.levelname for r in records] == ["INFO"], [r.getMessage() for r in records]
    assert records[0].getMessage().startswith(f"ready: {len(humans)} records, ")

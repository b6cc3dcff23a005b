"""The saved query's use case and the diagnostics one answer what the entry points used to read
from the ports themselves: the list of saved queries, their checkpoints, which queries hold a
record, the records none holds, the overview; the health of the database, the vector store
and NCBI. On a corpus synced from the fake E-utilities over HTTP (SQLite, embedded store)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from biomcp.entrypoints.services import build_services
from biomcp.testing.eutils import FakeEutilsServer
from tests.support.mcp_inprocess import test_settings
from tests.support.sync_harness import make_corpus, matching

pytestmark = pytest.mark.integration


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    with FakeEutilsServer(make_corpus(30, date(2024, 1, 1), date(2024, 6, 30)), warm=True) as f:
        yield f


def test_the_saved_queries_use_case_lists_holds_counts_and_overviews(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    humans = sorted(matching(fake.corpus, "Humans"))
    settings = test_settings(tmp_path, fake.base_url)

    async def scenario() -> None:
        services = build_services(settings)
        saved = services.saved_queries
        try:
            assert await saved.every() == []
            assert await saved.checkpoints() == []
            await services.sync.run("zeta", "Humans[mh]")
            await services.sync.run("alpha", "Humans[mh]")
            await saved.set("planned", "2024-01-01T00:00:00Z")

            assert [q.query_key for q in await saved.every()] == ["alpha", "planned", "zeta"]
            assert [c.query_key for c in await saved.checkpoints()] == ["alpha", "planned", "zeta"]
            assert await saved.holding([humans[0], "999999999"]) == {humans[0]: ["alpha", "zeta"]}
            assert await saved.unheld_count() == 0
            await saved.forget("zeta")
            await saved.forget("alpha")
            assert await saved.unheld_count() == len(humans)

            overview = await saved.overview()
            assert overview["records"] == len(humans)
            assert overview["queries_total"] == 1  # only "planned" is left
            assert overview["queries"][0]["query_key"] == "planned"
        finally:
            await services.aclose()

    asyncio.run(scenario())


def test_diagnostics_report_the_database_the_corpus_and_ncbi(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    settings = test_settings(tmp_path, fake.base_url)

    async def scenario() -> None:
        services = build_services(settings)
        diagnostics = services.diagnostics
        try:
            health = await diagnostics.metadata_health()
            assert (health.problems, health.records) == ([], 0)
            assert await diagnostics.corpus_stats() is None  # nothing indexed yet
            assert await diagnostics.readiness() == {"metadata": "ok", "vectors": "ok"}
            fake.clear_log()
            assert await diagnostics.ncbi_count() == 0  # no fake record mentions "pubmed"
            assert [entry["endpoint"] for entry in fake.log] == ["esearch"]

            report = await services.sync.run("all", "Humans[mh]")
            health = await diagnostics.metadata_health()
            assert health.records == report.inserted
            stats = await diagnostics.corpus_stats()
            assert stats is not None
            assert stats.documents == report.inserted
        finally:
            await services.aclose()

    asyncio.run(scenario())

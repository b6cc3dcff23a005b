"""`biomcp doctor` on a vector index that lags behind the metadata database: the console script
forked from a process that imported bio-mcp already (`tests/support/forked`), over the fake
E-utilities and the embedded stores."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from biomcp.adapters.sql import SqlMetadataStore
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from tests.support.cli import make_cli
from tests.support.sql_records import full_record, upsert_of

pytestmark = pytest.mark.e2e

RECORDS = 12


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(RECORDS, start=date(2021, 1, 1), end=date(2021, 6, 30), seed=7)
    )
    with FakeEutilsServer(corpus) as server:
        yield server


def test_an_index_behind_the_database_is_a_warning_and_the_corpus_is_still_reported(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    cli = make_cli(fake, tmp_path)
    synced = cli.json("sync", "-k", "all_v1", "-t", "Journal Article[pt]")

    async def index_one_more_in_sql_only() -> None:
        store = SqlMetadataStore(data_dir=Path(cli.env["BIOMCP_DATA_DIR"]))
        try:
            await store.upsert_documents([upsert_of(full_record("99999901"))])
            await store.mark_indexed({"99999901": 1})
        finally:
            await store.aclose()

    asyncio.run(index_one_more_in_sql_only())
    done = cli("doctor", "--json", "--offline")
    checks = {check["name"]: check for check in json.loads(done.stdout)["checks"]}
    assert done.returncode == 0, done.stdout  # a warning, not a failure
    assert checks["vector store"]["status"] == "warn"
    assert "biomcp index rebuild" in checks["vector store"]["detail"]
    assert checks["corpus"]["status"] == "ok"
    assert checks["corpus"]["detail"].startswith(
        f"{RECORDS + 1} records, {synced['chunks_written']:,} chunks, 1 saved query"
    )

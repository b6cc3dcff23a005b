"""Replicas over PostgreSQL share NCBI's rate: five processes with data folders of their own (as
on several machines), searching and fetching at once, are granted at most 3 starts (10 with a
key) in any window plus margin, by the database's own clock. Arrivals at the fake are not held
to the rule: on a loaded machine a request can arrive later than it started by more than the
margin (the benchmark `ncbi_budget` measures them)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import psycopg
import pytest

from biomcp.adapters.entrez.budget_sql import libpq_url
from biomcp.adapters.entrez.ratelimit import MARGIN_S, WINDOW_S
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from tests.support.budget_audit import (
    SQL_ROUNDING_S,
    audited_starts,
    every_arrival_granted,
    install_budget_audit,
)
from tests.support.in_step import run_in_step
from tests.support.services import postgres_url
from tests.support.sql_databases import migrated_postgres_schema
from tests.support.virtual_time import most_in_span

pytestmark = pytest.mark.integration

_CHILD = """
import asyncio, json, sys
from pathlib import Path
from biomcp.adapters.entrez.client import EntrezSettings, HttpEntrezClient

async def main() -> None:
    base, folder, database, key, kind, count = sys.argv[1:7]
    settings = EntrezSettings(
        base_url=base, api_key=key or None, budget_dir=Path(folder), budget_database_url=database
    )
    client = HttpEntrezClient(settings)
    try:
        await client.einfo()  # a running replica: imports done, connections open
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.readline)  # every replica is up: go
        if kind == "search":
            calls = [client.esearch("asthma", retmax=1) for _ in range(int(count))]
        else:
            calls = [client.efetch([pmid]) for pmid in sys.argv[7 : 7 + int(count)]]
        await asyncio.gather(*calls)
    finally:
        await client.aclose()
    print(json.dumps(list(client._limiter.history())[1:]))

asyncio.run(main())
"""


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(20, start=date(2021, 1, 1), end=date(2021, 6, 30), seed=5)
    )
    with FakeEutilsServer(corpus) as server:
        yield server


@pytest.fixture
def database() -> Iterator[str]:
    """A migrated, empty schema of the test PostgreSQL, keeping every start granted."""
    with migrated_postgres_schema(postgres_url()) as url:
        install_budget_audit(url)
        yield url


def _run_replicas(
    fake: FakeEutilsServer, database: str, tmp_path: Path, key: str, each: int
) -> list[float]:
    """Three searching and two fetching processes at once, each in its own data folder and
    sending `each` requests; their starts."""
    pmids = sorted(fake.corpus.pmids())[:each]
    argvs = []
    for number, kind in enumerate(["search"] * 3 + ["fetch"] * 2):
        folder = tmp_path / f"replica-{number}"
        folder.mkdir()
        argvs.append([fake.base_url, str(folder), database, key, kind, str(each), *pmids])
    starts: list[float] = []
    for out, err in run_in_step(fake, _CHILD, argvs, timeout_s=180):
        assert "cannot be used" not in err  # no process fell back to its own share
        starts.extend(json.loads(out))
    assert not list(tmp_path.glob("*/ncbi-budget-*.bin"))  # the database held the budget
    with psycopg.connect(libpq_url(database)) as conn:
        (rows,) = conn.execute("SELECT count(*) FROM ncbi_budget_starts").fetchone() or (0,)
    assert rows > 0
    return starts


@pytest.mark.parametrize(("key", "limit", "each"), [("", 3, 4), ("replica-key", 10, 6)])
def test_five_replicas_on_postgresql_keep_to_ncbis_rate_together(
    fake: FakeEutilsServer, database: str, tmp_path: Path, key: str, limit: int, each: int
) -> None:
    starts = _run_replicas(fake, database, tmp_path, key, each)

    log = [entry for entry in fake.log if entry["endpoint"] in {"esearch", "efetch"}]
    assert len(log) == len(starts) == 5 * each
    assert all(entry["has_api_key"] == bool(key) for entry in log)
    granted = audited_starts(database)  # each replica's einfo and any start taken again too
    assert len(granted) >= 5 * (each + 1)
    assert most_in_span(granted, WINDOW_S + MARGIN_S - SQL_ROUNDING_S) <= limit
    assert every_arrival_granted([entry["t"] for entry in log], granted)

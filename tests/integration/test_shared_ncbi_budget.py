"""Processes that share a data folder share NCBI's rate: three of them, each sending a burst,
are granted at most 3 starts in any window plus margin, by the shared file's own clock.

The arrivals at the fake are counted too, but not held to the rule here. On a loaded machine a
request can reach the fake later than it started, by more than the margin. The benchmark
`ncbi_budget` measures the arrivals."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from biomcp.adapters.entrez.ratelimit import MARGIN_S, WINDOW_S
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from tests.support.budget_audit import AUDITED_FILE_LOG, every_arrival_granted
from tests.support.in_step import run_in_step
from tests.support.virtual_time import most_in_span

pytestmark = pytest.mark.integration

_CHILD = (
    AUDITED_FILE_LOG
    + """
import asyncio, json, sys
from pathlib import Path
from biomcp.adapters.entrez.client import EntrezSettings, HttpEntrezClient

async def main() -> None:
    folder = Path(sys.argv[2]) if sys.argv[2] != "-" else None
    client = HttpEntrezClient(EntrezSettings(base_url=sys.argv[1], budget_dir=folder))
    try:
        await client.einfo()  # a running process: imports done, connection open
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.readline)  # every process is up: go
        await asyncio.gather(*(client.esearch("asthma", retmax=1) for _ in range(int(sys.argv[3]))))
    finally:
        await client.aclose()
    print(json.dumps(granted_starts()[1:]))

asyncio.run(main())
"""
)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(20, start=date(2021, 1, 1), end=date(2021, 6, 30), seed=5)
    )
    with FakeEutilsServer(corpus) as server:
        yield server


def _run_together(fake: FakeEutilsServer, folder: Path, processes: int, each: int) -> list[float]:
    """Start `processes` clients at once, each sending `each` requests; the starts the shared
    file granted them (wall clock)."""
    argv = [fake.base_url, str(folder), str(each)]
    answers = run_in_step(fake, _CHILD, [argv] * processes, timeout_s=120)
    return [start for out, _ in answers for start in json.loads(out)]


def test_three_processes_on_one_data_folder_are_granted_three_starts_a_window(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    starts = _run_together(fake, tmp_path, processes=3, each=4)

    arrivals = [entry for entry in fake.log if entry["endpoint"] == "esearch"]
    assert len(arrivals) == len(starts) == 12
    # Alone, each process would start its 4 at once: together, never 4 within one span.
    assert most_in_span(starts, WINDOW_S + MARGIN_S) <= 3
    assert every_arrival_granted([entry["t"] for entry in arrivals], starts)
    assert list(tmp_path.glob("ncbi-budget-*.bin"))

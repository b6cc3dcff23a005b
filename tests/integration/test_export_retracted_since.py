"""`export --new` carries a record exported before and retracted since, flagged, once: the fake
E-utilities over HTTP (SYNTHETIC articles), the sync with its retraction re-check, and the
real stores of each backend.

Sync, export new, the fake retracts a record, sync again (the re-check stores it flagged),
export new: exactly that record, flagged; a third export new does not carry it again.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import pytest
import rispy

from biomcp.ports.vectors import SearchFilters
from biomcp.testing.eutils import FakeEutilsServer
from biomcp.usecases.export import ExportRecords, ExportSummary
from tests.support.sync_harness import (
    BackendSpec,
    SteppingClock,
    embedder,
    entrez_client,
    make_corpus,
    make_sync,
    matching,
    run,
)

pytestmark = pytest.mark.integration

START, END = date(2024, 1, 1), date(2024, 6, 30)
NOW = datetime(2024, 7, 1, 12, tzinfo=UTC)
MESH = "Humans"
TERM = f"{MESH}[mh]"
KEY = "screened_v1"
NOTICE = "39000001"


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    with FakeEutilsServer(make_corpus(60, START, END, seed=7), warm=True) as server:
        yield server


def _retract(fake: FakeEutilsServer, pmid: str) -> None:
    answer = httpx.post(
        f"{fake.base_url}/_fake/retract",
        json={"pmid": pmid, "notice_pmid": NOTICE, "source": "J Fake Res. 2024;1:e1"},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text


async def _new(
    export: ExportRecords, *, format: str = "pmids", **options: Any
) -> tuple[str, ExportSummary]:
    """One complete `new` export of `KEY` (its mark moved on)."""
    out = io.StringIO()
    summary = await export.run(out.write, format=format, query_key=KEY, new=True, **options)
    await export.mark(summary)
    return out.getvalue(), summary


def test_a_record_retracted_since_the_last_export_is_carried_flagged_once(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    expected = matching(fake.corpus, MESH)
    old = matching(fake.corpus, MESH, hi=END - timedelta(days=60))  # outside the sync window
    target, neighbour = old[0], old[1]

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        entrez = entrez_client(fake.base_url)
        async with backend.stores(clock) as (metadata, vectors):
            sync = make_sync(entrez, metadata, vectors, embedder(), clock, backend.collection)
            await sync.run(KEY, TERM)
            export = ExportRecords(metadata, clock=clock)
            first, summary = await _new(export)
            assert sorted(first.split(), key=int) == sorted(expected, key=int)
            assert summary.retracted_carried == 0

            clock.advance(timedelta(days=1))
            _retract(fake, target)
            clock.advance(timedelta(days=1))
            report = await sync.run(KEY, TERM)
            assert report.newly_retracted == (target,)

            text, carried = await _new(export, format="ris")
            (entry,) = rispy.loads(text)
            assert entry["accession_number"] == target
            assert any("RETRACTED" in note for note in entry["notes"])
            assert (carried.considered, carried.exported) == (1, 1)
            assert (carried.retracted_carried, carried.retracted_left_out) == (1, 0)
            assert carried.as_payload()["retracted_carried"] == 1

            again, last = await _new(export)
            assert again == ""
            assert (last.considered, last.retracted_carried) == (0, 0)

            # A carried record passes a lowest quality it may now fail (no record scores 11).
            clock.advance(timedelta(days=1))
            _retract(fake, neighbour)
            clock.advance(timedelta(days=1))
            await sync.run(KEY, TERM)
            strict = SearchFilters(min_quality=11)
            text, summary = await _new(export, filters=strict)
            assert text.split() == [neighbour]
            assert (summary.retracted_carried, summary.filtered_out) == (1, 0)
        await entrez.aclose()

    run(scenario())

"""`export --new` carries an earlier record of its key on the moment the store first wrote it
retracted, over the real SQL stores of each backend: one retracted before the first export is
never carried, one retracted between two exports is carried by the next one only, however often
later syncs see it again (a replay, or a new version still retracted)."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import rispy

from biomcp.domain.records import Notice, NoticeKind, PubMedRecord
from biomcp.ports.metadata import MetadataStore
from biomcp.usecases.export import ExportRecords, ExportSummary
from tests.support.sql_records import full_record, upsert_of
from tests.support.sync_harness import BackendSpec, SteppingClock, run

pytestmark = pytest.mark.integration

KEY = "screened_v1"
START = datetime(2025, 9, 1, 6, tzinfo=UTC)
EARLY, LATE, STEADY, ADDED = "33000001", "33000002", "33000003", "33000004"


def _plain(pmid: str) -> PubMedRecord:
    return full_record(pmid, notices=())


def _retracted(record: PubMedRecord) -> PubMedRecord:
    notice = Notice(NoticeKind.RETRACTION_IN, pmid="33999999", source="J Fake Res. 2025;1:e1")
    return replace(record, notices=(notice,))


def _revised(record: PubMedRecord) -> PubMedRecord:
    """`record` as PubMed revises it later (LR advanced): a new stored version."""
    assert record.lr is not None
    return replace(record, lr=record.lr + timedelta(days=90))


@asynccontextmanager
async def _store(backend: BackendSpec, clock: SteppingClock) -> AsyncIterator[MetadataStore]:
    """A metadata store of `backend` on `clock`, closed after."""
    metadata = backend.metadata(clock)
    try:
        yield metadata
    finally:
        await metadata.aclose()


async def _sync(metadata: MetadataStore, clock: SteppingClock, *records: PubMedRecord) -> None:
    """What a sync of `KEY` a day later stores."""
    clock.advance(timedelta(days=1))
    await metadata.upsert_documents([upsert_of(r) for r in records], held_by=KEY)


async def _new(
    export: ExportRecords, *, format: str = "pmids", **options: Any
) -> tuple[str, ExportSummary]:
    """One complete `new` export of `KEY` (its mark moved on)."""
    out = io.StringIO()
    summary = await export.run(out.write, format=format, query_key=KEY, new=True, **options)
    await export.mark(summary)
    return out.getvalue(), summary


def test_a_record_retracted_before_its_first_export_is_not_carried_again(
    backend: BackendSpec,
) -> None:
    early = _retracted(_plain(EARLY))

    async def scenario() -> None:
        clock = SteppingClock(START)
        async with _store(backend, clock) as metadata:
            export = ExportRecords(metadata, clock=clock)
            await _sync(metadata, clock, early, _plain(STEADY))
            first, summary = await _new(export, include_retracted=True)
            assert first.split() == [EARLY, STEADY]
            assert summary.retracted_carried == 0

            # Later syncs see it again: a replay, then a new version, still retracted.
            await _sync(metadata, clock, early, _plain(STEADY))
            await _sync(metadata, clock, _revised(early), _plain(ADDED))
            second, summary = await _new(export, include_retracted=True)
            assert second.split() == [ADDED]
            assert (summary.considered, summary.retracted_carried) == (1, 0)

    run(scenario())


def test_a_record_retracted_between_two_exports_is_carried_by_the_next_one_only(
    backend: BackendSpec,
) -> None:
    late = _plain(LATE)

    async def scenario() -> None:
        clock = SteppingClock(START)
        async with _store(backend, clock) as metadata:
            export = ExportRecords(metadata, clock=clock)
            await _sync(metadata, clock, late, _plain(STEADY))
            first, _ = await _new(export)
            assert first.split() == [LATE, STEADY]

            await _sync(metadata, clock, _retracted(late), _plain(STEADY))  # the re-check
            text, carried = await _new(export, format="ris")
            (entry,) = rispy.loads(text)
            assert entry["accession_number"] == LATE
            assert any("RETRACTED" in note for note in entry["notes"])
            assert (carried.considered, carried.exported, carried.retracted_carried) == (1, 1, 1)

            # Seen again by later syncs, retracted still: a replay, then a new version.
            await _sync(metadata, clock, _retracted(late), _plain(STEADY))
            await _sync(metadata, clock, _revised(_retracted(late)), _plain(ADDED))
            again, last = await _new(export)
            assert again.split() == [ADDED]
            assert (last.considered, last.retracted_carried) == (1, 0)
            nothing, empty = await _new(export)
            assert (nothing, empty.considered) == ("", 0)

    run(scenario())

"""`ExportRecords` over the real SQL stores (SQLite; PostgreSQL in CI): every record of the
corpus or of one saved query, in PMID order across pages, search's filters with every record
accounted for, the saved query's key rules, and `jsonl` as `rag_get`'s payload."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import rispy

from biomcp.domain.records import Notice, NoticeKind, PubDate
from biomcp.ports.jobs import SyncJob
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.vectors import SearchFilters
from biomcp.usecases.documents import GetDocument
from biomcp.usecases.errors import InvalidRequestError, NotFoundError
from biomcp.usecases.export import ExportRecords, ExportSummary
from tests.support.sql_records import full_record, upsert_of
from tests.support.sync_harness import BackendSpec, SteppingClock, Untracked, run

pytestmark = pytest.mark.integration

#: More than two of the export's pages (500), PMIDs of different lengths so that text order
#: and number order differ (9 < 10 < 100 as numbers, not as text).
PMIDS = [str(n) for n in (*range(1, 13), *range(95, 105), *range(10_000, 11_100))]
RCT_TYPES = ("Journal Article", "Randomized Controlled Trial")


def _record(pmid: str) -> Any:
    n = int(pmid)
    record = full_record(pmid, pdat=PubDate(2000 + n % 20))
    if n % 3 == 0:
        record = replace(record, publication_types=("Journal Article", "Case Reports"))
    else:
        record = replace(record, publication_types=RCT_TYPES)
    if n % 7 == 0:
        record = replace(record, notices=(Notice(kind=NoticeKind.RETRACTION_IN, pmid="1"),))
    else:
        record = replace(record, notices=())
    return record


async def _store(metadata: MetadataStore) -> None:
    docs = [upsert_of(_record(p)) for p in PMIDS]
    await metadata.upsert_documents(docs[:600], held_by="first")
    await metadata.upsert_documents(docs[600:], held_by="second")
    await metadata.upsert_documents(docs[590:610], held_by="second")  # ten held by both


@asynccontextmanager
async def _stored(
    backend: BackendSpec, clock: SteppingClock | None = None
) -> AsyncIterator[MetadataStore]:
    """A metadata store of `backend` holding the records of `_store`, closed after."""
    metadata = backend.metadata(clock)
    try:
        await _store(metadata)
        yield metadata
    finally:
        await metadata.aclose()


async def _export(
    metadata: MetadataStore, clock: SteppingClock | None = None, **options: Any
) -> tuple[str, ExportSummary]:
    out = io.StringIO()
    clock = clock or SteppingClock(datetime(2026, 11, 28, tzinfo=UTC))
    summary = await ExportRecords(metadata, clock=clock).run(out.write, **options)
    return out.getvalue(), summary


def test_every_record_in_pmid_order_across_pages(backend: BackendSpec) -> None:
    async def scenario() -> None:
        async with _stored(backend) as metadata:
            text, summary = await _export(metadata, format="pmids", include_retracted=True)
            assert text.splitlines() == sorted(PMIDS, key=int)
            assert summary.as_payload() == {
                "format": "pmids",
                "query_key": None,
                "added_since": None,
                "considered": len(PMIDS),
                "exported": len(PMIDS),
                "filtered_out": 0,
                "retracted_left_out": 0,
                "next_added_since": None,
                "sync_running": False,
                "new": False,
            }
            # The same corpus exports to the same text.
            again, _ = await _export(metadata, format="pmids", include_retracted=True)
            assert again == text

    run(scenario())


def test_one_saved_query_and_the_filters_account_for_every_record(backend: BackendSpec) -> None:
    second = sorted(PMIDS[590:], key=int)
    retracted = [p for p in second if int(p) % 7 == 0]

    async def scenario() -> None:
        async with _stored(backend) as metadata:
            text, summary = await _export(metadata, format="pmids", query_key=" second ")
            assert text.splitlines() == [p for p in second if p not in retracted]
            assert (summary.query_key, summary.considered) == ("second", len(second))
            assert summary.retracted_left_out == len(retracted)

            # Trials from 2005-2010 only: the rest is counted, not lost.
            wanted = [
                p
                for p in second
                if int(p) % 3 and 2005 <= 2000 + int(p) % 20 <= 2010 and int(p) % 7
            ]
            text, summary = await _export(
                metadata,
                format="csv",
                query_key="second",
                filters=SearchFilters(year_min=2005, year_max=2010),
                study_designs=["RCT"],
            )
            rows = list(csv.DictReader(io.StringIO(text)))
            assert [r["pmid"] for r in rows] == wanted
            assert {r["study_design"] for r in rows} == {"rct"}
            both = set(PMIDS[590:600])  # held by the first query too
            assert both & set(wanted)
            assert {r["pmid"]: r["saved_queries"] for r in rows} == {
                p: "first; second" if p in both else "second" for p in wanted
            }
            assert summary.exported == len(wanted)
            assert (
                summary.exported + summary.filtered_out + summary.retracted_left_out
                == summary.considered
                == len(second)
            )

            # Retracted records asked for come flagged.
            text, summary = await _export(
                metadata, format="ris", query_key="second", include_retracted=True
            )
            entries = rispy.loads(text)
            assert [e["accession_number"] for e in entries] == second
            flagged = [e["accession_number"] for e in entries if "RETRACTED" in e["notes"][0]]
            assert flagged == retracted
            assert summary.retracted_left_out == 0

    run(scenario())


def test_jsonl_is_the_rag_get_payload(backend: BackendSpec) -> None:
    async def scenario() -> None:
        async with _stored(backend) as metadata:
            text, summary = await _export(
                metadata, format="JSONL", filters=SearchFilters(doc_ids=frozenset({"pmid:97"}))
            )
            shown = await GetDocument(metadata).run("97")
            assert [json.loads(line) for line in text.splitlines()] == [shown]
            assert shown["fulltext"] is None  # never checked: its query keeps no full text
            assert (summary.exported, summary.filtered_out) == (1, len(PMIDS) - 1)

    run(scenario())


def test_the_key_rules_are_searchs(backend: BackendSpec) -> None:
    async def scenario() -> None:
        async with _stored(backend) as metadata:
            with pytest.raises(NotFoundError, match="first, second") as missing:
                await _export(metadata, query_key="frist")
            assert missing.value.details == {
                "query_key": "frist",
                "saved_queries": ["first", "second"],
            }
            untracked: Any = Untracked(metadata, "first")
            with pytest.raises(InvalidRequestError, match="biomcp sync -k first --rescan"):
                await _export(untracked, query_key="first")
            with pytest.raises(InvalidRequestError, match="query_key is empty"):
                await _export(metadata, query_key="  ")
            with pytest.raises(InvalidRequestError, match="use ris, bibtex, csv, jsonl, pmids"):
                await _export(metadata, format="endnote")
            with pytest.raises(InvalidRequestError, match="unknown study design 'trial'"):
                await _export(metadata, study_designs=["trial"])
            with pytest.raises(InvalidRequestError, match="unknown evidence type"):
                await _export(metadata, filters=SearchFilters(evidence_types=frozenset({"x"})))

    run(scenario())


def test_journals_match_as_search_matches_them(backend: BackendSpec) -> None:
    async def scenario() -> None:
        async with _stored(backend) as metadata:
            journal = frozenset({"THE NEW ENGLAND journal of medicine"})  # any case
            _, summary = await _export(
                metadata, query_key="first", filters=SearchFilters(journals=journal)
            )
            assert (summary.exported, summary.filtered_out) == (
                summary.considered - summary.retracted_left_out,
                0,
            )
            other = frozenset({"The Lancet"})
            text, summary = await _export(
                metadata, query_key="first", filters=SearchFilters(journals=other)
            )
            assert (text, summary.exported, summary.filtered_out) == ("", 0, 600)

    run(scenario())


def test_a_living_review_exports_what_its_query_brought_since_the_last_screening(
    backend: BackendSpec,
) -> None:
    clock = SteppingClock(datetime(2026, 11, 1, tzinfo=UTC))

    async def scenario() -> None:
        async with _stored(backend, clock) as metadata:  # every record on 1 November
            clock.advance(timedelta(days=7))
            screened = clock.peek()
            newer = [upsert_of(_record(p)) for p in ("13", "14", "15", "21")]  # 14, 21: retracted
            await metadata.upsert_documents(newer, held_by="second")
            await metadata.upsert_documents([upsert_of(_record("16"))], held_by="first")

            text, summary = await _export(
                metadata, format="pmids", query_key="second", added_since=screened
            )
            brought = [p for p in ("13", "14", "15", "21") if int(p) % 7]
            assert text.splitlines() == brought
            assert summary.considered == 4
            assert summary.as_payload()["added_since"] == "2026-11-08T00:00:00Z"
            # A naive moment is read as UTC; a later one finds nothing.
            _, naive = await _export(
                metadata, query_key="second", added_since=screened.replace(tzinfo=None)
            )
            assert naive.considered == 4
            _, later = await _export(
                metadata, query_key="second", added_since=clock.peek() + timedelta(days=1)
            )
            assert (later.considered, later.exported) == (0, 0)
            with pytest.raises(InvalidRequestError, match="added_since needs a query_key"):
                await _export(metadata, added_since=screened)

    run(scenario())


def test_the_next_export_starts_where_this_one_read_or_where_a_running_sync_began(
    backend: BackendSpec,
) -> None:
    """A living review passes each export's `next_added_since` to the next one. A sync stores
    its records at its own times but they are seen only once it commits: while one runs, the
    next export starts from its start, so what it commits after this export's read is not
    lost (and at most its records are exported twice)."""
    clock = SteppingClock(datetime(2026, 11, 1, tzinfo=UTC))

    async def scenario() -> None:
        async with _stored(backend, clock) as metadata:
            clock.advance(timedelta(days=7))
            read_at = clock.peek()
            _, first = await _export(metadata, clock, query_key="second")
            assert (first.next_added_since, first.sync_running) == (read_at, False)
            assert first.as_payload()["next_added_since"] == "2026-11-08T00:00:00Z"
            _, corpus = await _export(metadata, clock)  # the corpus has no "what is new"
            assert (corpus.next_added_since, corpus.as_payload()["next_added_since"]) == (
                None,
                None,
            )

            # A sync of the key starts and stores records; it has not finished.
            clock.advance(timedelta(hours=1))
            began = clock.now()
            job = SyncJob("sync_a", "second", "term", began, None, "running")
            await metadata.record_job(job)
            await metadata.upsert_documents([upsert_of(_record("13"))], held_by="second")
            text, during = await _export(
                metadata, clock, format="pmids", query_key="second", added_since=read_at
            )
            assert text.split() == ["13"]
            assert (during.next_added_since, during.sync_running) == (began, True)

            # What the sync stores after that export counts from its start, not from the read.
            await metadata.upsert_documents([upsert_of(_record("15"))], held_by="second")
            await metadata.record_job(replace(job, finished_at=clock.now(), status="succeeded"))
            text, after = await _export(
                metadata, clock, format="pmids", query_key="second", added_since=began
            )
            assert text.split() == ["13", "15"]  # 13 again, 15 not lost
            assert after.sync_running is False
            assert after.next_added_since is not None
            assert after.next_added_since > began
            text, _ = await _export(
                metadata,
                clock,
                format="pmids",
                query_key="second",
                added_since=after.next_added_since,
            )
            assert text == ""

            # A sync of another key, or one that failed, does not hold the key's start back.
            for other in (
                SyncJob("sync_b", "first", "term", began, None, "running"),
                SyncJob("sync_c", "second", "term", began, clock.now(), "failed"),
            ):
                await metadata.record_job(other)
            _, later = await _export(metadata, clock, query_key="second")
            assert later.sync_running is False
            assert later.next_added_since is not None
            assert later.next_added_since > began

    run(scenario())


def test_new_exports_take_up_where_the_last_complete_one_ended(backend: BackendSpec) -> None:
    clock = SteppingClock(datetime(2026, 11, 1, tzinfo=UTC))

    async def scenario() -> None:
        async with _stored(backend, clock) as metadata:
            export = ExportRecords(metadata, clock=clock)

            async def new_export(*, complete: bool = True) -> tuple[list[str], ExportSummary]:
                out = io.StringIO()
                summary = await export.run(
                    out.write, format="pmids", query_key="second", new=True, include_retracted=True
                )
                if complete:
                    await export.mark(summary)
                return out.getvalue().split(), summary

            first, summary = await new_export()  # no mark yet: every record of the key
            assert len(first) == summary.considered == len(PMIDS) - 600 + 10  # as `_store`
            assert (summary.new, summary.added_since) == (True, None)
            assert await metadata.export_mark("second") == summary.next_added_since

            clock.advance(timedelta(days=7))
            await metadata.upsert_documents([upsert_of(_record("13"))], held_by="second")
            await metadata.upsert_documents([upsert_of(_record("16"))], held_by="first")
            lost, failed = await new_export(complete=False)  # its file was never written
            assert lost == ["13"]
            assert failed.added_since == summary.next_added_since
            again, done = await new_export()
            assert again == ["13"]  # the failed export did not move the mark
            nothing, last = await new_export()
            assert nothing == []  # nothing new since
            assert last.added_since == done.next_added_since
            assert await metadata.export_mark("first") is None  # marks are per key

            # An export that is not `new` never moves the mark.
            plain = await export.run(io.StringIO().write, query_key="second")
            await export.mark(plain)
            assert await metadata.export_mark("second") == last.next_added_since

            for wrong in ({"added_since": clock.peek()}, {"query_key": None}):
                options: dict[str, Any] = {"query_key": "second", "new": True, **wrong}
                with pytest.raises(InvalidRequestError, match="new needs a query_key"):
                    await export.run(io.StringIO().write, **options)

    run(scenario())

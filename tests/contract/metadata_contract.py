"""The metadata contract suites: one set of checks per port, which every adapter must pass.

`DocumentStoreContract`, `FullTextStoreContract`, `SavedQueryStoreContract`, `JobLogContract`
and `ProjectRegistryContract` check one role each; `MetadataStoreContract` runs them all, plus the
health checks of a whole store. Subclass one in a `test_*.py` module and provide:

* `store`: a new store on an empty database, built with the `clock` fixture (a `FakeClock`).
  The saved-query checks arrange records and jobs through the store, so its store plays those
  roles too;
* `lock_elsewhere` (the `JobLog` checks): a callable `(query_key) -> bool` that tries the
  store's query lock from ANOTHER holder (another process for a database; another thread and
  event loop for memory) with timeout 0, and says whether it got it.

    class TestMine(MetadataStoreContract):
        @pytest.fixture
        def store(self, clock: FakeClock) -> Iterator[MetadataStore]: ...

        @pytest.fixture
        def lock_elsewhere(self, ...) -> Callable[[str], bool]: ...

Each check drives the async port with `asyncio.run`.
"""

from __future__ import annotations

import asyncio
import os
import threading
import uuid
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, TypeVar

import pytest

from biomcp.domain.records import Notice, NoticeKind, PubMedRecord, utc
from biomcp.domain.versioning import UpsertAction
from biomcp.ports.documents import DocumentStore, UpsertOutcome
from biomcp.ports.fulltext import FullTextWrite
from biomcp.ports.jobs import JobLog, JobProgress, SyncJob
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.projects import ProjectInfo, ProjectRegistry
from biomcp.ports.saved_queries import Checkpoint, ForgottenQuery, PendingPmid
from biomcp.ports.store_errors import LockTimeoutError, MetadataStoreError
from tests.support.fulltext_articles import state_of, synthetic_article
from tests.support.sql_records import FakeClock, full_record, revised, upsert_of

__all__ = [
    "DocumentStoreContract",
    "FullTextStoreContract",
    "JobLogContract",
    "MetadataStoreContract",
    "ProjectRegistryContract",
    "SavedQueryStoreContract",
    "run",
]

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def _key() -> str:
    """A query key no other test (or earlier run on a shared server) uses."""
    return f"contract_{uuid.uuid4().hex}"


def _upsert(store: DocumentStore, *records: PubMedRecord) -> Sequence[UpsertOutcome]:
    return run(store.upsert_documents([upsert_of(r) for r in records])).outcomes


def _retracted(record: PubMedRecord) -> PubMedRecord:
    """`record` as PubMed flags it once retracted: a RetractionIn notice added."""
    notice = Notice(NoticeKind.RETRACTION_IN, pmid="39000001", source="J Fake Res. 2024;1:e1")
    return replace(record, notices=(*record.notices, notice))


def _job(job_id: str, query_key: str, started: datetime, **overrides: Any) -> SyncJob:
    fields: dict[str, Any] = {
        "job_id": job_id,
        "query_key": query_key,
        "term": "(GLP-1 receptor agonist) AND obesity",
        "started_at": started,
        "finished_at": None,
        "status": "running",
    }
    fields.update(overrides)
    return SyncJob(**fields)


def _after(start: threading.Barrier, call: Callable[..., Coroutine[Any, Any, T]], *args: Any) -> T:
    """`call(*args)` run once every thread waiting on `start` is there."""
    start.wait()
    return run(call(*args))


class _StoreChecks:
    """What every suite shares: the clock the store under test was built with."""

    @pytest.fixture
    def clock(self) -> FakeClock:
        return FakeClock()


class DocumentStoreContract(_StoreChecks):
    """The `DocumentStore` checks: versions, reads, indexing state, scores."""

    # -- versions ---------------------------------------------------------------------------

    def test_a_new_pmid_is_inserted_at_version_one_and_not_yet_indexed(
        self, store: DocumentStore, clock: FakeClock
    ) -> None:
        summary = run(store.upsert_documents([upsert_of(full_record("101"))]))

        assert (summary.inserted, summary.updated, summary.skipped) == (1, 0, 0)
        assert summary.outcomes == (UpsertOutcome("101", UpsertAction.INSERT, 1),)
        stored = run(store.get_document("101"))
        assert stored is not None
        assert (stored.version, stored.indexed_version) == (1, 0)
        assert stored.last_seen_at == clock.now()
        assert run(store.count_documents()) == 1

    def test_a_content_change_bumps_the_version(self, store: DocumentStore) -> None:
        record = full_record("102")
        _upsert(store, record)

        outcomes = _upsert(store, revised(record, title="A corrected title"))

        assert outcomes == (UpsertOutcome("102", UpsertAction.UPDATE, 2),)
        stored = run(store.get_document("102"))
        assert stored is not None
        assert stored.record.title == "A corrected title"
        assert (
            stored.content_hash
            == upsert_of(revised(record, title="A corrected title")).content_hash
        )

    def test_an_lr_advance_bumps_the_version_without_a_content_change(
        self, store: DocumentStore
    ) -> None:
        record = full_record("103")
        _upsert(store, record)
        assert record.lr is not None

        outcomes = _upsert(store, revised(record, lr=record.lr + timedelta(days=1)))

        assert outcomes == (UpsertOutcome("103", UpsertAction.UPDATE, 2),)
        stored = run(store.get_document("103"))
        assert stored is not None
        assert stored.record.lr == record.lr + timedelta(days=1)

    def test_a_replay_is_skipped_and_only_refreshes_last_seen_at(
        self, store: DocumentStore, clock: FakeClock
    ) -> None:
        record = full_record("104")
        _upsert(store, record)
        later = clock.advance(hours=3)

        summary = run(store.upsert_documents([upsert_of(record)]))

        assert (summary.inserted, summary.updated, summary.skipped) == (0, 0, 1)
        assert summary.outcomes == (UpsertOutcome("104", UpsertAction.SKIP, 1),)
        stored = run(store.get_document("104"))
        assert stored is not None
        assert (stored.version, stored.record) == (1, record)
        assert stored.last_seen_at == later

    def test_an_lr_going_back_does_not_bump_the_version(self, store: DocumentStore) -> None:
        record = full_record("105")
        _upsert(store, record)
        assert record.lr is not None

        outcomes = _upsert(store, revised(record, lr=record.lr - timedelta(days=30)))

        assert outcomes == (UpsertOutcome("105", UpsertAction.SKIP, 1),)
        stored = run(store.get_document("105"))
        assert stored is not None
        assert stored.record.lr == record.lr

    def test_a_pmid_repeated_in_one_batch_is_decided_in_order(self, store: DocumentStore) -> None:
        first = full_record("106")
        second = revised(first, title="Second thoughts")

        outcomes = _upsert(store, first, first, second)

        assert [(o.action, o.version) for o in outcomes] == [
            (UpsertAction.INSERT, 1),
            (UpsertAction.SKIP, 1),
            (UpsertAction.UPDATE, 2),
        ]
        stored = run(store.get_document("106"))
        assert stored is not None
        assert (stored.version, stored.record.title) == (2, "Second thoughts")

    def test_a_batch_mixes_inserts_updates_and_skips_with_outcomes_in_input_order(
        self, store: DocumentStore
    ) -> None:
        kept, changed = full_record("107"), full_record("108")
        _upsert(store, kept, changed)

        summary = run(
            store.upsert_documents(
                [
                    upsert_of(full_record("109")),
                    upsert_of(kept),
                    upsert_of(revised(changed, doi="10.1000/changed")),
                ]
            )
        )

        assert (summary.inserted, summary.updated, summary.skipped) == (1, 1, 1)
        assert [o.pmid for o in summary.outcomes] == ["109", "107", "108"]
        assert run(store.count_documents()) == 3

    def test_max_edat_seen_is_the_latest_edat_of_the_batch_skips_included(
        self, store: DocumentStore
    ) -> None:
        old = full_record("110", edat=utc(2024, 1, 5))
        _upsert(store, old)
        late = datetime(2024, 3, 1, 23, 30, tzinfo=UTC)
        offset = datetime(2024, 3, 2, 3, 0, tzinfo=timezone(timedelta(hours=2)))  # 01:00 UTC

        summary = run(
            store.upsert_documents(
                [
                    upsert_of(full_record("111", edat=late)),
                    upsert_of(old),
                    upsert_of(full_record("112", edat=None)),
                    upsert_of(full_record("113", edat=offset)),
                ]
            )
        )
        no_dates = run(store.upsert_documents([upsert_of(full_record("114", edat=None))]))
        empty = run(store.upsert_documents([]))

        assert summary.max_edat_seen == utc(2024, 3, 2, 1)
        assert summary.max_edat_seen is not None
        assert summary.max_edat_seen.utcoffset() == timedelta(0)
        assert no_dates.max_edat_seen is None
        assert (empty.inserted, empty.updated, empty.skipped, empty.max_edat_seen) == (
            0,
            0,
            0,
            None,
        )

    # -- retraction moments -----------------------------------------------------------------

    def test_a_record_stored_retracted_is_retracted_from_its_first_write(
        self, store: DocumentStore, clock: FakeClock
    ) -> None:
        _upsert(store, _retracted(full_record("180")), full_record("181"))

        found = run(store.get_documents(["180", "181"]))

        assert found["180"].retracted_at == clock.now()
        assert found["181"].retracted_at is None

    def test_the_retraction_moment_is_set_once_and_kept_while_the_record_stays_retracted(
        self, store: DocumentStore, clock: FakeClock
    ) -> None:
        record = full_record("182")
        _upsert(store, record)
        retracted = clock.advance(days=1)
        _upsert(store, _retracted(record))  # the re-check stores the record flagged
        clock.advance(days=1)
        _upsert(store, _retracted(record))  # a replay: skipped, only seen again
        clock.advance(days=1)
        revision = _retracted(revised(record, title="Retracted: a corrected title"))
        outcomes = _upsert(store, revision)  # a new version, still retracted

        assert outcomes == (UpsertOutcome("182", UpsertAction.UPDATE, 3),)
        stored = run(store.get_document("182"))
        assert stored is not None
        assert (stored.retracted_at, stored.last_seen_at) == (retracted, clock.now())

    def test_an_unretracted_record_loses_its_moment_and_a_new_retraction_sets_a_new_one(
        self, store: DocumentStore, clock: FakeClock
    ) -> None:
        record = full_record("183")
        _upsert(store, _retracted(record))
        clock.advance(days=1)
        _upsert(store, revised(record, title="Reinstated"))
        cleared = run(store.get_document("183"))
        again = clock.advance(days=1)
        _upsert(store, _retracted(revised(record, title="Retracted again")))

        stored = run(store.get_document("183"))
        assert cleared is not None
        assert stored is not None
        assert (cleared.retracted_at, stored.retracted_at) == (None, again)

    def test_a_pmid_repeated_in_one_batch_ends_with_its_last_writes_moment(
        self, store: DocumentStore, clock: FakeClock
    ) -> None:
        record = full_record("184")
        run(
            store.upsert_documents(
                [upsert_of(_retracted(record)), upsert_of(revised(record, title="Reinstated"))]
            )
        )
        run(
            store.upsert_documents(
                [upsert_of(full_record("185")), upsert_of(_retracted(full_record("185")))]
            )
        )

        found = run(store.get_documents(["184", "185"]))
        assert (found["184"].retracted_at, found["185"].retracted_at) == (None, clock.now())

    def test_retracted_since_lists_the_records_first_written_retracted_at_or_after(
        self, store: DocumentStore, clock: FakeClock
    ) -> None:
        early, late, never = full_record("186"), full_record("187"), full_record("188")
        _upsert(store, _retracted(early), late, never)
        mark = clock.advance(days=1)
        _upsert(store, _retracted(late))
        clock.advance(days=1)
        _upsert(store, _retracted(early), never)  # seen again: not retracted since the mark

        pmids = ["186", "187", "188", "999999"]
        assert run(store.retracted_since(pmids, mark)) == {"187"}
        assert run(store.retracted_since(pmids, mark - timedelta(days=1))) == {"186", "187"}
        assert run(store.retracted_since(pmids, clock.now())) == set()
        assert run(store.retracted_since([], mark)) == set()
        offset = mark.astimezone(timezone(timedelta(hours=-5)))  # the same moment elsewhere
        assert run(store.retracted_since(pmids, offset)) == {"187"}

    def test_retracted_since_refuses_a_naive_moment_with_a_store_error(
        self, store: DocumentStore
    ) -> None:
        _upsert(store, _retracted(full_record("189")))

        with pytest.raises(MetadataStoreError):
            run(store.retracted_since(["189"], datetime(2025, 8, 18, 12)))

    # -- reading ----------------------------------------------------------------------------

    def test_get_document_rebuilds_the_exact_record_and_derived_values(
        self, store: DocumentStore
    ) -> None:
        doc = upsert_of(full_record("120"))
        run(store.upsert_documents([doc]))

        stored = run(store.get_document("120"))

        assert stored is not None
        assert stored.record == doc.record
        assert stored.record.lr is not None
        assert doc.record.lr is not None
        assert stored.record.lr.utcoffset() == doc.record.lr.utcoffset()
        assert stored.evidence == doc.evidence
        assert stored.evidence.design is not None  # the study design is kept with the tier
        assert stored.evidence.design.design.value == "rct"
        assert stored.quality == doc.quality
        assert stored.quality.sample_size_n == 1961
        assert stored.content_hash == doc.content_hash
        assert stored.last_seen_at.tzinfo is not None

    def test_a_minimal_record_round_trips_too(self, store: DocumentStore) -> None:
        record = PubMedRecord(pmid="121")
        run(store.upsert_documents([upsert_of(record)]))

        stored = run(store.get_document("121"))

        assert stored is not None
        assert stored.record == record

    def test_an_unknown_pmid_reads_as_none_and_is_absent_from_batches(
        self, store: DocumentStore
    ) -> None:
        _upsert(store, full_record("122"), full_record("123"))

        assert run(store.get_document("999999")) is None
        found = run(store.get_documents(["123", "999999", "122", "123"]))
        assert sorted(found) == ["122", "123"]
        assert found["123"].record == full_record("123")
        assert run(store.get_documents([])) == {}

    def test_many_documents_are_read_and_written_in_one_call(self, store: DocumentStore) -> None:
        records = [full_record(str(200000 + i)) for i in range(1203)]

        summary = run(store.upsert_documents([upsert_of(r) for r in records]))
        found = run(store.get_documents([r.pmid for r in records]))
        replay = run(store.upsert_documents([upsert_of(r) for r in records]))

        assert summary.inserted == 1203
        assert len(found) == 1203
        assert replay.skipped == 1203

    # -- indexing ---------------------------------------------------------------------------

    def test_documents_to_index_lists_those_behind_until_marked(self, store: DocumentStore) -> None:
        _upsert(store, full_record("130"), full_record("131"), full_record("132"))

        behind = run(store.documents_to_index(["132", "130", "999999", "131"]))
        assert [d.record.pmid for d in behind] == ["132", "130", "131"]

        run(store.mark_indexed({"130": 1, "131": 1}))
        assert [d.record.pmid for d in run(store.documents_to_index(["130", "131", "132"]))] == [
            "132"
        ]
        stored = run(store.get_document("130"))
        assert stored is not None
        assert stored.indexed_version == 1

    def test_every_pmid_is_listed_once_page_by_page_and_indexed_ones_are_counted(
        self, store: DocumentStore
    ) -> None:
        pmids = [str(140 + i) for i in range(7)]
        _upsert(store, *(full_record(p) for p in pmids))
        run(store.mark_indexed({"141": 1, "145": 1}))

        pages: list[list[str]] = []
        after = ""
        while page := run(store.document_pmids(after, limit=3)):
            pages.append(page)
            after = page[-1]
        assert [len(page) for page in pages] == [3, 3, 1]
        assert [p for page in pages for p in page] == sorted(pmids)
        assert run(store.count_documents()) == 7
        assert run(store.count_documents(indexed=True)) == 2

    def test_a_new_version_is_behind_again_and_catches_up_when_marked(
        self, store: DocumentStore
    ) -> None:
        record = full_record("133")
        _upsert(store, record)
        run(store.mark_indexed({"133": 1}))

        _upsert(store, revised(record, title="v2"))
        behind = run(store.documents_to_index(["133"]))

        assert [(d.version, d.indexed_version) for d in behind] == [(2, 1)]
        run(store.mark_indexed({"133": 2}))
        assert run(store.documents_to_index(["133"])) == []

    def test_mark_indexed_never_moves_back_nor_past_the_version(self, store: DocumentStore) -> None:
        record = full_record("134")
        _upsert(store, record)
        _upsert(store, revised(record, title="v2"))
        run(store.mark_indexed({"134": 2}))

        run(store.mark_indexed({"134": 1, "999999": 1}))
        run(store.mark_indexed({"134": 7}))

        stored = run(store.get_document("134"))
        assert stored is not None
        assert (stored.version, stored.indexed_version) == (2, 2)

    # -- quality scores ---------------------------------------------------------------------

    def test_scores_counted_before_a_year_are_listed_by_pmid_with_the_record_s_year(
        self, store: DocumentStore
    ) -> None:
        dated = full_record("301")  # published 1998 (a MedlineDate), EDAT 2021
        undated_pub = full_record("302", pdat=None)  # the year is EDAT's
        undated = full_record("303", pdat=None, edat=None)
        _upsert(store, undated, dated, undated_pub)
        scored_in = run(store.get_document("301")).quality.scored_in  # type: ignore[union-attr]
        assert scored_in is not None

        assert run(store.scores_before(scored_in)) == []
        assert run(store.count_documents(scored_before=scored_in)) == 0
        listed = run(store.scores_before(scored_in + 1))
        assert [s.pmid for s in listed] == ["301", "302", "303"]
        assert [s.year for s in listed] == [1998, 2021, None]
        assert [(s.version, s.indexed_version) for s in listed] == [(1, 0)] * 3
        stored = run(store.get_documents(["301", "302", "303"]))
        assert [s.quality for s in listed] == [stored[p].quality for p in ("301", "302", "303")]
        assert run(store.count_documents(scored_before=scored_in + 1)) == 3
        assert run(store.count_documents(indexed=True, scored_before=scored_in + 1)) == 0
        # pages, by PMID
        assert [s.pmid for s in run(store.scores_before(scored_in + 1, limit=2))] == [
            "301",
            "302",
        ]
        assert [s.pmid for s in run(store.scores_before(scored_in + 1, after="302"))] == ["303"]

    def test_a_score_stored_without_its_year_is_listed_before_any_year(
        self, store: DocumentStore
    ) -> None:
        upsert = upsert_of(full_record("304"))
        legacy = replace(upsert, quality=replace(upsert.quality, scored_in=None))
        run(store.upsert_documents([legacy]))

        assert [s.pmid for s in run(store.scores_before(1900))] == ["304"]
        assert run(store.count_documents(scored_before=1900)) == 1

    def test_a_new_score_is_stored_while_the_document_keeps_its_version(
        self, store: DocumentStore
    ) -> None:
        record = full_record("305")
        other = full_record("306")
        _upsert(store, record, other)
        [score, other_score] = run(store.scores_before(9999))
        assert score.quality.scored_in is not None
        new = replace(
            score.quality,
            recency=score.quality.recency + 1,
            total=score.quality.total + 1,
            scored_in=score.quality.scored_in + 1,
        )

        assert run(store.set_quality([replace(score, quality=new)])) == 1
        stored = run(store.get_document("305"))
        assert stored is not None
        assert stored.quality == new
        assert stored.version == 1
        assert run(store.get_document("306")).quality == other_score.quality  # type: ignore[union-attr]
        assert [s.pmid for s in run(store.scores_before(score.quality.scored_in + 1))] == ["306"]

        # A document that moved on to version 2 keeps its own score.
        _upsert(store, revised(other, title="A corrected title"))
        moved_on = run(store.get_document("306"))
        assert moved_on is not None
        assert moved_on.version == 2
        assert run(store.set_quality([replace(other_score, quality=new)])) == 0
        assert run(store.get_document("306")).quality == moved_on.quality  # type: ignore[union-attr]
        assert run(store.set_quality([])) == 0

    # -- concurrency ------------------------------------------------------------------------

    def test_concurrent_upserts_of_one_pmid_never_lose_an_update(
        self, store: DocumentStore
    ) -> None:
        rounds = 12
        start = threading.Barrier(2)

        def writer(tag: str) -> list[UpsertOutcome]:
            async def go() -> list[UpsertOutcome]:
                outcomes: list[UpsertOutcome] = []
                for i in range(rounds):
                    record = full_record("140", title=f"{tag} revision {i}")
                    outcomes.extend((await store.upsert_documents([upsert_of(record)])).outcomes)
                return outcomes

            start.wait()
            return run(go())

        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(writer, ["left", "right"]))

        outcomes = [o for result in results for o in result]
        actions = [o.action for o in outcomes]
        assert actions.count(UpsertAction.INSERT) == 1
        assert actions.count(UpsertAction.UPDATE) == 2 * rounds - 1
        assert sorted(o.version for o in outcomes) == list(range(1, 2 * rounds + 1))
        stored = run(store.get_document("140"))
        assert stored is not None
        assert stored.version == 2 * rounds


class FullTextStoreContract(_StoreChecks):
    """The `FullTextStore` checks. They arrange documents with `upsert_documents` and delete
    them through the saved-query role, so the store under test plays those roles too."""

    def _documents(self, store: MetadataStore, *pmids: str) -> None:
        _upsert(store, *(full_record(pmid) for pmid in pmids))

    def test_a_state_round_trips_in_utc_and_an_unchecked_pmid_is_absent(
        self, store: MetadataStore
    ) -> None:
        self._documents(store, "40000001", "40000002")
        paris = datetime(2025, 9, 1, 14, 0, 0, 250000, tzinfo=timezone(timedelta(hours=2)))
        failed = state_of(
            "40000001", paris, status="failed", content_hash=None, chars=0, chunks=0,
            reason="EFetch db=pmc answered 502", failures=3, pmcid="PMC7000009",
        )  # fmt: skip

        run(store.record_fulltext([FullTextWrite(failed)]))

        states = run(store.fulltext_states(["40000001", "40000002", "49999999"]))
        assert states == {
            "40000001": replace(
                failed, checked_at=datetime(2025, 9, 1, 12, 0, 0, 250000, tzinfo=UTC)
            )
        }
        assert states["40000001"].checked_at.tzinfo == UTC
        assert run(store.fulltext_states([])) == {}
        assert run(store.fulltext_articles(["40000001", "40000002"])) == {}

    def test_a_stored_article_comes_back_exactly_without_its_references(
        self, store: MetadataStore, clock: FakeClock
    ) -> None:
        self._documents(store, "40000011")
        article = synthetic_article(pmid="40000011")
        assert article.references  # the store leaves them out

        run(store.record_fulltext([FullTextWrite(state_of("40000011", clock.now()), article)]))

        assert run(store.fulltext_articles(["40000011", "40000012"])) == {
            "40000011": replace(article, references=())
        }

    def test_an_article_is_replaced_when_given_kept_when_not_and_dropped_when_asked(
        self, store: MetadataStore, clock: FakeClock
    ) -> None:
        self._documents(store, "40000021")
        first, second = synthetic_article(), synthetic_article(title="Revised", references=())

        def write(article: Any = None, *, drop: bool = False, **state: Any) -> tuple[Any, Any]:
            new = state_of("40000021", clock.advance(hours=1), **state)
            run(store.record_fulltext([FullTextWrite(new, article, drop_article=drop)]))
            found = run(store.fulltext_articles(["40000021"])).get("40000021")
            return run(store.fulltext_states(["40000021"]))["40000021"] == new, found

        assert write(first) == (True, replace(first, references=()))
        assert write(second, content_hash="h2") == (True, second)  # replaced
        assert write(chunks=9) == (True, second)  # neither: the article stays
        assert write(status="withdrawn", content_hash=None, drop=True) == (True, None)
        assert write(status="failed", reason="timeout") == (True, None)  # nothing to keep

    def test_a_pmid_written_twice_in_one_call_ends_as_the_writes_in_order_leave_it(
        self, store: MetadataStore, clock: FakeClock
    ) -> None:
        self._documents(store, "40000031", "40000032")
        at = clock.now()
        article = synthetic_article(references=())
        later = state_of("40000031", at + timedelta(minutes=1), chunks=7)

        run(
            store.record_fulltext(
                [
                    FullTextWrite(state_of("40000031", at), article),
                    FullTextWrite(later),  # keeps the article given just before
                    FullTextWrite(state_of("40000032", at), article),
                    FullTextWrite(state_of("40000032", at, status="withdrawn"), drop_article=True),
                    FullTextWrite(state_of("40000032", at, status="not_open_access")),
                ]
            )
        )

        states = run(store.fulltext_states(["40000031", "40000032"]))
        assert states["40000031"] == later
        assert states["40000032"].status == "not_open_access"
        assert run(store.fulltext_articles(["40000031", "40000032"])) == {"40000031": article}

    def test_statuses_are_counted_over_every_record_or_among_given_pmids(
        self, store: MetadataStore, clock: FakeClock
    ) -> None:
        pmids = [str(40_001_000 + i) for i in range(520)]  # more than one IN list
        self._documents(store, *pmids)
        statuses = ["available", "not_in_pmc", "failed", "available"]
        writes = [
            FullTextWrite(state_of(pmid, clock.now(), status=statuses[i % 4]))
            for i, pmid in enumerate(pmids)
        ]
        run(store.record_fulltext(writes))

        assert run(store.fulltext_status_counts()) == {
            "available": 260, "not_in_pmc": 130, "failed": 130,
        }  # fmt: skip
        among = [*pmids[:4], pmids[-1], "49999999", pmids[0]]
        # pmids[:4] has each status once and "available" twice; the last is "available".
        assert run(store.fulltext_status_counts(among)) == {
            "available": 3, "not_in_pmc": 1, "failed": 1,
        }  # fmt: skip
        assert len(run(store.fulltext_states(pmids))) == 520
        assert run(store.fulltext_status_counts([])) == {}

    def test_a_pmid_without_a_stored_document_is_skipped(
        self, store: MetadataStore, clock: FakeClock
    ) -> None:
        self._documents(store, "40000041")
        article = synthetic_article(references=())

        run(
            store.record_fulltext(
                [
                    FullTextWrite(state_of("49999991", clock.now()), article),
                    FullTextWrite(state_of("40000041", clock.now()), article),
                ]
            )
        )

        assert list(run(store.fulltext_states(["49999991", "40000041"]))) == ["40000041"]
        assert list(run(store.fulltext_articles(["49999991", "40000041"]))) == ["40000041"]
        assert run(store.fulltext_status_counts()) == {"available": 1}

    def test_deleting_a_document_deletes_its_full_text_on_every_path(
        self, store: MetadataStore, clock: FakeClock
    ) -> None:
        key, other = _key(), _key()
        run(store.upsert_documents([upsert_of(full_record(p)) for p in ("40000051", "40000052")],
                                   held_by=key))  # fmt: skip
        run(store.upsert_documents([upsert_of(full_record("40000053"))], held_by=other))
        self._documents(store, "40000054", "40000055")  # held by no key
        pmids = ["40000051", "40000052", "40000053", "40000054", "40000055"]
        article = synthetic_article(references=())
        run(
            store.record_fulltext([FullTextWrite(state_of(p, clock.now()), article) for p in pmids])
        )

        run(store.forget_query(key, delete_records=["40000051", "40000053"]))
        assert run(store.delete_unheld(["40000054", "40000053"])) == 1

        kept = ["40000052", "40000053", "40000055"]  # not asked for, held, not asked for
        assert sorted(run(store.fulltext_states(pmids))) == kept
        assert sorted(run(store.fulltext_articles(pmids))) == kept
        assert run(store.fulltext_status_counts()) == {"available": 3}
        # A document stored again later starts with no full text.
        self._documents(store, "40000051")
        assert run(store.fulltext_states(["40000051"])) == {}

    def test_a_document_deleted_while_its_full_text_is_written_leaves_no_full_text(
        self, store: MetadataStore, clock: FakeClock
    ) -> None:
        """Whichever of the two commits first, a deleted document keeps no full-text row."""
        article = synthetic_article(references=())
        for round_ in range(8):
            pmids = [str(40_002_000 + 100 * round_ + i) for i in range(20)]
            self._documents(store, *pmids)
            start = threading.Barrier(2)
            writes = [FullTextWrite(state_of(p, clock.now()), article) for p in pmids]

            with ThreadPoolExecutor(max_workers=2) as pool:
                written = pool.submit(_after, start, store.record_fulltext, writes)
                deleted = pool.submit(_after, start, store.delete_unheld, pmids)
                written.result()
                assert deleted.result() == len(pmids)

            assert run(store.get_documents(pmids)) == {}
            assert run(store.fulltext_states(pmids)) == {}
            assert run(store.fulltext_articles(pmids)) == {}

    def test_a_write_with_an_unknown_status_or_both_an_article_and_a_drop_is_refused(
        self, store: MetadataStore, clock: FakeClock
    ) -> None:
        self._documents(store, "40000061")
        unknown = state_of("40000061", clock.now(), status="lost")
        both = FullTextWrite(state_of("40000061", clock.now()), synthetic_article(), True)

        for write in (FullTextWrite(unknown), both):
            with pytest.raises(MetadataStoreError):
                run(store.record_fulltext([write]))

        assert run(store.fulltext_states(["40000061"])) == {}
        with pytest.raises(MetadataStoreError):  # a naive time, as for every stored time
            run(store.record_fulltext([FullTextWrite(state_of("40000061", datetime(2025, 1, 1)))]))
        assert run(store.fulltext_states(["40000061"])) == {}


class SavedQueryStoreContract(_StoreChecks):
    """The `SavedQueryStore` checks. They arrange records with `upsert_documents` and jobs
    with `record_job`, so the store under test plays those roles too."""

    # -- checkpoints ------------------------------------------------------------------------

    def test_an_unknown_checkpoint_is_empty(self, store: MetadataStore) -> None:
        key = _key()
        assert run(store.get_checkpoint(key)) == Checkpoint(key)
        assert run(store.checkpoint_audit(key)) == []

    def test_advance_checkpoint_is_monotonic(self, store: MetadataStore) -> None:
        key = _key()
        high, low = utc(2025, 8, 10, 12), utc(2025, 8, 1)

        first = run(
            store.advance_checkpoint(key, high, utc(2025, 8, 11), window_start=None, term="q")
        )
        second = run(
            store.advance_checkpoint(key, low, utc(2025, 8, 12), window_start=None, term="q")
        )
        third = run(
            store.advance_checkpoint(key, None, utc(2025, 8, 13), window_start=None, term="q")
        )

        assert first == Checkpoint(key, high, utc(2025, 8, 11), term="q")
        assert second == Checkpoint(key, high, utc(2025, 8, 12), term="q")
        assert third == Checkpoint(key, high, utc(2025, 8, 13), term="q")
        assert run(store.get_checkpoint(key)) == third
        assert run(store.checkpoint_audit(key)) == []

    def test_a_first_advance_without_candidate_records_only_the_scan(
        self, store: MetadataStore
    ) -> None:
        key = _key()
        checkpoint = run(
            store.advance_checkpoint(key, None, utc(2025, 8, 1), window_start=None, term="q")
        )
        assert checkpoint == Checkpoint(key, None, utc(2025, 8, 1), term="q")
        assert run(store.get_checkpoint(key)) == checkpoint

    def test_the_first_completed_scan_sets_the_history_covered_and_later_ones_only_widen_it(
        self, store: MetadataStore
    ) -> None:
        key, whole = _key(), _key()
        june, may, july = utc(2025, 6, 1), utc(2025, 5, 1), utc(2025, 7, 1)

        first = run(
            store.advance_checkpoint(
                key, utc(2025, 8, 1), utc(2025, 8, 2), window_start=june, term="q"
            )
        )
        later = run(
            store.advance_checkpoint(key, None, utc(2025, 8, 3), window_start=july, term="q")
        )
        backfill = run(
            store.advance_checkpoint(key, None, utc(2025, 8, 4), window_start=may, term="q")
        )

        assert first == Checkpoint(key, utc(2025, 8, 1), utc(2025, 8, 2), june, "q")
        assert later.covers_from == june
        assert backfill.covers_from == may
        assert run(store.get_checkpoint(key)) == backfill
        # The whole history stays the whole history.
        run(store.advance_checkpoint(whole, None, utc(2025, 8, 2), window_start=None, term="q"))
        run(store.advance_checkpoint(whole, None, utc(2025, 8, 3), window_start=july, term="q"))
        assert run(store.get_checkpoint(whole)).covers_from is None

    def test_a_watermark_set_before_any_sync_leaves_the_first_scan_to_set_the_history(
        self, store: MetadataStore
    ) -> None:
        key = _key()
        run(store.set_checkpoint(key, utc(2025, 6, 6), actor="a", reason="r", at=utc(2025, 7, 1)))
        assert run(store.get_checkpoint(key)).covers_from is None

        scanned = run(
            store.advance_checkpoint(
                key, None, utc(2025, 7, 2), window_start=utc(2025, 6, 1), term="q"
            )
        )

        assert scanned == Checkpoint(key, utc(2025, 6, 6), utc(2025, 7, 2), utc(2025, 6, 1), "q")

    def test_each_completed_scan_records_its_term_and_a_manual_set_keeps_it(
        self, store: MetadataStore
    ) -> None:
        key = _key()
        term = "(asthma[mh] OR asthma[tiab]) AND \u00e9tude"
        first = run(
            store.advance_checkpoint(key, None, utc(2025, 7, 1), window_start=None, term=term)
        )
        assert first.term == term
        assert run(store.get_checkpoint(key)).term == term
        run(store.set_checkpoint(key, utc(2025, 6, 1), actor="a", reason="r", at=utc(2025, 7, 2)))
        assert run(store.get_checkpoint(key)).term == term
        run(store.advance_checkpoint(key, None, utc(2025, 7, 3), window_start=None, term="copd"))
        assert run(store.get_checkpoint(key)).term == "copd"
        assert [c.term for c in run(store.list_checkpoints()) if c.query_key == key] == ["copd"]

    def test_checkpoint_times_come_back_as_utc(self, store: MetadataStore) -> None:
        key = _key()
        paris = datetime(2025, 8, 10, 14, 0, tzinfo=timezone(timedelta(hours=2)))
        run(store.advance_checkpoint(key, paris, paris, window_start=None, term="q"))

        checkpoint = run(store.get_checkpoint(key))

        assert checkpoint.last_edat == utc(2025, 8, 10, 12)
        assert checkpoint.last_edat is not None
        assert checkpoint.last_edat.utcoffset() == timedelta(0)

    def test_a_manual_set_may_go_backward_and_is_audited_newest_first(
        self, store: MetadataStore
    ) -> None:
        key = _key()
        run(
            store.advance_checkpoint(
                key, utc(2025, 8, 10), utc(2025, 8, 11), window_start=None, term="q"
            )
        )

        back = run(
            store.set_checkpoint(
                key,
                utc(2025, 6, 1),
                actor="ops@example.org",
                reason="backfill",
                at=utc(2025, 8, 12),
            )
        )
        forward = run(
            store.set_checkpoint(
                key, utc(2025, 7, 1), actor="bot", reason="resume", at=utc(2025, 8, 13)
            )
        )

        assert back.previous == utc(2025, 8, 10)
        assert (back.new, back.actor, back.reason) == (
            utc(2025, 6, 1),
            "ops@example.org",
            "backfill",
        )
        assert back.moved_backward
        assert not forward.moved_backward
        assert run(store.get_checkpoint(key)).last_edat == utc(2025, 7, 1)
        assert run(store.get_checkpoint(key)).last_scan_at == utc(2025, 8, 11)
        assert run(store.checkpoint_audit(key)) == [forward, back]

    def test_a_manual_set_on_a_new_key_audits_no_previous_value(self, store: MetadataStore) -> None:
        key = _key()
        audit = run(
            store.set_checkpoint(key, utc(2025, 1, 1), actor="a", reason="r", at=utc(2025, 2, 1))
        )
        assert audit.previous is None
        assert run(store.checkpoint_audit(key)) == [audit]

    def test_list_checkpoints_returns_every_key_in_order(self, store: MetadataStore) -> None:
        keys = sorted(_key() for _ in range(3))
        for key in reversed(keys):
            run(
                store.advance_checkpoint(
                    key, utc(2025, 1, 1), utc(2025, 1, 2), window_start=None, term="q"
                )
            )

        listed = [c for c in run(store.list_checkpoints()) if c.query_key in keys]

        assert [c.query_key for c in listed] == keys
        assert all(c.last_edat == utc(2025, 1, 1) for c in listed)

    def test_naive_datetimes_are_refused_with_a_store_error(self, store: MetadataStore) -> None:
        with pytest.raises(MetadataStoreError):
            run(
                store.advance_checkpoint(
                    _key(), datetime(2025, 1, 1), utc(2025, 1, 1), window_start=None, term="q"
                )
            )

    # -- PMIDs pending a retry --------------------------------------------------------------

    def test_a_missed_pmid_is_pending_counts_its_misses_and_goes_once_arrived(
        self, store: MetadataStore
    ) -> None:
        key, other = _key(), _key()
        first, second, third = utc(2025, 3, 1), utc(2025, 3, 2), utc(2025, 3, 3)
        assert run(store.pending_pmids(key)) == []

        now = run(store.settle_pending(key, missed=["30000002", "30000001"], arrived=[], at=first))
        assert now == [
            PendingPmid("30000001", first, first, 1),
            PendingPmid("30000002", first, first, 1),
        ]
        run(store.settle_pending(other, missed=["30000001"], arrived=[], at=first))

        # One more miss of 30000002, a new one (30000003), and 30000001 arrives; a PMID
        # arriving that was never pending changes nothing.
        now = run(
            store.settle_pending(
                key, missed=["30000003", "30000002", "30000002"],
                arrived=["30000001", "39999999"], at=second,
            )
        )  # fmt: skip
        assert now == [
            PendingPmid("30000002", first, second, 2),
            PendingPmid("30000003", second, second, 1),
        ]
        assert run(store.pending_pmids(key)) == now

        # Missed and arrived in one call (two batches of one sync): it stays pending.
        now = run(store.settle_pending(key, missed=["30000003"], arrived=["30000003"], at=third))
        assert [(p.pmid, p.misses) for p in now] == [("30000002", 2), ("30000003", 2)]
        now = run(store.settle_pending(key, missed=[], arrived=["30000002", "30000003"], at=third))
        assert now == []

        # Another key's pending PMIDs are its own.
        assert run(store.pending_pmids(other)) == [PendingPmid("30000001", first, first, 1)]

    def test_many_pending_pmids_are_recorded_and_settled_in_one_call(
        self, store: MetadataStore
    ) -> None:
        key = _key()
        pmids = [str(31_000_000 + i) for i in range(1_500)]
        at = utc(2025, 4, 1)

        assert len(run(store.settle_pending(key, missed=pmids, arrived=[], at=at))) == 1_500
        left = run(store.settle_pending(key, missed=[], arrived=pmids[:1_499], at=at))

        assert left == [PendingPmid(pmids[-1], at, at, 1)]

    # -- forgetting a saved query -----------------------------------------------------------

    def test_forget_query_removes_the_keys_checkpoint_pending_and_jobs_only(
        self, store: MetadataStore
    ) -> None:
        key, other = _key(), _key()
        for k in (key, other):
            run(
                store.advance_checkpoint(
                    k, utc(2025, 8, 1), utc(2025, 8, 2), window_start=None, term="q"
                )
            )
            run(store.settle_pending(k, missed=["30000001"], arrived=[], at=utc(2025, 8, 2)))
            run(store.record_job(_job(f"{k}-1", k, utc(2025, 8, 1), status="succeeded")))
        run(store.record_job(_job(f"{key}-2", key, utc(2025, 8, 2), status="failed")))
        audit = run(
            store.set_checkpoint(key, utc(2025, 7, 1), actor="a", reason="r", at=utc(2025, 8, 3))
        )
        _upsert(store, full_record("30000002"))

        forgotten = run(store.forget_query(key))

        assert forgotten == ForgottenQuery(key, checkpoint=True, pending=1, jobs=2)
        assert run(store.get_checkpoint(key)) == Checkpoint(key)
        assert run(store.pending_pmids(key)) == []
        assert run(store.list_jobs(key)) == []
        assert run(store.get_job(f"{key}-1")) is None
        assert run(store.checkpoint_audit(key)) == [audit]  # the audit trail is kept
        assert key not in [c.query_key for c in run(store.list_checkpoints())]
        # Another key, and the stored records, are untouched.
        assert run(store.get_checkpoint(other)).last_edat == utc(2025, 8, 1)
        assert [p.pmid for p in run(store.pending_pmids(other))] == ["30000001"]
        assert [j.job_id for j in run(store.list_jobs(other))] == [f"{other}-1"]
        assert run(store.get_document("30000002")) is not None
        # Forgetting again, or a key never seen, finds nothing.
        assert run(store.forget_query(key)) == ForgottenQuery(
            key, checkpoint=False, pending=0, jobs=0
        )

    def test_export_marks_are_per_key_replaced_and_forgotten_with_the_key(
        self, store: MetadataStore
    ) -> None:
        key, other = _key(), _key()
        assert run(store.export_mark(key)) is None  # before a first `new` export

        run(store.set_export_mark(key, utc(2025, 8, 1, 12, 30)))
        run(store.set_export_mark(other, utc(2025, 7, 1)))
        exact = datetime(2025, 8, 8, 6, 0, 59, 123456, tzinfo=UTC)
        run(store.set_export_mark(key, exact))  # the next export's, to the microsecond

        assert run(store.export_mark(key)) == exact
        assert run(store.export_mark(other)) == utc(2025, 7, 1)
        run(store.forget_query(key))
        assert run(store.export_mark(key)) is None
        assert run(store.export_mark(other)) == utc(2025, 7, 1)
        aware = datetime(2025, 8, 9, 2, tzinfo=timezone(timedelta(hours=2)))
        run(store.set_export_mark(other, aware))  # read back in UTC, the same moment
        read = run(store.export_mark(other))
        assert read == aware
        assert read is not None
        assert read.tzinfo == UTC

    def test_an_upsert_counts_the_records_its_query_did_not_hold_before(
        self, store: MetadataStore
    ) -> None:
        key, other = _key(), _key()

        def upsert(pmids: Sequence[str], held_by: str | None) -> int:
            docs = [upsert_of(full_record(p)) for p in pmids]
            return run(store.upsert_documents(docs, held_by=held_by)).newly_held

        assert upsert(["30000601", "30000602", "30000602"], key) == 2  # a repeat counts once
        assert upsert(["30000602", "30000603"], key) == 1
        assert upsert(["30000601", "30000603"], other) == 2  # stored already, new to it
        assert upsert(["30000604"], None) == 0  # held by no query
        assert upsert(["30000604"], key) == 1
        assert run(store.records_of(key)) == ["30000601", "30000602", "30000603", "30000604"]

    def _hold(self, store: MetadataStore, key: str, *pmids: str) -> None:
        run(store.upsert_documents([upsert_of(full_record(p)) for p in pmids], held_by=key))

    def test_an_upsert_held_by_a_key_records_each_document_as_the_keys_once(
        self, store: MetadataStore
    ) -> None:
        key, other = _key(), _key()
        self._hold(store, key, "30000101", "30000102")
        # A replay (skipped) and an update record nothing twice; another key shares one.
        self._hold(store, key, "30000102")
        run(
            store.upsert_documents(
                [upsert_of(revised(full_record("30000101"), title="New"))], held_by=key
            )
        )
        self._hold(store, other, "30000102", "30000103")
        _upsert(store, full_record("30000104"))  # held by no key

        counts = run(store.query_record_counts())

        assert (counts[key], counts[other]) == (2, 2)
        assert run(store.records_held_only_by(key)) == ["30000101"]
        assert run(store.records_held_only_by(other)) == ["30000103"]
        assert run(store.records_held_only_by(_key())) == []

    def test_forget_query_drops_the_keys_memberships_and_deletes_only_unshared_records(
        self, store: MetadataStore
    ) -> None:
        key, other = _key(), _key()
        self._hold(store, key, "30000201", "30000202", "30000203")
        self._hold(store, other, "30000203")

        # Asked to delete one that another key holds too, and one it never held: both stay.
        forgotten = run(
            store.forget_query(key, delete_records=["30000201", "30000203", "30000204"])
        )

        assert forgotten == ForgottenQuery(
            key, checkpoint=False, pending=0, jobs=0, records=3, records_deleted=1
        )
        assert run(store.get_document("30000201")) is None
        assert run(store.get_document("30000202")) is not None  # not asked for
        assert run(store.get_document("30000203")) is not None  # the other key holds it
        assert key not in run(store.query_record_counts())
        assert run(store.records_held_only_by(other)) == ["30000203"]
        # The key's records are its no more: nothing is left for it to delete.
        assert run(store.records_held_only_by(key)) == []

    def test_records_of_a_key_since_a_moment_are_those_it_first_recorded_then(
        self, store: MetadataStore, clock: FakeClock
    ) -> None:
        key = _key()
        self._hold(store, key, "30000401", "30000402")
        later = clock.advance(days=3)
        self._hold(store, key, "30000402", "30000403")  # 402 again: still recorded on day 0
        self._hold(store, _key(), "30000404")  # another key's

        assert run(store.records_of(key)) == ["30000401", "30000402", "30000403"]
        assert run(store.records_of(key, added_since=later)) == ["30000403"]  # inclusive
        assert run(store.records_of(key, added_since=later - timedelta(seconds=1))) == ["30000403"]
        assert run(store.records_of(key, added_since=later + timedelta(seconds=1))) == []
        assert run(store.records_of(key, added_since=later - timedelta(days=4))) == [
            "30000401", "30000402", "30000403",
        ]  # fmt: skip

    def test_queries_holding_names_every_key_of_each_record(self, store: MetadataStore) -> None:
        first, second = sorted((_key(), _key()))
        self._hold(store, second, "30000501", "30000502")
        self._hold(store, first, "30000502")
        _upsert(store, full_record("30000503"))  # held by no key

        held = run(store.queries_holding(["30000502", "30000501", "30000503", "30000599"]))

        assert held == {"30000501": [second], "30000502": [first, second]}
        assert run(store.queries_holding([])) == {}

    def test_records_held_by_none_and_deleting_only_those_still_unheld(
        self, store: MetadataStore
    ) -> None:
        key = _key()
        self._hold(store, key, "30000301", "30000302")
        _upsert(store, full_record("30000305"), full_record("30000303"))  # held by no key
        run(store.forget_query(key))  # its records stay, held by none now
        self._hold(store, _key(), "30000302")  # ...but for one another key took

        unheld = run(store.records_held_by_none())

        assert unheld == ["30000301", "30000303", "30000305"]  # ascending
        # One a key took since it was listed stays; an unknown PMID is no error.
        self._hold(store, _key(), "30000303")
        assert run(store.delete_unheld([*unheld, "30000399", "30000301"])) == 2
        assert run(store.get_document("30000301")) is None
        assert run(store.get_document("30000305")) is None
        assert run(store.get_document("30000303")) is not None
        assert run(store.get_document("30000302")) is not None
        assert run(store.records_held_by_none()) == []
        assert run(store.delete_unheld([])) == 0

    def test_a_key_new_to_this_schema_reads_tracked_from_its_first_checkpoint(
        self, store: MetadataStore
    ) -> None:
        key = _key()
        first = run(
            store.advance_checkpoint(
                key, utc(2025, 8, 1), utc(2025, 8, 2), window_start=None, term="q"
            )
        )
        assert first.records_tracked  # a key new to this schema is tracked from its start
        assert run(store.get_checkpoint(key)).records_tracked
        assert run(store.get_checkpoint(_key())).records_tracked  # no checkpoint at all

    # -- the full-text choice ---------------------------------------------------------------

    def test_the_full_text_choice_round_trips_and_outlives_syncs_and_manual_moves(
        self, store: MetadataStore
    ) -> None:
        key, other = _key(), _key()
        run(store.advance_checkpoint(key, utc(2025, 8, 1), utc(2025, 8, 2), window_start=None,
                                     term="q"))  # fmt: skip
        assert not run(store.get_checkpoint(key)).fulltext

        run(store.set_fulltext(key, True))
        moved = run(
            store.advance_checkpoint(
                key, utc(2025, 8, 3), utc(2025, 8, 4), window_start=None, term="q"
            )
        )
        run(store.set_checkpoint(key, utc(2025, 7, 1), actor="a", reason="r", at=utc(2025, 8, 5)))

        assert moved.fulltext
        assert run(store.get_checkpoint(key)) == Checkpoint(
            key, utc(2025, 7, 1), utc(2025, 8, 4), None, "q", fulltext=True
        )
        assert [c.fulltext for c in run(store.list_checkpoints()) if c.query_key == key] == [True]
        assert not run(store.get_checkpoint(other)).fulltext
        run(store.set_fulltext(key, False))
        assert not run(store.get_checkpoint(key)).fulltext
        assert run(store.get_checkpoint(key)).last_edat == utc(2025, 7, 1)

    def test_choosing_full_text_for_a_new_key_gives_it_a_checkpoint_never_synced(
        self, store: MetadataStore
    ) -> None:
        key = _key()

        run(store.set_fulltext(key, True))

        assert run(store.get_checkpoint(key)) == Checkpoint(key, fulltext=True)
        assert Checkpoint(key, fulltext=True) in run(store.list_checkpoints())
        first = run(
            store.advance_checkpoint(
                key, utc(2025, 8, 1), utc(2025, 8, 2), window_start=utc(2025, 6, 1), term="q"
            )
        )
        assert first == Checkpoint(
            key, utc(2025, 8, 1), utc(2025, 8, 2), utc(2025, 6, 1), "q", fulltext=True
        )
        assert run(store.forget_query(key)).checkpoint
        assert run(store.get_checkpoint(key)) == Checkpoint(key)


class JobLogContract(_StoreChecks):
    """The `JobLog` checks: job reports and the per-key lock."""

    # -- jobs -------------------------------------------------------------------------------

    def test_record_job_inserts_then_replaces_by_id(self, store: JobLog) -> None:
        key = _key()
        running = _job("job-1", key, utc(2025, 8, 17, 16, 2))
        done = _job(
            "job-1",
            key,
            utc(2025, 8, 17, 16, 2),
            finished_at=utc(2025, 8, 17, 16, 5),
            status="succeeded",
            inserted=37,
            updated=12,
            skipped=441,
            pmids_processed=490,
            max_edat_seen=datetime(2025, 8, 17, 15, 59, 2, tzinfo=UTC),
            warnings=("esearch window bisected", "2 records had no abstract"),
        )

        run(store.record_job(running))
        assert run(store.get_job("job-1")) == running
        run(store.record_job(done))

        assert run(store.get_job("job-1")) == done
        assert run(store.list_jobs(key)) == [done]
        assert run(store.get_job("no-such-job")) is None

    def test_a_failed_job_keeps_its_error(self, store: JobLog) -> None:
        failed = _job("job-f", _key(), utc(2025, 1, 1), status="failed", error="NCBI said 503")
        run(store.record_job(failed))
        assert run(store.get_job("job-f")) == failed

    def test_list_jobs_is_newest_first_filtered_and_limited(self, store: JobLog) -> None:
        key, other = _key(), _key()
        for i in range(5):
            run(store.record_job(_job(f"{key}-{i}", key, utc(2025, 8, 1 + i))))
        run(store.record_job(_job(f"{other}-0", other, utc(2025, 8, 20))))

        mine = run(store.list_jobs(key))
        latest = run(store.list_jobs(key, limit=2))
        everyone = [j.job_id for j in run(store.list_jobs()) if j.query_key in (key, other)]

        assert [j.job_id for j in mine] == [f"{key}-{i}" for i in (4, 3, 2, 1, 0)]
        assert [j.job_id for j in latest] == [f"{key}-4", f"{key}-3"]
        assert everyone[0] == f"{other}-0"
        assert run(store.list_jobs(key, limit=0)) == []

    # -- progress ---------------------------------------------------------------------------

    def test_a_running_jobs_progress_round_trips_and_changes_nothing_else(
        self, store: JobLog, clock: FakeClock
    ) -> None:
        key = _key()
        running = _job("job-p", key, utc(2025, 8, 17, 16, 2), owner="a" * 32)
        counted = JobProgress(None, 0, elapsed_s=0.25, recorded_at=clock.now())
        clock.advance(seconds=2.5)
        later = JobProgress(40, 15, 9, 4, 2, 61, 2.75, recorded_at=clock.now())
        run(store.record_job(running))

        assert run(store.record_progress("job-p", counted)) is True
        assert run(store.get_job("job-p")) == replace(running, progress=counted)
        assert run(store.record_progress("job-p", later)) is True

        assert run(store.get_job("job-p")) == replace(running, progress=later)
        assert run(store.list_jobs(key)) == [replace(running, progress=later)]

    def test_progress_is_not_written_to_a_job_that_is_not_running(
        self, store: JobLog, clock: FakeClock
    ) -> None:
        key = _key()
        progress = JobProgress(40, 15, recorded_at=clock.now())
        queued = _job("job-q", key, utc(2025, 8, 1), status="queued")
        ended = _job("job-e", key, utc(2025, 8, 2), status="succeeded", finished_at=utc(2025, 8, 3))
        for job in (queued, ended):
            run(store.record_job(job))

        assert run(store.record_progress("job-q", progress)) is False
        assert run(store.record_progress("job-e", progress)) is False
        assert run(store.record_progress("no-such-job", progress)) is False
        assert run(store.get_job("job-q")) == queued
        assert run(store.get_job("job-e")) == ended
        assert run(store.get_job("no-such-job")) is None

    def test_a_job_recorded_with_its_last_progress_keeps_it_and_one_without_clears_it(
        self, store: JobLog, clock: FakeClock
    ) -> None:
        key = _key()
        progress = JobProgress(40, 15, 9, 4, 2, 61, 2.75, recorded_at=clock.now())
        interrupted = _job(
            "job-i", key, utc(2025, 8, 1), status="interrupted", finished_at=utc(2025, 8, 1, 1),
            error="the process stopped", progress=progress,
        )  # fmt: skip
        run(store.record_job(interrupted))
        assert run(store.get_job("job-i")) == interrupted

        run(store.record_job(replace(interrupted, progress=None)))
        assert run(store.get_job("job-i")) == replace(interrupted, progress=None)

    # -- query lock -------------------------------------------------------------------------

    def test_a_second_holder_in_this_process_times_out(self, store: JobLog) -> None:
        key = _key()

        async def scenario() -> None:
            async with store.query_lock(key):
                with pytest.raises(LockTimeoutError):
                    async with store.query_lock(key, timeout_s=0.2):
                        pytest.fail("acquired a held lock")
            async with store.query_lock(key):
                pass

        run(scenario())

    def test_a_lock_that_times_out_names_its_holder_and_key(self, store: JobLog) -> None:
        key = _key()

        async def scenario() -> LockTimeoutError:
            async with store.query_lock(key):
                with pytest.raises(LockTimeoutError) as raised:
                    async with store.query_lock(key, timeout_s=0.1):
                        pytest.fail("acquired a held lock")
            return raised.value

        error = run(scenario())
        assert error.query_key == key
        assert error.waited_s == pytest.approx(0.1)
        assert error.holder is not None
        assert error.holder["pid"] == os.getpid()
        assert error.holder["since"]
        assert "/" not in str(error.holder)  # never a path

    def test_a_waiting_holder_gets_the_lock_once_it_is_released(self, store: JobLog) -> None:
        key = _key()
        order: list[str] = []

        async def holder(entered: asyncio.Event) -> None:
            async with store.query_lock(key):
                entered.set()
                await asyncio.sleep(0.3)
                order.append("released")

        async def waiter(entered: asyncio.Event) -> None:
            await entered.wait()
            async with store.query_lock(key, timeout_s=10):
                order.append("acquired")

        async def scenario() -> None:
            entered = asyncio.Event()
            await asyncio.gather(holder(entered), waiter(entered))

        run(scenario())
        assert order == ["released", "acquired"]

    def test_different_keys_do_not_exclude_each_other(self, store: JobLog) -> None:
        async def scenario() -> None:
            async with store.query_lock(_key()), store.query_lock(_key()):
                pass

        run(scenario())

    def test_another_process_is_excluded_while_held_and_gets_the_lock_after(
        self, store: JobLog, lock_elsewhere: Callable[[str], bool]
    ) -> None:
        key = _key()

        async def while_held() -> bool:
            async with store.query_lock(key):
                return await asyncio.to_thread(lock_elsewhere, key)

        assert run(while_held()) is False
        assert lock_elsewhere(key) is True


class ProjectRegistryContract(_StoreChecks):
    """The `ProjectRegistry` checks."""

    # -- projects ---------------------------------------------------------------------------
    # The store is the ProjectRegistry too: these checks type it as that port.

    def test_register_project_is_idempotent_and_the_stored_model_wins(
        self, store: ProjectRegistry, clock: FakeClock
    ) -> None:
        project = ProjectInfo(
            "glp1", "Project_glp1", "all-MiniLM-L6-v2", 384, metadata={"owner": "team-a"}
        )

        created = run(store.register_project(project))
        clock.advance(days=1)
        again = run(
            store.register_project(ProjectInfo("glp1", "Project_glp1", "text-embedding-3", 1536))
        )

        assert created == ProjectInfo(
            "glp1", "Project_glp1", "all-MiniLM-L6-v2", 384, True, clock.now() - timedelta(days=1),
            {"owner": "team-a"},
        )  # fmt: skip
        assert again == created
        assert run(store.get_project("glp1")) == created

    def test_a_given_creation_time_and_hybrid_flag_are_kept(self, store: ProjectRegistry) -> None:
        project = ProjectInfo("p2", "Project_p2", "m", 8, hybrid=False, created_at=utc(2024, 5, 5))
        assert run(store.register_project(project)) == project

    def test_projects_are_listed_by_id_and_unknown_ones_are_none(
        self, store: ProjectRegistry
    ) -> None:
        for pid in ("zeta", "alpha", "mid"):
            run(store.register_project(ProjectInfo(pid, f"Project_{pid}", "m", 8)))

        assert [p.project_id for p in run(store.list_projects())] == ["alpha", "mid", "zeta"]
        assert run(store.get_project("nope")) is None

    def test_a_projects_model_can_be_changed_and_an_unknown_one_cannot(
        self, store: ProjectRegistry
    ) -> None:
        registry = store
        run(registry.register_project(ProjectInfo("m1", "Project_m1", "old", 8, hybrid=False)))
        moved = run(registry.set_project_model("m1", "new", 16))
        assert (moved.model_id, moved.dim, moved.hybrid) == ("new", 16, False)
        assert run(registry.get_project("m1")) == moved
        with pytest.raises(MetadataStoreError, match="nope"):
            run(registry.set_project_model("nope", "new", 16))

    def test_two_projects_cannot_share_a_collection(self, store: ProjectRegistry) -> None:
        run(store.register_project(ProjectInfo("one", "Shared", "m", 8)))
        with pytest.raises(MetadataStoreError, match="Shared"):
            run(store.register_project(ProjectInfo("two", "Shared", "m", 8)))


class MetadataStoreContract(
    DocumentStoreContract,
    FullTextStoreContract,
    SavedQueryStoreContract,
    JobLogContract,
    ProjectRegistryContract,
):
    """Every role's checks, and the health checks of a whole store."""

    # -- health -----------------------------------------------------------------------------

    def test_ping_answers_on_a_reachable_database(self, store: MetadataStore) -> None:
        run(store.ping())

    def test_a_sound_database_passes_its_integrity_check(self, store: MetadataStore) -> None:
        _upsert(store, full_record("101"))
        assert run(store.quick_check()) == []

"""EDAT watermarks (spec 01 checkpoint notes, spec 03 sections 2 and 13;
`biomcp.domain.watermarks`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from functools import reduce

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.errors import InvalidRecordError
from biomcp.domain.records import utc
from biomcp.domain.watermarks import (
    WatermarkAudit,
    advance_watermark,
    covered_from,
    manual_watermark,
    reads_history,
    window_start,
)

pytestmark = pytest.mark.unit

NOW = utc(2025, 6, 1, 12, 0)
LAST = utc(2025, 5, 20, 8, 30)
NAIVE = datetime(2025, 5, 20, 8, 30)  # deliberately naive


# --- window_start --------------------------------------------------------------------------


def test_window_starts_overlap_days_before_the_watermark() -> None:
    assert window_start(LAST, 5, NOW, initial_days=30) == utc(2025, 5, 15, 8, 30)


def test_window_starts_at_the_watermark_with_zero_overlap() -> None:
    assert window_start(LAST, 0, NOW, initial_days=None) == LAST


def test_watermark_wins_over_initial_days() -> None:
    assert window_start(LAST, 3, NOW, initial_days=365) == utc(2025, 5, 17, 8, 30)


def test_window_without_watermark_starts_initial_days_before_now() -> None:
    assert window_start(None, 5, NOW, initial_days=30) == utc(2025, 5, 2, 12, 0)


@pytest.mark.parametrize("initial_days", [None, 0])
def test_window_without_watermark_or_initial_days_is_the_whole_history(
    initial_days: int | None,
) -> None:
    assert window_start(None, 5, NOW, initial_days=initial_days) is None


def test_window_keeps_the_watermark_timezone() -> None:
    plus_two = timezone(timedelta(hours=2))
    last = datetime(2025, 5, 20, 10, 30, tzinfo=plus_two)
    start = window_start(last, 1, NOW, initial_days=None)
    assert start == utc(2025, 5, 19, 8, 30)
    assert start is not None
    assert start.utcoffset() == timedelta(hours=2)


@pytest.mark.parametrize("overlap", [-1, -7])
def test_negative_overlap_is_rejected(overlap: int) -> None:
    with pytest.raises(InvalidRecordError, match="overlap_days"):
        window_start(LAST, overlap, NOW, initial_days=None)


def test_negative_overlap_is_rejected_even_without_a_watermark() -> None:
    with pytest.raises(InvalidRecordError, match="overlap_days"):
        window_start(None, -1, NOW, initial_days=30)


def test_naive_watermark_is_rejected() -> None:
    with pytest.raises(InvalidRecordError, match="last_edat"):
        window_start(NAIVE, 5, NOW, initial_days=None)


def test_naive_now_is_rejected() -> None:
    with pytest.raises(InvalidRecordError, match="now"):
        window_start(LAST, 5, NAIVE, initial_days=None)


# --- advance_watermark ---------------------------------------------------------------------


def test_advance_moves_forward_to_a_later_candidate() -> None:
    assert advance_watermark(LAST, NOW) == NOW


def test_advance_never_moves_backward() -> None:
    assert advance_watermark(NOW, LAST) == NOW


def test_advance_to_the_same_instant_keeps_it() -> None:
    assert advance_watermark(LAST, LAST) == LAST


def test_first_advance_takes_the_candidate() -> None:
    assert advance_watermark(None, LAST) == LAST


def test_advance_without_candidate_keeps_the_current_watermark() -> None:
    assert advance_watermark(LAST, None) == LAST
    assert advance_watermark(None, None) is None


def test_advance_rejects_naive_current() -> None:
    with pytest.raises(InvalidRecordError, match="current"):
        advance_watermark(NAIVE, NOW)


def test_advance_rejects_naive_candidate() -> None:
    with pytest.raises(InvalidRecordError, match="candidate"):
        advance_watermark(LAST, NAIVE)


AWARE = st.datetimes(
    min_value=datetime(2000, 1, 1),
    max_value=datetime(2030, 1, 1),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=-5))]),
)


@given(candidates=st.lists(st.one_of(st.none(), AWARE), max_size=20))
def test_folding_advance_is_monotone_and_ends_at_the_max(
    candidates: list[datetime | None],
) -> None:
    history: list[datetime] = []
    current: datetime | None = None
    for candidate in candidates:
        current = advance_watermark(current, candidate)
        if current is not None:
            assert all(current >= earlier for earlier in history)
            history.append(current)
    seen = [c for c in candidates if c is not None]
    assert current == (max(seen) if seen else None)
    assert reduce(advance_watermark, candidates, None) == current


# --- covered_from --------------------------------------------------------------------------


def test_the_first_completed_scan_sets_the_history_covered() -> None:
    assert covered_from(None, False, LAST) == LAST
    assert covered_from(None, False, None) is None
    # A value read before the first scan completed is not kept (none is written then).
    assert covered_from(NOW, False, LAST) == LAST


def test_later_scans_only_widen_the_history() -> None:
    assert covered_from(LAST, True, NOW) == LAST
    assert covered_from(NOW, True, LAST) == LAST


def test_the_whole_history_stays_whole() -> None:
    assert covered_from(None, True, LAST) is None  # also a key scanned before it was recorded
    assert covered_from(LAST, True, None) is None


def test_covered_from_rejects_naive_datetimes() -> None:
    with pytest.raises(InvalidRecordError):
        covered_from(NAIVE, True, LAST)
    with pytest.raises(InvalidRecordError):
        covered_from(LAST, True, NAIVE)


@given(windows=st.lists(st.one_of(st.none(), AWARE), min_size=1, max_size=20))
def test_folding_scans_covers_the_earliest_window(windows: list[datetime | None]) -> None:
    covers = covered_from(None, False, windows[0])
    for window in windows[1:]:
        covers = covered_from(covers, True, window)
    expected = None if None in windows else min(w for w in windows if w is not None)
    assert covers == expected


# --- manual_watermark ----------------------------------------------------------------------


def test_manual_set_may_move_backward_and_is_audited() -> None:
    target = utc(2024, 1, 1)
    at = utc(2025, 6, 2, 9, 15)
    value, audit = manual_watermark(
        "glp1_obesity_v1", NOW, target, actor="alice", reason="backfill 2024", at=at
    )
    assert value == target
    assert audit == WatermarkAudit(
        query_key="glp1_obesity_v1",
        previous=NOW,
        new=target,
        actor="alice",
        reason="backfill 2024",
        at=at,
    )
    assert audit.moved_backward is True


def test_manual_set_forward_is_not_a_backward_move() -> None:
    value, audit = manual_watermark("k", LAST, NOW, actor="bob", reason="skip ahead", at=NOW)
    assert value == NOW
    assert (audit.previous, audit.new, audit.moved_backward) == (LAST, NOW, False)


def test_manual_set_to_the_same_value_is_not_a_backward_move() -> None:
    _, audit = manual_watermark("k", LAST, LAST, actor="bob", reason="noop", at=NOW)
    assert audit.moved_backward is False


def test_manual_set_on_a_key_without_watermark_records_no_previous() -> None:
    value, audit = manual_watermark("kras_nsclc_v1", None, LAST, actor="ops", reason="seed", at=NOW)
    assert value == LAST
    assert audit.previous is None
    assert audit.moved_backward is False
    assert (audit.query_key, audit.actor, audit.reason, audit.at) == (
        "kras_nsclc_v1",
        "ops",
        "seed",
        NOW,
    )


@pytest.mark.parametrize(
    ("current", "new", "at", "name"),
    [
        (NAIVE, LAST, NOW, "current"),
        (LAST, NAIVE, NOW, "new"),
        (LAST, NOW, NAIVE, "at"),
    ],
)
def test_manual_set_rejects_naive_datetimes(
    current: datetime, new: datetime, at: datetime, name: str
) -> None:
    with pytest.raises(InvalidRecordError, match=name):
        manual_watermark("k", current, new, actor="a", reason="r", at=at)


# --- reads_history -------------------------------------------------------------------------


def test_a_first_sync_reads_the_keys_whole_history() -> None:
    assert reads_history(None, False, LAST)
    assert reads_history(NOW, False, LAST)  # whatever was recorded before it completed


def test_a_later_sync_reads_the_history_only_from_its_start_or_before() -> None:
    assert reads_history(LAST, True, LAST)
    assert reads_history(NOW, True, LAST)  # a backfill from before
    assert reads_history(LAST, True, None)  # the whole history
    assert not reads_history(LAST, True, NOW)  # from the checkpoint on
    assert not reads_history(None, True, LAST)  # the key covers the whole history


def test_reads_history_rejects_naive_datetimes() -> None:
    with pytest.raises(InvalidRecordError):
        reads_history(NAIVE, True, LAST)
    with pytest.raises(InvalidRecordError):
        reads_history(LAST, True, NAIVE)

"""The retraction moment a store keeps for a record across its writes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.retraction_time import retracted_at

NOW = datetime(2025, 8, 18, 12, tzinfo=UTC)
EARLIER = NOW - timedelta(days=30)
moments = st.none() | st.datetimes(timezones=st.just(UTC))


def test_a_record_written_retracted_for_the_first_time_is_retracted_now() -> None:
    assert retracted_at(True, None, NOW) == NOW


def test_a_record_that_stays_retracted_keeps_its_first_moment() -> None:
    assert retracted_at(True, EARLIER, NOW) == EARLIER


@given(kept=moments)
def test_a_record_that_is_not_retracted_has_no_moment(kept: datetime | None) -> None:
    assert retracted_at(False, kept, NOW) is None


@given(kept=moments, later=st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=3650)))
def test_rewriting_a_retracted_record_never_moves_its_moment(
    kept: datetime | None, later: timedelta
) -> None:
    first = retracted_at(True, kept, NOW)
    assert retracted_at(True, first, NOW + later) == first

"""The window bisection behind `esearch_delta`, over an in-memory ESearch."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from biomcp.adapters.entrez.bisection import enumerate_window
from biomcp.ports.entrez import (
    ESEARCH_ID_CAP,
    EntrezRequestError,
    EntrezWarning,
    SearchResult,
    WindowEnumeration,
)

pytestmark = pytest.mark.unit

TERM = "cancer"
START = date(2023, 3, 1)
_UID_RANGE = re.compile(r"^\((?P<term>.*)\) AND (?P<lo>\d+):(?P<hi>\d+)\[uid\]$")


@dataclass
class FakeESearch:
    """PubMed's ESearch over `records` (PMID -> day): counts every match, lists at most `cap`.
    With `honour_uid=False` it ignores a PMID range, as a server that does not know `[uid]`."""

    records: dict[int, date]
    cap: int = ESEARCH_ID_CAP
    honour_uid: bool = True
    warnings: tuple[EntrezWarning, ...] = ()
    queries: list[str] = field(default_factory=list)

    async def __call__(self, query: str, lo: date, hi: date) -> SearchResult:
        self.queries.append(query)
        first, last = 1, 99_999_999
        ranged = _UID_RANGE.match(query)
        if ranged:
            assert ranged["term"] == TERM
            if self.honour_uid:
                first, last = int(ranged["lo"]), int(ranged["hi"])
        else:
            assert query == TERM
        hits = sorted(
            p for p, day in self.records.items() if lo <= day <= hi and first <= p <= last
        )
        return SearchResult(
            count=len(hits),
            retstart=0,
            retmax=self.cap,
            pmids=tuple(str(p) for p in hits[: self.cap]),
            warnings=self.warnings,
        )


def _spread(count: int, days: int, *, first_pmid: int = 30_000_000) -> dict[int, date]:
    """`count` PMIDs in a row, dealt evenly over `days` days from START."""
    return {first_pmid + i: START + timedelta(days=i % days) for i in range(count)}


def _run(fake: FakeESearch, lo: date, hi: date, *, cap: int | None = None) -> WindowEnumeration:
    return asyncio.run(enumerate_window(fake, TERM, lo, hi, cap=cap or fake.cap))


def test_a_window_under_the_cap_is_read_in_one_query() -> None:
    fake = FakeESearch(_spread(500, 10))
    result = _run(fake, START, START + timedelta(days=9))
    assert result.complete
    assert sorted(map(int, result.pmids)) == sorted(fake.records)
    assert result.count == 500
    assert result.requests == 1 == len(fake.queries)


def test_a_window_over_the_cap_is_split_by_dates_until_every_part_fits() -> None:
    fake = FakeESearch(_spread(25_000, 10))
    result = _run(fake, START, START + timedelta(days=9))
    assert result.complete
    assert len(result.pmids) == len(set(result.pmids)) == 25_000
    assert set(map(int, result.pmids)) == set(fake.records)
    assert not any("[uid]" in q for q in fake.queries)


def test_25000_ids_over_10_days_take_the_whole_window_then_four_spans() -> None:
    fake = FakeESearch(_spread(25_000, 10))
    result = _run(fake, START, START + timedelta(days=9))
    assert result.requests == len(fake.queries) == 5


def test_one_day_over_the_cap_is_split_by_pmid_ranges() -> None:
    day = START + timedelta(days=1)
    records = dict.fromkeys(range(30000000, 30012000), day)
    records.update({20_000_000: START, 40_000_000: START + timedelta(days=2)})
    fake = FakeESearch(records)
    result = _run(fake, START, START + timedelta(days=2))
    assert result.complete, result.warnings
    assert sorted(map(int, result.pmids)) == sorted(records)
    assert any(q.endswith("[uid]") for q in fake.queries)


def test_a_day_split_once_by_pmid_takes_three_queries() -> None:
    low = dict.fromkeys(range(1, 7), START)
    high = dict.fromkeys(range(60000000, 60000006), START)
    fake = FakeESearch(low | high, cap=10)
    result = _run(fake, START, START)
    assert fake.queries == [
        TERM,
        f"({TERM}) AND 1:50000000[uid]",
        f"({TERM}) AND 50000001:99999999[uid]",
    ]
    assert result.requests == 3
    assert sorted(map(int, result.pmids)) == sorted(low | high)


def test_a_server_ignoring_pmid_ranges_leaves_the_day_out_and_says_which() -> None:
    next_day = START + timedelta(days=1)
    records = dict.fromkeys(range(1, 13), START) | dict.fromkeys(range(100, 103), next_day)
    fake = FakeESearch(records, cap=10, honour_uid=False)
    result = _run(fake, START, next_day)
    assert not result.complete
    assert sorted(result.pmids) == ["100", "101", "102"]
    (warning,) = result.warnings
    assert warning.kind == "WindowOverCap"
    assert START.isoformat() in warning.message


def test_ncbi_warnings_on_the_term_are_kept_once_across_queries() -> None:
    said = EntrezWarning("PhraseNotFound", "foo")
    fake = FakeESearch(_spread(30, 6), cap=10, warnings=(said,))
    result = _run(fake, START, START + timedelta(days=5))
    assert result.requests > 1
    assert result.warnings == (said,)


def test_a_window_ending_before_it_starts_is_refused_before_any_query() -> None:
    fake = FakeESearch({})
    with pytest.raises(EntrezRequestError):
        _run(fake, START, START - timedelta(days=1))
    assert fake.queries == []


def test_an_empty_window_of_one_day_is_complete_and_empty() -> None:
    result = _run(FakeESearch({}), START, START)
    assert result == WindowEnumeration(pmids=(), count=0, requests=1)


_records = st.dictionaries(
    keys=st.integers(min_value=1, max_value=99_999_999),
    values=st.integers(min_value=0, max_value=29).map(lambda n: START + timedelta(days=n)),
    max_size=120,
)


@settings(max_examples=60, deadline=None)
@given(
    records=_records,
    cap=st.integers(min_value=1, max_value=12),
    span=st.tuples(st.integers(0, 29), st.integers(0, 29)).map(sorted),
)
def test_every_pmid_of_the_window_is_enumerated_exactly_once(
    records: dict[int, date], cap: int, span: list[int]
) -> None:
    lo, hi = (START + timedelta(days=n) for n in span)
    result = _run(FakeESearch(records, cap=cap), lo, hi)
    expected = {p for p, day in records.items() if lo <= day <= hi}
    assert result.complete
    assert len(result.pmids) == len(set(result.pmids)) == result.count
    assert set(map(int, result.pmids)) == expected

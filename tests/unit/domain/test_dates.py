"""Publication dates keep what the record says: no month for a Season or a range."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.records import PubDate

pytestmark = pytest.mark.unit

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@pytest.mark.parametrize(
    ("text", "month", "day"),
    [
        ("1990 Spring", None, None),
        ("2000 Winter", None, None),
        ("1979 Jul-Sep", None, None),
        ("1998 Dec-1999 Jan", None, None),
        ("1979-1980", None, None),
        ("1979-1980 Fall", None, None),
        ("1979 Fall-Winter", None, None),
        ("1979 Aug 28-Sep 3", None, None),
        ("Summer 1979", None, None),
        ("1979 Apr 12-18", 4, None),  # one month named, the days a range
    ],
)
def test_a_season_or_range_keeps_its_text_and_only_a_month_it_names(
    text: str, month: int | None, day: int | None
) -> None:
    parsed = PubDate.parse(text)

    assert (parsed.month, parsed.day) == (month, day)
    assert parsed.raw == text
    assert parsed.text == text
    assert parsed.year == int(text[-4:]) if text.startswith("Summer") else int(text[:4])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2019", PubDate(2019)),
        ("2019 Mar", PubDate(2019, 3)),
        ("2019 Mar 5", PubDate(2019, 3, 5)),
        ("2019 March 5", PubDate(2019, 3, 5)),
        ("2019-03-05", PubDate(2019, 3, 5)),
        ("2019 3 5", PubDate(2019, 3, 5)),
    ],
)
def test_a_plain_date_keeps_year_month_and_day_without_source_text(
    text: str, expected: PubDate
) -> None:
    assert PubDate.parse(text) == expected


def test_a_word_that_is_no_month_keeps_the_text_and_gives_no_month() -> None:
    assert PubDate.parse("2019 Christmas") == PubDate(2019, raw="2019 Christmas")


def test_an_impossible_day_is_dropped_and_the_text_kept() -> None:
    assert PubDate.parse("2019 Feb 30") == PubDate(2019, 2, raw="2019 Feb 30")


def test_iso_and_text_show_only_what_the_date_holds() -> None:
    assert (PubDate.parse("1990 Spring").iso(), PubDate.parse("1990 Spring").text) == (
        "1990",
        "1990 Spring",
    )
    assert (PubDate(2019, 3, 5).iso(), PubDate(2019, 3, 5).text) == ("2019-03-05", "2019 Mar 5")
    assert PubDate(2019).text == "2019"


@given(
    year=st.integers(1900, 2100),
    first=st.integers(0, 11),
    span=st.integers(1, 11),
    season=st.sampled_from(["Spring", "Summer", "Fall", "Autumn", "Winter"]),
)
def test_no_season_or_month_range_ever_gives_a_month(
    year: int, first: int, span: int, season: str
) -> None:
    ranged = f"{year} {_MONTHS[first]}-{_MONTHS[(first + span) % 12]}"
    across = f"{year} Dec-{year + 1} {_MONTHS[first]}"
    for text in (ranged, across, f"{year} {season}", f"{year}-{year + 1} {season}"):
        parsed = PubDate.parse(text)
        assert parsed.month is None, text
        assert parsed.raw == text
        assert parsed.year == year

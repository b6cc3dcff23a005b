"""The search cursor (`usecases.live.paging`): opaque, bounded, bound to its query, checked."""

from __future__ import annotations

import base64
import json
from datetime import date

import pytest

from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.live.paging import (
    EDAT_FLOOR,
    MAX_CURSOR_CHARS,
    Cursor,
    Slice,
    corrected_for_cursor,
    decode_cursor,
    encode_cursor,
    query_fingerprint,
)
from biomcp.usecases.live.paging import _after as after

PRINT = query_fingerprint("asthma AND (2020[pdat])", "relevance")


def _raw(data: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        Cursor(PRINT, offset=20),
        Cursor(PRINT, offset=9998, corrected="asthma"),
        Cursor(PRINT, deep=True, rest_hi=date(2026, 11, 26)),
        Cursor(
            PRINT,
            deep=True,
            rest_hi=date(2024, 3, 1),
            rest_uid=35_000_000,
            window=Slice(date(2024, 3, 1), date(2024, 3, 1), 9000, 2000, 34_000_000, 35_000_000),
            span=1,
        ),
        Cursor(
            PRINT,
            deep=True,
            rest_hi=date(2024, 3, 1),
            window=Slice(EDAT_FLOOR, date(2024, 3, 1), 12),
        ),
    ],
)
def test_a_cursor_comes_back_as_it_went(cursor: Cursor) -> None:
    text = encode_cursor(cursor)
    assert len(text) <= MAX_CURSOR_CHARS
    assert text.isascii()
    assert "=" not in text
    assert decode_cursor(text, PRINT) == cursor


def test_the_fingerprint_binds_the_term_and_the_sort() -> None:
    assert query_fingerprint("asthma", "relevance") != query_fingerprint("asthma", "pub_date")
    assert query_fingerprint("asthma", "relevance") != query_fingerprint("asthma ", "relevance")
    text = encode_cursor(Cursor(PRINT, offset=20))
    with pytest.raises(InvalidRequestError, match="another search"):
        decode_cursor(text, query_fingerprint("asthma", "relevance"))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "x" * (MAX_CURSOR_CHARS + 1),
        "!!!not base64!!!",
        _raw([1, 2]),
        _raw({"v": 2, "q": PRINT, "o": 0}),
        _raw({"v": 1, "q": PRINT, "o": 9999}),
        _raw({"v": 1, "q": PRINT, "o": -1}),
        _raw({"v": 1, "q": PRINT, "o": True}),
        _raw({"v": 1, "q": PRINT, "h": 20241301, "hu": None, "s": 1}),
        _raw({"v": 1, "q": PRINT, "h": 20240101, "hu": None, "s": 0}),
        _raw({"v": 1, "q": PRINT, "h": 20240101, "hu": None, "s": 1, "w": [1, 2]}),
        _raw(
            {"v": 1, "q": PRINT, "h": 20240101, "s": 1, "w": [20240102, 20240101, 1, 0, None, None]}
        ),
        _raw({"v": 1, "q": PRINT, "c": "", "o": 0}),
    ],
)
def test_what_is_not_a_valid_cursor_is_refused(text: str) -> None:
    with pytest.raises(InvalidRequestError) as raised:
        decode_cursor(text, PRINT)
    assert raised.value.details == {"field": "cursor"}


def test_after_a_window_the_walk_goes_to_older_days_or_lower_pmids() -> None:
    day = date(2024, 3, 1)
    plain = Cursor(PRINT, deep=True, rest_hi=day, window=Slice(date(2024, 2, 1), day, 10, 10))
    assert after(plain) == Cursor(PRINT, deep=True, rest_hi=date(2024, 1, 31))
    split = Cursor(PRINT, deep=True, rest_hi=day, window=Slice(day, day, 10, 10, 500, 900))
    assert after(split) == Cursor(PRINT, deep=True, rest_hi=day, rest_uid=499)
    bottom = Cursor(PRINT, deep=True, rest_hi=day, window=Slice(day, day, 10, 10, 1, 900))
    assert after(bottom) == Cursor(PRINT, deep=True, rest_hi=date(2024, 2, 29))
    floor = Cursor(PRINT, deep=True, rest_hi=day, window=Slice(EDAT_FLOOR, day, 10, 10))
    assert after(floor) is None


def test_the_largest_cursor_stays_within_its_bound() -> None:
    corrected = corrected_for_cursor("é" * 33)  # JSON-escaped: 6 characters each
    assert corrected is not None
    assert corrected_for_cursor("é" * 34) is None
    assert corrected_for_cursor("a" * 199) is None
    widest = Cursor(
        PRINT,
        deep=True,
        rest_hi=date(9999, 12, 31),
        rest_uid=999_999_999,
        window=Slice(date(9999, 12, 31), date(9999, 12, 31), 9999, 9999, 999_999_999, 999_999_999),
        span=400_000,
        corrected=corrected,
    )
    text = encode_cursor(widest)
    assert len(text) <= MAX_CURSOR_CHARS
    assert decode_cursor(text, PRINT) == widest

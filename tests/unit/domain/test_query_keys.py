"""Query keys are short and printable; a window's overlap never overflows a datetime."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from biomcp.domain.watermarks import QUERY_KEY_MAX_CHARS, query_key_problem, window_start

pytestmark = pytest.mark.unit

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


@pytest.mark.parametrize(
    "key",
    ["glp1_v1", "statins 2024", "Ärzte/études-β", "q:1", "x" * QUERY_KEY_MAX_CHARS],
)
def test_printable_keys_are_accepted(key: str) -> None:
    assert query_key_problem(key) is None


@pytest.mark.parametrize(
    ("key", "code_point"),
    [
        ("a\x00b", "U+0000"),  # NUL
        ("a\nb", "U+000A"),  # control
        ("a\u202eb", "U+202E"),  # right-to-left override
        ("a\u2066b", "U+2066"),  # left-to-right isolate
        ("a\u200bb", "U+200B"),  # zero-width space
        ("a\u200db", "U+200D"),  # zero-width joiner
        ("a\ufeffb", "U+FEFF"),  # byte-order mark
        ("a\u2028b", "U+2028"),  # line separator
        ("a\u00a0b", "U+00A0"),  # no-break space
        ("a\ue000b", "U+E000"),  # private use
    ],
)
def test_non_printable_characters_are_refused_by_code_point(key: str, code_point: str) -> None:
    problem = query_key_problem(key)
    assert problem is not None
    assert code_point in problem
    assert "position 1" in problem


def test_empty_and_long_keys_are_refused() -> None:
    assert "empty" in (query_key_problem("") or "")
    problem = query_key_problem("k" * 2000)
    assert problem is not None
    assert "2000 characters" in problem


@pytest.mark.parametrize("overlap", [2**31, 10**12, 800_000])
def test_an_overlap_past_year_one_is_the_whole_history(overlap: int) -> None:
    assert window_start(NOW, overlap, NOW, None) is None
    assert window_start(None, 5, NOW, overlap) is None


def test_an_overlap_within_range_moves_the_start_back() -> None:
    start = window_start(NOW, 700_000, NOW, None)
    assert start is not None
    assert start.year == 109

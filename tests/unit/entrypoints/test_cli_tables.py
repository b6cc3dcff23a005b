"""The CLI's tables wrap their text column instead of cutting it, at any width."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.entrypoints.cli.common import clip, text_table, wrap_cell

HEADERS = ["#", "score", "doc_id", "text"]
PASSAGE = (
    "In 1742 patients, aspirin changed quality of life by 19% (95% CI 4 to 39), and "
    "hospital readmission fell from 12.5% to 8.25% at 365 days."
)


def _rows(*texts: str) -> list[list[str]]:
    return [[str(n), "1.254", f"pmid:3000{n:04d}", text] for n, text in enumerate(texts, 1)]


@pytest.mark.parametrize("width", [40, 60, 80, 120, 200])
def test_the_text_column_keeps_every_word_at_any_width(width: int) -> None:
    table = text_table(HEADERS, _rows(PASSAGE, "short"), right=frozenset({0, 1}), width=width)
    words = table.split()
    start = words.index("In")
    assert words[start : start + len(PASSAGE.split())] == PASSAGE.split()
    assert "…" not in table
    assert max(len(line) for line in table.splitlines()) <= width


def test_wide_tables_put_the_text_beside_the_row_and_continue_under_its_header() -> None:
    table = text_table(HEADERS, _rows(PASSAGE), right=frozenset({0, 1}), width=80)
    header, first, *more = table.splitlines()
    column = header.index("text")
    assert first[column:].startswith("In 1742 patients")
    assert more
    assert all(line[:column].strip() == "" for line in more)


def test_narrow_tables_put_the_text_below_its_row_and_leave_out_its_header() -> None:
    table = text_table(HEADERS, _rows(PASSAGE), right=frozenset({0, 1}), width=40)
    header, row, *below = table.splitlines()
    assert "text" not in header
    assert row.split() == ["1", "1.254", "pmid:30000001"]
    assert below
    assert all(line.startswith("    ") for line in below)


def test_a_word_longer_than_the_room_stays_whole() -> None:
    long_word = "NCT01234567/ISRCTN12345678/EudraCT-2020-001234-56"
    assert wrap_cell(f"registered as {long_word} in 2020", 20) == [
        "registered as",
        long_word,
        "in 2020",
    ]


def test_an_empty_table_shows_its_headers() -> None:
    assert text_table(HEADERS, [], right=frozenset(), width=80).split() == HEADERS


@given(
    st.lists(
        st.text(alphabet=st.sampled_from("ab1234567890%.() -"), min_size=0, max_size=120),
        min_size=1,
        max_size=4,
    ),
    st.integers(min_value=20, max_value=240),
)
def test_every_cell_word_survives_wrapping(texts: list[str], width: int) -> None:
    table = text_table(HEADERS, _rows(*texts), right=frozenset({0, 1}), width=width)
    shown = table.split()
    expected = [word for text in texts for word in text.split()]
    # The text words appear in order once the row cells (numbers, scores, ids) are dropped.
    fixed = {cell for row in _rows(*texts) for cell in row[:3]} | set(HEADERS)
    assert [w for w in shown if w not in fixed] == [w for w in expected if w not in fixed]


@pytest.mark.parametrize("width", range(4, len(PASSAGE) + 2))
def test_a_clipped_line_ends_after_a_whole_word(width: int) -> None:
    clipped = clip(PASSAGE, width)
    assert len(clipped) <= width
    kept = clipped.removesuffix("…").split()
    assert kept == PASSAGE.split()[: len(kept)]  # no word (no number) shown cut short

"""A chunk's sentences, embedded apart so that a search can score it by its best one."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.chunking import (
    MAX_SENTENCE_UNITS,
    chunk_record,
    chunking_for_window,
    has_sentence_units,
    sentence_units,
)
from tests.support.builders import make_record

pytestmark = pytest.mark.unit


def test_the_title_line_and_each_sentence_of_the_body_are_units() -> None:
    text = (
        "Metformin in sepsis: a trial\n"
        "RESULTS: Mortality fell from 30% to 20% (p = 0.01). Adverse events were rare."
    )
    assert sentence_units(text) == [
        "Metformin in sepsis: a trial",
        "RESULTS: Mortality fell from 30% to 20% (p = 0.01).",
        "Adverse events were rare.",
    ]


def test_a_number_and_its_comparator_stay_one_unit() -> None:
    text = "Title\nIn the treated group, 12 of 40 died. In the placebo group, 20 of 41 died."
    assert sentence_units(text) == [
        "Title",
        "In the treated group, 12 of 40 died. In the placebo group, 20 of 41 died.",
    ]


def test_a_chunk_of_one_unit_has_none() -> None:
    assert sentence_units("A title only") == []
    assert sentence_units("  \n\nOne sentence.\n") == []
    assert sentence_units("") == []


def test_units_are_capped() -> None:
    text = "Title\n" + " ".join(f"Sentence number {i} ends here." for i in range(80))
    units = sentence_units(text)
    assert len(units) == MAX_SENTENCE_UNITS
    assert units[:2] == ["Title", "Sentence number 0 ends here."]


def test_every_chunk_of_a_record_has_its_title_as_a_unit() -> None:
    record = make_record(
        title="Aspirin and bleeding",
        text=" ".join(f"Patients in cohort {i} were followed for bleeding." for i in range(60)),
    )
    chunks = chunk_record(record, chunking_for_window(128))
    assert len(chunks) > 1
    for chunk in chunks:
        units = sentence_units(chunk.text)
        assert units[0] == "Aspirin and bleeding"
        assert all(unit in chunk.text for unit in units)


@given(st.text(alphabet="ab .\n", max_size=200))
def test_units_are_stripped_non_empty_pieces_of_the_text(text: str) -> None:
    units = sentence_units(text)
    assert len(units) != 1
    for unit in units:
        assert unit == unit.strip()
        assert unit
        assert "\n" not in unit
        assert unit in text


@given(st.text(alphabet="ab .A1\n", max_size=200))
def test_has_sentence_units_says_whether_there_are_any(text: str) -> None:
    assert has_sentence_units(text) is bool(sentence_units(text))

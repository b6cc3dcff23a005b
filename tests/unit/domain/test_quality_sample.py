"""The sample size read from an abstract (`biomcp.domain.quality_sample`): groups summed,
thousands read whole, things that are not people refused. Synthetic twins of the real records
in test_quality_real_records.py."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.quality import read_sample_size

pytestmark = pytest.mark.unit


# --- groups are summed ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We studied 483 patients and 461 controls.", 944),
        ("We compared 483 patients with vertigo and 461 healthy controls.", 944),
        ("Patients (n = 60) vs. controls (n = 58) were compared.", 118),
        ("n = 120 in the intervention group and n = 118 in the control group.", 238),
        ("The trial enrolled 36 men and 24 women.", 60),
        ("Cohorts were Denmark (n = 52), Sweden (n = 95) and Iceland (n = 37).", 184),
        ("Thirty-two children and 12 adults took part.", 44),
        (
            "In this study, 483 patients with vertigo were included in the study group. "
            "The control group consisted of 461 healthy subjects.",
            944,
        ),
    ],
)
def test_the_groups_an_abstract_names_are_summed(text: str, expected: int) -> None:
    reading = read_sample_size(text)
    assert reading.n == expected
    assert reading.phrase is not None
    assert reading.phrase in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("120 patients were randomized, 60 to A and 60 to B.", 120),
        ("A total of 120 patients, 60 men and 60 women, took part.", 120),
        ("Of 1 366 422 patients with AF, 11 947 patients had rehabilitation.", 1366422),
        ("Of 889 participants enrolled, 229 participants failed a test.", 889),
        ("We saw 100 patients at baseline and 80 patients at follow-up.", 100),
        ("72 senior patients (37 men and 35 women) and 71 junior patients.", 72),
        ("We studied 50 patients.\nRESULTS: The 40 controls were worse.", 50),
        (
            "A total of 900 patients were randomized into two groups. The control group had 450.",
            900,
        ),
    ],
)
def test_a_total_and_its_parts_or_unrelated_counts_are_not_added(text: str, expected: int) -> None:
    assert read_sample_size(text).n == expected


@given(st.integers(1, 99_999), st.integers(1, 99_999))
def test_two_arms_joined_by_and_read_as_their_sum(cases: int, controls: int) -> None:
    text = f"We enrolled {cases:,} patients and {controls:,} controls."
    assert read_sample_size(text).n == cases + controls


# --- thousands separators ------------------------------------------------------------------


@pytest.mark.parametrize(
    "separator",
    [" ", "\u2009", "\u00a0", "\u202f", ","],
    ids=["space", "thin", "nbsp", "nnbsp", "comma"],
)
def test_thousands_grouped_by_spaces_or_commas_are_read_whole(separator: str) -> None:
    text = f"A total of 12{separator}537 participants with dysglycaemia were randomized."
    assert read_sample_size(text).n == 12537


def test_a_year_before_a_count_is_not_read_as_its_thousands() -> None:
    assert read_sample_size("In 2015 640 patients were seen.").n == 640


def test_space_grouped_millions_are_read_whole() -> None:
    assert read_sample_size("We followed 1 085 024 individuals.").n == 1085024


# --- things that are not people ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We studied 103 endarterectomies in 95 patients.", 95),
        ("A total of 103 endarterectomies were performed in 95 patients.", 95),
        ("We examined 240 eyes of 120 patients.", 120),
        ("A total of 150 knees in 120 patients were replaced.", 120),
        ("A total of 328 mastectomies were done in 276 patients.", 276),
        ("A total of 360 core needle biopsies came from 146 patients.", 146),
        ("A total of 489 grafts were carried out in 357 patients.", 357),
        ("Resistant strains (n = 8) and sensitive isolates (n = 7) were tested.", None),
    ],
)
def test_procedures_body_parts_and_strains_are_not_people(text: str, expected: int | None) -> None:
    assert read_sample_size(text).n == expected


def test_a_refused_procedure_count_is_listed_as_refused() -> None:
    reading = read_sample_size("A total of 103 endarterectomies were performed in 95 patients.")
    assert any("103" in phrase for phrase in reading.refused)

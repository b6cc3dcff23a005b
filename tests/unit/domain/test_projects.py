"""Project collections: ids checked, names kept apart, texts trimmed, scores clamped."""

from __future__ import annotations

import hashlib
import math
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from biomcp.domain.projects import (
    ELLIPSIS,
    PROJECT_ID_MAX,
    check_project_id,
    collection_name,
    trim_text,
    unit_score,
)

pytestmark = pytest.mark.unit

WEAVIATE_CLASS = re.compile(r"[A-Z][_0-9A-Za-z]*")


def _hash16(project_id: str) -> str:
    return hashlib.blake2b(project_id.encode("utf-8"), digest_size=16).hexdigest()[:16]


# --- check_project_id -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "project_id",
    ["citeloom/clean-arch", "x-1", "x_1", "Ünïcode/проект", "a b", "a", "é" * PROJECT_ID_MAX],
)
def test_valid_project_ids_are_returned_unchanged(project_id: str) -> None:
    assert check_project_id(project_id) is project_id


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "must be a string, got NoneType"),
        (12, "must be a string, got int"),
        (b"x-1", "must be a string, got bytes"),
        ("", "must not be empty"),
        ("a" * (PROJECT_ID_MAX + 1), "at most 128 characters, got 129"),
        ("a\nb", "non-printable character U\\+000A at position 1"),
        ("\tab", "non-printable character U\\+0009 at position 0"),
        ("ab\x00", "non-printable character U\\+0000 at position 2"),
        ("a\u00a0b", "non-printable character U\\+00A0 at position 1"),
        ("\ud800", "non-printable character U\\+D800 at position 0"),
        (" ab", "must not start or end with whitespace"),
        ("ab ", "must not start or end with whitespace"),
    ],
)
def test_invalid_project_ids_raise_a_one_line_value_error(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        check_project_id(value)
    assert "\n" not in str(caught.value)


# --- collection_name --------------------------------------------------------------------------


def test_collection_name_is_prefix_slug_and_blake2b_hash() -> None:
    name = collection_name("citeloom/clean-arch")
    assert name == "Proj_citeloom_clean_arch_8fc69d641369672c"
    assert name == f"Proj_citeloom_clean_arch_{_hash16('citeloom/clean-arch')}"


def test_ids_with_the_same_slug_differ_by_their_hash() -> None:
    dash, underscore = collection_name("x-1"), collection_name("x_1")
    assert dash.startswith("Proj_x_1_")
    assert underscore.startswith("Proj_x_1_")
    assert dash != underscore


def test_ids_differing_only_in_case_differ_even_on_a_case_insensitive_filesystem() -> None:
    assert collection_name("ABC").startswith("Proj_ABC_")
    assert collection_name("ABC").lower() != collection_name("abc").lower()


@pytest.mark.parametrize("project_id", ["///", "é" * PROJECT_ID_MAX, "проект", "-"])
def test_an_id_without_ascii_letters_or_digits_is_named_by_its_hash_alone(project_id: str) -> None:
    assert collection_name(project_id) == f"Proj_{_hash16(project_id)}"


def test_non_ascii_characters_become_single_underscores_in_the_slug() -> None:
    assert collection_name("Ünïcode/проект") == f"Proj_n_code_{_hash16('Ünïcode/проект')}"


def test_the_slug_is_cut_to_40_characters_without_a_dangling_underscore() -> None:
    long_ascii = "a" * PROJECT_ID_MAX
    assert collection_name(long_ascii) == f"Proj_{'a' * 40}_{_hash16(long_ascii)}"
    cut_at_separator = "a" * 39 + "--b" + "c" * 50
    assert collection_name(cut_at_separator) == f"Proj_{'a' * 39}_{_hash16(cut_at_separator)}"


@pytest.mark.parametrize("project_id", ["", " x", "x\n", "\ud800"])
def test_collection_name_rejects_an_invalid_id(project_id: str) -> None:
    with pytest.raises(ValueError, match="project id"):
        collection_name(project_id)


PRINTABLE = st.characters().filter(str.isprintable)
# A few characters the slug maps alike, so that many ids share a slug and only the hash differs.
CLASHING = st.sampled_from(list("aA1-_/ .é"))
PROJECT_IDS = st.text(alphabet=PRINTABLE | CLASHING, min_size=1, max_size=PROJECT_ID_MAX).filter(
    lambda s: s == s.strip()
)


@given(project_id=PROJECT_IDS)
def test_collection_names_are_valid_weaviate_classes_and_deterministic(project_id: str) -> None:
    assert check_project_id(project_id) == project_id
    name = collection_name(project_id)
    assert WEAVIATE_CLASS.fullmatch(name)
    assert len(name) <= 100
    assert name.startswith("Proj_")
    assert name.endswith(_hash16(project_id))
    assert name != "PubMedChunk"
    assert collection_name(project_id) == name


@given(first=PROJECT_IDS, second=PROJECT_IDS)
def test_distinct_ids_get_distinct_names(first: str, second: str) -> None:
    assume(first != second)
    assert collection_name(first).lower() != collection_name(second).lower()


@settings(max_examples=50)
@given(ids=st.lists(st.text(alphabet=CLASHING, min_size=1, max_size=6), unique=True, max_size=40))
def test_names_stay_distinct_across_many_ids_sharing_slugs(ids: list[str]) -> None:
    valid = [i for i in ids if i == i.strip()]
    assert len({collection_name(i) for i in valid}) == len(valid)


# --- trim_text --------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "short", "exactly twenty chars"])
def test_text_that_fits_is_returned_unchanged(text: str) -> None:
    assert trim_text(text, 20) is text


@pytest.mark.parametrize(
    ("text", "max_chars", "expected"),
    [
        # A sentence end keeping at least 60% of the budget: no ellipsis.
        ("First sentence. Second sentence is long.", 20, "First sentence."),
        ("Is it? Yes it is indeed", 10, "Is it?"),
        ("Stop! Then go on and on", 8, "Stop!"),
        ("One line.\nAnother line", 12, "One line."),
        # The last sentence end within the budget wins.
        ("A b. C d. E f g h i", 10, "A b. C d."),
        # A sentence end below 60% of the budget loses to the last word boundary.
        ("Hi. then many words follow here", 20, "Hi. then many words…"),
        ("Short one. then more words here", 20, "Short one. then…"),
        # 60% exactly is enough (6 of 10), just below is not (6 of 11).
        ("Abcde. fg hijklmno", 10, "Abcde."),
        ("Abcde. fg hijklmno", 11, "Abcde. fg…"),
        # A dot not followed by whitespace ends no sentence.
        ("Dose was 3.5mg daily and more", 14, "Dose was…"),
        # Trailing whitespace, commas, semicolons, colons and dashes go before the ellipsis.
        ("alpha, beta; gamma delta", 13, "alpha, beta…"),
        ("alpha beta: gamma", 12, "alpha beta…"),
        ("alpha —   beta gamma", 12, "alpha…"),
        ("a , ; bbbbbbbbb", 8, "a…"),
        # One huge word: a hard cut.
        ("a" * 50, 10, "a" * 9 + "…"),
        ("supercalifragilistic expialidocious", 10, "supercali…"),
        # Only junk before the last boundary: a hard cut, trailing whitespace stripped.
        (", , , , ,", 5, ", ,…"),
        ("  abcdefgh", 5, "  ab…"),
        # A budget of one leaves room for the ellipsis alone.
        ("abc", 1, "…"),
    ],
)
def test_long_text_is_cut_at_the_best_boundary(text: str, max_chars: int, expected: str) -> None:
    assert trim_text(text, max_chars) == expected


def test_a_hard_cut_never_splits_a_surrogate_pair() -> None:
    text = "ab\ud83d\ude00cd"  # an emoji kept as a surrogate pair (surrogatepass decoding)
    assert trim_text(text, 4) == "ab…"
    assert trim_text(text, 5) == "ab\ud83d\ude00…"


@pytest.mark.parametrize("max_chars", [0, -1])
def test_a_budget_below_one_is_rejected(max_chars: int) -> None:
    with pytest.raises(ValueError, match="max_chars must be at least 1"):
        trim_text("", max_chars)


TEXTS = st.text(alphabet=st.sampled_from(list("ab .?!,;:\n-—")) | st.characters(), max_size=200)


@given(text=TEXTS, max_chars=st.integers(min_value=1, max_value=120))
def test_trimmed_text_fits_and_is_a_prefix_cut_cleanly(text: str, max_chars: int) -> None:
    trimmed = trim_text(text, max_chars)
    assert len(trimmed) <= max_chars
    if len(text) <= max_chars:
        assert trimmed == text
        return
    body = trimmed.removesuffix(ELLIPSIS)
    assert text.startswith(body)
    assert len(body) < len(text)
    assert body == body.rstrip()
    if body == trimmed:  # no ellipsis: a whole sentence, long enough
        assert body[-1] in ".?!"
        assert text[len(body)].isspace()
        assert len(body) * 5 >= max_chars * 3


@given(
    sentence=st.text(alphabet="abc ", min_size=1, max_size=30).map(lambda s: "X" + s.strip() + "."),
    rest=st.text(alphabet="abc .", min_size=1, max_size=60),
)
def test_a_long_enough_sentence_end_is_preferred(sentence: str, rest: str) -> None:
    text = f"{sentence} {rest}"
    max_chars = len(sentence) + 1
    assert trim_text(text, max_chars).startswith(sentence)
    assert not trim_text(text, max_chars).endswith(ELLIPSIS)


# --- unit_score -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.25, 0.25),
        (0.0, 0.0),
        (1.0, 1.0),
        (-0.5, 0.0),
        (1.5, 1.0),
        (math.nan, 0.0),
        (-math.inf, 0.0),
        (math.inf, 1.0),
    ],
)
def test_unit_score_clamps_to_the_unit_interval(value: float, expected: float) -> None:
    assert unit_score(value) == expected


def test_unit_score_of_negative_zero_is_positive_zero() -> None:
    assert math.copysign(1.0, unit_score(-0.0)) == 1.0


@given(value=st.floats())
def test_unit_score_is_always_within_bounds_and_keeps_in_range_values(value: float) -> None:
    score = unit_score(value)
    assert 0.0 <= score <= 1.0
    if 0.0 <= value <= 1.0:
        assert score == value

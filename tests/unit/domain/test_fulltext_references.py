"""Citation lines of full-text references (domain/fulltext_references.py), on SYNTHETIC parts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.fulltext_references import (
    Reference,
    citation_text,
    reference_chars,
    tidy,
    vancouver_name,
)


def test_vancouver_names_keep_initials_and_make_them_from_given_names() -> None:
    assert vancouver_name("Garton", "NJ") == "Garton NJ"
    assert vancouver_name("Doe", "Jane Ann") == "Doe JA"
    assert vancouver_name("Teh", "C-Z") == "Teh CZ"
    assert vancouver_name("Ender", "PhB") == "Ender PB"
    assert vancouver_name("Roe", "J.-P.", "Jr") == "Roe JP Jr"
    assert vancouver_name("Solo") == "Solo"


@given(st.text(alphabet=" ,.;:()[]ab\t\n", max_size=40))
def test_tidy_text_never_has_space_before_closing_or_after_opening_punctuation(text: str) -> None:
    tidied = tidy(text)
    assert not any(bad in tidied for bad in (" ,", " .", " ;", " :", " )", "( ", " ]", "[ "))
    assert "  " not in tidied
    assert tidied == tidied.strip()


def test_a_journal_article_without_volume_ends_with_its_year() -> None:
    ref = Reference(None, "", authors=("Doe J",), title="In press?", journal="J", year="2010",
                    kind="other")  # fmt: skip
    assert citation_text(ref) == "Doe J. In press? J. 2010."


def test_editors_stand_in_for_missing_authors_of_a_book() -> None:
    ref = Reference(None, "", editors=("Sobin LH",), title="TNM", publisher="Wiley", kind="book")
    assert citation_text(ref) == "Sobin LH, editors. TNM. Wiley."


def test_a_reference_costs_its_line_and_the_parts_shown_beside_it() -> None:
    ref = Reference("1", "Doe J. T. J. 2001.", authors=("Doe J",), title="T", journal="J")
    assert reference_chars(ref) == len(ref.text) + len("Doe J") + 2

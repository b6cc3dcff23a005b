"""When a query is worth ESpell's time (`domain.spelling`)."""

from __future__ import annotations

import pytest

from biomcp.domain.spelling import SPELL_CHECK_BELOW, free_words, same_query, worth_spell_check


@pytest.mark.parametrize(
    ("term", "words"),
    [
        ("asthma children", ["asthma", "children"]),
        ('"heart attack" AND asthma[mh] OR diabtes*', ["heart", "attack"]),
        ("Smith J[au] AND 2020:2023[dp]", []),
        ("(covid-19 OR sars) NOT review[pt]", ["covid", "sars"]),
        ('"breast cancer"[tiab] AND 12345', []),
        ("ab AND or", []),
    ],
)
def test_free_words_are_the_untagged_words(term: str, words: list[str]) -> None:
    assert free_words(term) == words


def test_a_suggestion_equal_but_for_case_and_spacing_is_no_suggestion() -> None:
    assert same_query("Asthma  Children", "asthma children")
    assert same_query("asthma", None)
    assert same_query("asthma", "  ")
    assert not same_query("asthmaa", "asthma")


def test_only_few_results_or_unknown_words_are_worth_a_check() -> None:
    assert worth_spell_check("asthmaa", 0, ["PhraseNotFound"])
    assert worth_spell_check("rare words", SPELL_CHECK_BELOW - 1, [])
    assert not worth_spell_check("common words", SPELL_CHECK_BELOW, [])
    assert worth_spell_check("common wrods", 50_000, ["PhraseNotFound"])
    assert not worth_spell_check("asthma[mh]", 0, ["PhraseNotFound"])

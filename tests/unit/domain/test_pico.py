"""The PICO query builder: each element, with its MeSH headings, lands in the right group of the
tier's template."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.errors import InvalidQueryError
from biomcp.domain.mesh import MeshDescriptor
from biomcp.domain.pico import (
    MAX_HEADINGS_PER_ELEMENT,
    MAX_PHRASE_WORDS,
    MAX_SYNONYMS_PER_HEADING,
    TIERS,
    pico_query,
    searched_elements,
    split_terms,
)
from biomcp.domain.queries import TopicTerms, combined_query, tier_a_query, tier_b_query

pytestmark = pytest.mark.unit

OPINION = "NOT (Review[pt] OR Editorial[pt] OR Letter[pt])"


def _template_lines(query: str) -> list[str]:
    """The lines of a Tier A query that come from spec 03's template (the filters)."""
    return tier_a_query(TopicTerms.of("x"), exclude_opinion=False).splitlines()[1:]


NSCLC = MeshDescriptor(
    "68002289",
    "D002289",
    "Carcinoma, Non-Small-Cell Lung",
    entry_terms=(
        "Non-Small-Cell Lung Carcinoma",
        "Carcinoma, Non Small Cell Lung",
        "Non-Small Cell Lung Cancer",
        "NSCLC",
        "Lung Carcinoma (Non-Small-Cell)",
        "Nonsmall Cell Lung Cancer",
        "Non-Small Cell Lung Carcinomas",
    ),
)
SEMAGLUTIDE = MeshDescriptor("67000591245", "C000591245", "semaglutide", entry_terms=("Ozempic",))


def test_tier_a_ands_one_free_text_group_per_element_around_the_clinical_filters() -> None:
    built = pico_query(
        "type 2 diabetes; T2DM", "semaglutide", "placebo", "HbA1c; weight loss", tier="A"
    )
    assert built.term == "\n".join(
        [
            '("type 2 diabetes"[tiab] OR T2DM[tiab])',
            *_template_lines(built.term),
            "AND (semaglutide[tiab])",
            "AND (placebo[tiab])",
            'AND (HbA1c[tiab] OR "weight loss"[tiab])',
            OPINION,
        ]
    )
    assert "[mh]" not in built.term.splitlines()[0]  # a user's phrase is never a heading
    assert built.tier == "A"
    assert built.unused == ()
    assert built.headings == ()
    assert built.query_key == "pico_semaglutide_type_2_diabetes_a_v1"


def test_tier_a_needs_only_a_population() -> None:
    built = pico_query("obesity")
    assert built.term.splitlines() == ["(obesity[tiab])", *_template_lines(built.term), OPINION]
    assert built.query_key == "pico_obesity_a_v1"


def test_a_heading_comes_first_then_the_terms_then_a_few_plain_entry_terms() -> None:
    built = pico_query("non-small cell lung cancer", mesh={"population": [NSCLC]})
    assert built.term.splitlines()[0] == (
        '("Carcinoma, Non-Small-Cell Lung"[mh] OR "non-small cell lung cancer"[tiab] OR '
        '"Non-Small-Cell Lung Carcinoma"[tiab] OR NSCLC[tiab] OR "Nonsmall Cell Lung Cancer"[tiab])'
    )
    assert built.headings == (("population", '"Carcinoma, Non-Small-Cell Lung"[mh]'),)


def test_entry_terms_per_heading_and_headings_per_element_are_bounded() -> None:
    many = [
        MeshDescriptor(f"6800000{i}", f"D00000{i}", f"Heading {i}", entry_terms=tuple(
            f"synonym {i} {j}" for j in range(10)
        ))
        for i in range(5)
    ]  # fmt: skip
    group = pico_query("topic", mesh={"population": many}).term.splitlines()[0]
    assert group.count("[mh]") == MAX_HEADINGS_PER_ELEMENT
    for record in many[:MAX_HEADINGS_PER_ELEMENT]:
        assert group.count(f'"synonym {record.name[-1]} ') == MAX_SYNONYMS_PER_HEADING
    assert "Heading 4" not in group


def test_a_supplementary_record_is_searched_as_a_substance_name() -> None:
    built = pico_query("obesity", "semaglutide", mesh={"intervention": [SEMAGLUTIDE]})
    assert "AND (semaglutide[nm] OR semaglutide[tiab] OR Ozempic[tiab])" in built.term
    assert built.headings == (("intervention", "semaglutide[nm]"),)


def test_a_long_phrase_mesh_does_not_name_is_searched_as_its_words() -> None:
    built = pico_query("KRAS G12C-mutated non-small cell lung cancer in adults")
    assert built.term.splitlines()[0] == (
        "((KRAS[tiab] AND G12C-mutated[tiab] AND non-small[tiab] AND cell[tiab] AND "
        "lung[tiab] AND cancer[tiab] AND adults[tiab]))"
    )


def test_a_long_phrase_mesh_names_stays_one_phrase() -> None:
    record = MeshDescriptor(
        "68000001", "D000001", "Lung Neoplasms", entry_terms=("Cancer of the Lung",)
    )
    built = pico_query("cancer of the lung", mesh={"population": [record]})
    assert '"cancer of the lung"[tiab]' in built.term.splitlines()[0]


def test_tier_b_and_both_search_headings_of_intervention_and_population_only() -> None:
    mesh = {"population": [NSCLC], "intervention": [SEMAGLUTIDE], "outcome": [NSCLC]}
    tier_b = pico_query("lung cancer", "semaglutide; tirzepatide", "placebo", "weight", tier="b",
                        mesh=mesh)  # fmt: skip
    lines = tier_b.term.splitlines()
    assert (
        lines[0] == "(semaglutide[nm] OR semaglutide[tiab] OR tirzepatide[tiab] OR Ozempic[tiab])"
    )
    assert lines[1].startswith('AND ("Carcinoma, Non-Small-Cell Lung"[mh] OR "lung cancer"[tiab]')
    template = tier_b_query(TopicTerms.of("x", drug_names="x")).splitlines()
    assert lines[2:] == template[2:]
    assert tier_b.unused == ("comparison", "outcome")
    assert [element for element, _ in tier_b.headings] == ["population", "intervention"]
    assert "placebo" not in tier_b.term
    both = pico_query("obesity", "semaglutide; tirzepatide", outcome="weight", tier="combined")
    assert (
        both.term.splitlines()[2:]
        == combined_query(TopicTerms.of("x", drug_names="x")).splitlines()[2:]
    )
    assert both.term.splitlines()[:2] == [
        "(semaglutide[tiab] OR tirzepatide[tiab])",
        "AND (obesity[tiab])",
    ]
    assert both.tier == "both"
    assert both.unused == ("outcome",)
    assert "weight" not in both.term


def test_searched_elements_are_the_given_ones_the_tier_searches() -> None:
    given = {"population": "p", "intervention": "i", "comparison": " ; ", "outcome": "o"}
    assert searched_elements("A", given) == ("population", "intervention", "outcome")
    assert searched_elements("both", given) == ("population", "intervention")
    with pytest.raises(InvalidQueryError, match="unknown tier"):
        searched_elements("Z", given)


_WORDS = st.text(alphabet="abcdefgh XY-", min_size=1, max_size=60)


@given(_WORDS, st.lists(_WORDS, max_size=4))
def test_every_quoted_user_phrase_is_short_or_named_by_mesh(
    population: str, entry_terms: list[str]
) -> None:
    record = MeshDescriptor("68000001", "D000001", "Heading", entry_terms=tuple(entry_terms))
    try:
        built = pico_query(population, mesh={"population": [record]})
    except InvalidQueryError:
        return
    named = {" ".join(t.split()).casefold() for t in ("Heading", *entry_terms)}
    for phrase in re.findall(r'"([^"]+)"\[tiab\]', built.term.splitlines()[0]):
        assert len(phrase.split()) <= MAX_PHRASE_WORDS or phrase.casefold() in named


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"population": "", "tier": "A"}, "indication"),
        ({"population": " ; ", "tier": "A"}, "indication"),
        ({"population": "obesity", "tier": "C"}, "unknown tier"),
        ({"population": "obesity", "tier": "B"}, "needs an intervention"),
        ({"population": "obesity", "intervention": 'x"y', "tier": "A"}, "double quote"),
        ({"population": "obesity", "outcome": "HbA1c[tiab]", "tier": "A"}, "field tags"),
    ],
)
def test_bad_questions_are_refused_with_the_reason(arguments: dict[str, Any], problem: str) -> None:
    with pytest.raises(InvalidQueryError, match=problem):
        pico_query(**arguments)


def test_split_terms_drops_empty_synonyms() -> None:
    assert split_terms(" a ;; b ; ") == ("a", "b")
    assert split_terms(None) == ()
    assert set(TIERS) == {"A", "B", "both"}


@given(st.text(alphabet="abcdefghij XYZ-;", min_size=1, max_size=40))
def test_the_query_key_is_a_short_safe_identifier(population: str) -> None:
    try:
        built = pico_query(population, "drug X", tier="both")
    except InvalidQueryError:
        return
    assert len(built.query_key) <= 64
    assert built.query_key.startswith("pico_")
    assert built.query_key.endswith("_both_v1")
    assert all(c.isascii() and (c.isalnum() or c == "_") for c in built.query_key)

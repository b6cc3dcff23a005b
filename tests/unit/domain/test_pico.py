"""The PICO query builder: each element lands in the right group of the tier's template."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.errors import InvalidQueryError
from biomcp.domain.pico import TIERS, pico_query, split_terms
from biomcp.domain.queries import TopicTerms, combined_query, tier_a_query, tier_b_query

pytestmark = pytest.mark.unit

OPINION = "NOT (Review[pt] OR Editorial[pt] OR Letter[pt])"


def test_tier_a_is_the_clinical_template_narrowed_by_intervention_comparison_and_outcome() -> None:
    built = pico_query(
        "type 2 diabetes; T2DM", "semaglutide", "placebo", "HbA1c; weight loss", tier="A"
    )
    template = tier_a_query(TopicTerms.of(["type 2 diabetes", "T2DM"]), exclude_opinion=False)
    assert built.term == "\n".join(
        [
            template,
            "AND (semaglutide[tiab])",
            "AND (placebo[tiab])",
            'AND (HbA1c[tiab] OR "weight loss"[tiab])',
            OPINION,
        ]
    )
    assert built.tier == "A"
    assert built.unused == ()
    assert built.query_key == "pico_semaglutide_type_2_diabetes_a_v1"


def test_tier_a_needs_only_a_population() -> None:
    built = pico_query("obesity")
    assert built.term == tier_a_query(TopicTerms.of("obesity"))
    assert built.query_key == "pico_obesity_a_v1"


def test_tier_b_and_both_use_the_intervention_as_drug_and_leave_c_and_o_out() -> None:
    topic = TopicTerms.of("obesity", drug_names=["semaglutide", "tirzepatide"])
    tier_b = pico_query("obesity", "semaglutide; tirzepatide", "placebo", "weight", tier="b")
    assert tier_b.term == tier_b_query(topic)
    assert tier_b.unused == ("comparison", "outcome")
    both = pico_query("obesity", "semaglutide; tirzepatide", outcome="weight", tier="combined")
    assert both.term == combined_query(topic)
    assert both.tier == "both"
    assert both.unused == ("outcome",)
    assert "placebo" not in tier_b.term
    assert "weight" not in both.term


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
def test_bad_questions_are_refused_with_the_reason(arguments: dict[str, str], problem: str) -> None:
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

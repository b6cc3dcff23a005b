"""Numeric claims: the golden list the chunker must never cut, and the has-numbers detector."""

from __future__ import annotations

import pytest

from biomcp.domain.numeric import claim_spans, has_numeric_result, numeric_atoms
from tests.support.numeric_claims import GOLDEN_CLAIMS

pytestmark = pytest.mark.unit


def test_the_golden_list_has_at_least_forty_claims_from_varied_fields() -> None:
    assert len(GOLDEN_CLAIMS) >= 40
    assert len(set(GOLDEN_CLAIMS)) == len(GOLDEN_CLAIMS)


def _contexts(claim: str) -> list[str]:
    return [
        f"The primary comparison showed {claim} in the trial population.",
        f"Overall, {claim}, and the effect was consistent across subgroups.",
        f"{claim} was observed; investigators judged it clinically relevant.",
    ]


@pytest.mark.parametrize("claim", GOLDEN_CLAIMS)
def test_every_golden_claim_lies_inside_one_protected_span(claim: str) -> None:
    for text in _contexts(claim):
        start = text.index(claim)
        end = start + len(claim)
        spans = claim_spans(text)
        # The digits of the claim must be covered by one span from first digit to last.
        digits = [i for i in range(start, end) if text[i].isdigit()]
        covering = [s for s in spans if s[0] <= digits[0] and digits[-1] < s[1]]
        assert covering, f"{claim!r} not protected in {text!r}: {spans}"


def test_label_value_interval_and_comparator_form_one_claim() -> None:
    text = "Death was less frequent (HR 0.74 (95% CI 0.61-0.90) vs placebo) at 2 years."
    spans = claim_spans(text)
    assert any("(HR 0.74 (95% CI 0.61-0.90) vs placebo)" in text[a:b] for a, b in spans)


def test_values_far_apart_or_separated_by_a_semicolon_are_separate_claims() -> None:
    text = (
        "Glucose fell by 12% in the first arm of the study, which enrolled older adults "
        "with long-standing disease; weight fell by 3 kg overall."
    )
    spans = claim_spans(text)
    assert len(spans) == 2


def test_a_semicolon_before_the_interval_does_not_separate_it_from_its_value() -> None:
    text = "The hazard ratio for death was 0.74; 95% CI, 0.65 to 0.85; P<0.001, favouring A."
    assert any("0.74; 95% CI, 0.65 to 0.85; P<0.001" in text[a:b] for a, b in claim_spans(text))


def test_atoms_carry_units_signs_and_ranges() -> None:
    text = "Doses of 1.5 mg/kg, a −2.1% change, a range of 0.61–0.90, n = 1,234, 10 and 20 mg."
    atoms = [text[a:b] for a, b in numeric_atoms(text)]
    assert atoms == ["1.5 mg/kg", "−2.1%", "0.61–0.90", "n = 1,234", "10 and 20 mg"]


def test_text_without_digits_has_no_claims() -> None:
    assert claim_spans("Mechanisms of insulin resistance remain unclear in adipose tissue.") == []


@pytest.mark.parametrize(
    "text",
    [
        "Mortality was lower (HR 0.80, 95% CI 0.70-0.91).",
        "The difference was significant (p < 0.001).",
        "Response rates were 45% and 30%.",
        "We enrolled n = 240 participants.",
        "A total of 3849 patients underwent randomization.",
        "Weight was 82.1 ± 9.4 kg at baseline.",
        "The odds ratio was 1.9 for smokers.",
        "The mean difference was 4 points.",
    ],
)
def test_results_with_numbers_are_detected(text: str) -> None:
    assert has_numeric_result(text)


@pytest.mark.parametrize(
    "text",
    [
        "IL-6 signalling through STAT3 drives the phenotype described in 2019.",
        "We review the biology of the GLP-1 receptor and its ligands.",
        "CD8 T cells infiltrate tumours in a type 2 inflammatory context.",
        "",
    ],
)
def test_text_without_results_is_not_flagged(text: str) -> None:
    assert not has_numeric_result(text)

"""Splitting a long project item into parts the embedder reads whole."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from biomcp.domain.chunking import chunking_for_window
from biomcp.domain.errors import InvalidConfigError
from biomcp.domain.item_parts import part_budget, part_spans
from biomcp.domain.numeric import claim_spans
from biomcp.domain.tokens import count_tokens
from tests.support.numeric_claims import GOLDEN_CLAIMS

pytestmark = pytest.mark.unit

FILLER = (
    "Background work in this area has been limited to small cohorts. "
    "Investigators therefore designed a pragmatic study across several centres. "
    "Eligibility was broad and follow-up was complete for most participants. "
)


def _cut_points(text: str, budget: int | None) -> list[int]:
    return [start for start, _ in part_spans(text, budget)[1:]]


def test_the_budget_is_the_chunkers_maximum_for_the_window_and_none_when_unbounded() -> None:
    assert part_budget(256) == chunking_for_window(256).max_tokens == 218
    assert part_budget(None) is None
    with pytest.raises(InvalidConfigError):
        part_budget(16)


def test_a_text_within_the_budget_or_without_one_is_a_single_part() -> None:
    text = FILLER * 40
    assert part_spans(FILLER, 218) == [(0, len(FILLER))]
    assert part_spans(text, None) == [(0, len(text))]


def test_a_long_text_is_cut_at_sentence_ends_into_parts_within_the_budget() -> None:
    text = FILLER * 30
    spans = part_spans(text, 60)
    assert len(spans) > 1
    assert all(count_tokens(text[a:b]) <= 60 for a, b in spans)
    assert all(text[a - 2 : a] == ". " for a, _ in spans[1:])  # after a full stop


@pytest.mark.parametrize("claim", GOLDEN_CLAIMS)
def test_no_part_boundary_falls_inside_a_golden_numeric_claim(claim: str) -> None:
    text = FILLER * 3 + f"The primary outcome was {claim}. " + FILLER * 3
    where = text.index(claim)
    for budget in (20, 40, 60, 90):
        cuts = _cut_points(text, budget)
        assert not [c for c in cuts if where < c < where + len(claim)], (budget, claim)


def test_a_sentence_giving_the_comparator_stays_with_the_number() -> None:
    pair = "Mortality fell to 12% with the new drug. In the placebo group, it was 20%. "
    text = FILLER * 4 + pair + FILLER * 4
    where = text.index(pair)
    for budget in (30, 45, 60):
        assert not [c for c in _cut_points(text, budget) if where < c < where + len(pair) - 1]


def test_an_over_long_sentence_is_cut_at_spaces_outside_its_claims() -> None:
    claim = "HR 0.74 (95% CI 0.61-0.90) vs placebo"
    sentence = " ".join(["word"] * 150) + f" with {claim} " + " ".join(["word"] * 150) + "."
    spans = part_spans(sentence, 50)
    assert len(spans) > 5
    assert all(count_tokens(sentence[a:b]) <= 50 for a, b in spans)
    assert any(claim in sentence[a:b] for a, b in spans)


_WORDS = st.sampled_from(
    ["Metformin", "lowered", "HbA1c", "by", "1.1%", "versus", "placebo", "(95%", "CI",
     "0.9-1.3).", "In", "contrast,", "the", "control", "group", "rose.", "p<0.001;", "and",
     "IL-6/STAT3", "was", "20", "mg/dL", "respectively.", "\n", "Results:", "x" * 40]
)  # fmt: skip
_TEXT = st.lists(_WORDS, min_size=1, max_size=400).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(text=_TEXT, budget=st.integers(min_value=16, max_value=300))
def test_parts_rebuild_the_text_exactly_and_overflow_only_where_nothing_can_be_cut(
    text: str, budget: int
) -> None:
    spans = part_spans(text, budget)
    assert "".join(text[a:b] for a, b in spans) == text
    assert all(b > a for a, b in spans)
    claims = claim_spans(text)
    for a, b in spans:
        if count_tokens(text[a:b]) <= budget:
            continue
        # An over-budget part has no space outside a numeric claim to be cut at.
        body = text[a:b].rstrip()
        free = [
            a + i
            for i in range(1, len(body))
            if body[i - 1].isspace()
            and not body[i].isspace()
            and not any(s < a + i < e for s, e in claims)
        ]
        assert not free, (budget, text[a:b][:120])


@settings(max_examples=100, deadline=None)
@given(text=_TEXT, budget=st.integers(min_value=16, max_value=300))
def test_splitting_is_deterministic(text: str, budget: int) -> None:
    assert part_spans(text, budget) == part_spans(text, budget)

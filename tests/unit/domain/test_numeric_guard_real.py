"""The numeric guard on real abstracts: the four ways a comparator used to be cut off.

They were found on the PubMedQA PQA-L abstracts (../shared/data/pubmedqa, read here, never
copied; the tests skip without it): an unclosed "(" that switched bracket protection off for
the rest of a section (PMID 23321509), a ";" after a closing bracket (same record), a p-value
more than 60 characters after its value (19054501) and a "2.7-fold ... more failures than"
comparison (23949294). Each test below also has a short synthetic twin, so the rule is checked
even where the shared data is absent.
"""

from __future__ import annotations

from functools import cache

import pytest
from benchmarks.comparators import comparator_losses, comparisons

from biomcp.domain.chunking import ChunkingConfig, chunk_record, chunking_for_window, sentence_spans
from biomcp.domain.numeric import bracket_pairs, claim_spans
from biomcp.domain.records import AbstractSection, PubMedRecord
from tests.conftest import shared_data_path
from tests.support.pubmedqa import load_pubmedqa

pytestmark = pytest.mark.unit

PRODUCT = chunking_for_window(256)  # all-MiniLM-L6-v2, the default embedder: max 218
TIGHT = ChunkingConfig(target_tokens=100, max_tokens=120, overlap_tokens=25)


@cache
def _pubmedqa() -> dict[str, PubMedRecord]:
    return {r.pmid: r for r in load_pubmedqa(shared_data_path("pubmedqa", "ori_pqal.json"))}


def _section(pmid: str, label: str) -> str:
    return next(s.text for s in _pubmedqa()[pmid].abstract if s.label == label)


def _claims(text: str) -> list[str]:
    return [text[a:b] for a, b in claim_spans(text)]


def _held_whole(record: PubMedRecord, config: ChunkingConfig, phrase: str) -> bool:
    return any(phrase in c.text for c in chunk_record(record, config))


# --- 1. an unclosed "(" --------------------------------------------------------------------


def test_an_unclosed_bracket_is_no_bracket() -> None:
    text = "Surgery took 292 min (range: a total clearance was achieved. Rates (28.6%) fell."
    opener = text.index("(range")
    pairs = bracket_pairs(text)
    assert pairs == [(text.index("(28.6%)"), text.index("(28.6%)") + len("(28.6%)"))]
    assert all(a != opener for a, _ in pairs)
    assert [text[a:b].strip() for a, b in sentence_spans(text)] == [
        "Surgery took 292 min (range: a total clearance was achieved.",
        "Rates (28.6%) fell.",
    ]


def test_a_closer_pairs_with_its_own_kind_across_a_stray_opener() -> None:
    text = "HR 0.74 [95% CI (0.61-0.90] and (OR 2.1)"
    assert [text[a:b] for a, b in bracket_pairs(text)] == ["[95% CI (0.61-0.90]", "(OR 2.1)"]


def test_23321509_sentences_end_after_the_unclosed_bracket() -> None:
    text = _section("23321509", "RESULTS")
    assert "292 min (range: a total" in text  # the record's own stray "("
    sentences = [text[a:b].strip() for a, b in sentence_spans(text)]
    assert "Rates of major operative morbidity and 30-day mortality were 28.6% and 2%, " in (
        next(s for s in sentences if s.startswith("Rates of major"))
    )
    assert any(s.startswith("Mean OS for patients without vs any tumour") for s in sentences)


# --- 2. ");" before the p-value --------------------------------------------------------------


def test_a_semicolon_after_closing_brackets_keeps_the_p_value() -> None:
    # the openers are lost, as in flattened text: only the ");" rule can join the p-value
    text = "Mean OS was 43 months 95% CI: 26.4-59.5) vs 13.4 months 95% CI: 7.42-19.4); P=0.001."
    assert _claims(text) == [
        "Mean OS was 43 months 95% CI: 26.4-59.5) vs 13.4 months 95% CI: 7.42-19.4); P=0.001"
    ]


def test_23321509_survival_comparisons_keep_their_p_values() -> None:
    record = _pubmedqa()["23321509"]
    claims = _claims(_section("23321509", "RESULTS"))
    assert "tumour residuals was 43 months (95% CI: 26.4-59.5) vs 13.4 months " in claims[-2]
    assert claims[-2].endswith("(95% CI: 7.42-19.4); P=0.001")
    assert claims[-1].endswith("vs 12.03 months (95% CI: 5.9-18.18); P<0.001")
    for config in (PRODUCT, TIGHT):
        assert _held_whole(record, config, "vs 13.4 months (95% CI: 7.42-19.4); P=0.001")
        assert _held_whole(record, config, "vs 12.03 months (95% CI: 5.9-18.18); P<0.001")


# --- 3. a p-value far from its value ----------------------------------------------------------


def test_a_p_value_joins_its_value_across_a_long_gap_but_not_another_p_value() -> None:
    text = (
        "At 300 msec, patients had significantly higher thresholds than control subjects "
        "(p = .03). Groups were similar in age (P>.05), and the groups differed in nothing "
        "else that anybody measured during the whole of the study (P<.001)."
    )
    claims = _claims(text)
    assert claims[0] == (
        "At 300 msec, patients had significantly higher thresholds than control subjects (p = .03)"
    )
    assert claims[-2:] == ["(P>.05)", "(P<.001)"]  # a p-value after a p-value: not joined


def test_19054501_threshold_comparison_keeps_its_p_value() -> None:
    record = _pubmedqa()["19054501"]
    phrase = (
        "At 300 msec, patients had significantly higher thresholds than control subjects (p = .03)"
    )
    text = next(s.text for s in record.abstract if phrase in s.text)
    assert phrase in _claims(text)
    assert _held_whole(record, TIGHT, phrase)


# --- 4. "2.7-fold ... more failures than" -----------------------------------------------------


def test_a_fold_change_reaches_its_than() -> None:
    text = "Cases had 2.7-fold more virologic failures than those on first-line regimens."
    assert _claims(text) == ["2.7-fold more virologic failures than those on first-line regimens"]
    assert _claims("It was 3 times higher than in controls.") == [
        "It was 3 times higher than in controls"
    ]


def test_23949294_fold_comparison_is_one_claim() -> None:
    record = _pubmedqa()["23949294"]
    claim = _claims(_section("23949294", "RESULTS"))[-1]
    assert claim.endswith(
        "2.7-fold more virologic failures than those on first- or second-line regimens (p = 0.007)"
    )
    for config in (PRODUCT, TIGHT):
        assert _held_whole(record, config, claim)


# --- the measurement ------------------------------------------------------------------------


def test_no_comparison_is_lost_at_the_product_budget() -> None:
    records = list(_pubmedqa().values())
    loss = comparator_losses(records, PRODUCT)
    assert loss.claims > 1000
    assert loss.lost == 0, loss.examples


def test_the_measurement_finds_comparisons_and_p_values_after_a_number() -> None:
    text = (
        "Mean OS was 43 months vs 13.4 months. Survival was longer than expected. "
        "Pain fell by 20% (P<0.01) and (P = .2)."
    )
    assert [text[a:b] for a, b in comparisons(text)] == [
        "43 months vs 13.4 months",
        "20% (P<0.0",
    ]
    record = PubMedRecord(pmid="1", title="T", abstract=(AbstractSection(text=text),))
    loss = comparator_losses(
        [record], ChunkingConfig(target_tokens=16, max_tokens=16, overlap_tokens=4)
    )
    assert (loss.claims, loss.lost) == (2, 0)

"""The BM25 arm's spelling fold: British and American spellings become one term after stemming,
and words that merely look alike stay apart."""

from __future__ import annotations

import pytest
import tantivy

from biomcp.adapters.vectors.lexical_spelling import fold_spellings, spell_american

pytestmark = pytest.mark.unit


def _terms(text: str) -> list[str]:
    """`text` through the fold and the index's stemmer, as the embedded store indexes it."""
    analyzer = (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )
    return list(analyzer.analyze(fold_spellings(text)))


@pytest.mark.parametrize(
    ("british", "american"),
    [
        ("tumour", "tumor"),
        ("Antitumour", "antitumor"),
        ("tumourigenesis", "tumorigenesis"),
        ("behavioural", "behavioral"),
        ("haemorrhage", "hemorrhage"),
        ("ischaemic", "ischemic"),
        ("hyperglycaemia", "hyperglycemia"),
        ("leukaemia", "leukemia"),
        ("haematopoietic", "hematopoietic"),
        ("paediatric", "pediatric"),
        ("orthopaedic", "orthopedic"),
        ("aetiology", "etiology"),
        ("anaesthesia", "anesthesia"),
        ("gynaecological", "gynecological"),
        ("faecal", "fecal"),
        ("caesarean", "cesarean"),
        ("oedema", "edema"),
        ("oesophageal", "esophageal"),
        ("oestrogen", "estrogen"),
        ("foetal", "fetal"),
        ("coeliac", "celiac"),
        ("diarrhoea", "diarrhea"),
        ("dyspnoea", "dyspnea"),
        ("amoebic", "amebic"),
        ("leucocytes", "leukocytes"),
        ("centre", "center"),
        ("centred", "centered"),
        ("millimetres", "millimeters"),
        ("fibre", "fiber"),
        ("analogue", "analog"),
        ("defence", "defense"),
        ("sulphonylurea", "sulfonylurea"),
        ("aluminium", "aluminum"),
        ("grey", "gray"),
        ("programme", "program"),
        ("enrolment", "enrollment"),
        ("enrol", "enroll"),
        ("randomised", "randomized"),
        ("Randomisation", "randomization"),
        ("characterised", "characterized"),
        ("hospitalisation", "hospitalization"),
        ("organisational", "organizational"),
        ("analysed", "analyzed"),
        ("hydrolysed", "hydrolyzed"),
        ("TNF-α", "TNF-alpha"),
    ],
)
def test_a_british_spelling_meets_the_american_one(british: str, american: str) -> None:
    assert _terms(british) == _terms(american)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("four", "for"),  # "our" alone is never folded
        ("hour", "hor"),
        ("does", "des"),  # nor "oe" alone
        ("programmed", "programd"),  # programme only as a whole word
        ("leucine", "leukine"),  # leucocyte, not every leuc-
        ("rise", "rize"),  # -ise needs two letters before it
        ("disease", "diseaze"),
    ],
)
def test_words_that_only_look_alike_stay_apart(one: str, other: str) -> None:
    assert _terms(one) != _terms(other)


@pytest.mark.parametrize(
    "text",
    ["journal of aerobic training", "four hours of rest", "placebo-controlled, 12 mg", "this"],
)
def test_text_without_british_parts_keeps_its_letters(text: str) -> None:
    assert spell_american(text) == text


def test_inflections_of_a_folded_word_still_meet() -> None:
    """Folding -ise to -ize keeps a verb's forms together under the stemmer."""
    assert len({*_terms("raise raised raising raises")}) == 1
    assert len({*_terms("randomise randomised randomising randomisation")}) == 1

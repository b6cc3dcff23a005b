"""The 0-10 document quality score (spec 03 section 5; `biomcp.domain.quality`)."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import date
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.design import DesignClassification, StudyDesign, classify_design
from biomcp.domain.errors import InvalidConfigError
from biomcp.domain.evidence import classify_evidence
from biomcp.domain.journals import DEFAULT_TIER1_JOURNALS
from biomcp.domain.quality import (
    JournalTiers,
    QualityConfig,
    QualityWeights,
    design_points,
    journal_key,
    parse_sample_size,
    read_sample_size,
    rescore_recency,
    score_quality,
    total_score,
    words_to_number,
)
from biomcp.domain.records import (
    Journal,
    Notice,
    NoticeKind,
    PubDate,
    PubMedRecord,
    QualityBreakdown,
    utc,
)
from tests.support.builders import make_record

pytestmark = pytest.mark.unit

TODAY = date(2025, 6, 1)
NEJM = Journal(
    title="The New England journal of medicine",
    iso_abbreviation="N Engl J Med",
    issn="0028-4793",
    eissn="1533-4406",
)
OBSCURE = Journal(title="Journal of examples", iso_abbreviation="J Ex", issn="1234-5679")


def score(**overrides: object) -> QualityBreakdown:
    return score_quality(make_record(**overrides), TODAY)


# --- design 0-3 ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"publication_types": ("Randomized Controlled Trial",)}, 3),
        ({"publication_types": ("Meta-Analysis",)}, 3),
        ({"publication_types": ("Systematic Review",)}, 3),
        (
            {
                "publication_types": ("Clinical Trial",),
                "text": "Patients were randomly assigned to drug or placebo.",
            },
            3,
        ),
        ({"publication_types": ("Clinical Trial",), "text": "A single-arm study."}, 2),
        ({"publication_types": ("Clinical Trial, Phase II",)}, 2),
        ({"publication_types": ("Observational Study",)}, 2),
        # A comparative study counts as a human design only when it names its participants.
        (
            {"publication_types": ("Comparative Study",), "text": "We compared 140 patients."},
            2,
        ),
        ({"mesh_terms": ("Humans", "Cohort Studies")}, 2),
        ({"text": "Mice were treated with the drug."}, 1),
        ({"publication_types": ("Comparative Study",), "text": "Rats were compared."}, 1),
        ({"publication_types": ("Review",)}, 1),
        ({"publication_types": ("Case Reports",)}, 1),
        ({"publication_types": ("Journal Article",)}, 1),
        ({"mesh_terms": ("Humans",)}, 1),
        ({"publication_types": ("Editorial",)}, 0),
        ({"publication_types": ("Letter", "Comment")}, 0),
        ({"publication_types": ("Published Erratum",)}, 0),
    ],
    ids=[
        "rct",
        "meta-analysis",
        "systematic-review",
        "clinical-trial-randomized-in-text",
        "clinical-trial-single-arm",
        "phase-ii",
        "observational",
        "comparative",
        "humans-cohort-mesh",
        "preclinical",
        "preclinical-comparative",
        "narrative-review",
        "case-report",
        "journal-article",
        "humans-without-design",
        "editorial",
        "letter",
        "erratum",
    ],
)
def test_design_component_levels(overrides: dict[str, object], expected: int) -> None:
    assert score(**overrides).design == expected


# --- recency 0-2 ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("year", "expected"),
    [(2025, 2), (2022, 2), (2020, 2), (2019, 1), (2015, 1), (2014, 0), (1990, 0), (2026, 2)],
    ids=["this-year", "3y", "5y-boundary", "6y", "10y-boundary", "11y", "old", "future-dated"],
)
def test_recency_component_counts_calendar_years_before_today(year: int, expected: int) -> None:
    assert score(pdat=PubDate(year)).recency == expected


def test_recency_uses_the_injected_today() -> None:
    record = make_record(pdat=PubDate(2019, 12, 31))
    assert score_quality(record, date(2024, 12, 31)).recency == 2
    assert score_quality(record, date(2025, 1, 1)).recency == 1
    assert score_quality(record, date(2029, 12, 31)).recency == 1
    assert score_quality(record, date(2030, 1, 1)).recency == 0


def test_recency_falls_back_to_edat_year_without_publication_date() -> None:
    assert score(pdat=None, edat=utc(2016, 3, 1)).recency == 1


def test_recency_is_zero_without_any_date() -> None:
    assert score(pdat=None, edat=None).recency == 0


def test_recency_thresholds_follow_the_config() -> None:
    config = QualityConfig(recent_years=1, older_years=3)
    record = make_record(pdat=PubDate(2023))
    assert score_quality(record, TODAY, config).recency == 1
    assert score_quality(record, date(2024, 1, 1), config).recency == 2
    assert score_quality(record, date(2027, 1, 1), config).recency == 0


def test_a_score_records_the_year_its_recency_was_counted_in() -> None:
    record = make_record(pdat=PubDate(2020))
    assert score_quality(record, date(2025, 12, 31)).scored_in == 2025
    assert score_quality(record, date(2026, 1, 1)).scored_in == 2026


@pytest.mark.parametrize(
    ("year", "today", "recency"),
    [
        (2020, date(2025, 6, 1), 2),  # 5 years: unchanged
        (2020, date(2026, 1, 1), 1),  # 6 years from New Year's Day
        (2015, date(2026, 1, 1), 0),  # 11 years
        (None, date(2026, 1, 1), 0),  # undated
    ],
)
def test_rescoring_counts_recency_again_and_keeps_the_other_components(
    year: int | None, today: date, recency: int
) -> None:
    record = make_record(pdat=PubDate(year) if year else None, edat=None)
    stored = score_quality(record, date(2025, 6, 1))
    again = rescore_recency(stored, record.year, today)

    assert again == score_quality(record, today)  # what scoring the record today gives
    assert again.recency == recency
    assert again.scored_in == today.year
    parts = (again.design, again.journal, again.human, again.sample_size, again.sample_size_n)
    assert parts == (
        stored.design, stored.journal, stored.human, stored.sample_size, stored.sample_size_n
    )  # fmt: skip


def test_rescoring_sums_the_total_under_the_weights_in_force_and_clamps_it() -> None:
    stored = QualityBreakdown(design=3, recency=1, journal=2, human=2, sample_size=2, total=10)
    again = rescore_recency(stored, 2025, date(2026, 3, 1))
    assert (again.recency, again.total) == (2, 10)  # 11 clamped
    unweighted = QualityConfig().with_weights(recency=0.0)
    assert rescore_recency(stored, 2025, date(2026, 3, 1), unweighted).total == 9


# --- journal 0-2 ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "journal",
    [
        Journal(issn="0028-4793"),
        Journal(issn="00284793"),
        Journal(eissn="1533-4406"),
        Journal(title="The New England journal of medicine"),
        Journal(title="new england journal of medicine"),
        Journal(iso_abbreviation="N Engl J Med"),
        NEJM,
    ],
    ids=["print-issn", "issn-without-hyphen", "e-issn", "title", "title-no-the", "iso", "all"],
)
def test_tier1_journal_is_worth_two(journal: Journal) -> None:
    assert score(journal=journal).journal == 2


def test_tier1_journal_matches_lower_case_x_in_issn() -> None:
    assert score(journal=Journal(eissn="1474-547x")).journal == 2  # The Lancet


def test_tier1_journal_matches_title_with_place_name() -> None:
    assert score(journal=Journal(title="Lancet (London, England)")).journal == 2
    assert score(journal=Journal(title="The Lancet")).journal == 2


@pytest.mark.parametrize(
    "journal",
    [OBSCURE, Journal(), Journal(title="New England journal of veterinary medicine")],
    ids=["obscure", "empty", "similar-name"],
)
def test_non_tier1_journal_is_worth_zero(journal: Journal) -> None:
    assert score(journal=journal).journal == 0


def test_every_default_tier1_entry_matches_by_each_of_its_identifiers() -> None:
    tiers = JournalTiers.default()
    for title, iso, issn, eissn in DEFAULT_TIER1_JOURNALS:
        for journal in (
            Journal(title=title),
            Journal(iso_abbreviation=iso),
            Journal(issn=issn),
            Journal(eissn=eissn),
        ):
            assert tiers.points(make_record(journal=journal)) == 2, (title, journal)


def test_custom_journal_tiers_give_tier2_one_point() -> None:
    tiers = JournalTiers.from_entries(
        tier1=[("Journal of examples", "J Ex", "1234-5679", None)],
        tier2=[("Obesity reviews", "Obes Rev", "1467-7881", "1467-789X")],
    )
    config = QualityConfig(journals=tiers)
    assert score_quality(make_record(journal=OBSCURE), TODAY, config).journal == 2
    tier2 = Journal(title="Obesity reviews", eissn="1467-789X")
    assert score_quality(make_record(journal=tier2), TODAY, config).journal == 1
    assert score_quality(make_record(journal=Journal(issn="1467-7881")), TODAY, config).journal == 1
    assert score_quality(make_record(journal=NEJM), TODAY, config).journal == 0


def test_tier1_wins_over_tier2_when_a_journal_is_in_both() -> None:
    entry = ("Journal of examples", "J Ex", "1234-5679", None)
    tiers = JournalTiers.from_entries(tier1=[entry], tier2=[entry])
    assert tiers.points(make_record(journal=OBSCURE)) == 2


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("The New England journal of medicine", "new england journal of medicine"),
        ("Lancet (London, England)", "lancet"),
        ("The lancet. Diabetes & endocrinology", "lancet diabetes and endocrinology"),
        ("Science (New York, N.Y.)", "science"),
        ("  N  Engl J Med ", "n engl j med"),
    ],
)
def test_journal_key_normalizes_titles(name: str, key: str) -> None:
    assert journal_key(name) == key


# --- human 0-2 -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"mesh_terms": ("Humans", "Adult")}, 2),
        ({"mesh_terms": ("Humans", "Animals")}, 2),
        ({"publication_types": ("Randomized Controlled Trial",)}, 2),
        ({"mesh_terms": ("Animals", "Mice")}, 1),
        ({"text": "Adults with asthma were enrolled."}, 2),
        ({"text": "We interviewed volunteers about sleep."}, 2),
        ({"text": "Mice were treated with the drug."}, 1),
        ({"text": "Zebrafish larvae were exposed to the compound."}, 1),
        ({"text": "HeLa cells were treated in vitro."}, 0),
        ({"text": "Crystal structure of the kinase domain."}, 0),
        ({"mesh_terms": ("Cell Line, Tumor",), "text": "Cells from patients were cultured."}, 0),
    ],
    ids=[
        "mesh-humans",
        "mesh-humans-and-animals",
        "clinical-tier",
        "mesh-animals",
        "no-mesh-people-in-text",
        "no-mesh-volunteers",
        "no-mesh-mice-in-text",
        "no-mesh-zebrafish",
        "in-vitro",
        "structural",
        "mesh-indexed-without-humans",
    ],
)
def test_human_component_levels(overrides: dict[str, object], expected: int) -> None:
    assert score(**overrides).human == expected


# --- sample size 0-2 -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected_points", "expected_n"),
    [
        ("We enrolled 99 patients.", 0, 99),
        ("We enrolled 100 patients.", 1, 100),
        ("We enrolled 500 patients.", 1, 500),
        ("We enrolled 501 patients.", 2, 501),
        ("A mechanistic study without a cohort.", 0, None),
    ],
)
def test_sample_size_component_thresholds(
    text: str, expected_points: int, expected_n: int | None
) -> None:
    result = score(text=text)
    assert (result.sample_size, result.sample_size_n) == (expected_points, expected_n)


def test_sample_size_thresholds_follow_the_config() -> None:
    config = QualityConfig(sample_medium=10, sample_large=50)
    record = make_record(text="We enrolled 51 patients.")
    assert score_quality(record, TODAY, config).sample_size == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Participants (n = 1,234) were followed.", 1234),
        ("Participants (N=87) were followed.", 87),
        ("Overall, 3849 patients were randomized.", 3849),
        ("We recruited 120 adult women.", 120),
        ("A total of 560 were analysed.", 560),
        ("We enrolled 85 and followed them.", 85),
        ("We randomized 1,200 to each arm.", 1200),
        ("The trial included 64 children and 1,999 adults.", 2063),
        ("Between 2010 and 2015, 640 patients were enrolled.", 640),
    ],
)
def test_parse_sample_size_reads_stated_study_sizes(text: str, expected: int) -> None:
    assert parse_sample_size(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "In 2019 patients were seen at three centres.",
        "Since 1998 women have been screened.",
        "We describe the cohort.",
        "The dose was 12.5 mg.",
        "0 patients withdrew.",
        "",
    ],
)
def test_parse_sample_size_finds_nothing_without_a_study_size(text: str) -> None:
    assert parse_sample_size(text) is None


def test_year_is_not_taken_as_sample_size_but_the_real_size_is() -> None:
    assert parse_sample_size("In 2019 patients were enrolled; 240 patients completed.") == 240


def test_explicit_n_equals_a_year_like_value_is_kept() -> None:
    assert parse_sample_size("Participants (n = 2019) were followed.") == 2019


def test_sample_size_is_parsed_from_the_abstract_not_the_title() -> None:
    result = score(title="A trial in 5000 patients", text="A short abstract.")
    assert (result.sample_size, result.sample_size_n) == (0, None)


# --- total ---------------------------------------------------------------------------------


def test_total_is_the_sum_of_components_with_default_weights() -> None:
    result = score(
        publication_types=("Observational Study",),
        mesh_terms=("Humans",),
        pdat=PubDate(2018),
        journal=OBSCURE,
        text="We followed 250 patients.",
    )
    assert result.as_dict() == {
        "design": 2,
        "recency": 1,
        "journal": 0,
        "human": 2,
        "sample_size": 1,
        "total": 6,
    }


def test_total_is_clamped_to_ten_when_every_component_is_maxed() -> None:
    result = score(
        publication_types=("Randomized Controlled Trial",),
        mesh_terms=("Humans",),
        pdat=PubDate(2024),
        journal=NEJM,
        text="We randomly assigned 1,200 patients to semaglutide or placebo.",
    )
    components = (result.design, result.recency, result.journal, result.human)
    assert components == (3, 2, 2, 2)
    assert result.sample_size == 2
    assert result.total == 10


def test_total_score_rounds_half_up() -> None:
    half = QualityWeights(0.5, 0.5, 0.5, 0.5, 0.5)
    assert total_score(1, 0, 0, 0, 0, half) == 1  # 0.5 -> 1
    assert total_score(3, 0, 0, 0, 0, half) == 2  # 1.5 -> 2
    assert total_score(3, 2, 0, 0, 0, half) == 3  # 2.5 -> 3
    assert total_score(1, 1, 0, 0, 0, QualityWeights(0.2, 0.2, 0, 0, 0)) == 0  # 0.4 -> 0


def test_total_score_with_zero_weights_is_zero() -> None:
    assert total_score(3, 2, 2, 2, 2, QualityWeights(0, 0, 0, 0, 0)) == 0


def test_custom_weights_change_the_total() -> None:
    record = make_record(
        publication_types=("Randomized Controlled Trial",),
        mesh_terms=("Humans",),
        pdat=PubDate(2010),
        journal=OBSCURE,
        text="We randomly assigned 800 patients.",
    )
    default = score_quality(record, TODAY)
    assert (default.design, default.recency, default.journal, default.human) == (3, 0, 0, 2)
    assert (default.sample_size, default.total) == (2, 7)
    config = QualityConfig().with_weights(sample_size=0.5, design=2.0)
    weighted = score_quality(record, TODAY, config)
    assert weighted.total == 9  # 2*3 + 0 + 0 + 2 + 0.5*2
    assert weighted.design == 3  # components are unweighted


def test_with_weights_leaves_the_original_config_unchanged() -> None:
    config = QualityConfig()
    changed = config.with_weights(journal=0.0)
    assert config.weights.journal == 1.0
    assert changed.weights.journal == 0.0
    assert changed.weights.design == 1.0


@pytest.mark.parametrize("bad", [-0.1, -1.0, math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("name", ["design", "recency", "journal", "human", "sample_size"])
def test_negative_or_non_finite_weights_are_rejected(name: str, bad: float) -> None:
    with pytest.raises(InvalidConfigError, match=name):
        QualityConfig().with_weights(**{name: bad})


def test_negative_weight_is_rejected_by_the_weights_themselves() -> None:
    with pytest.raises(InvalidConfigError):
        QualityWeights(design=-1.0)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"recent_years": -1},
        {"recent_years": 11, "older_years": 10},
        {"sample_medium": 0},
        {"sample_medium": 600, "sample_large": 500},
    ],
)
def test_inconsistent_thresholds_are_rejected(kwargs: dict[str, Any]) -> None:
    with pytest.raises(InvalidConfigError):
        QualityConfig(**kwargs)


def test_precomputed_evidence_is_used_instead_of_reclassifying() -> None:
    record = make_record(publication_types=("Editorial",))
    clinical = classify_evidence(make_record(publication_types=("Randomized Controlled Trial",)))
    assert score_quality(record, TODAY).design == 0
    # The design component follows the study design (passed or computed), the human
    # component the evidence tier.
    assert score_quality(record, TODAY, evidence=clinical).human == 2
    rct = classify_design(make_record(publication_types=("Randomized Controlled Trial",)))
    assert score_quality(record, TODAY, evidence=clinical, design=rct).design == 3


def test_huge_finite_weights_clamp_to_ten() -> None:
    weights = QualityWeights(design=1e308, recency=1e308)
    assert total_score(3, 2, 0, 0, 0, weights) == 10


# --- properties ----------------------------------------------------------------------------

WEIGHT = st.floats(min_value=0.0, max_value=1e308, allow_nan=False, allow_infinity=False)
WEIGHTS = st.builds(QualityWeights, WEIGHT, WEIGHT, WEIGHT, WEIGHT, WEIGHT)


@given(
    design=st.integers(0, 3),
    recency=st.integers(0, 2),
    journal=st.integers(0, 2),
    human=st.integers(0, 2),
    sample=st.integers(0, 2),
    weights=WEIGHTS,
)
def test_total_score_is_an_int_between_zero_and_ten(
    design: int, recency: int, journal: int, human: int, sample: int, weights: QualityWeights
) -> None:
    total = total_score(design, recency, journal, human, sample, weights)
    assert type(total) is int
    assert 0 <= total <= 10


@given(
    low=st.integers(0, 3),
    high=st.integers(0, 3),
    recency=st.integers(0, 2),
    journal=st.integers(0, 2),
    human=st.integers(0, 2),
    sample=st.integers(0, 2),
    weights=WEIGHTS,
)
def test_raising_design_never_lowers_the_total(
    low: int,
    high: int,
    recency: int,
    journal: int,
    human: int,
    sample: int,
    weights: QualityWeights,
) -> None:
    low, high = min(low, high), max(low, high)
    assert total_score(low, recency, journal, human, sample, weights) <= total_score(
        high, recency, journal, human, sample, weights
    )


PUB_TYPES = [
    "Randomized Controlled Trial",
    "Meta-Analysis",
    "Editorial",
    "Journal Article",
    "Observational Study",
    "Review",
    "Letter",
    "Case Reports",
]
SAMPLE_SENTENCES = [
    "",
    "We enrolled 45 patients.",
    "A total of 560 adults were followed.",
    "Participants (n = 1,234) were randomized.",
    "In 2019 patients were interviewed.",
    "Mice (n = 12) were treated in vitro.",
]


@st.composite
def records(draw: st.DrawFn) -> PubMedRecord:
    mesh = [term for term in ("Humans", "Animals") if draw(st.booleans())]
    return make_record(
        publication_types=tuple(draw(st.lists(st.sampled_from(PUB_TYPES), unique=True))),
        mesh_terms=tuple(mesh),
        pdat=PubDate(draw(st.integers(1980, 2030))),
        journal=draw(st.sampled_from([NEJM, OBSCURE, Journal()])),
        text=draw(st.sampled_from(SAMPLE_SENTENCES)),
    )


@given(record=records())
def test_score_quality_total_is_in_range_and_matches_its_breakdown(record: PubMedRecord) -> None:
    result = score_quality(record, TODAY)
    assert 0 <= result.total <= 10
    assert result.total == total_score(
        result.design,
        result.recency,
        result.journal,
        result.human,
        result.sample_size,
        QualityWeights(),
    )
    assert 0 <= result.design <= 3
    assert all(0 <= c <= 2 for c in (result.recency, result.journal, result.human))
    assert 0 <= result.sample_size <= 2


@given(record=records())
def test_adding_rct_publication_type_never_lowers_the_total(record: PubMedRecord) -> None:
    as_rct = make_record(
        publication_types=(*record.publication_types, "Randomized Controlled Trial"),
        mesh=record.mesh,
        pdat=record.pdat,
        journal=record.journal,
        abstract=record.abstract,
    )
    assert score_quality(as_rct, TODAY).total >= score_quality(record, TODAY).total


def test_a_duration_before_a_people_word_is_not_a_sample_size() -> None:
    assert parse_sample_size("Treatment lasted 104 weeks in patients with NASH.") is None
    assert parse_sample_size("We followed 3849 consecutive adult patients.") == 3849


# --- sample sizes in words, plausibility, what was read -------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One hundred and forty-one patients were included.", 141),
        ("One thousand ninety-nine women answered.", 1099),
        ("One-hundred-fourteen trauma patients were seen.", 114),
        ("Seventy six patients underwent surgery.", 76),
        ("Thirty-two children and 12 adults took part.", 44),
        ("Twenty thousand five hundred participants were followed.", 20500),
    ],
)
def test_sample_sizes_written_in_words_are_read(text: str, expected: int) -> None:
    reading = read_sample_size(text)
    assert reading.n == expected
    assert reading.phrase is not None
    assert reading.phrase in text


@pytest.mark.parametrize(
    ("word", "value"),
    [("one hundred and forty-one", 141), ("forty", 40), ("two thousand and six", 2006),
     ("seventeen", 17), ("one hundred", 100), ("many", None)],
)  # fmt: skip
def test_words_to_number(word: str, value: int | None) -> None:
    assert words_to_number(word) == value


def test_one_of_the_patients_is_not_a_sample_size() -> None:
    assert read_sample_size("One of the most distressing symptoms in patients.").n is None


@pytest.mark.parametrize(
    "text",
    [
        "Between 2003 and 2009 a total of 232,878 seafarer medical examinations were carried out.",
        "Data were collapsed into monthly amounts (N = 26,819,987 person-months).",
        "All trips undertaken by the sample were identified (n = 205,673).",
        "A total of 12,000 samples were sequenced.",
        "n = 4,512 images were annotated.",
    ],
)
def test_counts_of_things_are_refused_as_sample_sizes(text: str) -> None:
    reading = read_sample_size(text)
    assert reading.n is None
    assert len(reading.refused) == 1
    assert reading.refused[0] in text


def test_a_refused_count_does_not_hide_the_real_sample_size() -> None:
    text = "In 412 patients, a total of 232,878 examinations were reviewed."
    reading = read_sample_size(text)
    assert (reading.n, reading.phrase) == (412, "412 patients")
    assert len(reading.refused) == 1
    assert score(text=text).sample_size == 1


def test_a_singular_thing_that_happened_to_the_people_before_it_counts_the_people() -> None:
    """ "Patients who underwent an MRI scan (n = 42)" counts patients; "MRI scans (n = 420)"
    counts scans."""
    kept = read_sample_size("Patients who underwent an MRI scan (n = 42) were included.")
    assert (kept.n, kept.refused) == (42, ())
    scans = read_sample_size("We reviewed MRI scans (n = 420) of the cohort.")
    assert (scans.n, scans.refused) == (None, ("n = 420",))


def test_large_population_with_people_named_is_kept() -> None:
    assert read_sample_size("The sample comprised all residents (n=2,440,242).").n == 2440242


@pytest.mark.parametrize(
    ("design", "points"),
    [
        (StudyDesign.SYSTEMATIC_REVIEW, 3), (StudyDesign.RCT, 3),
        (StudyDesign.NONRANDOMIZED_TRIAL, 2), (StudyDesign.OBSERVATIONAL, 2),
        (StudyDesign.CASE_REPORT, 1), (StudyDesign.ANIMAL, 1), (StudyDesign.IN_VITRO, 1),
        (StudyDesign.COMPUTATIONAL, 1), (StudyDesign.NARRATIVE_REVIEW, 1),
        (StudyDesign.GUIDELINE, 1),
    ],
)  # fmt: skip
def test_design_points_follow_the_design(design: StudyDesign, points: int) -> None:
    assert design_points(DesignClassification(design, f"{design}.test")) == points


def test_non_research_items_get_no_design_points() -> None:
    assert design_points(DesignClassification(StudyDesign.OTHER, "other.non_research")) == 0
    assert design_points(DesignClassification(StudyDesign.OTHER, "other.unclassified")) == 1


# --- human points follow the design; a retracted record ------------------------------------


@pytest.mark.parametrize(
    ("design", "expected"),
    [
        (DesignClassification(StudyDesign.IN_VITRO, "in_vitro.text"), 0),
        (DesignClassification(StudyDesign.IN_VITRO, "in_vitro.mesh"), 0),
        (DesignClassification(StudyDesign.OTHER, "other.genomics_mesh"), 0),
        (DesignClassification(StudyDesign.ANIMAL, "animal.text_species"), 1),
        (DesignClassification(StudyDesign.OBSERVATIONAL, "observational.text"), 2),
    ],
    ids=["in-vitro-text", "in-vitro-mesh", "genome", "animal", "observational"],
)
def test_human_points_follow_the_design_even_with_mesh_humans(
    design: DesignClassification, expected: int
) -> None:
    record = make_record(
        mesh_terms=("Humans", "Cell Line, Tumor"),
        text="Human cancer cells from 40 patients were cultured and treated in vitro.",
    )
    assert score_quality(record, TODAY, design=design).human == expected


def test_an_in_vitro_record_with_mesh_humans_gets_no_human_points_by_its_own_design() -> None:
    record = make_record(
        mesh_terms=("Humans", "Cell Line, Tumor"),
        text="HeLa cells were treated in vitro with the compound and proliferation was measured.",
    )
    design = classify_design(record)
    assert design.design is StudyDesign.IN_VITRO
    assert score_quality(record, TODAY).human == 0


def _retracted_rct(**overrides: object) -> PubMedRecord:
    return make_record(
        journal=NEJM,
        pdat=PubDate(2024),
        publication_types=("Randomized Controlled Trial", "Retracted Publication"),
        mesh_terms=("Humans",),
        text="We randomly assigned 1,200 patients to the drug or placebo.",
        **overrides,
    )


def test_a_retracted_trial_keeps_no_points_for_what_it_reports() -> None:
    record = _retracted_rct()
    intact = replace(record, publication_types=("Randomized Controlled Trial",))
    assert score_quality(intact, TODAY).total == 10

    quality = score_quality(record, TODAY)
    assert (quality.design, quality.human, quality.sample_size) == (0, 0, 0)
    assert (quality.journal, quality.recency, quality.total) == (2, 2, 4)
    assert quality.sample_size_n == 1200  # what was read stays in the breakdown


def test_a_retraction_notice_alone_marks_the_record_retracted() -> None:
    notice = (Notice(NoticeKind.RETRACTION_IN, pmid="99999999"),)
    record = _retracted_rct(notices=notice)
    record = replace(record, publication_types=("Randomized Controlled Trial",))
    assert score_quality(record, TODAY).design == 0


def test_rescoring_a_retracted_record_keeps_its_total_low() -> None:
    stored = score_quality(_retracted_rct(), TODAY)
    again = rescore_recency(stored, 2024, date(2026, 1, 1))
    assert again.total == stored.total == 4

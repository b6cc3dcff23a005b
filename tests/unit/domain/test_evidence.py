"""Evidence tagging at ingest (spec 03 section 3; rules in `biomcp.domain.evidence`)."""

from __future__ import annotations

import pytest

from biomcp.domain.evidence import classify_evidence, has_biomarker, has_numbers
from biomcp.domain.records import EvidenceType
from tests.support.builders import make_record

pytestmark = pytest.mark.unit

CLINICAL = EvidenceType.CLINICAL
PRECLINICAL = EvidenceType.PRECLINICAL
BASIC = EvidenceType.BASIC
OTHER = EvidenceType.OTHER

# A mechanistic abstract whose only digits are a year and gene / protein names.
MECHANISTIC = (
    "Interleukin IL-6 was first cloned in 1986. Here we show that STAT3 signalling downstream "
    "of the IL-6 receptor controls the transcription of acute-phase genes in hepatocytes."
)
# A clinical abstract without numbers and without any biomarker.
PLAIN_CLINICAL = (
    "Patients with hypertension were randomly assigned to the drug or placebo. Systolic blood "
    "pressure fell more with the drug, and adverse events were similar between groups."
)


def decide(**overrides: object) -> tuple[EvidenceType, str]:
    result = classify_evidence(make_record(**overrides))
    return result.evidence_type, result.rule


# --- tiers follow the study design (spec 03 Goals) -----------------------------------------


@pytest.mark.parametrize(
    ("pub_type", "rule"),
    [
        ("Randomized Controlled Trial", "clinical.rct.publication_type"),
        ("Clinical Trial", "clinical.nonrandomized_trial.publication_type"),
        ("Clinical Trial, Phase I", "clinical.nonrandomized_trial.publication_type"),
        ("Clinical Trial, Phase II", "clinical.nonrandomized_trial.publication_type"),
        ("Controlled Clinical Trial", "clinical.nonrandomized_trial.publication_type"),
        ("Observational Study", "clinical.observational.publication_type"),
        ("Case Reports", "clinical.case_report.publication_type"),
        ("Meta-Analysis", "clinical.systematic_review.publication_type"),
        ("Systematic Review", "clinical.systematic_review.publication_type"),
    ],
)
def test_human_study_designs_are_clinical(pub_type: str, rule: str) -> None:
    assert decide(publication_types=("Journal Article", pub_type)) == (CLINICAL, rule)


def test_trial_type_matches_whatever_the_case() -> None:
    assert decide(publication_types=("randomized CONTROLLED trial",))[0] is CLINICAL


def test_trial_type_with_randomized_methods_is_an_rct() -> None:
    record = make_record(publication_types=("Clinical Trial",), text=PLAIN_CLINICAL)
    assert classify_evidence(record).rule == "clinical.rct.trial_type_randomized_text"


def test_cohort_mesh_without_a_trial_type_is_clinical() -> None:
    # Spec 03's Goals: Tier A is "Phase I-III, RCTs, human studies"; a cohort study is one.
    record = make_record(mesh_terms=("Humans", "Cohort Studies", "Retrospective Studies"))
    assert decide(mesh=record.mesh) == (CLINICAL, "clinical.observational.mesh")


def test_unindexed_retrospective_study_is_clinical_by_text() -> None:
    text = "We retrospectively reviewed 312 consecutive patients treated between 2010 and 2020."
    assert decide(text=text) == (CLINICAL, "clinical.observational.text")


def test_meta_analysis_of_mouse_studies_is_preclinical() -> None:
    record = make_record(
        publication_types=("Meta-Analysis",),
        title="Statins in animal models of stroke: a meta-analysis",
    )
    assert classify_evidence(record).evidence_type is PRECLINICAL


@pytest.mark.parametrize(
    ("overrides", "rule"),
    [
        ({"mesh_terms": ("Animals", "Mice")}, "preclinical.animal.mesh"),
        (
            {"text": "Rats were fed a high-fat diet for 12 weeks."},
            "preclinical.animal.text_species",
        ),
        ({"text": "HeLa cells were transfected with siRNA."}, "preclinical.in_vitro.text"),
        (
            {"publication_types": ("Clinical Trial, Veterinary",)},
            "preclinical.animal.publication_type",
        ),
    ],
)
def test_animal_and_in_vitro_work_is_preclinical(overrides: dict[str, object], rule: str) -> None:
    assert decide(**overrides) == (PRECLINICAL, rule)


def test_veterinary_trial_is_not_clinical_even_with_humans_mesh() -> None:
    record = make_record(
        publication_types=("Clinical Trial, Veterinary",), mesh_terms=("Humans", "Animals")
    )
    assert classify_evidence(record).evidence_type is PRECLINICAL


@pytest.mark.parametrize(
    "pub_types",
    [
        ("Editorial",),
        ("Letter",),
        ("Comment", "Letter"),
        ("Journal Article", "Published Erratum"),
        ("News",),
        ("Historical Article", "Journal Article"),
        ("Review",),
        ("Practice Guideline",),
    ],
)
def test_reviews_guidelines_and_notices_are_other(pub_types: tuple[str, ...]) -> None:
    assert decide(publication_types=pub_types)[0] is OTHER


def test_non_research_type_mixed_with_a_design_type_is_not_other() -> None:
    assert decide(publication_types=("Letter", "Randomized Controlled Trial"))[0] is CLINICAL


def test_mechanistic_paper_without_patients_is_basic() -> None:
    assert decide(text=MECHANISTIC) == (BASIC, "basic.other.unclassified")


def test_computational_work_is_basic() -> None:
    text = "Molecular dynamics simulations of the KRAS G12C switch II pocket were run."
    assert decide(text=text) == (BASIC, "basic.computational.text")


def test_trial_mentioning_mice_is_still_clinical() -> None:
    record = make_record(
        publication_types=("Randomized Controlled Trial",),
        text="Based on efficacy in mice, patients were randomly assigned to the drug.",
    )
    assert classify_evidence(record).evidence_type is CLINICAL


@pytest.mark.parametrize(
    "text",
    [
        "The heart rate was recorded in 40 patients.",
        "The hazard ratio favoured the drug in 120 patients.",
        "A mousetrap-like fold was solved.",
    ],
)
def test_words_containing_rat_or_mouse_do_not_trigger_preclinical(text: str) -> None:
    assert decide(text=text)[0] is not PRECLINICAL


@pytest.mark.parametrize(
    "text",
    [
        "We studied 200 women undergoing in vitro fertilization at two centres.",
        "The HW-RAT score was computed for 350 hospital workers.",
        "Students (n = 120) completed the pre-clinical modules of the curriculum.",
        "Preclinical studies in mice have shown benefit. We enrolled 85 patients.",
        "Animal studies suggest that pesticides alter thyroid function. We evaluated 679 men.",
        "No animal model was used; 60 volunteers were recruited.",
    ],
)
def test_false_friends_background_and_negations_do_not_make_human_studies_preclinical(
    text: str,
) -> None:
    assert decide(text=text)[0] is CLINICAL


# --- classify_evidence carries the flags ---------------------------------------------------


def test_classification_carries_both_flags() -> None:
    result = classify_evidence(
        make_record(
            publication_types=("Randomized Controlled Trial",),
            text="In KRAS G12C NSCLC, sotorasib improved PFS (HR 0.66, 95% CI 0.51-0.86).",
        )
    )
    assert result.evidence_type is CLINICAL
    assert result.rule == "clinical.rct.publication_type"
    assert result.has_numbers is True
    assert result.has_biomarker is True


def test_classification_flags_are_false_for_a_plain_mechanistic_paper() -> None:
    text = "Here we show that STAT3 signalling controls acute-phase genes in hepatocytes."
    result = classify_evidence(make_record(title="STAT3 and hepatocytes", text=text))
    assert (result.has_numbers, result.has_biomarker) == (False, False)


def test_il6_counts_as_a_biomarker_but_not_as_a_number() -> None:
    result = classify_evidence(make_record(title="STAT3 and hepatocytes", text=MECHANISTIC))
    assert (result.has_numbers, result.has_biomarker) == (False, True)


# --- has_numbers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Death occurred less often (HR 0.74, 95% CI 0.61-0.90).",
        "The hazard ratio for death was 0.74.",
        "The odds ratio was 1.5 for smokers.",
        "Risk was lower (OR 1.52).",
        "Risk was lower (RR = 0.80).",
        "The difference was significant (p < 0.001).",
        "The difference was significant (P = 0.03).",
        "The difference was significant (P<.001).",
        "Weight fell by 12.4% with semaglutide.",
        "Weight fell by 12.5 % with semaglutide.",
        "We enrolled a cohort (n = 120).",
        "In all, 348 patients were enrolled.",
        "HbA1c was 7.2 ± 1.1 at baseline.",
        "The mean difference was -2.3 kg.",
    ],
)
def test_quantitative_results_set_has_numbers(text: str) -> None:
    assert has_numbers(make_record(text=text)) is True


def test_number_in_title_sets_has_numbers() -> None:
    assert has_numbers(make_record(title="Semaglutide lowered weight by 15% in adults")) is True


def test_mechanistic_abstract_with_only_a_year_and_gene_names_has_no_numbers() -> None:
    assert has_numbers(make_record(title="IL-6 signalling, 2019 update", text=MECHANISTIC)) is False


def test_plain_clinical_abstract_without_results_has_no_numbers() -> None:
    assert has_numbers(make_record(text=PLAIN_CLINICAL)) is False


def test_record_without_abstract_has_no_numbers() -> None:
    assert has_numbers(make_record(title="Obesity treatment", abstract=())) is False


# --- has_biomarker -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Sotorasib targets KRAS G12C.",
        "Dabrafenib in BRAF V600E melanoma.",
        "Osimertinib overcomes EGFR T790M resistance.",
        "Patients with an exon 19 deletion responded.",
        "PD-L1 expression predicted response.",
        "Trastuzumab in HER2-positive breast cancer.",
        "EGFR mutation carriers responded.",
        "KRAS-mutant tumours progressed.",
        "TP53 status was recorded.",
        "ALK fusion was detected.",
        "A serum marker of liver injury rose.",
        "Two tumor markers were measured.",
        "A prognostic marker was identified.",
        "Candidate biomarkers were validated.",
        "ctDNA clearance was associated with survival.",
        "HbA1c fell with treatment.",
        "C-reactive protein fell with treatment.",
        "High-sensitivity troponin was measured.",
        "The Ki-67 index was high.",
    ],
)
def test_biomarker_mentions_set_has_biomarker(text: str) -> None:
    assert has_biomarker(make_record(title="A cohort study", text=text)) is True


def test_biomarker_keyword_sets_has_biomarker() -> None:
    record = make_record(title="A cohort study", text=PLAIN_CLINICAL, keywords=("biomarkers",))
    assert has_biomarker(record) is True


def test_plain_clinical_abstract_has_no_biomarker() -> None:
    record = make_record(title="Blood pressure lowering in hypertension", text=PLAIN_CLINICAL)
    assert has_biomarker(record) is False


@pytest.mark.parametrize(
    "overrides",
    [
        {"title": "Biomarkers of sepsis in the emergency department"},
        {"keywords": ("Biomarkers", "Sepsis")},
        {"text": "Serum markers of liver injury were measured."},
    ],
)
def test_capitalized_biomarker_words_set_has_biomarker(overrides: dict[str, object]) -> None:
    fields: dict[str, object] = {"title": "A cohort study", "text": PLAIN_CLINICAL, **overrides}
    assert has_biomarker(make_record(**fields)) is True


def test_lower_case_symbols_are_not_read_as_biomarkers() -> None:
    record = make_record(title="A cohort study", text="The her2 and g12c strings are not symbols.")
    assert has_biomarker(record) is False


def test_a_notice_mentioning_mice_is_other_not_preclinical() -> None:
    record = make_record(
        title="Erratum: Sotorasib inhibits KRAS G12C tumours in mice",
        publication_types=("Published Erratum",),
    )
    result = classify_evidence(record)
    assert (result.evidence_type, result.rule) == (EvidenceType.OTHER, "other.non_research")

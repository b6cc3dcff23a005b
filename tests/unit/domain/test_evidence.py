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


# --- one test per rule ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "pub_type",
    [
        "Randomized Controlled Trial",
        "Clinical Trial",
        "Clinical Trial, Phase I",
        "Clinical Trial, Phase II",
        "Clinical Trial, Phase III",
        "Clinical Trial, Phase IV",
    ],
)
def test_trial_publication_type_is_clinical_by_trial_type_rule(pub_type: str) -> None:
    assert decide(publication_types=("Journal Article", pub_type)) == (
        CLINICAL,
        "clinical.trial_type",
    )


def test_rct_publication_type_is_clinical() -> None:
    assert decide(publication_types=("Randomized Controlled Trial",)) == (
        CLINICAL,
        "clinical.trial_type",
    )


def test_trial_publication_type_matches_whatever_the_case() -> None:
    assert decide(publication_types=("randomized controlled TRIAL",)) == (
        CLINICAL,
        "clinical.trial_type",
    )


@pytest.mark.parametrize(
    "pub_type",
    [
        "Controlled Clinical Trial",
        "Pragmatic Clinical Trial",
        "Equivalence Trial",
        "Adaptive Clinical Trial",
        "Clinical Trial Protocol",
    ],
)
def test_other_trial_kind_in_humans_is_clinical_by_humans_trial_rule(pub_type: str) -> None:
    assert decide(publication_types=(pub_type,), mesh_terms=("Humans", "Adult")) == (
        CLINICAL,
        "clinical.humans_trial",
    )


def test_other_trial_kind_without_humans_mesh_is_not_clinical() -> None:
    assert decide(publication_types=("Controlled Clinical Trial",)) == (BASIC, "basic.fallback")


def test_meta_analysis_of_randomized_trials_is_clinical_by_trial_synthesis_rule() -> None:
    assert decide(
        publication_types=("Meta-Analysis",),
        title="Semaglutide for obesity: a meta-analysis of randomized controlled trials",
    ) == (CLINICAL, "clinical.trial_synthesis")


def test_systematic_review_of_rcts_mentioned_in_abstract_is_clinical() -> None:
    assert decide(
        publication_types=("Systematic Review",),
        text="We searched MEDLINE for RCTs of SGLT2 inhibitors in heart failure.",
    ) == (CLINICAL, "clinical.trial_synthesis")


def test_systematic_review_of_observational_studies_is_not_clinical() -> None:
    assert decide(
        publication_types=("Systematic Review",),
        text="We pooled fourteen observational cohort studies of statin use.",
    ) == (BASIC, "basic.fallback")


def test_trial_synthesis_text_without_synthesis_type_does_not_make_it_clinical() -> None:
    assert decide(
        publication_types=("Review",),
        text="Randomized controlled trials are the gold standard of evidence.",
    ) == (BASIC, "basic.fallback")


@pytest.mark.parametrize(
    "text",
    [
        "Efficacy was shown in preclinical models.",
        "Efficacy was shown in pre-clinical models.",
        "The compound was active in vitro.",
        "The compound was active In Vitro.",
        "Tumour growth slowed in an animal model of NSCLC.",
        "Tumour growth slowed in two animal models.",
        "A knock-in mouse was generated.",
        "Mice were fed a high-fat diet.",
        "The effect was studied in the rat.",
        "Rats were fed a high-fat diet.",
        "RAT hepatocytes were isolated.",
    ],
)
def test_preclinical_words_in_text_are_preclinical_by_text_rule(text: str) -> None:
    assert decide(text=text) == (PRECLINICAL, "preclinical.text")


def test_preclinical_word_in_title_is_preclinical_by_text_rule() -> None:
    assert decide(title="Sotorasib in mice") == (PRECLINICAL, "preclinical.text")


def test_animal_only_mesh_is_preclinical_by_animal_mesh_rule() -> None:
    assert decide(mesh_terms=("Animals", "Dogs", "Disease Models, Animal")) == (
        PRECLINICAL,
        "preclinical.animal_mesh",
    )


def test_animals_and_humans_mesh_is_not_animal_only() -> None:
    assert decide(mesh_terms=("Animals", "Humans")) == (BASIC, "basic.fallback")


@pytest.mark.parametrize(
    "pub_types",
    [
        ("Editorial",),
        ("Letter",),
        ("Comment", "Letter"),
        ("News",),
        ("Published Erratum",),
        ("Retraction of Publication",),
        ("Expression of Concern",),
        ("Biography", "Portrait"),
        ("Editorial", "Journal Article"),
    ],
)
def test_non_research_publication_types_are_other(pub_types: tuple[str, ...]) -> None:
    assert decide(publication_types=pub_types) == (OTHER, "other.non_research")


def test_erratum_is_other() -> None:
    assert decide(
        title="Erratum: Correction to the affiliations", publication_types=("Published Erratum",)
    ) == (OTHER, "other.non_research")


def test_non_research_type_mixed_with_a_design_type_is_not_other() -> None:
    assert decide(publication_types=("Editorial", "Review")) == (BASIC, "basic.fallback")


def test_mechanistic_paper_is_basic_by_fallback_rule() -> None:
    assert decide(title="STAT3 controls acute-phase genes", text=MECHANISTIC) == (
        BASIC,
        "basic.fallback",
    )


@pytest.mark.parametrize(
    "pub_types", [(), ("Journal Article",), ("Journal Article", "English Abstract")]
)
def test_neutral_or_missing_publication_types_fall_back_to_basic(
    pub_types: tuple[str, ...],
) -> None:
    assert decide(publication_types=pub_types) == (BASIC, "basic.fallback")


# --- precedence between rules --------------------------------------------------------------


def test_trial_mentioning_mice_is_still_clinical() -> None:
    assert decide(
        publication_types=("Randomized Controlled Trial",),
        text="Building on results in mice and rats, we randomly assigned 300 patients.",
        mesh_terms=("Humans", "Animals"),
    ) == (CLINICAL, "clinical.trial_type")


def test_humans_trial_mentioning_in_vitro_is_still_clinical() -> None:
    assert decide(
        publication_types=("Controlled Clinical Trial",),
        mesh_terms=("Humans",),
        text="After promising in vitro data, volunteers received the vaccine.",
    ) == (CLINICAL, "clinical.humans_trial")


def test_veterinary_trial_in_animals_is_not_clinical() -> None:
    assert decide(
        publication_types=("Clinical Trial, Veterinary",), mesh_terms=("Animals", "Dogs")
    ) == (PRECLINICAL, "preclinical.animal_mesh")


def test_veterinary_trial_is_not_clinical_even_with_humans_mesh() -> None:
    assert decide(
        publication_types=("Randomized Controlled Trial, Veterinary",),
        mesh_terms=("Humans", "Animals"),
    ) == (BASIC, "basic.fallback")


def test_trial_type_beats_non_research_type() -> None:
    assert decide(publication_types=("Letter", "Randomized Controlled Trial")) == (
        CLINICAL,
        "clinical.trial_type",
    )


def test_meta_analysis_of_rcts_mentioning_mice_is_clinical_by_trial_synthesis() -> None:
    assert decide(
        publication_types=("Meta-Analysis",),
        text="Pooled data from 12 RCTs; earlier work in mice is discussed.",
    ) == (CLINICAL, "clinical.trial_synthesis")


def test_meta_analysis_of_mouse_studies_is_preclinical() -> None:
    assert decide(
        publication_types=("Meta-Analysis",), text="We pooled studies of the drug in mice."
    ) == (PRECLINICAL, "preclinical.text")


def test_review_without_trials_is_basic() -> None:
    assert decide(
        publication_types=("Review",),
        title="GLP-1 receptor signalling in beta cells",
        text="We review the signalling of the GLP-1 receptor and its downstream effectors.",
    ) == (BASIC, "basic.fallback")


def test_preclinical_text_beats_animal_mesh() -> None:
    assert decide(text="Mice were treated.", mesh_terms=("Animals", "Mice")) == (
        PRECLINICAL,
        "preclinical.text",
    )


# --- word boundaries -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "The heart rate was recorded.",
        "The hazard ratio favoured the drug.",
        "The rationale for the study is given.",
        "Cells migrate towards the wound.",
        "Analyses were stratified by age strata.",
        "A mousetrap-like fold was solved.",
        "The plasma concentration was stable.",
    ],
)
def test_words_containing_rat_or_mouse_do_not_trigger_preclinical(text: str) -> None:
    assert decide(text=text) == (BASIC, "basic.fallback")


def test_rats_plural_triggers_preclinical() -> None:
    assert decide(text="Ten rats received the drug.") == (PRECLINICAL, "preclinical.text")


# --- classify_evidence carries the flags ---------------------------------------------------


def test_classification_carries_both_flags() -> None:
    result = classify_evidence(
        make_record(
            publication_types=("Randomized Controlled Trial",),
            text="In KRAS G12C NSCLC, sotorasib improved PFS (HR 0.66, 95% CI 0.51-0.86).",
        )
    )
    assert result.evidence_type is CLINICAL
    assert result.rule == "clinical.trial_type"
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

"""Study design (`biomcp.domain.design`): one test per rule, negations, background sentences,
false friends, species, and a hand-checked design for every real record in
../shared/data/eutils."""

from __future__ import annotations

import pytest

from biomcp.adapters.entrez.pubmed_xml import parse_pubmed_articles
from biomcp.domain.design import StudyDesign, classify_design
from biomcp.domain.evidence import classify_evidence
from biomcp.domain.records import AbstractSection, EvidenceType, PubMedRecord
from tests.conftest import shared_data_path
from tests.support.builders import make_record

pytestmark = pytest.mark.unit

D = StudyDesign


def design(**overrides: object) -> tuple[StudyDesign, str]:
    result = classify_design(make_record(**overrides))
    return result.design, result.rule


# --- publication types -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pub_types", "expected"),
    [
        (("Randomized Controlled Trial",), (D.RCT, "rct.publication_type")),
        (("Clinical Trial, Phase I",),
         (D.NONRANDOMIZED_TRIAL, "nonrandomized_trial.publication_type")),
        (("Meta-Analysis",), (D.SYSTEMATIC_REVIEW, "systematic_review.publication_type")),
        (("Systematic Review",), (D.SYSTEMATIC_REVIEW, "systematic_review.publication_type")),
        (("Practice Guideline",), (D.GUIDELINE, "guideline.publication_type")),
        (("Case Reports",), (D.CASE_REPORT, "case_report.publication_type")),
        (("Observational Study",), (D.OBSERVATIONAL, "observational.publication_type")),
        (("Review",), (D.NARRATIVE_REVIEW, "narrative_review.publication_type")),
        (("Editorial",), (D.OTHER, "other.non_research")),
        (("Journal Article", "Published Erratum"), (D.OTHER, "other.non_research")),
        (("Historical Article",), (D.OTHER, "other.historical")),
        (("Clinical Trial, Veterinary",), (D.ANIMAL, "animal.publication_type")),
    ],
)  # fmt: skip
def test_publication_types_decide_first(
    pub_types: tuple[str, ...], expected: tuple[StudyDesign, str]
) -> None:
    # The text says mice and the MeSH says cohort: publication types are trusted first.
    text = "Mice were treated. A retrospective cohort was studied."
    assert design(publication_types=pub_types, text=text) == expected


@pytest.mark.parametrize(
    ("pub_types", "mesh_terms", "expected"),
    [
        (("Randomized Controlled Trial",), ("Animals", "Mice"),
         (D.ANIMAL, "animal.publication_type_animals_mesh")),
        (("Clinical Trial",), ("Animals", "Dogs"),
         (D.ANIMAL, "animal.publication_type_animals_mesh")),
        (("Randomized Controlled Trial",), ("Animals", "Humans"), (D.RCT, "rct.publication_type")),
        (("Randomized Controlled Trial",), ("Humans",), (D.RCT, "rct.publication_type")),
        (("Randomized Controlled Trial",), (), (D.RCT, "rct.publication_type")),
        (("Case Reports",), ("Animals", "Dogs", "Dog Diseases"),
         (D.ANIMAL, "animal.publication_type_animals_mesh")),
        (("Observational Study",), ("Animals", "Cattle"),
         (D.ANIMAL, "animal.publication_type_animals_mesh")),
        (("Case Reports",), ("Humans", "Animals", "Bites and Stings"),
         (D.CASE_REPORT, "case_report.publication_type")),
        (("Meta-Analysis",), ("Animals",),
         (D.SYSTEMATIC_REVIEW, "systematic_review.publication_type")),
    ],
)  # fmt: skip
def test_a_study_with_participants_on_an_animals_only_record_is_an_animal_study(
    pub_types: tuple[str, ...], mesh_terms: tuple[str, ...], expected: tuple[StudyDesign, str]
) -> None:
    """NLM's check tags say who took part: the Animals tag without Humans makes a trial, a case
    report or an observational study an animal one (there is no Veterinary type for case
    reports, and none for trials before 2015); with Humans, or before the record is indexed
    (no MeSH), the publication type stands."""
    record = make_record(
        publication_types=pub_types,
        mesh_terms=mesh_terms,
        text="In 21 mice, metformin reduced tumour volume by 40% (95% CI 7 to 18).",
    )
    found = classify_design(record)
    assert (found.design, found.rule) == expected
    evidence = classify_evidence(record, found)
    if found.design is D.ANIMAL:
        assert evidence.evidence_type is EvidenceType.PRECLINICAL
        assert evidence.rule == "preclinical.animal.publication_type_animals_mesh"
    elif found.design is D.RCT:
        assert evidence.evidence_type is EvidenceType.CLINICAL


def test_trial_type_with_randomization_in_the_methods_is_an_rct() -> None:
    text = "Patients were randomly assigned to drug or placebo."
    assert design(publication_types=("Clinical Trial",), text=text) == (
        D.RCT,
        "rct.trial_type_randomized_text",
    )


def test_review_that_says_it_is_systematic_is_a_systematic_review() -> None:
    text = "We performed a systematic review of MEDLINE and Embase."
    assert design(publication_types=("Review",), text=text)[0] is D.SYSTEMATIC_REVIEW


def test_trial_protocols_and_trials_as_topic_are_not_trials() -> None:
    assert design(publication_types=("Clinical Trial Protocol",))[0] is not D.NONRANDOMIZED_TRIAL


# --- MeSH ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "descriptor",
    ["Cohort Studies", "Case-Control Studies", "Cross-Sectional Studies", "Retrospective Studies",
     "Prospective Studies", "Surveys and Questionnaires"],
)  # fmt: skip
def test_observational_mesh_with_humans_is_observational(descriptor: str) -> None:
    assert design(mesh_terms=("Humans", descriptor)) == (D.OBSERVATIONAL, "observational.mesh")


def test_animals_without_humans_is_animal() -> None:
    assert design(mesh_terms=("Animals", "Rats, Wistar")) == (D.ANIMAL, "animal.mesh")


def test_animal_cohort_mesh_is_still_animal() -> None:
    assert design(mesh_terms=("Animals", "Prospective Studies"))[0] is D.ANIMAL


def test_cultured_cells_from_animals_without_in_vivo_text_are_in_vitro() -> None:
    record = {"mesh_terms": ("Animals", "Cells, Cultured"), "text": "Cells were treated."}
    assert design(**record) == (D.IN_VITRO, "in_vitro.mesh")


def test_humans_mesh_makes_species_words_untrusted() -> None:
    # A human study of dog bites with MeSH Humans only is not an animal study.
    text = "Dogs are the commonest biting animal; 230 children were treated at our centre."
    assert design(mesh_terms=("Humans",), text=text)[0] is D.OBSERVATIONAL


# --- title and abstract (records not MeSH-indexed yet) ---------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We conducted a systematic review and meta-analysis of 12 trials.", D.SYSTEMATIC_REVIEW),
        ("Patients were randomly assigned to surgery or observation.", D.RCT),
        ("In this single-arm phase 2 trial, 40 patients received the drug.", D.NONRANDOMIZED_TRIAL),
        ("We report a case of a 54-year-old man with sarcoidosis.", D.CASE_REPORT),
        ("A 7-year-old girl presented with fever and rash.", D.CASE_REPORT),
        ("This retrospective study reviewed medical records of 212 patients.", D.OBSERVATIONAL),
        ("A cross-sectional survey of 1,024 nurses was carried out.", D.OBSERVATIONAL),
        ("One hundred and forty-one patients were studied after surgery.", D.OBSERVATIONAL),
        ("HepG2 cells were exposed to the compound for 24 h.", D.IN_VITRO),
        ("The drug was active in vitro against 57 clinical isolates.", D.IN_VITRO),
        ("Molecular docking and in silico screening identified 12 ligands.", D.COMPUTATIONAL),
        ("Here we show that STAT3 controls acute-phase genes.", D.OTHER),
    ],
)  # fmt: skip
def test_methods_language_decides_without_mesh(text: str, expected: StudyDesign) -> None:
    assert design(text=text)[0] is expected


@pytest.mark.parametrize(
    "text",
    [
        "Mice were fed a high-fat diet.",
        "Rats underwent ligation of the coronary artery.",
        "Domestic pigs were anaesthetized and ventilated.",
        "Piglets received the formula for 21 days.",
        "Twelve dogs were instrumented.",
        "New Zealand white rabbits were used.",
        "Ewes and lambs were sampled.",
        "Sheep were implanted with the device.",
        "Guinea pigs were sensitized to ovalbumin.",
        "Zebrafish larvae were exposed to the drug.",
        "Rhesus macaques were vaccinated.",
        "Non-human primates received two doses.",
        "Tumours grew in a xenograft model.",
    ],
)
def test_species_in_the_methods_make_an_animal_study(text: str) -> None:
    assert design(text=text) == (D.ANIMAL, "animal.text_species")


@pytest.mark.parametrize(
    "text",
    [
        # false friends
        "Two hundred women undergoing in vitro fertilization were studied.",
        "The HW-RAT risk-assessment tool was given to 300 health workers.",
        "Medical students (n = 120) completed the pre-clinical modules.",
        # background sentences
        "Preclinical studies in rats have shown benefit. We enrolled 85 patients.",
        "Animal studies suggest that pesticides alter thyroid function. We evaluated 679 men.",
        # negations
        "No animal model was used; 60 volunteers were recruited.",
        "The drug was not tested in mice. We followed 140 patients.",
    ],
)
def test_false_friends_background_and_negations_leave_human_studies_human(text: str) -> None:
    assert design(text=text)[0] is D.OBSERVATIONAL


def test_background_section_is_not_read_for_species() -> None:
    record = make_record(
        abstract=(
            AbstractSection("Mice lacking the gene are obese.", "BACKGROUND", "BACKGROUND"),
            AbstractSection("We studied 320 patients with obesity.", "METHODS", "METHODS"),
        )
    )
    assert classify_design(record).design is D.OBSERVATIONAL


def test_chart_review_is_not_a_narrative_review() -> None:
    text = "We performed a chart review of 98 patients admitted with sepsis."
    assert design(text=text)[0] is D.OBSERVATIONAL


def test_guideline_in_the_title() -> None:
    assert design(title="The EFLM European Urinalysis Guideline 2023") == (
        D.GUIDELINE,
        "guideline.title",
    )


# --- every real record, designs checked by hand ----------------------------------------------

# PMID -> design, decided by reading each title and abstract (not by running the classifier).
HAND_CHECKED = {
    "12091962": D.NARRATIVE_REVIEW,  # AIDS treatment in prisons; Review, no abstract
    "9997": D.OTHER,  # EPR spectroscopy of a purified bacterial protein: biophysics
    "11748933": D.ANIMAL,  # fish (Diplodus puntazzo) sperm cryopreservation
    "11700088": D.OTHER,  # NMR imaging method development (physics)
    "27797938": D.OBSERVATIONAL,  # nested case-control, "Observational Study"
    "28775130": D.OBSERVATIONAL,  # 679 pesticide applicators, cross-sectional
    "30108519": D.OBSERVATIONAL,  # 13 trained runners tested, no allocation
    "29963580": D.COMPUTATIONAL,  # imaging biomarker software pipeline
    "17284678": D.OTHER,  # genome sequencing of a protozoan chromosome
    "11618220": D.OTHER,  # literary history (Historical Article)
    "23657305": D.OBSERVATIONAL,  # HFE mutations in ALD patients vs controls
    "24084238": D.NARRATIVE_REVIEW,  # challenges in miRNA research
    "32292800": D.NONRANDOMIZED_TRIAL,  # first-in-human device evaluation
    "32935693": D.NARRATIVE_REVIEW,  # RiPP review
    "33119379": D.NARRATIVE_REVIEW,  # review of 30 studies of an inventory, not systematic
    "33967209": D.NARRATIVE_REVIEW,  # "Purpose of review" hemodynamic monitoring
    "34529508": D.OTHER,  # editorial / comment
    "34843274": D.GUIDELINE,  # APA clinical practice guideline summary
    "35856662": D.NARRATIVE_REVIEW,  # OXA-48 epidemiology review
    "36987902": D.OBSERVATIONAL,  # retrospective burn-centre cohort
    "37167981": D.COMPUTATIONAL,  # Monte Carlo simulation
    "38048813": D.OTHER,  # editorial
    "38534005": D.GUIDELINE,  # EFLM urinalysis guideline
    "38833988": D.OTHER,  # corrigendum
    "38962805": D.OTHER,  # correction
    "39382274": D.IN_VITRO,  # MICs of 57 clinical isolates
    "29768149": D.RCT,  # SYGMA 1
}


def _eutils_records() -> list[PubMedRecord]:
    root = shared_data_path("eutils")
    records: dict[str, PubMedRecord] = {}
    for path in sorted(root.rglob("*.xml")):
        if b"PubmedArticleSet" in path.read_bytes()[:600]:
            for record in parse_pubmed_articles(path.read_bytes()).records:
                records[record.pmid] = record
    return list(records.values())


def test_every_real_record_has_its_hand_checked_design() -> None:
    records = _eutils_records()
    assert {r.pmid for r in records} == set(HAND_CHECKED)
    got = {r.pmid: classify_design(r).design for r in records}
    assert got == HAND_CHECKED


def test_real_observational_study_is_clinical_not_basic() -> None:
    # Issue 17: 27797938, "Observational Study", quality 9/10, used to be tagged basic.
    (record,) = [r for r in _eutils_records() if r.pmid == "27797938"]
    evidence = classify_evidence(record)
    assert (evidence.evidence_type, evidence.rule) == (
        EvidenceType.CLINICAL,
        "clinical.observational.publication_type",
    )


@pytest.mark.parametrize(
    ("mesh_terms", "expected"),
    [
        (("Humans", "Double-Blind Method", "Random Allocation"), (D.RCT, "rct.mesh")),
        (("Humans", "Cross-Over Studies"), (D.NONRANDOMIZED_TRIAL, "nonrandomized_trial.mesh")),
    ],
)
def test_trial_methods_mesh_makes_a_trial(
    mesh_terms: tuple[str, ...], expected: tuple[StudyDesign, str]
) -> None:
    assert design(mesh_terms=mesh_terms) == expected


def test_searching_databases_for_studies_is_a_systematic_review() -> None:
    text = "Epidemiologic studies were identified by searching MEDLINE from 1966 to 1998."
    assert design(text=text)[0] is D.SYSTEMATIC_REVIEW


def test_animal_material_used_for_people_is_not_an_animal_study() -> None:
    text = "Surgical residents (n = 24) performed a bowel repair using bovine intestines."
    assert design(text=text)[0] is D.OBSERVATIONAL

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
        # amphibians, birds, fish, invertebrates and primates of the laboratory
        "Toad bladders were mounted in chambers.",
        "Forty turkeys were fed the diet for six weeks.",
        "Spatial learning was analysed in wasps walking a Y-maze.",
        "Tetrahymena pyriformis cells were labelled with palmitic acid.",
        "Grass carp were challenged with the virus.",
        "Shore crabs were exposed to underwater vibrations.",
        "The notochords of chick embryos were stained for catecholamines.",
        "Atrial pacing was studied in Macaca mulatta.",
        "Plasma prolactin was measured in 3 mature bulls.",
        "Urea formation was measured in the kidneys of domestic fowl.",
        "Cockerels were infused with histidine into the carotid artery.",
        "Adult fruit flies were kept on the diet for 30 days.",
        # fish as food for a laboratory species
        "Grass carp were fed fish meal or soybean meal for eight weeks.",
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
        # a country, idioms, venoms, allergens and hormones named after an animal
        "We surveyed 300 smokers in Ankara, Turkey.",
        "Of 400 patients who smoked, 120 quit cold turkey.",
        "Sera of 47 patients with honey bee venom allergy were tested.",
        "We examined 52 patients with cockroach allergy.",
        "Salmon calcitonin was given to 30 women with osteoporosis.",
        # fish as food
        "Hair mercury rose with fish consumption in 120 women.",
        "Fish oil capsules were taken by 40 adults with asthma.",
        "Recurrence was linked to the intake of raw fish in 25 patients.",
    ],
)
def test_false_friends_background_and_negations_leave_human_studies_human(text: str) -> None:
    assert design(text=text)[0] is D.OBSERVATIONAL


@pytest.mark.parametrize(
    "text",
    [
        "Smokers were randomly assigned to quit cold turkey or to taper.",
        "Adults were randomized to a diet of chick peas or of lentils.",
        "Patients were randomized to rooster comb hyaluronan or to saline.",
        "Patients were randomized to honey bee venom immunotherapy or to placebo.",
    ],
)
def test_a_false_friend_in_a_randomization_sentence_is_no_animal_trial(text: str) -> None:
    assert design(text=text)[0] is D.RCT


@pytest.mark.parametrize(
    "text",
    [
        "Temperature-sensitive mutants of fowl plague virus were isolated and mapped.",
        "The haemagglutinin content of four vaccines correlated with chick cell agglutination.",
    ],
)
def test_a_virus_or_an_assay_named_after_a_bird_is_no_animal_study(text: str) -> None:
    assert design(text=text)[0] is not D.ANIMAL


def test_background_section_is_not_read_for_species() -> None:
    record = make_record(
        abstract=(
            AbstractSection("Mice lacking the gene are obese.", "BACKGROUND", "BACKGROUND"),
            AbstractSection("We studied 320 patients with obesity.", "METHODS", "METHODS"),
        )
    )
    assert classify_design(record).design is D.OBSERVATIONAL


@pytest.mark.parametrize("category", ["UNASSIGNED", None])
def test_a_section_labelled_as_background_is_background_before_nlm_categorizes_it(
    category: str | None,
) -> None:
    # A fresh record carries NlmCategory="UNASSIGNED": its label says what the section is.
    record = make_record(
        title="Effectiveness of one vaccine dose",
        abstract=(
            AbstractSection(
                "The vaccine showed high efficacy in a phase III randomized clinical trial.",
                "Importance",
                category,
            ),
            AbstractSection(
                "This cohort study used the records of 500 000 members of a health plan.",
                "Design, Setting, and Participants",
                category,
            ),
        ),
    )
    assert classify_design(record).design is D.OBSERVATIONAL


@pytest.mark.parametrize(
    ("background", "expected"),
    [
        ("Little is known. This prospective, randomized study compared two laryngoscopes.",
         D.RCT),
        ("Little is known. Design and Methods: The study was a randomized control trial.", D.RCT),
        ("Little is known. This phase II study gave six cycles of chemotherapy.",
         D.NONRANDOMIZED_TRIAL),
        ("Randomized trials showed a benefit. Little is known about its use in practice.",
         D.OTHER),
    ],
)  # fmt: skip
def test_a_background_section_keeps_its_sentences_about_this_study(
    background: str, expected: StudyDesign
) -> None:
    record = make_record(
        title="Two devices compared",
        abstract=(
            AbstractSection(background, "BACKGROUND", "BACKGROUND"),
            AbstractSection("The success rate was higher with one device.", "RESULTS", "RESULTS"),
        ),
    )
    assert classify_design(record).design is expected


@pytest.mark.parametrize(
    "text",
    [
        "In this comparative effectiveness study of 500 000 members, results were comparable to "
        "that of the phase III randomized clinical trial.",
        "Our cohort of 2,000 patients gave estimates consistent with the pivotal randomised "
        "controlled trials.",
        "We interviewed nine physicians prior to implementation of the recommendations in a "
        "stepped-wedge cluster randomized trial.",
        "Eighty-five women were treated. Results were fully comparable with the international, "
        "randomized, assessor-blinded trial ESTHER-1.",
        "Of 112 patients treated, 40 responded. A randomised, controlled phase III study is "
        "underway.",
        "In 3,000 women, statin users lived longer. We recommend a randomized clinical trial of "
        "statin use.",
        "The software helped 20 patients. Randomized clinical trial is indicated.",
    ],
)
def test_a_trial_the_study_compares_itself_with_or_prepares_makes_no_trial(text: str) -> None:
    assert design(text=text)[0] not in {D.RCT, D.NONRANDOMIZED_TRIAL}


@pytest.mark.parametrize(
    "text",
    [
        "Patients were randomized to the drug, which was compared with placebo.",
        "Patients were randomized to the recommended dose or half of it.",
        "In this ongoing randomized trial, 300 patients were enrolled.",
    ],
)
def test_a_stated_randomization_beside_those_words_stays_an_rct(text: str) -> None:
    assert design(text=text) == (D.RCT, "rct.text")


def test_a_review_headed_areas_covered_is_a_narrative_review() -> None:
    text = (
        "INTRODUCTION: Drug X is approved for breast cancer.\n"
        "AREAS COVERED: The treatment landscape and the clinical trials of drug X.\n"
        "EXPERT OPINION: Drug X is likely to become a standard of care."
    )
    assert design(text=text) == (D.NARRATIVE_REVIEW, "narrative_review.text")


def test_a_case_in_the_areas_covered_format_stays_a_case_report() -> None:
    text = (
        "INTRODUCTION: Gastric volvulus should be suspected.\n"
        "AREAS COVERED: A 10-year-old girl was admitted for abdominal pain and vomiting.\n"
        "EXPERT COMMENTARY: Gastric volvulus is a life-threatening condition."
    )
    assert design(text=text)[0] is D.CASE_REPORT


def test_chart_review_is_not_a_narrative_review() -> None:
    text = "We performed a chart review of 98 patients admitted with sepsis."
    assert design(text=text)[0] is D.OBSERVATIONAL


@pytest.mark.parametrize(
    "text",
    [
        "This comprehensive review summarizes the drug's pharmacology and its safety.",
        "In this narrative review, we describe how e-diaries measure symptoms in 120 studies.",
        "This short review highlights new labelling methods in living cells.",
        "The purpose of this literature review is to address diagnosis in adult patients.",
    ],
)
def test_a_review_that_names_itself_with_an_adjective_is_a_narrative_review(text: str) -> None:
    assert design(text=text) == (D.NARRATIVE_REVIEW, "narrative_review.text")


@pytest.mark.parametrize(
    "text",
    [
        "This retrospective review analyzed all 312 patients who underwent drain placement.",
        "This single-institution retrospective review included 88 patients.",
        "This in-depth chart review describes the work of 14 care coordinators with patients.",
        "We conducted this study to review the characteristics of 421 imported cases.",
        "Spike ripples need expert review. This expert review is slow in 40 patients.",
        "The study of 64 patients was approved by our local ethics review board.",
    ],
)
def test_a_review_of_patients_or_data_is_not_a_narrative_review(text: str) -> None:
    assert design(text=text)[0] is not D.NARRATIVE_REVIEW


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
    # 27797938, "Observational Study", quality 9/10, used to be tagged basic.
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


# --- the abstract read like a reviewer (synthetic twins of test_design_golden) -----


@pytest.mark.parametrize(
    "text",
    [
        "Forty rats were randomly divided into four groups.",
        "Thirty adult Sprague Dawley rats were randomly divided into three groups.",
        "Fifty-one purpose-bred beagles were randomized to receive the challenge.",
        "A total of 480 one-day-old broilers were randomly allocated to 3 treatments.",
        "Male goats were randomly assigned to a control group or to isolation.",
        "The animals were randomly assigned to normothermia or hypothermia.",
        "A randomized and blind design was used in rhesus monkeys.",
        "Ten isolated pig hearts were perfused with two solutions in a random order.",
    ],
)
def test_randomized_animals_are_an_animal_study_not_an_rct(text: str) -> None:
    assert design(text=text) == (D.ANIMAL, "animal.text_trial_species")


def test_a_human_trial_using_animal_models_for_training_stays_an_rct() -> None:
    text = "Participants were randomly assigned to train on one of two porcine models for training."
    assert design(text=text) == (D.RCT, "rct.text")


def test_animal_material_given_to_counted_patients_stays_a_human_trial() -> None:
    text = "In total 40 patients were randomly assigned to bovine pericardium or mechanical valves."
    assert design(text=text) == (D.RCT, "rct.text")


@pytest.mark.parametrize(
    "text",
    [
        "We performed a two-sample Mendelian randomization study of BMI and asthma.",
        "A bi-directional Mendelian randomisation analysis used GWAS summary data.",
    ],
)
def test_mendelian_randomization_is_observational(text: str) -> None:
    assert design(text=text) == (D.OBSERVATIONAL, "observational.mendelian_randomization")


@pytest.mark.parametrize(
    "text",
    [
        "In this randomized, double-blind, placebo-controlled trial, 120 patients received drug.",
        "We conducted a multicentre, randomised, open-label trial in 40 hospitals.",
        "We randomized 120 patients to surgery or physiotherapy.",
        "Patients were allocated randomly to the two regimens.",
        "Volunteers were randomly allocated to exercise or rest.",
        "Participants were randomised in a 1:1 ratio to the app or usual care.",
        "Random assignment to the intervention was done by computer.",
        "Twelve patients took part in a randomized crossover study of two diets.",
        "Seventy-four patients were divided at random into two groups.",
        "Each subject received both drugs in random order, one week apart.",
        "Sixty consecutive patients were randomized to the standard or modified procedure.",
    ],
)
def test_the_usual_rct_wordings_make_an_rct(text: str) -> None:
    assert design(text=text) == (D.RCT, "rct.text")


@pytest.mark.parametrize(
    "text",
    [
        "Larger randomized trials are needed to confirm these findings in 40 patients.",
        "Adverse events have been reported in randomized clinical trials; we studied 300 cases.",
        "A random sample of 500 households was surveyed.",
        "Biopsies from 42 randomly selected patients were reviewed.",
        "We studied 80 patients in a non-randomized comparison.",
        "Patients were not randomized; 60 patients chose their treatment.",
        "The 1,204 patients were randomly divided into a training set and a validation set.",
    ],
)
def test_randomization_not_stated_of_this_studys_allocation_is_not_an_rct(text: str) -> None:
    assert design(text=text)[0] is not D.RCT


def test_clinical_trial_type_with_randomized_and_a_comma_is_an_rct() -> None:
    text = "In this randomized, double-blind study, 64 patients received drug or placebo."
    assert design(publication_types=("Clinical Trial",), text=text) == (
        D.RCT,
        "rct.trial_type_randomized_text",
    )


def test_open_label_does_not_make_a_randomized_trial_nonrandomized() -> None:
    text = "This open-label, randomised trial enrolled 200 adults."
    assert design(text=text) == (D.RCT, "rct.text")


def test_a_double_blind_trial_without_randomization_is_a_nonrandomized_trial() -> None:
    text = "A double-blind comparison of two doses was given to 99 patients."
    assert design(text=text) == (D.NONRANDOMIZED_TRIAL, "nonrandomized_trial.text")


@pytest.mark.parametrize(
    "text",
    [
        "A reasonable body of clinical trial evidence supports light therapy for acne.",
        "Clinical trial design has evolved to enrich for progressive patients.",
        "This was an ancillary study to a clinical trial; 58 patients wore accelerometers.",
        "This was a post-hoc analysis of data from a prospective clinical trial of 40 patients.",
        "Baseline data were obtained from a substance use clinical trial in Cape Town (N = 65).",
        "Questionnaires were completed as part of an ongoing clinical trial on ankle fractures.",
        "Randomized, double-blind, placebo-controlled clinical trials suggest a benefit.",
    ],
)
def test_a_trial_this_study_only_mentions_makes_no_trial(text: str) -> None:
    assert design(text=text)[0] not in {D.RCT, D.NONRANDOMIZED_TRIAL}


@pytest.mark.parametrize(
    "text",
    [
        "In this prospective clinical trial, 30 patients received the implant.",
        "Ninety-five children were given cromolyn in double-blind, crossover studies.",
        "Forty patients were enrolled. Clinical trial registration: NCT01234567.",
        "This open-label study of 24 adults measured the drug's clearance.",
    ],
)
def test_a_trial_this_study_runs_is_a_trial(text: str) -> None:
    assert design(text=text) == (D.NONRANDOMIZED_TRIAL, "nonrandomized_trial.text")


@pytest.mark.parametrize(
    "text",
    [
        "Twelve patients with angina took the drug or a placebo before each treadmill test.",
        "Forty women were given a placebo tablet; forty others took sulpiride 50 mg.",
        "Ferritin rose in the iron group and fell in the placebo group (n = 20).",
        "Compared with placebo, the nap improved alertness in 30 shift workers.",
        "Placebo was administered to eight volunteers on the first day.",
    ],
)
def test_a_placebo_this_study_gives_makes_a_trial(text: str) -> None:
    assert design(text=text) == (D.NONRANDOMIZED_TRIAL, "nonrandomized_trial.text")


@pytest.mark.parametrize(
    "text",
    [
        "Suggestion shaped the placebo effect and the placebo response in 40 patients.",
        "Tranquilizers are noticed more often than stimulants, and placebos are taken for drugs.",
        "Sweat chloride of 128 subjects in the placebo groups of two drug trials was analysed.",
        "Placebo-controlled trials are needed in 200 patients with this disease.",
        "Outcomes of 300 patients were better than placebo studies had predicted.",
        "No placebo was given to the 50 patients of this cohort.",
    ],
)
def test_a_placebo_this_study_does_not_give_makes_no_trial(text: str) -> None:
    assert design(text=text)[0] is not D.NONRANDOMIZED_TRIAL


@pytest.mark.parametrize(
    "text",
    [
        "This quasi-experimental study gave 40 nurses a workshop; 40 others had none.",
        "In a quasi-experimental, within-subject crossover study, 30 officers slept less.",
        "Honey was given in a pretest-posttest design with a control group of 30 patients.",
        "Thirty infants formed a non-equivalent control group; 13 others smelled milk.",
    ],
)
def test_a_quasi_experiment_this_study_runs_is_a_trial(text: str) -> None:
    assert design(text=text) == (D.NONRANDOMIZED_TRIAL, "nonrandomized_trial.text")


@pytest.mark.parametrize(
    "text",
    [
        "A quasi-experimental study compared crashes in 200 towns before and after the law.",
        "This quasi-experimental interrupted time-series study counted 300 patients' falls.",
        "Quasi-experimental studies of 400 patients were included and appraised.",
        "This is a quasi-experimental test of the link between vaping and smoking in 300 adults.",
        "Scores of 50 students were compared in a pretest-posttest design.",
    ],
)
def test_a_natural_experiment_or_other_quasi_experiments_make_no_trial(text: str) -> None:
    assert design(text=text)[0] is not D.NONRANDOMIZED_TRIAL


def test_stated_randomization_beats_observational_mesh_on_a_human_record() -> None:
    record = {
        "mesh_terms": ("Humans", "Prospective Studies"),
        "text": "DESIGN: Prospective, randomized study. Patients were randomly assigned to arms.",
    }
    assert design(**record) == (D.RCT, "rct.text_over_mesh")


def test_stated_randomization_on_an_animals_only_record_stays_animal() -> None:
    record = {"mesh_terms": ("Animals", "Rats"), "text": "Rats were randomized to two diets."}
    assert design(**record) == (D.ANIMAL, "animal.mesh")


def test_random_allocation_mesh_for_random_sampling_is_not_an_rct() -> None:
    record = {
        "mesh_terms": ("Humans", "Random Allocation", "Cross-Sectional Studies"),
        "text": "We surveyed 900 randomly selected patients.",
    }
    assert design(**record) == (D.OBSERVATIONAL, "observational.mesh")


def test_random_allocation_mesh_alone_makes_no_trial() -> None:
    record = {"mesh_terms": ("Humans", "Random Allocation"), "text": "We studied 900 patients."}
    assert design(**record)[0] is D.OBSERVATIONAL


def test_random_allocation_mesh_with_allocation_in_the_text_is_an_rct() -> None:
    record = {
        "mesh_terms": ("Humans", "Random Allocation"),
        "text": "Patients were randomly allocated to two groups.",
    }
    assert design(**record) == (D.RCT, "rct.mesh")


@pytest.mark.parametrize(
    "text",
    [
        "Electronic databases were searched from inception to 2020 for trials of statins.",
        "A literature search of PubMed, Embase and Scopus was performed.",
        "We searched MEDLINE and CENTRAL for randomized trials of aspirin.",
        "Studies were pooled with a random-effects meta-analysis.",
    ],
)
def test_a_systematic_search_makes_a_systematic_review(text: str) -> None:
    assert design(text=text) == (D.SYSTEMATIC_REVIEW, "systematic_review.text")


def test_a_narrative_review_title_beats_a_literature_search() -> None:
    record = {
        "title": "Toxic confounders of brain death: a narrative review",
        "text": "A literature search of PubMed was performed.",
    }
    assert design(**record) == (D.NARRATIVE_REVIEW, "narrative_review.text")


@pytest.mark.parametrize(
    "title",
    [
        "Guidelines for the management of atrial fibrillation",
        "2020 ESC guidelines for the diagnosis of heart failure",
        "Management of hepatocellular carcinoma: a consensus statement",
        "Position statement on exercise in pregnancy",
        "Swiss recommendations for the follow-up of long COVID",
    ],
)
def test_a_title_that_is_a_guideline_makes_a_guideline(title: str) -> None:
    assert design(title=title) == (D.GUIDELINE, "guideline.title")


@pytest.mark.parametrize(
    "title",
    [
        "Adherence to guidelines in heart failure clinics",
        "Impact of the 2015 guidelines on prescribing",
        "Guideline-concordant care in a cohort of older women with breast cancer",
        "Are the asthma guidelines followed in primary care?",
        "Ultrasound guidance versus palpation for arterial puncture",
    ],
)
def test_a_title_about_guidelines_is_not_a_guideline(title: str) -> None:
    assert design(title=title, text="We reviewed 412 patients' records.")[0] is not D.GUIDELINE


def test_cell_biology_assays_make_in_vitro_work() -> None:
    text = (
        "Knockdown of GENE1 by siRNA reduced proliferation of bladder cancer cells in "
        "CCK-8 and colony formation assays; western blot showed lower protein levels."
    )
    assert design(text=text) == (D.IN_VITRO, "in_vitro.text_assays")


@pytest.mark.parametrize(
    "text",
    [
        "The estimator recovered the true parameters from simulated datasets of 500 samples.",
        "Power was estimated in 1,000 simulated trials of each design.",
    ],
)
def test_simulated_data_make_computational_work(text: str) -> None:
    assert design(text=text) == (D.COMPUTATIONAL, "computational.text")


@pytest.mark.parametrize(
    "text",
    [
        "Hydrogen evolved under simulated sunlight on the doped titania films.",
        "Sediment released nitrogen during a simulated tidal cycle in the flume.",
    ],
)
def test_a_simulated_condition_of_an_experiment_is_no_computational_work(text: str) -> None:
    assert design(text=text)[0] is not D.COMPUTATIONAL


def test_an_economic_model_is_computational() -> None:
    text = "A Markov model estimated costs and QALYs of screening; the ICER was 20,000 per QALY."
    assert design(text=text) == (D.COMPUTATIONAL, "computational.economic_model")


def test_an_economic_evaluation_on_patient_data_is_observational() -> None:
    text = "Costs and quality-adjusted life years were compared between the two wards."
    assert design(text=text) == (D.OBSERVATIONAL, "observational.economic")


def test_a_commentary_is_not_research() -> None:
    record = make_record(text="In this commentary, we argue that trial registries need reform.")
    found = classify_design(record)
    assert (found.design, found.rule, found.is_research) == (D.OTHER, "other.commentary", False)
    assert classify_evidence(record, found).evidence_type is EvidenceType.OTHER


@pytest.mark.parametrize(
    "title",
    [
        'Comment on "Statins and dementia in a national cohort"',
        "Commentary on: Safety of rivaroxaban after knee surgery in 1,204 patients",
        "Reply to Smith et al.",
        "Reply: long-term outcomes of a randomized trial of early surgery",
        "Re: A prospective cohort of 312 patients with sepsis",
        'Letter to the editor regarding "Randomized trial of drug A in mice"',
        "Letter: vision therapy after mild brain injury",
        'Response to the letter re "CPAP therapy in 40 patients"',
        "Response to: Regarding the article on COVID-19 in children",
        "Authors' reply to letters on the case-control study",
        'A commentary on "Effects of parecoxib: a randomized controlled trial"',
        "Some Concerns About a Randomized Controlled Trial of plank exercises",
    ],
)
def test_a_letter_comment_or_reply_by_its_title_is_not_research(title: str) -> None:
    # the quoted article's design words (cohort, randomized, mice) are not this record's
    text = "We thank the authors. In their cohort, 312 patients were randomly assigned."
    found = classify_design(make_record(title=title, text=text))
    assert (found.design, found.rule, found.is_research) == (D.OTHER, "other.commentary", False)


@pytest.mark.parametrize(
    "title",
    [
        "Correction to: Injection technique education in 300 patients with diabetes",
        'Corrigendum to "Proteomic changes in a rat model of stroke"',
        "Erratum.",
        "CORRIGENDUM.",
        "Erratum to: Baseline characteristics of participants in a randomized trial",
        "Retraction: Evaluation of an ultrasound-guided block, a randomized study",
        'Retracted: "Crestal bone changes with single implant overdentures"',
        "Expression of Concern: Molecular mechanism of paraoxonase-2 in mice",
        "Correction: Accuracy of a model for predicting preeclampsia",
    ],
)
def test_a_notice_about_another_article_by_its_title_is_not_research(title: str) -> None:
    text = "In the original article, 120 patients were randomly assigned; one table was wrong."
    found = classify_design(make_record(title=title, text=text))
    assert (found.design, found.rule, found.is_research) == (D.OTHER, "other.notice", False)


@pytest.mark.parametrize(
    "title",
    [
        "Correction of hyponatremia in 120 patients randomly assigned to two infusion rates",
        "Retraction of the gingiva after two randomized brushing regimens",
        "Correction for multiple testing in a randomized trial of 120 patients",
    ],
)
def test_research_titles_that_start_like_a_notice_stay_research(title: str) -> None:
    text = "In all, 120 patients were randomly assigned to two groups."
    assert design(title=title, text=text) == (D.RCT, "rct.text")


@pytest.mark.parametrize(
    "title",
    [
        "Response to neoadjuvant chemotherapy in 120 patients with bladder cancer",
        "Responses to treatment in a prospective cohort of children with asthma",
        "Letter writing by physicians: a survey of 300 residents",
        "Commenting on drafts: a survey of 200 authors",
        "Responses to the TRH and T3 suppression tests in a cohort of 40 subjects",
        "Response to radiotherapy and chemotherapy in 80 patients with head and neck cancer",
    ],
)
def test_research_titles_that_start_like_a_letter_stay_research(title: str) -> None:
    text = "We studied a prospective cohort; 120 patients were followed for two years."
    assert design(title=title, text=text)[0] is D.OBSERVATIONAL


@pytest.mark.parametrize(
    "text",
    [
        "The European Council has produced these newborn life support guidelines, which are "
        "based on the 2020 consensus.",
        "These European Council education guidelines are based on the 2020 consensus.",
        "These guidelines cover the management of term and preterm infants.",
        "This guideline is intended for clinicians who treat adults with asthma.",
        "This section provides guidelines on the management of critically ill children.",
    ],
)
def test_an_abstract_that_calls_itself_a_guideline_makes_a_guideline(text: str) -> None:
    assert design(title="Newborn life support", text=text) == (D.GUIDELINE, "guideline.text")


@pytest.mark.parametrize(
    "text",
    [
        "Our work provides very useful guidelines for making white diodes.",
        "This included standardisation of local guidelines and education for 40 staff.",
        "These guidelines were followed in 80% of 312 patients, a retrospective cohort.",
        "These guideline-concordant treatments were given to 312 patients in a cohort.",
    ],
)
def test_guidelines_the_abstract_only_mentions_make_no_guideline(text: str) -> None:
    assert design(title="Care of newborns", text=text)[0] is not D.GUIDELINE


@pytest.mark.parametrize(
    "text",
    [
        "We studied the effects of dexamethasone on hormone release in the green monkey.",
        "We studied growing rats given a high-phosphate diet for four weeks.",
        "Here, we studied the molecular mechanisms of nephritis in MRL/lpr mice.",
    ],
)
def test_we_studied_an_effect_in_animals_is_an_animal_study(text: str) -> None:
    assert design(text=text) == (D.ANIMAL, "animal.text_species")


@pytest.mark.parametrize(
    "text",
    [
        "We studied 64 cases of bacterial endocarditis that required surgery.",
        "We studied the lungs of two infants who died after treatment.",
        "To assess this technique, we studied 42 hospitalized patients on antibiotics.",
    ],
)
def test_we_studied_people_is_observational(text: str) -> None:
    assert design(text=text) == (D.OBSERVATIONAL, "observational.text")


def test_a_study_that_argues_from_its_own_data_is_not_a_commentary() -> None:
    text = "We argue that work centrality matters. We surveyed 1,200 parents."
    assert design(text=text)[0] is D.OBSERVATIONAL


@pytest.mark.parametrize(
    "text",
    [
        "A cross sectional study was carried out on sputa of 120 patients.",
        "Follow up study of mortality over 25 years in 18,133 civil servants.",
        "A longitudinal design was used with two waves of measurement in nursing staff.",
        "A consecutive series of 500 implants was compared with a second series.",
        "Ninety matched case control pairs were drawn from the practice lists.",
    ],
)
def test_design_words_without_their_hyphen_are_read(text: str) -> None:
    assert design(text=text) == (D.OBSERVATIONAL, "observational.text")


def test_records_split_at_random_into_counted_data_sets_are_no_trial() -> None:
    text = (
        "Radiomic features were extracted from CT images of 74 patients, and the dataset was "
        "randomly divided into training (n = 51) and test (n = 23) sets."
    )
    assert design(text=text)[0] is not D.RCT


@pytest.mark.parametrize(
    "text",
    [
        "A genome-wide CRISPR knockout screen in HeLa cells identified genes of drug resistance.",
        "Knockout of GENE1 by CRISPR/Cas9 lowered the growth of the edited cells.",
        "Drought tolerance rose in transgenic tobacco plants overexpressing GENE1.",
    ],
)
def test_knockout_and_transgenic_name_no_species(text: str) -> None:
    assert design(text=text)[0] is not D.ANIMAL


def test_a_knockout_mouse_is_named_by_its_species() -> None:
    text = "Knockout mice lacking GENE1 developed colitis after dextran sulfate."
    assert design(text=text) == (D.ANIMAL, "animal.text_species")


@pytest.mark.parametrize(
    "text",
    [
        "Male zebra finches learned their song under white noise.",
        "We monitored starlings across three photoperiods with diffusion imaging.",
    ],
)
def test_songbirds_of_the_laboratory_are_species(text: str) -> None:
    assert design(text=text) == (D.ANIMAL, "animal.text_species")


@pytest.mark.parametrize(
    "text",
    [
        "The ecological risk of heavy metals in the river sediments was high at two sites.",
        "Seedlings of three tree species differed in their ecological characteristics.",
    ],
)
def test_ecology_is_no_ecological_study(text: str) -> None:
    assert design(text=text)[0] is not D.OBSERVATIONAL


def test_an_ecological_study_is_observational() -> None:
    text = "An ecological study related prefecture-level suicide rates to unemployment."
    assert design(text=text) == (D.OBSERVATIONAL, "observational.text")


def test_a_microsimulation_is_computational() -> None:
    text = "We built a microsimulation of the screening programme under three policies."
    assert design(text=text) == (D.COMPUTATIONAL, "computational.text")


@pytest.mark.parametrize(
    "label", ["AVAILABILITY AND IMPLEMENTATION", "AVAILABILITYAND IMPLEMENTATION", "Availability"]
)
def test_a_software_paper_by_its_heading_is_computational(label: str) -> None:
    record = make_record(
        abstract=(
            AbstractSection(label="SUMMARY", text="GENETOOL finds co-varying residues."),
            AbstractSection(label=label, text="GENETOOL is free software at example.org."),
        )
    )
    found = classify_design(record)
    assert (found.design, found.rule) == (D.COMPUTATIONAL, "computational.software")


@pytest.mark.parametrize(
    "title",
    [
        "GENETOOL: a web application to detect functional sites in proteins.",
        "MATCHR: a flexible R package for case-control matching.",
        "Pooling single-arm studies in a meta-analysis of randomised trials: a simulation study.",
        "Lockdown as a last resort in an epidemic rebound: a modelling study.",
    ],
)
def test_titles_that_name_computational_work(title: str) -> None:
    assert design(title=title) == (D.COMPUTATIONAL, "computational.title")


def test_a_title_naming_bench_work_beside_docking_is_laboratory_work() -> None:
    title = "Synthesis, in vitro evaluation and molecular docking of novel triazoles."
    text = "Compound 4 inhibited acetylcholinesterase in vitro; docking placed it in the gorge."
    assert design(title=title, text=text) == (D.IN_VITRO, "in_vitro.text")


@pytest.mark.parametrize(
    "text",
    [
        "Extract B inhibited the viral protease (IC50 = 6.7 μg/mL); docking simulations agreed.",
        "Enzyme inhibition assays ranked the flavonoids; molecular docking explained the order.",
    ],
)
def test_bench_measures_without_people_are_laboratory_work(text: str) -> None:
    assert design(text=text) == (D.IN_VITRO, "in_vitro.text_assays")


def test_bench_measures_of_patients_samples_stay_a_study_of_people() -> None:
    text = "In 40 patients with depression, the IC50 of platelet monoamine oxidase was raised."
    assert design(text=text) == (D.OBSERVATIONAL, "observational.human_participants")


def test_an_open_source_device_in_a_title_names_no_software_study() -> None:
    title = "Motivations and self-reported outcomes of users of open-source insulin delivery."
    text = "We surveyed 897 users of the systems in 35 countries."
    assert design(title=title, text=text) == (D.OBSERVATIONAL, "observational.text")


def test_regression_models_of_people_are_observational() -> None:
    text = (
        "Using biomarker data on adults from a national panel, we fit "
        "multinomial logistic regression models of cognition on HbA1c."
    )
    assert design(text=text) == (D.OBSERVATIONAL, "observational.regression")


def test_regression_models_without_people_make_no_observational_study() -> None:
    text = "Phosphorus retention in five soils was related to iron oxides by linear regression."
    assert design(text=text)[0] is not D.OBSERVATIONAL


def test_a_sample_of_volunteers_are_people_taking_part() -> None:
    text = "Brain glucose uptake was imaged during a memory task in a sample of healthy volunteers."
    assert design(text=text) == (D.OBSERVATIONAL, "observational.human_participants")


@pytest.mark.parametrize(
    "text",
    [
        "Fascin was silenced by siRNA in mouse pituitary AtT-20 cells; Transwell assays and "
        "western blotting followed.",
        "Rat bone marrow-derived mesenchymal stem cells were cultured on the scaffold.",
        "Glucagon raised ketogenesis by isolated rat hepatocytes.",
    ],
)
def test_cells_taken_from_a_species_are_laboratory_work(text: str) -> None:
    assert design(text=text)[0] is D.IN_VITRO


def test_cells_beside_the_animals_they_came_from_stay_an_animal_study() -> None:
    text = "Mouse embryonic fibroblasts were cultured, and knockout mice were fed a high-fat diet."
    assert design(text=text) == (D.ANIMAL, "animal.text_species")


@pytest.mark.parametrize(
    "text",
    [
        "Numerous chicken bone fragments were found at colonoscopy of a 23-year-old man.",
        "Raw chicken meat from five markets was tested for Salmonella by culture.",
    ],
)
def test_meat_and_bones_as_food_name_no_species_studied(text: str) -> None:
    assert design(text=text)[0] is not D.ANIMAL


@pytest.mark.parametrize(
    "text",
    [
        "We created a library of 300 synthetic cases and compared the network with two experts.",
        "The reconstruction framework is written in Julia and reuses existing packages.",
        "The proposed models are implemented in Python.",
    ],
)
def test_synthetic_data_and_software_in_a_language_are_computational(text: str) -> None:
    assert design(text=text) == (D.COMPUTATIONAL, "computational.text")


def test_a_country_after_implemented_in_names_no_language() -> None:
    text = "The programme was implemented in Canada across 120 clinics."
    assert design(text=text)[0] is not D.COMPUTATIONAL


@pytest.mark.parametrize(
    "text",
    [
        "Faeces of Murrah buffaloes were sampled at three stages of the oestrous cycle.",
        "Milk of forty lactating camels was analysed for lactoferrin.",
        "Serum of 60 donkeys was tested for antibodies against Toxoplasma gondii.",
    ],
)
def test_livestock_of_other_regions_are_species_studied(text: str) -> None:
    assert design(text=text) == (D.ANIMAL, "animal.text_species")


def test_buffalo_the_city_names_no_species() -> None:
    text = "Faculty at the University at Buffalo were surveyed about their teaching."
    assert design(text=text)[0] is not D.ANIMAL


@pytest.mark.parametrize(
    "text",
    [
        "FDG-PET was performed in 15 presymptomatic mutation carriers and 20 non-carriers.",
        "Fourteen unaffected siblings underwent the same MRI protocol.",
        "Reaction times were recorded in 25 age-matched healthy controls.",
    ],
)
def test_carriers_siblings_and_healthy_controls_are_people_taking_part(text: str) -> None:
    assert design(text=text) == (D.OBSERVATIONAL, "observational.human_participants")


def test_a_nonrandomized_cohort_study_is_observational_not_a_trial() -> None:
    text = "This was a multicentre, nonrandomized prospective cohort study of 179 patients."
    assert design(text=text) == (D.OBSERVATIONAL, "observational.text")


def test_a_nonrandomized_trial_stays_a_trial() -> None:
    text = "In this nonrandomized open trial, 40 patients received the new dressing."
    assert design(text=text) == (D.NONRANDOMIZED_TRIAL, "nonrandomized_trial.text")


def test_an_assay_beside_a_simulation_is_laboratory_work() -> None:
    text = (
        "Binding to G-quadruplex DNA was studied with a FRET melting assay and molecular "
        "dynamics simulations."
    )
    assert design(text=text) == (D.IN_VITRO, "in_vitro.text_assays")


def test_a_simulation_without_an_assay_stays_computational() -> None:
    text = "Binding to G-quadruplex DNA was studied with molecular dynamics simulations."
    assert design(text=text) == (D.COMPUTATIONAL, "computational.text")

"""Case reports, narrative reviews and Latin square trials from text alone: synthetic
twins of the real records in test_design_golden.py, one class of wording per case."""

from __future__ import annotations

import pytest

from biomcp.domain.design import StudyDesign, classify_design
from biomcp.domain.design_reports import case_title, narrative_review, states_case
from biomcp.domain.records import AbstractSection
from tests.support.builders import make_record

pytestmark = pytest.mark.unit

D = StudyDesign


def design(title: str = "A study of something", text: str = "") -> tuple[StudyDesign, str]:
    found = classify_design(
        make_record(title=title, text=text) if text else make_record(title=title)
    )
    return found.design, found.rule


@pytest.mark.parametrize(
    "title",
    [
        "Splenic rupture in infectious mononucleosis: a case report.",
        "Splenic rupture in infectious mononucleosis. Report of a case.",
        "Hyperosmolar diabetes presenting as urinary retention: report of three cases.",
        "[Coronary occlusion and arsenic poisoning. Apropos of 2 operated cases].",
        "Torsion of the spleen in a five-and-a-half-month-old infant.",
        "Orbital abscess of dental origin in a 7-Year-Old Girl.",
        "Thiamine dependency in a patient with congenital lactic acidosis.",
        "Polycystic kidney disease of early infancy in two sisters.",
        "Scintiscans of two siblings with tumoral calcinosis.",
        "A new variant mucolipidosis: biochemical investigations on two siblings.",
        "A case of central Horner syndrome after stroke.",
        "Endobronchial lipoma: case report and review of the literature.",
        "[Case of complete atrioventricular block].",
        "Case with an unusual course of sarcoidosis.",
        "[Apropos of a case of giant diverticulum of the oesophagus].",
        "Effects of propranolol in a case of orthostatic hypotension.",
        "Chronic vasculitis: a histologic finding in a case of erythema elevatum diutinum.",
    ],
)
def test_a_title_that_names_a_case_makes_a_case_report(title: str) -> None:
    assert design(title=title) == (D.CASE_REPORT, "case_report.title")


@pytest.mark.parametrize(
    "title",
    [
        "Early predictors of late-onset ADHD in a child and adolescent cohort.",
        "Hospital costs in a patient population with heart failure.",
        "MRI-guided prostate biopsy in a patient group with PI-RADS 4 and 5 targets.",
        "A case for screening all newborns.",
        "Making the case for screening all newborns.",
        "Case-control study of smoking and stroke.",
        "Case studies of nurse-led clinics in three regions.",
        "Two case-control studies of smoking and stroke.",
        "Salmonellosis in children with cancer: review of 42 cases.",
    ],
)
def test_a_title_about_a_group_or_an_argument_is_not_a_case_report(title: str) -> None:
    assert not case_title(title)


@pytest.mark.parametrize(
    "text",
    [
        "A 25-year-old diabetic man who was admitted with ketoacidosis showed ECG changes.",
        "An elderly woman with macroglobulinemia developed repeated severe epistaxis.",
        "A patient with biopsy-proven papular mucinosis, plus a paraproteinemia, is described.",
        "Reported is a case of septicemia following a barium enema. It is the fourth such case.",
        "Three patients with a gas-filled appendix and acute abdominal pain are described.",
        "Two new cases of ectopic vas deferens are reported. Six earlier cases are reviewed.",
        "Fatal septicemia due to an unidentified rod developed in a 60-year-old alcoholic.",
        "We herein describe a man with septicemia after a barium enema.",
        "We hereby report a rare case of septicemia after a barium enema.",
        "This article presents and discusses a case of septicemia after a barium enema.",
        "The present report describes a patient with septicemia after a barium enema.",
        "A family is presented in which 6 of 8 members had septicemia after a barium enema.",
        "We report two siblings with septicemia after a barium enema.",
        "Septicemia after a barium enema: report of a new family.",
    ],
)
def test_an_abstract_about_one_patient_a_handful_or_a_family_makes_a_case_report(text: str) -> None:
    assert design(title="Septicemia and fistula", text=text) == (
        D.CASE_REPORT,
        "case_report.text",
    )


@pytest.mark.parametrize(
    "text",
    [
        "A patient with hypertension should be treated before surgery. Diuretics are first.",
        "A retrospective study of 88 cases of renal cell carcinoma is presented.",
        "A case series of 40 patients with burns is presented.",
        "In the case of a 360-minute exposure, diuresis fell by 30 per cent.",
        "We also describe the use of a video laryngoscope in the prone position.",
        "This article presents a model of care for patients with septicemia.",
        "We report a new family of copper complexes that glow when crushed.",
        "A new gene family is described in the yeast genome.",
        "Families of 200 patients with septicemia were interviewed.",
    ],
)
def test_patients_in_general_a_series_or_molecules_are_not_a_case_report(text: str) -> None:
    assert not states_case(text)


@pytest.mark.parametrize(
    "label", ["CASE PRESENTATION", "CASE DESCRIPTION", "CASE REPORT", "CASE SUMMARY"]
)
def test_a_section_headed_as_a_case_makes_a_case_report(label: str) -> None:
    # The review words of the second section would otherwise make a narrative review.
    sections = (
        AbstractSection(label="BACKGROUND", text="Septicemia after a barium enema is rare."),
        AbstractSection(
            label=label,
            text="We report a child who developed septicemia after the enema and "
            "review the genetic findings of the literature.",
        ),
    )
    found = classify_design(make_record(title="Septicemia and fistula", abstract=sections))
    assert (found.design, found.rule) == (D.CASE_REPORT, "case_report.heading")


@pytest.mark.parametrize(
    "sections",
    [
        (
            AbstractSection(
                label="CASE VIGNETTE",
                text="A 75-year-old man undergoes an evaluation for fatigue and anemia.",
            ),
        ),
        (
            AbstractSection(
                label="METHODS",
                text="We studied the case presentation of 200 patients with septicemia.",
            ),
        ),
    ],
)
def test_a_teaching_vignette_or_case_words_in_a_sentence_are_no_case_heading(
    sections: tuple[AbstractSection, ...],
) -> None:
    found = classify_design(make_record(title="Septicemia and fistula", abstract=sections))
    assert found.design is not D.CASE_REPORT


def test_a_section_that_opens_on_one_patient_after_its_label_is_a_case_report() -> None:
    sections = (
        AbstractSection(label="DESCRIPTION", text="A 10-year-old boy developed septicemia."),
    )
    found = classify_design(make_record(title="Septicemia and fistula", abstract=sections))
    assert (found.design, found.rule) == (D.CASE_REPORT, "case_report.text")


def test_a_case_in_an_animal_is_an_animal_study() -> None:
    text = "A case of azotaemia is described in a 12 year old pony with an obstructed oesophagus."
    assert design(title="Azotaemia in a pony", text=text)[0] is D.ANIMAL


@pytest.mark.parametrize(
    "text",
    [
        "The present review aims at identifying advances in microneedle manufacture.",
        "Our review mainly focuses on how mucus and microbes interact in colitis.",
        "Here, we present a brief overview of the current understanding of repair.",
        "We present here an overview of current treatments for symblephara.",
        "This perspective presents an overview of the recent developments in probes.",
        "Herein, we highlight recent advances in engineering the microbe.",
        "In this Minireview, we outline progress in soft machines.",
        "This mini-review aims to provide updates on biomarkers of rejection.",
        "This paper reviews the current evidence linking the oral microbiome to disease.",
        "Here, we discuss recent progress in the use of concurrent EEG-fMRI.",
        "In this article, we will review recent evidence for the use of NOACs in stroke.",
    ],
)
def test_a_review_in_its_own_words_is_a_narrative_review(text: str) -> None:
    assert narrative_review("Mucus and microbes", text)


@pytest.mark.parametrize(
    "text",
    [
        "Our review of the medical records of 40 patients found 12 relapses.",
        "The study was approved by our review board.",
        "An overview of the patients is given in Table 1.",
        "Here we show that the kinase binds its substrate.",
        "Here, we highlight a new mechanism of resistance in 12 cell lines.",
        "Here we present recent data from our cohort of 40 patients.",
        "We discuss our results in the light of current knowledge.",
    ],
)
def test_records_boards_and_findings_are_not_a_review(text: str) -> None:
    assert not narrative_review("Mucus and microbes", text)


def test_an_abstract_opening_on_an_opinion_statement_is_a_narrative_review() -> None:
    # The structure of reviews in the "Current Treatment Options" journals. The 240 patients
    # of its text would otherwise make it an observational study.
    sections = (
        AbstractSection(
            label="OPINION STATEMENT",
            text="Acute lymphoblastic leukemia in adults has poor outcomes. In a trial of 240 "
            "patients who were treated with chemotherapy, relapse was frequent.",
        ),
    )
    found = classify_design(make_record(title="Transplant in adults", abstract=sections))
    assert (found.design, found.rule) == (D.NARRATIVE_REVIEW, "narrative_review.text")


def test_an_opinion_statement_in_a_sentence_is_no_review_heading() -> None:
    text = "The society issued an opinion statement: 240 patients were screened for the trial."
    assert not narrative_review("Screening", text)


@pytest.mark.parametrize(
    "text",
    [
        "METHODS: A non-systematic literature review was performed using Medline and Embase.",
        "A narrative review of current literature was performed based on PubMed, Scopus and "
        "Google Scholar.",
        "Narrative review based on PubMed and EMBASE indexed articles from 2000 to 2020.",
        "The present narrative review summarizes meta-analyses of stroke in COVID-19.",
    ],
)
def test_a_narrative_review_that_searched_databases_stays_narrative(text: str) -> None:
    # Each text also names a database search or meta-analyses, which alone read as systematic.
    assert design(text=text) == (D.NARRATIVE_REVIEW, "narrative_review.text")


@pytest.mark.parametrize(
    "text",
    [
        "A recent narrative review of drug monitoring claims benefits. We searched MEDLINE and "
        "Embase for trials.",
        "Narrative reviews have examined diets. We searched MEDLINE and Embase for trials.",
        "One non-systematic review suggested benefit. We searched MEDLINE and Embase for trials.",
    ],
)
def test_a_narrative_review_the_abstract_cites_leaves_a_systematic_search(text: str) -> None:
    assert design(text=text)[0] is D.SYSTEMATIC_REVIEW


def test_a_title_that_reviews_a_series_is_not_a_narrative_review() -> None:
    assert not narrative_review("Ewing's sarcoma (a review of 195 cases).", "")
    assert narrative_review("Ewing's sarcoma: a review.", "")


@pytest.mark.parametrize(
    "text",
    [
        "Subjects were tested in a double blind procedure with treatments distributed "
        "according to a Latin square design.",
        "Each volunteer took three drugs and placebo in a double-blind latin-square cross-over "
        "design.",
    ],
)
def test_a_latin_square_design_in_people_is_an_rct(text: str) -> None:
    assert design(text=text) == (D.RCT, "rct.text_latin_square")


def test_a_latin_square_design_in_animals_is_an_animal_study() -> None:
    text = "Ten beagles were fed four diets in a replicated 4 x 4 Latin square design."
    assert design(text=text)[0] is D.ANIMAL

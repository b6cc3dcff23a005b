"""Study design on real records: each class of error, on a handful of real records
read by PMID from ../shared/data (skipped when the folder is absent). Nothing of the records is
copied here; their synthetic twins are in test_design.py.

"Text only" is the record as a fresh EDAT sync sees it before MEDLINE indexing: publication
types and MeSH emptied. The designs below were decided by reading each title and abstract.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import replace
from functools import cache

import pytest

from biomcp.adapters.entrez.pubmed_xml import parse_pubmed_articles
from biomcp.domain.design import StudyDesign, classify_design
from biomcp.domain.design_text import has_species, research_sentences, states_human_participants
from biomcp.domain.records import PubMedRecord
from tests.conftest import shared_data_path
from tests.support.pubmedqa import load_pubmedqa

pytestmark = pytest.mark.unit

D = StudyDesign
UPDATE_2021 = "pubmed21n1298.xml.gz"
BASELINE_1979 = "pubmed20n0014.xml.gz"
_PMID = re.compile(rb"<PMID[^>]*>(\d+)</PMID>")


@cache
def _ncbi_file(name: str) -> dict[str, PubMedRecord]:
    """The records of one NCBI file that this module names, by PMID."""
    wanted = {pmid for (file, pmid) in _WANTED if file == name}
    data = gzip.decompress(shared_data_path("ncbi_files", name).read_bytes())
    kept = []
    for chunk in data.split(b"</PubmedArticle>"):
        start = chunk.find(b"<PubmedArticle>")
        found = _PMID.search(chunk, start) if start >= 0 else None
        if found and found.group(1).decode() in wanted:
            kept.append(chunk[start:] + b"</PubmedArticle>")
    body = b"<PubmedArticleSet>" + b"".join(kept) + b"</PubmedArticleSet>"
    return {r.pmid: r for r in parse_pubmed_articles(body).records}


@cache
def _pubmedqa() -> dict[str, PubMedRecord]:
    return {r.pmid: r for r in load_pubmedqa(shared_data_path("pubmedqa", "ori_pqal.json"))}


def _record(file: str, pmid: str) -> PubMedRecord:
    records = _pubmedqa() if file == "pubmedqa" else _ncbi_file(file)
    assert pmid in records, f"PMID {pmid} not in {file}"
    return records[pmid]


def _text_only(record: PubMedRecord) -> PubMedRecord:
    return replace(record, publication_types=(), mesh=())


# (file, PMID) -> (design from text only, rule)
ANIMAL_TRIALS = {
    (UPDATE_2021, "32090497"): "rats randomly divided into three groups",
    (UPDATE_2021, "33989079"): "purpose-bred beagles randomized",
    (UPDATE_2021, "33975039"): "broilers randomly divided into treatments",
    (UPDATE_2021, "33959763"): "goats randomly assigned",
    (UPDATE_2021, "33621858"): "mice randomly divided into three groups",
    (BASELINE_1979, "402658"): "randomized and blind design in rhesus monkeys",
    ("pubmedqa", "17462393"): "twelve hypertrophied pig hearts perfused in a random order",
}
MENDELIAN = {
    (UPDATE_2021, "33020596"): "phenome-wide Mendelian randomisation",
    (UPDATE_2021, "34015765"): "bi-directional Mendelian randomization",
    (UPDATE_2021, "34095735"): "sleep and diet, Mendelian randomization",
}
RCT_WORDINGS = {
    (UPDATE_2021, "33685839"): "multi-center, randomized, double-blind",
    (UPDATE_2021, "33436300"): "a randomized, sham-controlled trial",
    (UPDATE_2021, "33789133"): "double-blind, randomised design",
    (UPDATE_2021, "32725500"): "randomly allocated doses",
    (BASELINE_1979, "401194"): "this randomized, double-blind study",
    (BASELINE_1979, "406098"): "in a randomized, double-blind, crossover study",
    (BASELINE_1979, "412099"): "randomized, double-blind, placebo-controlled",
    (BASELINE_1979, "422738"): "randomized crossover design",
}
ABOUT_GUIDELINES = {
    (UPDATE_2021, "33453308"): "receipt of guideline-recommended surveillance in a cohort",
    (UPDATE_2021, "33823082"): "adherence to NCCN testing guidelines",
    (UPDATE_2021, "34015514"): "survival benefit of guideline-concordant radiation",
    (UPDATE_2021, "34004478"): "compliance with guidelines, chart review",
    (UPDATE_2021, "33894280"): "before and after the 2015 NICE guideline, cohort",
}
GUIDELINES = {
    (UPDATE_2021, "33314233"): "Australian recommendations: a consensus statement",
    (UPDATE_2021, "34092054"): "evidence based guidelines for H. pylori",
    (UPDATE_2021, "33941460"): "AFU guidelines for Peyronie's disease",
    (UPDATE_2021, "34091456"): "Swiss recommendations for long COVID",
}
LAB_WORK = {
    (UPDATE_2021, "33428788"): "gallbladder cancer cells, apoptosis assays",
    (UPDATE_2021, "33419582"): "lncRNA in laryngeal carcinoma cells",
    (UPDATE_2021, "33140469"): "myoblast proliferation",
}
COMMENTARIES = {(UPDATE_2021, "33496060"): "this commentary highlights claims"}
# Letters, comments and replies typed "Journal Article" only: the title names the article they
# answer, whose design words (a cohort, a review, rats) are not theirs.
CORRESPONDENCE = {
    (UPDATE_2021, "33649758"): "Commentary on: The Use of DCE-MRI ...: A Study in 245 ...",
    (UPDATE_2021, "33927100"): "Response to: Flexible Intramedullary Nailing ...: A Systematic...",
    (UPDATE_2021, "34049246"): "Letter to the editor RE: Reuling et al., 2018 ...",
    (UPDATE_2021, "34075363"): "Re: Patrick Lewicki, ... Estimating the Impact of COVID-19 ...",
    (UPDATE_2021, "34091570"): "Commentary on: Acute Hindfoot Nailing ...: A systematic review",
    (UPDATE_2021, "34096528"): "Letter to the Editor: ... Do Relaxation Exercises Decrease ...",
}
# "We studied the effects of X" in animals or on a mechanism: not an observational study.
WE_STUDIED_AN_EFFECT = {
    (UPDATE_2021, "34091806"): "we studied the molecular mechanisms ... MRL/lpr mice, HK-2 cells",
    (BASELINE_1979, "409695"): "We studied the effects of estramustine ... in the green monkey",
    (BASELINE_1979, "426059"): "we studied growing rats given a high-phosphate diet",
}
# Guidelines whose abstract says so of itself, under a title that does not.
GUIDELINE_TEXTS = {
    (UPDATE_2021, "34093078"): "...has produced these newborn life support guidelines",
    (UPDATE_2021, "34093075"): "These European Resuscitation Council education guidelines...",
    (UPDATE_2021, "34093076"): "These European Resuscitation Council Ethics guidelines provide",
}
# PubMedQA: MeSH "Prospective Studies" (or another observational descriptor) and Humans, and
# an abstract that states the randomization.
STATED_RANDOMIZATION_OVER_MESH = {
    ("pubmedqa", "27491658"): "consecutive TAVI patients were randomized",
    ("pubmedqa", "19913785"): "prospective, randomized study",
    ("pubmedqa", "9483814"): "prospective randomised study, allocated at random",
    ("pubmedqa", "12407608"): "patients were randomly assigned",
}
# PubMedQA: MeSH "Random Allocation" used for random sampling.
RANDOM_SAMPLING = {
    ("pubmedqa", "9199905"): "randomly selected biopsies",
    ("pubmedqa", "18537964"): "randomly selected patients",
    ("pubmedqa", "12913347"): "randomly selected maternity units",
}
# Case reports as their texts say it: the title names a case or one patient.
CASE_TITLES = {
    (BASELINE_1979, "403614"): "...: report of a case with severe epistaxis",
    (BASELINE_1979, "427390"): "...: report of three cases",
    (BASELINE_1979, "413346"): "...in a patient with congenital lacticacidaemia",
    (UPDATE_2021, "34091573"): "...in a 7-Year-Old Girl",
    (UPDATE_2021, "34022760"): "...: A case report and literature review",
    (BASELINE_1979, "425429"): "[Case of complete atrioventricular block]",
    (BASELINE_1979, "407641"): "[Apropose of a case of giant epifrenic diverticulum]",
    (BASELINE_1979, "426969"): "Effects of propranolol in a case of orthostatic hypotension",
    (UPDATE_2021, "34088487"): "...: A Histologic Finding in a Case of Long-Established...",
}
# ...or the abstract opens on the patient, or says a case is described.
CASE_TEXTS = {
    (BASELINE_1979, "401643"): "A 25-year-old insulin-dependent diabetic man who was admitted",
    (BASELINE_1979, "405019"): "A patient with biopsy-proven papular mucinosis ... developed",
    (BASELINE_1979, "411175"): "Reported is a case of septicemia",
    (BASELINE_1979, "401603"): "Three patients with a gas-filled appendix ... are described",
    (UPDATE_2021, "33892313"): "We herein describe a man with dystypia",
    (UPDATE_2021, "33895426"): "We hereby report a rare case of RCVS",
    (UPDATE_2021, "34093677"): "This article presents and discusses a case of inferior...",
    (BASELINE_1979, "420629"): "A family is described in which adult-onset Gaucher's disease...",
    (BASELINE_1979, "412416"): "...: report of an additional family and further delineation...",
    (BASELINE_1979, "410213"): "Congenital deficiency of factor XIII... Report of a new family.",
}
# Case words that describe a group or an animal, not a patient.
NOT_CASE_REPORTS = {
    (UPDATE_2021, "31884885"): "...in a Child and Adolescent Cohort (9,875 participants)",
    (BASELINE_1979, "428365"): "a case described in a 12 year old pony",
}
LATIN_SQUARES = {
    (BASELINE_1979, "403551"): "treatments distributed according to a Latin square design",
    (BASELINE_1979, "419163"): "a double-blind Latin square cross-over design",
}
# Trials the abstract only mentions: their evidence, their design, a trial a study draws on.
TRIAL_MENTIONS = {
    (UPDATE_2021, "34088379"): "This was an ancillary study to a clinical trial.",
    (UPDATE_2021, "34022765"): "a post-hoc analysis of data from ... a prospective clinical trial",
    (UPDATE_2021, "33914561"): "Baseline data were obtained from a ... clinical trial",
    (UPDATE_2021, "34092748"): "Clinical trial data of Carmustine implant ... are limited",
    (UPDATE_2021, "34000408"): "the inefficiencies of the clinical trial enterprise",
    (UPDATE_2021, "33887472"): "Clinical trial design has evolved",
    (UPDATE_2021, "34096755"): "evidence from ... placebo-controlled clinical trials suggests",
}
# Reviews that call themselves one with an adjective ("this comprehensive review", "a
# non-systematic literature review"), whatever databases they searched.
NAMED_REVIEWS = {
    (UPDATE_2021, "34091867"): "This comprehensive review of cariprazine summarizes...",
    (UPDATE_2021, "34090919"): "In this narrative review, we provide a description...",
    (UPDATE_2021, "34094790"): "The purpose of this literature review is to address...",
    (UPDATE_2021, "33716103"): "This short review presents several CEST contrast agents",
    (UPDATE_2021, "33612358"): "A non-systematic literature review was performed... Medline",
    (UPDATE_2021, "34062312"): "A narrative review of current literature... PubMed, Scopus",
}
# Laboratory species beyond the common mammals (amphibians, birds, fish, invertebrates, Macaca,
# bulls), named in the title or abstract.
LAB_SPECIES = {
    (BASELINE_1979, "402082"): "The stomach muscle of Bufo marinus was used",
    (BASELINE_1979, "418902"): "the proximal convoluted tubule of Necturus maculosus",
    (BASELINE_1979, "402370"): "Tetrahymena strives to maintain the fluidity...",
    (BASELINE_1979, "408863"): "The effects of amphetamine on maze learning by goldfish.",
    (BASELINE_1979, "403545"): "the automaintained key pecking of pigeons",
    (BASELINE_1979, "400091"): "skin transplants in adult newts",
    (UPDATE_2021, "31988164"): "A salamander that chews using complex... mandible movements.",
    (UPDATE_2021, "34087348"): "Spatial memory in Vespula germanica wasps",
    (BASELINE_1979, "404075"): "Existence of cholinergic receptors in the very young chick embryo",
    (BASELINE_1979, "404617"): "Effectiveness of atrial pacing in Macaca mulatta...",
    (BASELINE_1979, "420410"): "In 3 mature bulls 2 injections (i.m.) of 150 mg...",
    (BASELINE_1979, "411226"): "Influence of hypokinesis on the physiological functions in fowl",
    (BASELINE_1979, "420748"): "Carotid or jugular amino acid infusions... in the cockerel.",
}
# Reviews in their own words, without an adjective: "the present review", "our review",
# "we provide an overview", "we highlight recent advances", "minireview", or the
# "OPINION STATEMENT:" heading that opens a review in the Current Treatment Options journals.
OWN_WORD_REVIEWS = {
    (BASELINE_1979, "401331"): "The present review concentrates mainly upon...",
    (UPDATE_2021, "33775705"): "The present review aims at identifying the key progress...",
    (UPDATE_2021, "34002011"): "Our review mainly focuses on the complicated communication...",
    (UPDATE_2021, "33707653"): "In this article, we present a detailed overview of...",
    (UPDATE_2021, "34046723"): "The following article provides an overview of the current...",
    (UPDATE_2021, "34096577"): "Herein, we highlight recent advances in engineering...",
    (UPDATE_2021, "34097138"): "OPINION STATEMENT: Chronic neutrophilic leukemia (CNL) is...",
    (UPDATE_2021, "34097148"): "OPINION STATEMENT: Cardio-oncology is a field dedicated to...",
    (BASELINE_1979, "402525"): "Minireview plant carbonic anhydrase.",
    (UPDATE_2021, "33444976"): "This article summarizes recent developments in the...",
    (UPDATE_2021, "34090703"): "We here summarize recent progress in the pathophysiology...",
}
# Trials that give a placebo and state no randomization (NLM: Clinical Trial).
PLACEBO_TRIALS = {
    (BASELINE_1979, "405412"): "At that juncture, N or I or placebo (P) was administered...",
    (BASELINE_1979, "429499"): "Sixty-four women were given a placebo in the same way...",
    (BASELINE_1979, "408607"): "...whereas in the placebo group (37 pregnant women) they fell",
    (BASELINE_1979, "401348"): "...treatment with either diazepam, amylobarbitone or placebo",
}
# Quasi-experiments this study ran: an intervention compared without randomization.
QUASI_EXPERIMENTS = {
    (UPDATE_2021, "34062376"): "...knowledge of delirium: A quasi-experimental study.",
    (UPDATE_2021, "34092586"): "a quasi-experimental pretest-posttest design with a control group",
    (UPDATE_2021, "34096344"): "With a non-equivalent control group pretest-posttest design",
    ("pubmedqa", "17076590"): "DESIGN: Pretest, post-test with a control group.",
    ("pubmedqa", "26383908"): "This quasi-experimental study was conducted using a crossover",
}
# Natural experiments of a law or policy, analysed as quasi-experiments: observational.
NATURAL_EXPERIMENTS = {
    (UPDATE_2021, "32830394"): "A quasi-experimental study in which a synthetic control model",
    (UPDATE_2021, "34093734"): "quasi-experimental interrupted time-series study",
    (UPDATE_2021, "34092531"): "A quasi-experimental design evaluated a real-world food policy",
}
# A section headed as a case ("CASE PRESENTATION:"), whatever review words follow it.
CASE_HEADINGS = {
    (UPDATE_2021, "34092402"): "CASE PRESENTATION: We identified an FHM2 family",
    (UPDATE_2021, "34090370"): "CASE PRESENTATION: A 23 months-old girl presented...",
    (UPDATE_2021, "34082764"): "CASE PRESENTATION: We report the case of a child with HI",
    (UPDATE_2021, "34052714"): "CASE PRESENTATION: This is a 37-year-old male...",
}
# A section that opens on one patient right after its label.
CASE_AFTER_LABEL = {
    ("pubmedqa", "23337545"): "DESCRIPTION: A 10-year-old boy developed very severe...",
}
# A review that opens on a teaching vignette is not a case report.
VIGNETTES = {
    (UPDATE_2021, "32862879"): "CASE VIGNETTE: A 75-year-old male undergoes an evaluation",
}
# Fish eaten by people is no species studied.
FISH_AS_FOOD = {
    (UPDATE_2021, "33975204"): "The identified risk factors were excessive fish consumption",
    (UPDATE_2021, "34096063"): "one of two formulations fortified with protein and fish oil",
    (BASELINE_1979, "419399"): "mercury levels and the number of fish meals",
}
# Fresh records (NlmCategory="UNASSIGNED") whose background is named by its label only, and
# whose randomized trial is another study the abstract compares itself with.
LABELLED_BACKGROUND = {
    (UPDATE_2021, "34097044"): "Importance: ...showed high efficacy in a phase III randomized",
}
# A randomized trial the abstract compares its results with, calls for, or says is running.
OTHER_TRIALS_NAMED = {
    (UPDATE_2021, "34020554"): "fully comparable with the ... randomized ... trial ESTHER-1",
    (UPDATE_2021, "33957442"): "A randomised, controlled phase III study is underway.",
    (UPDATE_2021, "33895559"): "a prospective controlled randomized trial is running",
    (UPDATE_2021, "34090707"): "we recommend a randomized clinical trial of statin use",
    (UPDATE_2021, "34092819"): "Randomized clinical trial is indicated.",
}
# Notices and comments on another article, named by their title; data split at random.
NOT_THIS_TRIAL = {
    (UPDATE_2021, "34004372"): ("other.commentary", 'A commentary on "Effects of parecoxib'),
    (UPDATE_2021, "34094718"): ("other.commentary", "Some Concerns About a Randomized"),
    (UPDATE_2021, "34092875"): ("other.notice", "Retraction: Evaluation of Ultrasound-guided"),
    (UPDATE_2021, "34003457"): ("other.notice", "Correction to: Injection Technique"),
    (UPDATE_2021, "34086549"): ("other.notice", "Correction to: ... A Review Study."),
    (UPDATE_2021, "34052706"): ("observational.text", "training (n = 51) and test (n = 23) sets"),
    (UPDATE_2021, "34077818"): ("observational.text", "a training (n = 217) or validation"),
}
# A background section's sentences about this study decide its design.
BACKGROUND_ABOUT_THIS_STUDY = {
    (UPDATE_2021, "34092070"): (D.RCT, "Design and Methods: The study was a randomized"),
    (UPDATE_2021, "34088322"): (D.RCT, "In this study, we evaluated ... in patients"),
    (UPDATE_2021, "33545658"): (D.NONRANDOMIZED_TRIAL, "the results of a phase II study"),
    (UPDATE_2021, "34022550"): (D.OBSERVATIONAL, "in two independent cohorts"),
    (UPDATE_2021, "34029970"): (D.OBSERVATIONAL, "trends ... amongst Medicare beneficiaries"),
    ("pubmedqa", "11500608"): (D.RCT, "This study looks for...STUDY: ...randomized"),
    ("pubmedqa", "15489384"): (D.SYSTEMATIC_REVIEW, "This paper reports a meta-analysis"),
}
# The "Expert Review" journals head a review's scope "AREAS COVERED:".
AREAS_COVERED = {
    (UPDATE_2021, "33759669"): (D.NARRATIVE_REVIEW, "Trastuzumab deruxtecan ... and beyond"),
    (UPDATE_2021, "34047661"): (D.NARRATIVE_REVIEW, "Coenzyme Q10 vesicular formulations"),
    (UPDATE_2021, "34092173"): (D.NARRATIVE_REVIEW, "Devices ...: Current technology"),
    (UPDATE_2021, "34097169"): (D.CASE_REPORT, "AREAS COVERED: A 10-year-old girl"),
}
# A genetic change names no species: knockout cell lines and screens, transgenic plants.
GENETIC_CHANGES = {
    (UPDATE_2021, "32980909"): (D.OTHER, "OsCAO1 knockout lines ... in rice"),
    (UPDATE_2021, "34092944"): (D.OTHER, "transgenic tobacco plants"),
    (UPDATE_2021, "34087984"): (D.IN_VITRO, "knockout human embryonic stem cell line"),
    (UPDATE_2021, "34090459"): (D.IN_VITRO, "Knockout of TTP ... in RAW264.7 cells"),
}
# Songbirds of the laboratory are species studied.
SONGBIRDS = {
    (UPDATE_2021, "33901611"): "auditory forebrain of songbird embryos",
    (UPDATE_2021, "34083674"): "male reproductive output in budgerigars",
}
# Ecology is no ecological study; an ecological study is.
ECOLOGY = {
    (UPDATE_2021, "34096625"): (D.OTHER, "according to their ecological characteristics"),
    (UPDATE_2021, "34029801"): (D.OTHER, "Seasonal distribution and ecological risk"),
    (UPDATE_2021, "32595183"): (D.OBSERVATIONAL, "An ecological study aggregated at"),
}
# Computational work named by a software paper's heading or by its title.
COMPUTATIONAL_WORK = {
    (UPDATE_2021, "32780795"): ("computational.software", "CONAN: a web application"),
    (UPDATE_2021, "32886093"): ("computational.software", "CRISPR-Cas9 knockout screening"),
    (UPDATE_2021, "32926120"): ("computational.software", "a flexible R package"),
    (UPDATE_2021, "32818262"): ("computational.software", "AVAILABILITYAND IMPLEMENTATION"),
    (UPDATE_2021, "33119053"): ("computational.software", "AVAILABILITY OF IMPLEMENTATION"),
    (UPDATE_2021, "34096994"): ("computational.software", "AVAILABILITY: ..."),
    (UPDATE_2021, "34082702"): ("computational.title", "meta-analysis ...: a simulation study"),
    (UPDATE_2021, "34085634"): ("computational.title", "...epidemic rebound: a modelling study"),
}
# Bench work beside docking is laboratory work; bench measures of patients' samples are not.
BENCH_WORK = {
    (UPDATE_2021, "31808389"): (D.IN_VITRO, "Synthesis, In Vitro Assay and Molecular Docking"),
    (UPDATE_2021, "33368483"): (D.IN_VITRO, "in vitro biological evaluation and ... docking"),
    (UPDATE_2021, "34091216"): (D.IN_VITRO, "in vitro antiprotozoal activity, ... docking"),
    (UPDATE_2021, "33894315"): (D.IN_VITRO, "(IC50 = 6.68 μg/mL) ... docking simulations"),
    (BASELINE_1979, "401000"): (D.OBSERVATIONAL, "enzyme inhibition (IC50) of platelet-MAO"),
}
# Studies of people named by their analysis or their sample, with no other methods word.
PEOPLE_BY_ANALYSIS = {
    (UPDATE_2021, "34093090"): ("observational.regression", "multinomial logistic regression"),
    (UPDATE_2021, "33932629"): ("observational.regression", "Logistic regression ... people"),
    (UPDATE_2021, "33951511"): ("observational.human_participants", "a sample of healthy"),
    (BASELINE_1979, "427331"): ("observational.human_participants", "a random sample of people"),
}
# Cells named by the species they came from are laboratory work; meat and bones are food.
ANIMAL_SOURCES = {
    (UPDATE_2021, "34097178"): (D.IN_VITRO, "siRNA in mouse pituitary AtT-20 cells"),
    (UPDATE_2021, "34088681"): (D.CASE_REPORT, "Chronic intentional chicken bone ingestion"),
    ("pubmedqa", "20577124"): (D.OBSERVATIONAL, "164 obese ... and murine macrophages"),
}
# Synthetic data and software written in a language are computational work.
SOFTWARE_AND_SYNTHETIC_DATA = {
    (UPDATE_2021, "33817833"): "MRI reconstruction framework written in Julia",
    (UPDATE_2021, "34022488"): "a library of 300 synthetic cases",
}
# The classes of the fourth hand-read draw, each checked on its real record.
FOURTH_DRAW = {
    (UPDATE_2021, "33965790"): ("animal.text_species", "faeces of Murrah buffalos"),
    (BASELINE_1979, "412376"): ("animal.text_species", "seminal plasma of buffalo"),
    (UPDATE_2021, "34049163"): ("observational.human_participants", "15 ... mutation carriers"),
    (BASELINE_1979, "403201"): ("observational.human_participants", "68 chronic HBsAg carriers"),
    (UPDATE_2021, "32939956"): ("observational.text", "nonrandomized prospective cohort study"),
    (UPDATE_2021, "33377177"): ("observational.text", "retrospective nonrandomized cohort study"),
    (UPDATE_2021, "34094311"): ("in_vitro.text_assays", "biophysical assays and ... simulations"),
}
_WANTED = {
    key
    for table in (
        ANIMAL_TRIALS, MENDELIAN, RCT_WORDINGS, ABOUT_GUIDELINES, GUIDELINES, LAB_WORK,
        COMMENTARIES, CORRESPONDENCE, GUIDELINE_TEXTS, WE_STUDIED_AN_EFFECT, TRIAL_MENTIONS,
        NAMED_REVIEWS, OWN_WORD_REVIEWS, LAB_SPECIES, PLACEBO_TRIALS,
        STATED_RANDOMIZATION_OVER_MESH,
        RANDOM_SAMPLING, CASE_TITLES, CASE_TEXTS, NOT_CASE_REPORTS, LATIN_SQUARES,
        QUASI_EXPERIMENTS, NATURAL_EXPERIMENTS, CASE_HEADINGS, CASE_AFTER_LABEL, VIGNETTES,
        FISH_AS_FOOD, LABELLED_BACKGROUND, BACKGROUND_ABOUT_THIS_STUDY, AREAS_COVERED,
        OTHER_TRIALS_NAMED, NOT_THIS_TRIAL, GENETIC_CHANGES, SONGBIRDS, ECOLOGY,
        COMPUTATIONAL_WORK, BENCH_WORK, PEOPLE_BY_ANALYSIS, ANIMAL_SOURCES,
        SOFTWARE_AND_SYNTHETIC_DATA, FOURTH_DRAW,
    )
    for key in table
}  # fmt: skip


@pytest.mark.parametrize("key", sorted(ANIMAL_TRIALS))
def test_real_randomized_animal_experiments_are_animal_studies(key: tuple[str, str]) -> None:
    found = classify_design(_text_only(_record(*key)))
    assert (found.design, found.rule) == (D.ANIMAL, "animal.text_trial_species")


@pytest.mark.parametrize("key", sorted(MENDELIAN))
def test_real_mendelian_randomization_studies_are_observational(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).design is D.OBSERVATIONAL
    assert classify_design(_record(*key)).design is D.OBSERVATIONAL


@pytest.mark.parametrize("key", sorted(RCT_WORDINGS))
def test_real_rcts_in_their_usual_wordings_are_rcts_from_text_alone(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).rule == "rct.text"


@pytest.mark.parametrize("key", sorted(ABOUT_GUIDELINES))
def test_real_studies_about_guidelines_are_not_guidelines(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).design is D.OBSERVATIONAL


@pytest.mark.parametrize("key", sorted(GUIDELINES))
def test_real_guidelines_stay_guidelines_from_their_title(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).rule == "guideline.title"


@pytest.mark.parametrize("key", sorted(LAB_WORK))
def test_real_cell_biology_without_the_usual_words_is_in_vitro(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).design is D.IN_VITRO


@pytest.mark.parametrize("key", sorted(COMMENTARIES))
def test_real_commentary_is_not_research(key: tuple[str, str]) -> None:
    found = classify_design(_text_only(_record(*key)))
    assert (found.rule, found.is_research) == ("other.commentary", False)


@pytest.mark.parametrize("key", sorted(CORRESPONDENCE))
def test_real_letters_and_replies_are_not_research(key: tuple[str, str]) -> None:
    record = _record(*key)
    assert set(record.publication_types) == {"Journal Article"}  # what a fresh record carries
    found = classify_design(record)
    assert (found.rule, found.is_research) == ("other.commentary", False)


@pytest.mark.parametrize("key", sorted(WE_STUDIED_AN_EFFECT))
def test_real_effects_studied_in_animals_are_preclinical(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).design is D.ANIMAL


@pytest.mark.parametrize("key", sorted(GUIDELINE_TEXTS))
def test_real_guidelines_that_say_so_in_the_abstract_are_guidelines(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).rule == "guideline.text"


@pytest.mark.parametrize("key", sorted(TRIAL_MENTIONS))
def test_real_trials_an_abstract_only_mentions_make_no_trial(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).design not in {D.RCT, D.NONRANDOMIZED_TRIAL}


@pytest.mark.parametrize("key", sorted(PLACEBO_TRIALS))
def test_real_trials_that_give_a_placebo_are_trials(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).rule == "nonrandomized_trial.text"


@pytest.mark.parametrize("key", sorted(NAMED_REVIEWS))
def test_real_reviews_named_with_an_adjective_are_narrative_reviews(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).rule == "narrative_review.text"


@pytest.mark.parametrize("key", sorted(LAB_SPECIES))
def test_real_studies_of_laboratory_species_are_animal_studies(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).rule == "animal.text_species"


@pytest.mark.parametrize("key", sorted(OWN_WORD_REVIEWS))
def test_real_reviews_in_their_own_words_are_narrative_reviews(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).rule == "narrative_review.text"


@pytest.mark.parametrize("key", sorted(STATED_RANDOMIZATION_OVER_MESH))
def test_real_stated_randomization_beats_observational_mesh(key: tuple[str, str]) -> None:
    record = _record(*key)
    assert "humans" in record.mesh_descriptors
    assert classify_design(record).rule == "rct.text_over_mesh"


@pytest.mark.parametrize("key", sorted(RANDOM_SAMPLING))
def test_real_random_allocation_mesh_for_random_sampling_is_not_an_rct(
    key: tuple[str, str],
) -> None:
    record = _record(*key)
    assert "random allocation" in record.mesh_descriptors
    assert classify_design(record).design is D.OBSERVATIONAL


@pytest.mark.parametrize("key", sorted(CASE_TITLES))
def test_real_case_report_titles_make_case_reports_from_text_alone(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).rule == "case_report.title"


@pytest.mark.parametrize("key", sorted(CASE_TEXTS))
def test_real_abstracts_about_one_patient_or_family_make_case_reports(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).rule == "case_report.text"


@pytest.mark.parametrize("key", sorted(QUASI_EXPERIMENTS))
def test_real_quasi_experiments_are_trials(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).rule == "nonrandomized_trial.text"


@pytest.mark.parametrize("key", sorted(NATURAL_EXPERIMENTS))
def test_real_natural_experiments_are_observational(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).design is D.OBSERVATIONAL


@pytest.mark.parametrize("key", sorted(CASE_HEADINGS))
def test_real_sections_headed_as_a_case_make_case_reports(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).rule == "case_report.heading"


@pytest.mark.parametrize("key", sorted(CASE_AFTER_LABEL))
def test_real_sections_opening_on_one_patient_make_case_reports(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).rule == "case_report.text"


@pytest.mark.parametrize("key", sorted(VIGNETTES))
def test_real_teaching_vignettes_are_not_case_reports(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).design is not D.CASE_REPORT


@pytest.mark.parametrize("key", sorted(FISH_AS_FOOD))
def test_real_fish_as_food_makes_no_animal_study(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).design is not D.ANIMAL


@pytest.mark.parametrize("key", sorted(LABELLED_BACKGROUND))
def test_real_background_named_by_its_label_alone_is_background(key: tuple[str, str]) -> None:
    record = _record(*key)
    assert any(s.category == "UNASSIGNED" for s in record.abstract)
    assert classify_design(_text_only(record)).design is D.OBSERVATIONAL


@pytest.mark.parametrize("key", sorted(OTHER_TRIALS_NAMED))
def test_real_trials_the_abstract_names_but_did_not_run_make_no_rct(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).design is not D.RCT


@pytest.mark.parametrize("key", sorted(NOT_THIS_TRIAL))
def test_real_notices_comments_and_data_splits_are_no_rct(key: tuple[str, str]) -> None:
    rule, _ = NOT_THIS_TRIAL[key]
    assert classify_design(_text_only(_record(*key))).rule == rule


@pytest.mark.parametrize("key", sorted(BACKGROUND_ABOUT_THIS_STUDY))
def test_real_background_sentences_about_this_study_are_read(key: tuple[str, str]) -> None:
    expected, _ = BACKGROUND_ABOUT_THIS_STUDY[key]
    assert classify_design(_text_only(_record(*key))).design is expected


@pytest.mark.parametrize("key", sorted(AREAS_COVERED))
def test_real_areas_covered_headings_make_reviews_unless_a_case(key: tuple[str, str]) -> None:
    expected, _ = AREAS_COVERED[key]
    assert classify_design(_text_only(_record(*key))).design is expected


@pytest.mark.parametrize("key", sorted(GENETIC_CHANGES))
def test_real_knockouts_and_transgenic_plants_name_no_species(key: tuple[str, str]) -> None:
    expected, _ = GENETIC_CHANGES[key]
    assert classify_design(_text_only(_record(*key))).design is expected


@pytest.mark.parametrize("key", sorted(SONGBIRDS))
def test_real_songbird_studies_are_animal_studies(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).rule == "animal.text_species"


@pytest.mark.parametrize("key", sorted(ECOLOGY))
def test_real_ecology_is_not_an_ecological_study(key: tuple[str, str]) -> None:
    expected, _ = ECOLOGY[key]
    assert classify_design(_text_only(_record(*key))).design is expected


@pytest.mark.parametrize("key", sorted(COMPUTATIONAL_WORK))
def test_real_software_and_simulation_studies_are_computational(key: tuple[str, str]) -> None:
    rule, _ = COMPUTATIONAL_WORK[key]
    assert classify_design(_text_only(_record(*key))).rule == rule


@pytest.mark.parametrize("key", sorted(BENCH_WORK))
def test_real_bench_work_beside_docking_is_laboratory_work(key: tuple[str, str]) -> None:
    expected, _ = BENCH_WORK[key]
    assert classify_design(_text_only(_record(*key))).design is expected


@pytest.mark.parametrize("key", sorted(PEOPLE_BY_ANALYSIS))
def test_real_studies_of_people_named_by_their_analysis_are_observational(
    key: tuple[str, str],
) -> None:
    rule, _ = PEOPLE_BY_ANALYSIS[key]
    assert classify_design(_text_only(_record(*key))).rule == rule


@pytest.mark.parametrize("key", sorted(ANIMAL_SOURCES))
def test_real_cells_and_food_of_a_species_name_no_animal_study(key: tuple[str, str]) -> None:
    expected, _ = ANIMAL_SOURCES[key]
    assert classify_design(_text_only(_record(*key))).design is expected


@pytest.mark.parametrize("key", sorted(SOFTWARE_AND_SYNTHETIC_DATA))
def test_real_software_and_synthetic_data_are_computational(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).rule == "computational.text"


@pytest.mark.parametrize("key", sorted(FOURTH_DRAW))
def test_real_records_of_the_fourth_draw_classes(key: tuple[str, str]) -> None:
    rule, _ = FOURTH_DRAW[key]
    assert classify_design(_text_only(_record(*key))).rule == rule


@pytest.mark.parametrize("key", sorted(NOT_CASE_REPORTS))
def test_real_cohorts_and_animal_cases_are_not_case_reports(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).design is not D.CASE_REPORT


@pytest.mark.parametrize("key", sorted(LATIN_SQUARES))
def test_real_latin_square_trials_in_people_are_rcts(key: tuple[str, str]) -> None:
    assert classify_design(_text_only(_record(*key))).rule == "rct.text_latin_square"


def test_no_pubmedqa_question_about_guidelines_is_a_guideline() -> None:
    # PubMedQA titles are questions ("Are the guidelines followed...?"): studies, not guidelines.
    about = [r for r in _pubmedqa().values() if re.search(r"guideline", r.title or "", re.I)]
    assert about
    assert all(classify_design(_text_only(r)).design is not D.GUIDELINE for r in about)


@pytest.mark.slow
def test_no_animal_text_is_an_rct_in_the_2021_update_file() -> None:
    """Every record of the update file labelled `rct` from text alone whose research
    sentences name a species also states people taking part (mixed or background mentions)."""
    path = shared_data_path("ncbi_files", UPDATE_2021)
    chunks = gzip.decompress(path.read_bytes()).split(b"</PubmedArticle>")
    mention = [
        c[c.find(b"<PubmedArticle>") :] for c in chunks if b"andom" in c and b"<PubmedArticle>" in c
    ]
    body = b"<PubmedArticleSet>" + b"</PubmedArticle>".join(mention) + b"</PubmedArticle>"
    records = parse_pubmed_articles(body + b"</PubmedArticleSet>").records
    rct = [r for r in records if classify_design(_text_only(r)).design is D.RCT]
    assert len(rct) > 300
    for record in rct:
        sentences = research_sentences(record)
        if has_species(sentences):
            assert states_human_participants(sentences), record.pmid

"""Which questions ask for a figure (`asks_for_numbers`): the cue for numbers first."""

from __future__ import annotations

import pytest

from biomcp.domain.rerank import asks_for_numbers

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "question",
    [
        "How much weight do adults lose on semaglutide?",
        "How many patients discontinued treatment because of adverse events?",
        "How often does nausea occur with liraglutide?",
        "What percentage of patients achieved remission?",
        "What proportion of tumours responded to osimertinib?",
        "What share of participants lost 15% of body weight?",
        "What objective response rate did the drug achieve?",
        "What is the hazard ratio for death with pembrolizumab?",
        "What is the incidence of pneumonitis with checkpoint inhibitors?",
        "What is the median progression-free survival with adagrasib?",
        "What is the effect size of mindfulness training on anxiety?",
        "What is the risk of gallbladder disease on GLP-1 agonists?",
        "Is pancreatitis more common with exenatide?",
        "Does empagliflozin reduce hospitalisation for heart failure compared with placebo?",
        "Does dapagliflozin improve outcomes versus placebo in a phase 3 trial?",
    ],
)
def test_questions_asking_for_a_figure_are_numeric(question: str) -> None:
    assert asks_for_numbers(question)


@pytest.mark.parametrize(
    "question",
    [
        "What HbA1c reduction did semaglutide achieve at 40 weeks?",
        "What was the difference in systolic blood pressure between the two arms?",
        "What change in LDL cholesterol did inclisiran produce?",
        "What decline in eGFR was seen with finerenone?",
        "What weight loss did liraglutide 3.0 mg give after one year?",
        "What are the sensitivity and specificity of low-dose CT for lung cancer?",
        "How accurate is faecal immunochemical testing for advanced adenoma?",
        "What is the positive predictive value of troponin for myocardial infarction?",
        "What was the AUC of the polygenic risk score?",
        "What dose of vitamin D prevented fractures in older women?",
        "What serum levels of vitamin D were reached with 4000 IU daily?",
        "What is the number needed to treat with statins to prevent one heart attack?",
        "What is the efficacy of the RSV vaccine in adults over 60?",
        "What is the vaccine effectiveness against hospitalisation with COVID-19?",
        "What is the absolute benefit of aspirin in primary prevention?",
        "What was the overall response to nivolumab in melanoma?",
        "What were the side effects of tirzepatide in the SURMOUNT trials?",
        "Which adverse events occurred with adagrasib?",
        "Does sotorasib after anti-PD-1 immunotherapy cause severe hepatotoxicity?",
        "Is the cardiotoxicity of trastuzumab reversible?",
        "What was the five-year recurrence after lumpectomy with radiotherapy?",
        "How quickly did symptoms resolve with oseltamivir?",
        "What pain scores did patients report after knee replacement with nerve block?",
        "Did the intervention shorten length of stay in hospital?",
        "How does survival compare between robotic and open prostatectomy?",
        "How does apixaban compare with warfarin for bleeding?",
        "How do outcomes differ between early and late surgery for endocarditis?",
    ],
)
def test_questions_naming_an_outcome_measure_are_numeric(question: str) -> None:
    assert asks_for_numbers(question)


@pytest.mark.parametrize(
    "question",
    [
        "Which signalling pathway does the GLP-1 receptor activate in beta cells?",
        "How does sotorasib bind the switch II pocket of KRAS G12C?",
        "Why does ERK signalling rebound after KRAS inhibition, and how much does it rebound?",
        "What is the mechanism of resistance to adagrasib?",
        "By which route does the drug reach the brain, and at what rate?",
        "Through which neurons do GLP-1 agonists suppress food intake?",
        "Does metformin activate AMPK in hepatocytes more than in muscle cells?",
        "What are the guidelines for screening lung cancer?",
        "Which genes are mutated in familial breast cancer?",
        "How does exercise improve insulin sensitivity in muscle?",
        "Which transcription factors control the response of T cells to antigen?",
        "What causes toxicity of acetaminophen in the liver, and by which pathway?",
        "What is the function of PCSK9 in LDL receptor recycling?",
        "What are the diagnostic criteria for Kawasaki disease?",
        "Which enzymes metabolise clopidogrel?",
        "How does metformin lower glucose, and how does it compare with insulin?",
        "How do KRAS G12C and G12D differ in their binding pocket?",
        "How does the spike protein change its conformation?",
        "Do GLP-1 receptor agonists cause weight loss by raising energy expenditure?",
        "",
    ],
)
def test_questions_about_how_or_what_things_are_are_not_numeric(question: str) -> None:
    assert not asks_for_numbers(question)


def test_a_comparison_asks_for_a_figure_only_about_outcomes() -> None:
    assert asks_for_numbers("Does tirzepatide reduce weight in obesity in a phase 3 trial?")
    assert not asks_for_numbers("Does the mutation reduce binding of the inhibitor in vitro?")

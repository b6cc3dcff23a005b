"""Evidence tagging at ingest (spec 03 section 3).

`classify_evidence` puts a record in one tier and says which rule decided, so an agent (or a
reviewer) can see why a paper counts as clinical. Rules are tried in this order; the first that
fires wins:

1. `clinical.trial_type`: a publication type is "Randomized Controlled Trial", "Clinical Trial"
   or "Clinical Trial, Phase I/II/III/IV" (spec: PublicationType contains RCT, Clinical Trial,
   Phase I/II/III).
2. `clinical.humans_trial`: MeSH has Humans and a publication type indicates a trial of another
   kind ("Controlled Clinical Trial", "Pragmatic Clinical Trial", "Equivalence Trial",
   "Adaptive Clinical Trial", "Clinical Trial Protocol"...). Veterinary trials never count.
3. `clinical.trial_synthesis` (an extension, see below): a "Meta-Analysis" or "Systematic
   Review" whose title or abstract speaks of randomized or controlled trials.
4. `other.non_research`: every publication type is a non-research form (editorial, letter,
   comment, news, erratum, retraction notice, biography...): a notice is not evidence, even
   when its title mentions mice.
5. `preclinical.text`: title or abstract mentions preclinical, in vitro, animal model(s),
   mouse/mice or rat(s) (whole words, any case; plurals are the same words to a reader).
6. `preclinical.animal_mesh`: MeSH has Animals and not Humans (animal-only).
7. `basic.fallback`: everything else: mechanistic and biology papers that are neither trials
   nor animal-only (spec: "basic (fallback)").

Rule 3 is not in the spec: without it a meta-analysis of randomized trials, the strongest
clinical evidence there is, would be tagged "basic". Rule 4 gives the spec's `other` value a
meaning; without it an erratum would be "basic science".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from biomcp.domain.numeric import has_numeric_result
from biomcp.domain.records import EvidenceType, PubMedRecord

__all__ = ["EvidenceClassification", "classify_evidence", "has_biomarker", "has_numbers"]

_TRIAL_TYPES = frozenset(
    {
        "randomized controlled trial",
        "clinical trial",
        "clinical trial, phase i",
        "clinical trial, phase ii",
        "clinical trial, phase iii",
        "clinical trial, phase iv",
    }
)
_SYNTHESIS_TYPES = frozenset({"meta-analysis", "systematic review"})
_NON_RESEARCH_TYPES = frozenset(
    {
        "editorial",
        "letter",
        "comment",
        "news",
        "newspaper article",
        "published erratum",
        "retraction of publication",
        "retraction notice",
        "expression of concern",
        "biography",
        "autobiography",
        "portrait",
        "interview",
        "lecture",
        "address",
        "personal narrative",
        "obituary",
        "congress",
        "introductory journal article",
        "bibliography",
        "directory",
        "webcast",
        "patient education handout",
        "corrected and republished article",
        "duplicate publication",
    }
)
# Types that say nothing about the study design: they never decide a tier on their own.
_NEUTRAL_TYPES = frozenset({"journal article", "english abstract"})
_PRECLINICAL_TEXT = re.compile(
    r"\b(?:pre-?clinical|in vitro|animal models?|mouse|mice|rats?)\b", re.IGNORECASE
)
_TRIAL_SYNTHESIS_TEXT = re.compile(
    r"\b(?:randomi[sz]ed|controlled (?:clinical )?trials?|RCTs?)\b", re.IGNORECASE
)
# Words, any case: "Biomarkers" opens titles and keyword lists.
_BIOMARKER_WORDS = re.compile(
    r"\bbiomarkers?\b|\b(?:tumou?r|serum|plasma|urinary|blood|genetic|molecular|prognostic|"
    r"predictive|diagnostic|inflammatory|surrogate) markers?\b|\bC-reactive protein\b|"
    r"\btroponins?\b|\bcirculating tumou?r DNA\b|\btumou?r mutational burden\b|"
    r"\bmicrosatellite instability\b",
    re.IGNORECASE,
)
# Symbols, case as printed: a lower-case "her2" or "g12c" is not how biomarkers are written.
_BIOMARKER_SYMBOLS = re.compile(
    # protein-change notation: KRAS G12C, BRAF V600E, EGFR T790M; exon 19 deletion
    r"\b[A-Z][A-Z0-9]{1,7}\s?(?:p\.)?[ACDEFGHIKLMNPQRSTVWY]\d{1,4}[ACDEFGHIKLMNPQRSTVWY*]\b"
    r"|\bexon \d{1,2} (?:deletion|insertion|skipping|mutation)s?\b"
    # named clinical biomarkers
    r"|\b(?:PD-L1|HER2|ERBB2|BRCA[12]|ctDNA|cfDNA|HbA1c|hs-?CRP|CRP|NT-proBNP|BNP|PSA|CA-?125|"
    r"CEA|AFP|Ki-?67|TMB|MSI-H|dMMR|LDL-C|eGFR|IL-6|TNF-?α)"
    # a gene symbol with what is measured about it
    r"|\b[A-Z][A-Z0-9]{1,7}(?:-[A-Z0-9]{1,4})? (?:mutations?|mutant|amplification|fusions?|"
    r"rearrangements?|overexpression|expression|status|positivity)\b"
    r"|\b[A-Z][A-Z0-9]{1,7}-(?:positive|negative|mutant|mutated|amplified)\b"
)


@dataclass(frozen=True, slots=True)
class EvidenceClassification:
    """The evidence tier, the rule that decided it, and the two content flags."""

    evidence_type: EvidenceType
    rule: str
    has_numbers: bool
    has_biomarker: bool


def _text(record: PubMedRecord) -> str:
    return f"{record.title or ''}\n{record.abstract_text}"


def has_numbers(record: PubMedRecord) -> bool:
    """True when the title or abstract reports a quantitative result: effect sizes (HR, OR,
    RR, mean differences), confidence intervals, p-values, percentages, sample sizes, mean ±
    SD (see `numeric.has_numeric_result`)."""
    return has_numeric_result(_text(record))


def has_biomarker(record: PubMedRecord) -> bool:
    """True when the title, abstract or keywords mention a biomarker: the word itself, a
    "serum / tumour / prognostic ... marker", a protein change (KRAS G12C, BRAF V600E), a
    named clinical marker (PD-L1, HER2, ctDNA, HbA1c, CRP, troponin, PSA, Ki-67, TMB...), or a
    gene symbol with what is measured about it ("EGFR mutation", "HER2-positive")."""
    text = _text(record) + "\n" + "\n".join(record.keywords)
    return bool(_BIOMARKER_WORDS.search(text) or _BIOMARKER_SYMBOLS.search(text))


def _decide(record: PubMedRecord) -> tuple[EvidenceType, str]:
    types = {t.casefold() for t in record.publication_types}
    mesh = record.mesh_descriptors
    text = _text(record)
    humans = "humans" in mesh
    if types & _TRIAL_TYPES:
        return EvidenceType.CLINICAL, "clinical.trial_type"
    if humans and any("trial" in t and "veterinary" not in t for t in types):
        return EvidenceType.CLINICAL, "clinical.humans_trial"
    if types & _SYNTHESIS_TYPES and _TRIAL_SYNTHESIS_TEXT.search(text):
        return EvidenceType.CLINICAL, "clinical.trial_synthesis"
    design_types = types - _NEUTRAL_TYPES
    if design_types and design_types <= _NON_RESEARCH_TYPES:
        return EvidenceType.OTHER, "other.non_research"
    if _PRECLINICAL_TEXT.search(text):
        return EvidenceType.PRECLINICAL, "preclinical.text"
    if "animals" in mesh and not humans:
        return EvidenceType.PRECLINICAL, "preclinical.animal_mesh"
    return EvidenceType.BASIC, "basic.fallback"


def classify_evidence(record: PubMedRecord) -> EvidenceClassification:
    """Tag a record with its evidence tier, the deciding rule (module docstring) and the
    `has_numbers` / `has_biomarker` flags."""
    evidence_type, rule = _decide(record)
    return EvidenceClassification(
        evidence_type=evidence_type,
        rule=rule,
        has_numbers=has_numbers(record),
        has_biomarker=has_biomarker(record),
    )

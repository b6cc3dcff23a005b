"""Evidence tagging at ingest (spec 03 section 3, tiers as spec 03's Goals define them).

`classify_evidence` puts a record in one tier and says which rule decided, so an agent (or a
reviewer) can see why a paper counts as clinical. The tier follows the study design
(`design.classify_design`, which reads publication types, then MeSH, then the title and
abstract, and names its own rule):

* `clinical`: any study of human participants or human data: randomized and non-randomized
  trials, observational studies (cohort, case-control, cross-sectional, surveys, case series),
  case reports, and systematic reviews / meta-analyses of human studies (spec 03 Goals: "Tier
  A: Clinical: Phase I-III, RCTs, human studies").
* `preclinical`: animal and in-vitro work (and systematic reviews of animal studies).
* `basic`: mechanism and target biology without patients: computational work and research
  whose design no rule recognises.
* `other`: narrative reviews, guidelines, editorials, letters, comments, errata, historical
  articles: no new evidence of their own.

The rule is `<tier>.<design rule>` (e.g. `clinical.rct.publication_type`,
`preclinical.animal.text_species`, `basic.other.unclassified`), or the design rule itself when
it already names the tier (`other.non_research`, `other.historical`).

Before this version the spec's §3 rules alone were used: only trial publication types made a
record clinical, so cohorts and case-control studies fell to `basic`, and any mention of
"rat" or "in vitro" made a record preclinical (even "in vitro fertilization" or "HW-RAT").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from biomcp.domain.design import DesignClassification, StudyDesign, classify_design
from biomcp.domain.numeric import has_numeric_result
from biomcp.domain.records import EvidenceType, PubMedRecord

__all__ = [
    "EvidenceClassification",
    "classify_evidence",
    "has_biomarker",
    "has_numbers",
    "tier_of",
]

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
    """The evidence tier, the rule that decided it, the two content flags, and the study
    design the tier follows (None only on documents stored before designs were kept)."""

    evidence_type: EvidenceType
    rule: str
    has_numbers: bool
    has_biomarker: bool
    design: DesignClassification | None = None


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


_CLINICAL_DESIGNS = frozenset(
    {
        StudyDesign.RCT,
        StudyDesign.NONRANDOMIZED_TRIAL,
        StudyDesign.OBSERVATIONAL,
        StudyDesign.CASE_REPORT,
        StudyDesign.SYSTEMATIC_REVIEW,
    }
)
_PRECLINICAL_DESIGNS = frozenset({StudyDesign.ANIMAL, StudyDesign.IN_VITRO})
_OTHER_DESIGNS = frozenset({StudyDesign.NARRATIVE_REVIEW, StudyDesign.GUIDELINE})
_ANIMAL_REVIEW_TEXT = re.compile(
    r"\b(?:animal|preclinical|pre-clinical|in vivo|rodent|murine) (?:studies|models|experiments)\b",
    re.IGNORECASE,
)


def tier_of(record: PubMedRecord, design: DesignClassification) -> EvidenceType:
    """The evidence tier a study design puts a record in (module docstring)."""
    kind = design.design
    if kind is StudyDesign.SYSTEMATIC_REVIEW:
        mesh = record.mesh_descriptors
        animal_only = "animals" in mesh and "humans" not in mesh
        if animal_only or _ANIMAL_REVIEW_TEXT.search(record.title or ""):
            return EvidenceType.PRECLINICAL
        return EvidenceType.CLINICAL
    if kind in _CLINICAL_DESIGNS:
        return EvidenceType.CLINICAL
    if kind in _PRECLINICAL_DESIGNS:
        return EvidenceType.PRECLINICAL
    if kind in _OTHER_DESIGNS or not design.is_research:
        return EvidenceType.OTHER
    return EvidenceType.BASIC


def _decide(record: PubMedRecord, design: DesignClassification) -> tuple[EvidenceType, str]:
    tier = tier_of(record, design)
    if design.rule.startswith(f"{tier.value}."):
        return tier, design.rule
    return tier, f"{tier.value}.{design.rule}"


def classify_evidence(
    record: PubMedRecord, design: DesignClassification | None = None
) -> EvidenceClassification:
    """Tag a record with its evidence tier, the deciding rule (module docstring) and the
    `has_numbers` / `has_biomarker` flags. `design` may be passed when the caller already
    classified the design; it is computed otherwise."""
    design = design or classify_design(record)
    evidence_type, rule = _decide(record, design)
    return EvidenceClassification(
        evidence_type=evidence_type,
        rule=rule,
        has_numbers=has_numbers(record),
        has_biomarker=has_biomarker(record),
        design=design,
    )

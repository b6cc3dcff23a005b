"""Study design: what kind of study a record reports, and the rule that decided it.

`classify_design` gives every record one `StudyDesign` and names the rule that fired, as
`classify_evidence` does for the tier. Evidence is read in order of trust, the first rule that
fires wins:

1. Publication types (NLM's indexers chose them): non-research forms (editorial, letter,
   erratum...) -> `other`; Meta-Analysis / Systematic Review -> `systematic_review`; Practice
   Guideline / Guideline / Consensus Development Conference -> `guideline`; Randomized
   Controlled Trial -> `rct`; other human trial types -> `rct` when the abstract says the
   participants were randomized, else `nonrandomized_trial`; Case Reports -> `case_report`;
   Observational Study -> `observational`; Review -> `narrative_review` (or
   `systematic_review` when the text says it is one); Historical Article -> `other`.
   Veterinary types -> `animal`, and so is a type of study with participants (a trial, Case
   Reports, Observational Study) on a record whose MeSH has the Animals check tag without
   Humans: NLM's indexers say who took part (a veterinary case report, for which there is no
   Veterinary type; an animal trial indexed before those types existed). Without MeSH (not
   indexed yet) the type stands.
2. MeSH (absent on records not indexed yet, e.g. a fresh EDAT sync): design descriptors of
   human research (Cohort, Case-Control, Cross-Sectional, Retrospective, Prospective,
   Longitudinal, Follow-Up Studies, Surveys and Questionnaires...) -> `observational`; the
   Animals check tag without Humans -> `animal` (`in_vitro` for cultured cells, `other` for
   genome sequencing of an organism). With Humans and not Animals, species words in the text
   are not trusted (a human study of dog bites is not an animal study).
3. Title and abstract: methods language ("systematic review", "randomly assigned", "we
   report a case", "retrospective", "cohort", "cross-sectional"...), species (mouse, rat, pig,
   dog, rabbit, sheep, guinea pig, zebrafish, primates...), in-vitro work (cell lines, cultured
   cells, clinical isolates), computational work (simulation, in silico, docking), then human
   participants ("312 patients", "participants were recruited").
4. `other.unclassified`.

Keyword rules ignore background sentences ("Animal studies suggest...", "Preclinical studies
... have shown", a BACKGROUND section), negated mentions ("no animal model", "not in mice")
and known false friends: "in vitro fertilization", acronyms such as "HW-RAT", the
"pre-clinical modules" or years of a medical curriculum.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from biomcp.domain.records import PubMedRecord

__all__ = [
    "STUDY_DESIGN_VALUES",
    "DesignClassification",
    "StudyDesign",
    "classify_design",
    "research_sentences",
]


class StudyDesign(StrEnum):
    RCT = "rct"
    NONRANDOMIZED_TRIAL = "nonrandomized_trial"
    OBSERVATIONAL = "observational"
    CASE_REPORT = "case_report"
    SYSTEMATIC_REVIEW = "systematic_review"
    NARRATIVE_REVIEW = "narrative_review"
    GUIDELINE = "guideline"
    ANIMAL = "animal"
    IN_VITRO = "in_vitro"
    COMPUTATIONAL = "computational"
    OTHER = "other"


#: The designs' values, in `StudyDesign` order (schemas, filters, stored columns).
STUDY_DESIGN_VALUES: tuple[str, ...] = tuple(design.value for design in StudyDesign)


@dataclass(frozen=True, slots=True)
class DesignClassification:
    """The study design and the rule that decided it (`<design>.<source>`, or
    `other.non_research` / `other.historical` / `other.unclassified`)."""

    design: StudyDesign
    rule: str

    @property
    def is_research(self) -> bool:
        """False for non-research items (editorials, letters, errata, historical articles)."""
        return self.rule not in {"other.non_research", "other.historical"}


NON_RESEARCH_TYPES = frozenset(
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
_NEUTRAL_TYPES = frozenset({"journal article", "english abstract"})
_SYNTHESIS_TYPES = frozenset({"meta-analysis", "systematic review", "network meta-analysis"})
_GUIDELINE_TYPES = frozenset(
    {
        "practice guideline",
        "guideline",
        "consensus development conference",
        "consensus development conference, nih",
    }
)
_OBSERVATIONAL_TYPES = frozenset({"observational study", "twin study"})
_REVIEW_TYPES = frozenset({"review", "scoping review", "systematic review"})
_OBSERVATIONAL_MESH = frozenset(
    {
        "cohort studies",
        "prospective studies",
        "retrospective studies",
        "case-control studies",
        "cross-sectional studies",
        "longitudinal studies",
        "follow-up studies",
        "surveys and questionnaires",
        "health surveys",
        "epidemiologic studies",
        "registries",
        "seroepidemiologic studies",
    }
)
# Methods descriptors of trials (MeSH "publication characteristics" are for studies "as topic";
# these describe how this study was run).
_TRIAL_MESH = frozenset(
    {"random allocation", "double-blind method", "single-blind method", "cross-over studies"}
)
_CELL_MESH = frozenset({"cells, cultured", "cell line", "cell line, tumor", "in vitro techniques"})

_I = re.IGNORECASE
_NUMBER_WORD = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|"
    r"eighty|ninety|hundred|thousand)"
)
#: A number written in words ("forty-one", "one hundred and twelve"), as a regex fragment.
NUMBER_WORDS = rf"{_NUMBER_WORD}(?:(?:[- ]|\s+and\s+){_NUMBER_WORD})*"
_SYSTEMATIC_TEXT = re.compile(
    r"\b(?:systematic(?:ally)? (?:review|literature review|search)|meta-?analys[ie]s|"
    r"pooled analysis of (?:\w+ ){0,3}(?:trials|studies)|"
    r"(?:studies|trials|articles) (?:\w+ ){0,6}were identified by (?:a |an )?(?:\w+ )?search\w*|"
    r"(?:we )?searched (?:\w+ ){0,3}(?:MEDLINE|PubMed|Embase|Cochrane|databases))\b",
    _I,
)
_GUIDELINE_TITLE = re.compile(
    r"\b(?:guidelines?|consensus statement|position statement|recommendations? (?:for|of|on))\b",
    _I,
)
_REVIEW_TITLE = re.compile(r"\breview\b|\ban overview\b|\bstate of the art\b", _I)
_REVIEW_TEXT = re.compile(
    r"\b(?:purpose of review|this review|in this review|we review|we summari[sz]e|"
    r"this article reviews|the literature (?:is|was) reviewed|"
    r"(?:studies|articles) were reviewed)\b",
    _I,
)
_RECORD_REVIEW = re.compile(
    r"\b(?:chart|record|case notes?|file)s? review\b|\breviewed (?:the )?"
    r"(?:medical |clinical |patient )?(?:records|charts)\b",
    _I,
)
_RANDOMIZED_METHODS = re.compile(
    r"(?<!non-)(?<!non)(?<!not )\b(?:randomly (?:assigned|allocated|divided|presented|given)|"
    r"were randomi[sz]ed|(?:was|were) assigned at random|randomi[sz]ed (?:\w+[- ]){0,3}"
    r"(?:trial|study)|randomi[sz]ation)\b",
    _I,
)
_NONRANDOMIZED_TRIAL = re.compile(
    r"\b(?:non-?randomi[sz]ed (?:\w+ ){0,2}(?:trial|study)|single-arm|open-label (?:\w+ ){0,2}"
    r"(?:trial|study)|phase (?:I{1,3}|[123])(?:/(?:I{1,3}|[123]))?[ab]? (?:\w+ )?(?:trial|study)|"
    r"first-in-human|pilot (?:clinical )?trial|(?:clinical|feasibility) trial)\b",
    _I,
)
_CASE_REPORT = re.compile(
    r"\bcase report\b|\bwe (?:report|describe|present) (?:a|an|the|two|three) "
    r"(?:\w+[- ]){0,4}(?:case|patient|man|woman|boy|girl|infant|child)s?\b|"
    r"\ban? \d{1,3}-(?:year|month|day)-old (?:\w+ ){0,2}(?:man|woman|boy|girl|patient|male|"
    r"female|infant|child) (?:presented|was admitted|was referred|underwent|with)\b|"
    r"\b(?:a|one) case of (?:[^.]{0,120}?) (?:is|was) (?:described|reported|presented)\b",
    _I,
)
_OBSERVATIONAL_TEXT = re.compile(
    r"\b(?:retrospective(?:ly)?|prospective(?:ly)?|cohorts?|case-control|cross-sectional|"
    r"population-based|registry|register-based|surveys?|questionnaires?|case series|"
    r"consecutive (?:\w+ ){0,2}patients|medical records|chart review|follow-up study|"
    r"longitudinal study|observational|epidemiolog\w+ study|interviews?|focus groups?|"
    r"qualitative (?:study|analysis|research)|"
    # human data at the population level: registries, claims, audits, ecological analyses
    r"routinely collected|administrative (?:\w+ )?data|claims data|(?:census|postcode|"
    r"national|population|county|state|area)[- ](?:level )?data|audits?|ecological|"
    r"secondary analysis|beneficiaries|interrupted time[- ]series|difference-in-differences|"
    r"(?:patients|participants|subjects|women|men|children|volunteers|individuals) "
    r"(?:were|was) (?:enrolled|recruited|included|studied|interviewed|surveyed|evaluated|"
    r"examined|assessed|followed)|we (?:enrolled|recruited|studied|interviewed|surveyed)|"
    r"(?:were|was) (?:recruited|enrolled))\b",
    _I,
)
# Species: lower case for the short ambiguous words ("rat", not "HW-RAT"; "Rats" opens
# sentences, hence the capital allowed only at the start of a word that is not an acronym).
_SPECIES = re.compile(
    r"(?<![\w-])(?:[Mm]ice|[Mm]ouse|[Mm]urine|[Rr]ats?|[Rr]odents?|[Gg]uinea[- ]pigs?|"
    r"[Pp]iglets?|[Pp]igs?|[Pp]orcine|[Ss]wine|[Mm]inipigs?|[Dd]ogs?|[Cc]anine|[Bb]eagles?|"
    r"[Rr]abbits?|[Ss]heep|[Oo]vine|[Ll]ambs?|[Ee]wes?|[Zz]ebrafish|"
    r"(?:[Nn]on-?human )?[Pp]rimates?|"
    r"[Mm]onkeys?|[Mm]acaques?|[Bb]aboons?|[Mm]armosets?|[Hh]amsters?|[Gg]erbils?|[Ff]errets?|"
    r"[Cc]ats?|[Ff]eline|[Hh]orses?|[Ee]quine|[Pp]onies|[Cc]attle|[Cc]ows?|[Cc]alves|[Bb]ovine|"
    r"[Gg]oats?|[Cc]aprine|[Cc]hickens?|[Bb]roilers?|Drosophila|Caenorhabditis|C\. elegans|"
    r"Xenopus|[Ff]rogs?|[Ff]ish|[Tt]rout|[Ss]almon|[Ll]ivestock|[Aa]nimal models?|"
    r"[Aa]nimals|[Xx]enografts?|[Kk]nockout|transgenic)(?![\w-])"
)
_SPECIES_FALSE_FRIENDS = re.compile(
    r"\b(?:dog|cat|animal|rat|snake|horse)[- ]bites?\b|\bguinea[- ]pig (?:of|for) \b|"
    r"\bcat[- ]scratch\b|\bpet owners?\b|\bowners? of (?:dogs|cats|pets)\b|"
    # animal material used on or for people: "bovine intestines" for a surgical skills test,
    # "porcine skin" grafts, "bovine serum albumin"
    r"\b(?:bovine|porcine|ovine|equine|canine|murine|animal|pig|cow|sheep) (?:intestines?|"
    r"tissues?|skin|hearts?|bones?|serum|albumin|collagen|pericardium|cadavers?|xenografts?|"
    r"valves?|grafts?|insulin|heparin|surfactant)\b",
    _I,
)
_IN_VITRO = re.compile(
    r"\bin vitro\b(?! fertili[sz]ation| maturation| (?:diagnostic|diagnosis))|"
    r"\bcell lines?\b|\bcultured (?:\w+ )?cells\b|\bcell cultures?\b|\bcells were (?:cultured|"
    r"treated|transfected|incubated)\b|\bwere (?:cultured|incubated|transfected)\b|"
    r"\bclinical isolates\b|\bisolates (?:were|of)\b|"
    r"\b(?:HeLa|HEK ?293T?|MCF-?7|A549|HepG2|Caco-2|Jurkat|THP-1|SH-SY5Y|PC12|U87|HCT116|"
    r"LNCaP|RAW ?264\.7|3T3|HUVECs?|iPSCs?|organoids?)\b|\bMIC\b|\bminimum inhibitory "
    r"concentrations?\b|\bspermatozoa\b|\bin culture\b",
)
_IN_VITRO_FALSE_FRIENDS = re.compile(r"\bin vitro fertili[sz]ation\b|\bIVF\b|\bICSI\b", _I)
_COMPUTATIONAL = re.compile(
    r"\b(?:in silico|simulations?|simulated|Monte Carlo|computational (?:model|study|analysis|"
    r"approach|method)s?|molecular (?:docking|dynamics)|finite element|mathematical model|"
    r"bioinformatic\w*|machine learning|deep learning|"
    r"neural networks?|phantoms?)\b",
    _I,
)
_COMPUTATIONAL_TITLE = re.compile(
    r"\b(?:in silico|simulations?|Monte Carlo|computational|molecular (?:docking|dynamics)|"
    r"mathematical model\w*|machine learning|deep learning|software|pipelines?|algorithms?)\b",
    _I,
)
_HUMAN_PARTICIPANTS = re.compile(
    rf"\b(?:\d[\d,]*|{NUMBER_WORDS}) (?:\w+[- ]){{0,3}}?(?:patients|participants|subjects|women|"
    r"men|children|adults|adolescents|infants|neonates|newborns|volunteers|respondents|"
    r"residents|veterans|mothers|pregnant women|survivors|nurses|physicians|students|workers|"
    r"employees|staff|"
    r"athletes|runners|individuals|persons|people|cases)\b|\b(?:patients|participants|"
    r"subjects|volunteers|runners|athletes|respondents|students|workers|nurses|physicians|"
    r"women|men|children|adults|adolescents|infants|midwives|residents|trainees|surgeons)"
    r"(?: \([^)]{1,30}\))? (?:were|was|who|with|undergoing|aged|"
    r"conducted|performed|completed|underwent)\b",
    _I,
)
_GENOMICS_MESH_PREFIXES = ("genome", "sequence analysis", "chromosomes", "phylogeny")
_GENOMICS_TEXT = re.compile(
    r"\b(?:genome sequenc\w+|sequencing (?:and|of) \w+|chromosome \d+ of|whole-genome)\b",
    _I,
)

# Background and negation: a species named there is not what the study did.
_BACKGROUND_SENTENCE = re.compile(
    r"\b(?:(?:previous|prior|earlier|recent|other|many|several|some|few) (?:\w+ ){0,2}"
    r"(?:studies|reports|work|research|data)|(?:studies|data|evidence|experiments|work) "
    r"(?:in|from|on|with) (?:\w+ ){0,3}(?:have|has) |have (?:been )?(?:shown|demonstrated|"
    r"suggested|reported|revealed|indicated)|has (?:been )?(?:shown|demonstrated|suggested|"
    r"reported)|(?:is|are|was|were) (?:well |widely )?known|suggests? that|it is unknown|"
    r"remains? (?:unclear|unknown)|(?:animal|preclinical|pre-clinical|experimental|laboratory) "
    r"(?:studies|models|data|evidence|work) (?:suggest|show|indicate|have|has))",
    _I,
)
_NEGATED = re.compile(
    r"\b(?:no|not|without|non|never|neither|nor|instead of|rather than)\W+"
    r"(?:\w+\W+){0,2}$",
    _I,
)
_BACKGROUND_CATEGORIES = frozenset({"BACKGROUND", "INTRODUCTION", "CONTEXT"})
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])")
_CURRICULUM = re.compile(
    r"\bpre-?clinical (?:modules?|years?|students?|curricul\w+|courses?|phase of|training|"
    r"sciences?|education|teaching)\b",
    _I,
)


def research_sentences(record: PubMedRecord) -> list[str]:
    """The sentences of the title and abstract that can describe what this study did:
    BACKGROUND / INTRODUCTION sections and background sentences ("Animal studies suggest...",
    "Previous studies have shown...") are left out, and so are curriculum phrases."""
    texts = [record.title or ""]
    for section in record.abstract:
        category = (section.category or section.label or "").upper()
        if category in _BACKGROUND_CATEGORIES:
            continue
        texts.append(section.text)
    sentences: list[str] = []
    for text in texts:
        for sentence in _SENTENCE_END.split(text):
            if sentence and not _BACKGROUND_SENTENCE.search(sentence):
                sentences.append(_CURRICULUM.sub(" ", sentence))
    return sentences


def _affirmed(
    pattern: re.Pattern[str], sentences: list[str], false_friends: re.Pattern[str] | None = None
) -> bool:
    """True when `pattern` matches a sentence outside a negation and a false friend."""
    for sentence in sentences:
        text = false_friends.sub(" ", sentence) if false_friends else sentence
        for match in pattern.finditer(text):
            if not _NEGATED.search(text[: match.start()][-40:]):
                return True
    return False


def _by_publication_type(
    types: set[str], mesh: frozenset[str], text: str
) -> DesignClassification | None:
    design_types = types - _NEUTRAL_TYPES
    if design_types and design_types <= NON_RESEARCH_TYPES:
        return DesignClassification(StudyDesign.OTHER, "other.non_research")
    if any("veterinary" in t for t in types):
        return DesignClassification(StudyDesign.ANIMAL, "animal.publication_type")
    if types & _SYNTHESIS_TYPES:
        return DesignClassification(
            StudyDesign.SYSTEMATIC_REVIEW, "systematic_review.publication_type"
        )
    if types & _GUIDELINE_TYPES:
        return DesignClassification(StudyDesign.GUIDELINE, "guideline.publication_type")
    trial = any("trial" in t and "as topic" not in t and "protocol" not in t for t in types)
    with_participants = trial or "case reports" in types or bool(types & _OBSERVATIONAL_TYPES)
    if with_participants and "animals" in mesh and "humans" not in mesh:
        return DesignClassification(StudyDesign.ANIMAL, "animal.publication_type_animals_mesh")
    if "randomized controlled trial" in types:
        return DesignClassification(StudyDesign.RCT, "rct.publication_type")
    if trial:
        if _RANDOMIZED_METHODS.search(text):
            return DesignClassification(StudyDesign.RCT, "rct.trial_type_randomized_text")
        return DesignClassification(
            StudyDesign.NONRANDOMIZED_TRIAL, "nonrandomized_trial.publication_type"
        )
    if "case reports" in types:
        return DesignClassification(StudyDesign.CASE_REPORT, "case_report.publication_type")
    if types & _OBSERVATIONAL_TYPES:
        return DesignClassification(StudyDesign.OBSERVATIONAL, "observational.publication_type")
    if types & _REVIEW_TYPES:
        if _SYSTEMATIC_TEXT.search(text):
            return DesignClassification(
                StudyDesign.SYSTEMATIC_REVIEW, "systematic_review.review_text"
            )
        return DesignClassification(
            StudyDesign.NARRATIVE_REVIEW, "narrative_review.publication_type"
        )
    if "historical article" in types:
        return DesignClassification(StudyDesign.OTHER, "other.historical")
    return None


def _by_mesh(
    mesh: frozenset[str], text: str, sentences: Callable[[], list[str]]
) -> DesignClassification | None:
    humans, animals = "humans" in mesh, "animals" in mesh
    if mesh & _TRIAL_MESH and (humans or not animals):
        if "random allocation" in mesh or _RANDOMIZED_METHODS.search(text):
            return DesignClassification(StudyDesign.RCT, "rct.mesh")
        return DesignClassification(StudyDesign.NONRANDOMIZED_TRIAL, "nonrandomized_trial.mesh")
    if mesh & _OBSERVATIONAL_MESH and (humans or not animals):
        return DesignClassification(StudyDesign.OBSERVATIONAL, "observational.mesh")
    if mesh & _CELL_MESH and not animals and not humans:
        return DesignClassification(StudyDesign.IN_VITRO, "in_vitro.mesh")
    if animals and not humans:
        if any(m.startswith(_GENOMICS_MESH_PREFIXES) for m in mesh) and _GENOMICS_TEXT.search(text):
            return DesignClassification(StudyDesign.OTHER, "other.genomics_mesh")
        if mesh & _CELL_MESH and not _affirmed(_SPECIES, sentences(), _SPECIES_FALSE_FRIENDS):
            return DesignClassification(StudyDesign.IN_VITRO, "in_vitro.mesh")
        return DesignClassification(StudyDesign.ANIMAL, "animal.mesh")
    return None


def _by_text(
    record: PubMedRecord, text: str, sentences: list[str], species_trusted: bool
) -> DesignClassification | None:
    title = record.title or ""
    checks: list[tuple[bool, StudyDesign, str]] = [
        (bool(_GUIDELINE_TITLE.search(title)), StudyDesign.GUIDELINE, "guideline.title"),
        (
            bool(_SYSTEMATIC_TEXT.search(title) or _affirmed(_SYSTEMATIC_TEXT, sentences)),
            StudyDesign.SYSTEMATIC_REVIEW,
            "systematic_review.text",
        ),
        (
            bool(_REVIEW_TITLE.search(title) or _REVIEW_TEXT.search(text))
            and not _RECORD_REVIEW.search(text),
            StudyDesign.NARRATIVE_REVIEW,
            "narrative_review.text",
        ),
        (_affirmed(_RANDOMIZED_METHODS, sentences), StudyDesign.RCT, "rct.text"),
        (
            _affirmed(_NONRANDOMIZED_TRIAL, sentences),
            StudyDesign.NONRANDOMIZED_TRIAL,
            "nonrandomized_trial.text",
        ),
        (bool(_CASE_REPORT.search(text)), StudyDesign.CASE_REPORT, "case_report.text"),
        (
            bool(_COMPUTATIONAL_TITLE.search(title)),
            StudyDesign.COMPUTATIONAL,
            "computational.title",
        ),
    ]
    for fired, design, rule in checks:
        if fired:
            return DesignClassification(design, rule)
    observational = _affirmed(_OBSERVATIONAL_TEXT, sentences)
    species = species_trusted and _affirmed(_SPECIES, sentences, _SPECIES_FALSE_FRIENDS)
    # MeSH says both Humans and Animals: people studied in the methods win over a species.
    human = "humans" in record.mesh_descriptors and _affirmed(_HUMAN_PARTICIPANTS, sentences)
    if species and not observational and not human:
        return DesignClassification(StudyDesign.ANIMAL, "animal.text_species")
    if observational:
        return DesignClassification(StudyDesign.OBSERVATIONAL, "observational.text")
    if _affirmed(_IN_VITRO, sentences, _IN_VITRO_FALSE_FRIENDS):
        return DesignClassification(StudyDesign.IN_VITRO, "in_vitro.text")
    if _affirmed(_COMPUTATIONAL, sentences):
        return DesignClassification(StudyDesign.COMPUTATIONAL, "computational.text")
    if _affirmed(_HUMAN_PARTICIPANTS, sentences):
        return DesignClassification(StudyDesign.OBSERVATIONAL, "observational.human_participants")
    return None


def classify_design(record: PubMedRecord) -> DesignClassification:
    """The study design of `record` and the rule that decided it (module docstring)."""
    types = {t.casefold() for t in record.publication_types}
    mesh = record.mesh_descriptors
    text = f"{record.title or ''}\n{record.abstract_text}"
    found = _by_publication_type(types, mesh, text)
    if found is not None:
        return found
    found = _by_mesh(mesh, text, lambda: research_sentences(record))
    if found is not None:
        return found
    sentences = research_sentences(record)
    species_trusted = not ("humans" in mesh and "animals" not in mesh)
    found = _by_text(record, text, sentences, species_trusted)
    if found is not None:
        return found
    return DesignClassification(StudyDesign.OTHER, "other.unclassified")

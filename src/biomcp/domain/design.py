"""Study design: what kind of study a record reports, and the rule that decided it.

`classify_design` gives every record one `StudyDesign` and names the rule that fired, as
`classify_evidence` does for the tier. Evidence is read in order of trust, the first rule that
fires wins:

1. Publication types (NLM's indexers chose them): non-research forms (editorial, letter,
   erratum...) -> `other`; Meta-Analysis / Systematic Review -> `systematic_review`; Practice
   Guideline / Guideline / Consensus Development Conference -> `guideline`; Randomized
   Controlled Trial -> `rct`; other human trial types -> `rct` when the abstract states a
   randomization (`rct.trial_type_randomized_text`), else `nonrandomized_trial`; Case Reports
   -> `case_report`; Observational Study -> `observational`; Review -> `narrative_review` (or
   `systematic_review` when the text says it is one); Historical Article -> `other`.
   Veterinary types -> `animal`, and so is a type of study with participants (a trial, Case
   Reports, Observational Study) on a record whose MeSH has the Animals check tag without
   Humans. Without MeSH (not indexed yet) the type stands.
2. MeSH, on records about people (Humans, or no Animals tag): a stated randomization beats
   observational descriptors (`rct.text_over_mesh`); trial methods descriptors make a trial
   (`rct.mesh` with Random Allocation and another method or a stated randomization;
   Random Allocation alone is random sampling and makes nothing). Then observational
   descriptors (Cohort, Case-Control, Prospective Studies...) -> `observational`; the Animals
   tag without Humans -> `animal` (`in_vitro` for cultured cells, `other` for genome
   sequencing). With Humans and not Animals, species words in the text are not trusted.
3. Title and abstract (`design_text`, `design_reports`), in this order: a title that names a
   notice about another article (a correction, erratum or retraction: `other.notice`); a
   title that answers another article (a letter, comment or reply: `other.commentary`); a
   title that is a guideline (`guideline.title`), or an abstract that calls the record one
   (`guideline.text`); a software paper's heading ("AVAILABILITY AND IMPLEMENTATION:",
   `computational.software`) or a title naming a simulation or modelling study
   (`computational.title`); a systematic search or pooled analysis
   (`systematic_review.text`); a title that names a case (`case_report.title`), or a
   section headed as one ("CASE PRESENTATION:", `case_report.heading`); a narrative
   review (`narrative_review.text`); a commentary (`other.commentary`, not research); Mendelian
   randomization (`observational.mendelian_randomization`); a trial whose subjects are animals
   (`animal.text_trial_species`, species before randomization); a stated randomization
   (`rct.text`); a Latin square design (`rct.text_latin_square`); a trial without either, or
   a placebo this study gave, or a quasi-experimental design (`nonrandomized_trial.text`);
   a case in the abstract (`case_report.text`: a handful of patients at most, or one family;
   an animal case is left to the species rules); a computational title that names no bench
   work beside it; an economic
   evaluation (`computational.economic_model` on a model, else `observational.economic`);
   then species
   (`animal.text_species`), observational methods, in-vitro work (`in_vitro.text`, and
   `in_vitro.text_assays` for bench assays on cells, or an IC50 or enzyme assay when no
   people take part; `in_vitro.text` too for cells named by their species, as "isolated rat
   hepatocytes", when no people take part), computational work (`in_vitro.text_assays`
   when an assay is named beside it and no people take part), human participants
   (`observational.human_participants`) and regression models fitted to data about people
   (`observational.regression`).
4. `other.unclassified`.

Keyword rules ignore background sentences ("Animal studies suggest...", a BACKGROUND section),
negated mentions ("no animal model", "non-randomized") and known false friends: "in vitro
fertilization", acronyms such as "HW-RAT", random sampling, calls for future trials, trials
the abstract only mentions ("clinical trial evidence", "an ancillary study to a clinical trial").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from biomcp.domain.design_reports import (
    case_heading,
    case_title,
    computational_study_title,
    computational_title,
    correspondence_title,
    guideline_text,
    guideline_title,
    is_commentary,
    names_itself_narrative,
    narrative_review,
    narrative_title,
    notice_title,
    software_heading,
    states_case,
    systematic_search,
)
from biomcp.domain.design_text import (
    NUMBER_WORDS,
    animal_experiment,
    bench_measures,
    cells_of_a_species,
    computational_methods,
    economic_evaluation,
    economic_model,
    genome_sequencing,
    has_cell_work,
    has_species,
    is_mendelian_randomization,
    lab_assays,
    latin_square,
    observational_methods,
    regression_of_people,
    research_sentences,
    states_assay,
    states_human_participants,
    states_randomization,
    states_trial,
)
from biomcp.domain.records import PubMedRecord

__all__ = [
    "NUMBER_WORDS",
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
    `other.non_research` / `other.historical` / `other.commentary` / `other.notice` /
    `other.unclassified`)."""

    design: StudyDesign
    rule: str

    @property
    def is_research(self) -> bool:
        """False for non-research items (editorials, letters, errata, historical articles,
        commentaries)."""
        return self.rule not in _NOT_RESEARCH_RULES


_NOT_RESEARCH_RULES = frozenset(
    {"other.non_research", "other.historical", "other.commentary", "other.notice"}
)


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
        "mendelian randomization analysis",
    }
)
# Methods descriptors of trials (MeSH "publication characteristics" are for studies "as topic";
# these describe how this study was run).
_TRIAL_MESH = frozenset(
    {"random allocation", "double-blind method", "single-blind method", "cross-over studies"}
)
_RANDOM_ALLOCATION = "random allocation"
_CELL_MESH = frozenset({"cells, cultured", "cell line", "cell line, tumor", "in vitro techniques"})

_GENOMICS_MESH_PREFIXES = ("genome", "sequence analysis", "chromosomes", "phylogeny")

Sentences = Callable[[], list[str]]
D = StudyDesign


def _found(design: StudyDesign, rule: str) -> DesignClassification:
    return DesignClassification(design, rule)


def _by_publication_type(
    types: set[str], mesh: frozenset[str], text: str, sentences: Sentences
) -> DesignClassification | None:
    design_types = types - _NEUTRAL_TYPES
    if design_types and design_types <= NON_RESEARCH_TYPES:
        return _found(D.OTHER, "other.non_research")
    if any("veterinary" in t for t in types):
        return _found(D.ANIMAL, "animal.publication_type")
    if types & _SYNTHESIS_TYPES:
        return _found(D.SYSTEMATIC_REVIEW, "systematic_review.publication_type")
    if types & _GUIDELINE_TYPES:
        return _found(D.GUIDELINE, "guideline.publication_type")
    trial = any("trial" in t and "as topic" not in t and "protocol" not in t for t in types)
    with_participants = trial or "case reports" in types or bool(types & _OBSERVATIONAL_TYPES)
    if with_participants and "animals" in mesh and "humans" not in mesh:
        return _found(D.ANIMAL, "animal.publication_type_animals_mesh")
    if "randomized controlled trial" in types:
        return _found(D.RCT, "rct.publication_type")
    if trial:
        if states_randomization(sentences()):
            return _found(D.RCT, "rct.trial_type_randomized_text")
        return _found(D.NONRANDOMIZED_TRIAL, "nonrandomized_trial.publication_type")
    if "case reports" in types:
        return _found(D.CASE_REPORT, "case_report.publication_type")
    if types & _OBSERVATIONAL_TYPES:
        return _found(D.OBSERVATIONAL, "observational.publication_type")
    if types & _REVIEW_TYPES:
        if systematic_search("", [text]):
            return _found(D.SYSTEMATIC_REVIEW, "systematic_review.review_text")
        return _found(D.NARRATIVE_REVIEW, "narrative_review.publication_type")
    if "historical article" in types:
        return _found(D.OTHER, "other.historical")
    return None


def _trial_by_mesh(
    mesh: frozenset[str], text: str, sentences: Sentences
) -> DesignClassification | None:
    """A trial on a record about people: what the abstract states about randomization is
    weighed with the trial methods and observational descriptors."""
    methods = mesh & _TRIAL_MESH
    if not methods and not mesh & _OBSERVATIONAL_MESH:
        return None
    randomized = not is_mendelian_randomization(text) and states_randomization(sentences())
    if randomized:
        return _found(D.RCT, "rct.mesh" if methods else "rct.text_over_mesh")
    if methods - {_RANDOM_ALLOCATION}:
        if _RANDOM_ALLOCATION in methods:
            return _found(D.RCT, "rct.mesh")
        return _found(D.NONRANDOMIZED_TRIAL, "nonrandomized_trial.mesh")
    return None  # Random Allocation alone: random sampling, not allocation to arms


def _by_mesh(mesh: frozenset[str], text: str, sentences: Sentences) -> DesignClassification | None:
    humans, animals = "humans" in mesh, "animals" in mesh
    if humans or not animals:
        found = _trial_by_mesh(mesh, text, sentences)
        if found is not None:
            return found
        if mesh & _OBSERVATIONAL_MESH:
            return _found(D.OBSERVATIONAL, "observational.mesh")
    if mesh & _CELL_MESH and not animals and not humans:
        return _found(D.IN_VITRO, "in_vitro.mesh")
    if animals and not humans:
        if any(m.startswith(_GENOMICS_MESH_PREFIXES) for m in mesh) and genome_sequencing(text):
            return _found(D.OTHER, "other.genomics_mesh")
        if mesh & _CELL_MESH and not has_species(sentences()):
            return _found(D.IN_VITRO, "in_vitro.mesh")
        return _found(D.ANIMAL, "animal.mesh")
    return None


def _by_statement(
    title: str, text: str, sentences: list[str], species_trusted: bool
) -> DesignClassification | None:
    """Designs the text states outright: what the record is, and how its subjects were
    allocated (species before randomization)."""
    if notice_title(title):
        return _found(D.OTHER, "other.notice")
    if correspondence_title(title):
        return _found(D.OTHER, "other.commentary")
    if guideline_title(title):
        return _found(D.GUIDELINE, "guideline.title")
    if guideline_text(sentences):
        return _found(D.GUIDELINE, "guideline.text")
    if software_heading(text):
        return _found(D.COMPUTATIONAL, "computational.software")
    if computational_study_title(title):
        return _found(D.COMPUTATIONAL, "computational.title")
    if narrative_title(title) or names_itself_narrative(text):
        return _found(D.NARRATIVE_REVIEW, "narrative_review.text")
    if systematic_search(title, sentences):
        return _found(D.SYSTEMATIC_REVIEW, "systematic_review.text")
    animals = species_trusted and animal_experiment(sentences)  # a veterinary case is animal
    if case_title(title) and not animals:
        return _found(D.CASE_REPORT, "case_report.title")
    if case_heading(text) and not animals:
        return _found(D.CASE_REPORT, "case_report.heading")
    if narrative_review(title, text):
        return _found(D.NARRATIVE_REVIEW, "narrative_review.text")
    if is_commentary(text) and not (
        states_human_participants(sentences) or observational_methods(sentences)
    ):
        return _found(D.OTHER, "other.commentary")
    if is_mendelian_randomization(text):
        return _found(D.OBSERVATIONAL, "observational.mendelian_randomization")
    randomized = states_randomization(sentences)
    trial = randomized or states_trial(sentences)
    if trial and animals:
        return _found(D.ANIMAL, "animal.text_trial_species")
    if randomized:
        return _found(D.RCT, "rct.text")
    if latin_square(sentences) and not animals:
        return _found(D.RCT, "rct.text_latin_square")
    if trial:
        return _found(D.NONRANDOMIZED_TRIAL, "nonrandomized_trial.text")
    if states_case(text) and not animals:
        return _found(D.CASE_REPORT, "case_report.text")
    if computational_title(title):
        return _found(D.COMPUTATIONAL, "computational.title")
    if economic_model(text):
        return _found(D.COMPUTATIONAL, "computational.economic_model")
    if economic_evaluation(text):
        return _found(D.OBSERVATIONAL, "observational.economic")
    return None


def _by_methods(
    record: PubMedRecord, text: str, sentences: list[str], species_trusted: bool
) -> DesignClassification | None:
    """Designs read from the methods: species, observational methods, laboratory and
    computational work, people taking part."""
    observational = observational_methods(sentences)
    species = species_trusted and has_species(sentences)
    people = states_human_participants(sentences)
    # MeSH says both Humans and Animals: people studied in the methods win over a species.
    human = "humans" in record.mesh_descriptors and people
    if species and not observational and not human:
        return _found(D.ANIMAL, "animal.text_species")
    if observational:
        return _found(D.OBSERVATIONAL, "observational.text")
    if has_cell_work(sentences):
        return _found(D.IN_VITRO, "in_vitro.text")
    if lab_assays(text):
        return _found(D.IN_VITRO, "in_vitro.text_assays")
    if bench_measures(sentences) and not people:
        return _found(D.IN_VITRO, "in_vitro.text_assays")
    if cells_of_a_species(sentences) and not people:
        return _found(D.IN_VITRO, "in_vitro.text")
    if computational_methods(sentences):
        if states_assay(sentences) and not people:
            return _found(D.IN_VITRO, "in_vitro.text_assays")
        return _found(D.COMPUTATIONAL, "computational.text")
    if people:
        return _found(D.OBSERVATIONAL, "observational.human_participants")
    if regression_of_people(sentences):
        return _found(D.OBSERVATIONAL, "observational.regression")
    return None


def classify_design(record: PubMedRecord) -> DesignClassification:
    """The study design of `record` and the rule that decided it (module docstring)."""
    types = {t.casefold() for t in record.publication_types}
    mesh = record.mesh_descriptors
    text = f"{record.title or ''}\n{record.abstract_text}"
    cache: list[list[str]] = []

    def sentences() -> list[str]:
        if not cache:
            cache.append(research_sentences(record))
        return cache[0]

    found = _by_publication_type(types, mesh, text, sentences) or _by_mesh(mesh, text, sentences)
    if found is not None:
        return found
    species_trusted = not ("humans" in mesh and "animals" not in mesh)
    title = record.title or ""
    found = _by_statement(title, text, sentences(), species_trusted) or _by_methods(
        record, text, sentences(), species_trusted
    )
    return found or _found(D.OTHER, "other.unclassified")

"""What kind of section a structured-abstract label names: its NLM category.

PubMed tags each labelled section with an `NlmCategory` (BACKGROUND, OBJECTIVE, METHODS,
RESULTS, CONCLUSIONS), mapped by NLM from the journal's own label. A stored category wins.
When a record or an older chunk has only the label, `category_of_label` maps the common labels
the way NLM's structured-abstract list does: INTERPRETATION and CONCLUSIONS AND RELEVANCE are
conclusions, FINDINGS results, MAIN OUTCOME MEASURES methods.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["NLM_CATEGORIES", "category_of_label", "section_category"]

#: The NLM categories a section can belong to (UNASSIGNED means none).
NLM_CATEGORIES = frozenset({"BACKGROUND", "OBJECTIVE", "METHODS", "RESULTS", "CONCLUSIONS"})

_LABELS: dict[str, tuple[str, ...]] = {
    "BACKGROUND": (
        "background", "introduction", "context", "rationale", "importance", "premise",
        "clinical context", "state of the art", "problem", "scope",
    ),
    "OBJECTIVE": (
        "objective", "aim", "purpose", "goal", "hypothesis", "question", "research question",
        "study objective", "background and aims", "background and objective",
        "background and purpose", "aims and objectives", "primary objective",
    ),
    "METHODS": (
        "methods", "method", "methodology", "materials and methods", "patients and methods",
        "subjects and methods", "design", "study design", "setting", "participants", "patients",
        "subjects", "population", "intervention", "interventions", "exposure", "exposures",
        "measurements", "main outcome measures", "main outcomes and measures",
        "outcome measures", "primary outcome measures", "design, setting, and participants",
        "design and setting", "setting and participants", "data sources", "study selection",
        "data extraction", "search methods", "selection criteria", "data collection and analysis",
        "eligibility criteria", "procedures", "analysis", "statistical analysis", "approach",
    ),
    "RESULTS": (
        "results", "result", "findings", "main results", "main findings", "outcomes",
        "observations", "data synthesis", "evidence synthesis", "key results",
        "measurements and main results", "methods and results", "principal findings",
    ),
    "CONCLUSIONS": (
        "conclusions", "conclusion", "interpretation", "conclusions and relevance",
        "authors' conclusions", "discussion", "implications", "significance",
        "clinical relevance", "relevance", "implications for practice",
        "conclusions and implications", "clinical significance", "discussion and conclusions",
    ),
}  # fmt: skip

_BY_LABEL: Mapping[str, str] = MappingProxyType(
    {label: category for category, labels in _LABELS.items() for label in labels}
)

# For labels outside the list: the first stem found decides, results before conclusions, so
# "RESULTS AND CONCLUSIONS" counts as results (its numbers are what it carries).
_STEMS = (
    ("RESULTS", re.compile(r"\b(?:results?|findings)\b")),
    ("CONCLUSIONS", re.compile(r"\b(?:conclu\w*|interpretation|discussion)\b")),
    ("METHODS", re.compile(r"\b(?:methods?|design|measures?|participants|patients)\b")),
    ("OBJECTIVE", re.compile(r"\b(?:objectives?|aims?|purposes?|goals?)\b")),
    ("BACKGROUND", re.compile(r"\b(?:background|introduction|context)\b")),
)


def _normal(label: str) -> str:
    text = label.strip().rstrip(":.").replace("&", " and ").casefold()
    return re.sub(r"\s+", " ", text).strip()


def category_of_label(label: str | None) -> str | None:
    """The NLM category of a section label (case and a trailing colon ignored), or None when
    the label says nothing recognisable."""
    if not label:
        return None
    text = _normal(label)
    if text in _BY_LABEL:
        return _BY_LABEL[text]
    singular = text.removesuffix("s")
    if singular in _BY_LABEL:
        return _BY_LABEL[singular]
    for category, stem in _STEMS:
        if stem.search(text):
            return category
    return None


def section_category(label: str | None, category: str | None = None) -> str | None:
    """A section's NLM category: `category` when it is one (UNASSIGNED is not), else the
    category its label maps to."""
    given = (category or "").strip().upper()
    if given in NLM_CATEGORIES:
        return given
    return category_of_label(label)

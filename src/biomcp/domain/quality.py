"""The transparent 0-10 document quality score (spec 03 section 5).

Five components, each an integer in its own range, every one kept in the breakdown:

* design 0-3, from the study design (`design.classify_design`): 3 systematic review / meta-
  analysis or randomized trial; 2 non-randomized trial or observational study; 1 case report,
  animal, in-vitro, computational or other research, narrative review, guideline; 0 for
  non-research items (editorials, letters, errata, historical articles).
* recency 0-2: 2 when published at most 5 years before "today", 1 at most 10, else 0. Age is
  counted in calendar years (today.year - publication year) so a year-only date is never
  guessed; "today" is injected, never read from a clock. The breakdown records the year it
  was counted in (`scored_in`): when the calendar year turns, `rescore_recency` brings a
  stored score up to date without the record.
* journal 0-2: 2 for a tier-1 journal (`JournalTiers`, matched by ISSN and by name), 1 for an
  optional tier-2 list, else 0.
* human 0-2: the design decides first. An animal design gets 1, an in-vitro or non-human
  genome design 0, even with MeSH Humans. Otherwise 2 for a human study (MeSH Humans, a
  clinical tier, or, for records not yet MeSH-indexed, people named in the abstract), 1 for
  animals named, else 0.
* sample size 0-2: the study size read from the abstract (`quality_sample.read_sample_size`:
  groups summed, counts of procedures, eyes or samples refused); 2 when > 500, 1 when
  100-500.

total = round(sum(weight_i * component_i)), clamped to 0-10. With the default weights (all 1)
the components can add up to 11, hence the clamp the spec asks for.

A retracted record (`PubMedRecord.is_retracted`) keeps no points for what it reports: design,
human and sample size are 0. Journal and recency describe the publication and stand (a total
of at most 4 under the default weights). The sample size read stays in the breakdown. The
rule lives in the components, so `rescore_recency` keeps it without the record.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import date

from biomcp.domain.design import (
    DesignClassification,
    StudyDesign,
    classify_design,
)
from biomcp.domain.errors import InvalidConfigError
from biomcp.domain.evidence import EvidenceClassification, classify_evidence
from biomcp.domain.journals import DEFAULT_TIER1_JOURNALS
from biomcp.domain.quality_sample import read_sample_size, words_to_number
from biomcp.domain.records import EvidenceType, PubMedRecord, QualityBreakdown, SampleSizeReading

__all__ = [
    "JournalTiers",
    "QualityConfig",
    "QualityWeights",
    "SampleSizeReading",
    "design_points",
    "journal_key",
    "parse_sample_size",
    "read_sample_size",
    "recency_points",
    "rescore_recency",
    "score_quality",
    "total_score",
    "words_to_number",
]

_ISSN = re.compile(r"([0-9]{4})-?([0-9]{3}[0-9X])")


def _issn_key(issn: str) -> str | None:
    match = _ISSN.fullmatch(issn.strip().upper())
    return f"{match.group(1)}-{match.group(2)}" if match else None


def journal_key(name: str) -> str:
    """A journal title or abbreviation normalized for matching: case-folded, leading "the"
    and punctuation removed, "&" spelled "and", parenthesized place names dropped
    ("Lancet (London, England)" -> "lancet")."""
    text = re.sub(r"\([^)]*\)", " ", name.casefold())
    text = text.replace("&", " and ")
    text = re.sub(r"[^\w\s]", " ", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text.removeprefix("the ")


@dataclass(frozen=True, slots=True)
class JournalTiers:
    """Tier-1 (worth 2) and tier-2 (worth 1) journals, as normalized ISSNs and names."""

    tier1_issns: frozenset[str]
    tier1_names: frozenset[str]
    tier2_issns: frozenset[str] = frozenset()
    tier2_names: frozenset[str] = frozenset()

    @classmethod
    def from_entries(
        cls,
        tier1: Iterable[tuple[str, str, str | None, str | None]],
        tier2: Iterable[tuple[str, str, str | None, str | None]] = (),
    ) -> JournalTiers:
        """Build from (title, ISO abbreviation, print ISSN, electronic ISSN) entries."""

        def issns(entries: list[tuple[str, str, str | None, str | None]]) -> frozenset[str]:
            keys = (_issn_key(i) for e in entries for i in e[2:] if i)
            return frozenset(k for k in keys if k)

        def names(entries: list[tuple[str, str, str | None, str | None]]) -> frozenset[str]:
            return frozenset(journal_key(n) for e in entries for n in e[:2] if n)

        one, two = list(tier1), list(tier2)
        return cls(issns(one), names(one), issns(two), names(two))

    @classmethod
    def default(cls) -> JournalTiers:
        return cls.from_entries(DEFAULT_TIER1_JOURNALS)

    def points(self, record: PubMedRecord) -> int:
        journal = record.journal
        keys = {_issn_key(i) for i in (journal.issn, journal.eissn) if i} - {None}
        names = {journal_key(n) for n in (journal.title, journal.iso_abbreviation) if n}
        if keys & self.tier1_issns or names & self.tier1_names:
            return 2
        if keys & self.tier2_issns or names & self.tier2_names:
            return 1
        return 0


@dataclass(frozen=True, slots=True)
class QualityWeights:
    """Multipliers of each component in the total (all 1 by default; tune per domain, e.g.
    weigh sample size less for rare-disease oncology). Must be finite and non-negative, which
    keeps the total monotone in every component."""

    design: float = 1.0
    recency: float = 1.0
    journal: float = 1.0
    human: float = 1.0
    sample_size: float = 1.0

    def __post_init__(self) -> None:
        for name in ("design", "recency", "journal", "human", "sample_size"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise InvalidConfigError(f"quality weight {name} must be >= 0, got {value}")


@dataclass(frozen=True, slots=True)
class QualityConfig:
    weights: QualityWeights = field(default_factory=QualityWeights)
    journals: JournalTiers = field(default_factory=JournalTiers.default)
    recent_years: int = 5
    older_years: int = 10
    sample_medium: int = 100
    sample_large: int = 500

    def __post_init__(self) -> None:
        if not 0 <= self.recent_years <= self.older_years:
            raise InvalidConfigError("need 0 <= recent_years <= older_years")
        if not 0 < self.sample_medium <= self.sample_large:
            raise InvalidConfigError("need 0 < sample_medium <= sample_large")

    def with_weights(self, **weights: float) -> QualityConfig:
        """A copy with some weights changed: `config.with_weights(sample_size=0.5)`."""
        return replace(self, weights=replace(self.weights, **weights))


_HUMAN_TEXT = re.compile(
    r"\b(?:patients?|participants?|women|men|children|adults|adolescents|infants|volunteers|"
    r"humans?|individuals|persons|people|cohort)\b",
    re.IGNORECASE,
)
_ANIMAL_TEXT = re.compile(
    r"\b(?:mice|mouse|murine|rats?|animals?|rodents?|zebrafish|pigs?|porcine|dogs?|canine|"
    r"primates?|macaques?|rabbits?|sheep|ovine|bovine|hamsters?)\b",
    re.IGNORECASE,
)


def parse_sample_size(text: str) -> int | None:
    """The largest plausible study size stated in `text` (`read_sample_size`), or None."""
    return read_sample_size(text).n


_DESIGN_POINTS = {
    StudyDesign.SYSTEMATIC_REVIEW: 3,
    StudyDesign.RCT: 3,
    StudyDesign.NONRANDOMIZED_TRIAL: 2,
    StudyDesign.OBSERVATIONAL: 2,
}


def design_points(design: DesignClassification) -> int:
    """Design component 0-3 from the study design (module docstring)."""
    if not design.is_research:
        return 0
    return _DESIGN_POINTS.get(design.design, 1)


def recency_points(year: int | None, today: date, config: QualityConfig) -> int:
    """Recency component 0-2 of a record published in `year` (None: undated, 0)."""
    if year is None:
        return 0
    age = today.year - year
    if age <= config.recent_years:
        return 2
    return 1 if age <= config.older_years else 0


_NON_HUMAN_RULES = frozenset({"other.genomics_mesh"})


def _human_points(
    record: PubMedRecord, evidence: EvidenceClassification, design: DesignClassification
) -> int:
    mesh = record.mesh_descriptors
    if design.design is StudyDesign.ANIMAL:
        return 1
    # A design that is not about people outranks MeSH Humans (cell lines of human origin).
    if design.design is StudyDesign.IN_VITRO or design.rule in _NON_HUMAN_RULES:
        return 0
    if "humans" in mesh or evidence.evidence_type is EvidenceType.CLINICAL:
        return 2
    if "animals" in mesh:
        return 1
    text = f"{record.title or ''} {record.abstract_text}"
    # Records not yet MeSH-indexed: people named in the text make it a human study.
    if (
        not mesh
        and evidence.evidence_type is not EvidenceType.PRECLINICAL
        and _HUMAN_TEXT.search(text)
    ):
        return 2
    return 1 if _ANIMAL_TEXT.search(text) else 0


def score_quality(
    record: PubMedRecord,
    today: date,
    config: QualityConfig | None = None,
    evidence: EvidenceClassification | None = None,
    design: DesignClassification | None = None,
) -> QualityBreakdown:
    """Score a record 0-10 with its breakdown (module docstring). `evidence` and `design` may
    be passed when the caller already classified the record; they are computed otherwise."""
    config = config or QualityConfig()
    design = design or classify_design(record)
    evidence = evidence or classify_evidence(record, design)
    reading = read_sample_size(record.abstract_text)
    n = reading.n
    sample = 0
    if n is not None:
        sample = 2 if n > config.sample_large else 1 if n >= config.sample_medium else 0
    design_score = design_points(design)
    recency = recency_points(record.year, today, config)
    journal = config.journals.points(record)
    human = _human_points(record, evidence, design)
    if record.is_retracted:
        # What a retracted paper reports is withdrawn (module docstring).
        design_score, human, sample = 0, 0, 0
    return QualityBreakdown(
        design=design_score,
        recency=recency,
        journal=journal,
        human=human,
        sample_size=sample,
        total=total_score(design_score, recency, journal, human, sample, config.weights),
        sample_size_n=n,
        scored_in=today.year,
        sample_size_reading=reading,
        retracted=record.is_retracted,
    )


def rescore_recency(
    quality: QualityBreakdown, year: int | None, today: date, config: QualityConfig | None = None
) -> QualityBreakdown:
    """`quality` (a stored score of a record published in `year`) with its recency counted
    from `today` and its total summed again under `config`'s weights; the other components
    stand (they follow the record, not the calendar)."""
    config = config or QualityConfig()
    recency = recency_points(year, today, config)
    total = total_score(
        quality.design, recency, quality.journal, quality.human, quality.sample_size,
        config.weights,
    )  # fmt: skip
    return replace(quality, recency=recency, total=total, scored_in=today.year)


def total_score(
    design: int, recency: int, journal: int, human: int, sample_size: int, weights: QualityWeights
) -> int:
    """round(weighted sum of the components), half up, clamped to 0-10."""
    raw = (
        weights.design * design
        + weights.recency * recency
        + weights.journal * journal
        + weights.human * human
        + weights.sample_size * sample_size
    )
    if raw >= 10:  # also keeps huge finite weights from overflowing to infinity
        return 10
    return max(0, math.floor(raw + 0.5))

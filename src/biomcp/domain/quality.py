"""The transparent 0-10 document quality score (spec 03 section 5).

Five components, each an integer in its own range, every one kept in the breakdown:

* design 0-3: 3 randomized trial or meta-analysis / systematic review; 2 other human study
  designs (non-randomized or phase trials, observational, cohort, case-control, comparative,
  multicentre); 1 preclinical or basic research, case reports and narrative reviews; 0 for
  non-research items (editorials, letters, errata: the `other` evidence tier).
* recency 0-2: 2 when published at most 5 years before "today", 1 at most 10, else 0. Age is
  counted in calendar years (today.year - publication year) so a year-only date is never
  guessed; "today" is injected, never read from a clock.
* journal 0-2: 2 for a tier-1 journal (`JournalTiers`, matched by ISSN and by name), 1 for an
  optional tier-2 list, else 0.
* human 0-2: 2 for a human study (MeSH Humans, a clinical tier, or, for records not yet
  MeSH-indexed, people named in the abstract), 1 for an animal study, 0 otherwise (in vitro).
* sample size 0-2: the largest n parsed from the abstract; 2 when > 500, 1 when 100-500.

total = round(sum(weight_i * component_i)), clamped to 0-10. With the default weights (all 1)
the components can add up to 11, hence the clamp the spec asks for.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import date

from biomcp.domain.errors import InvalidConfigError
from biomcp.domain.evidence import EvidenceClassification, classify_evidence
from biomcp.domain.journals import DEFAULT_TIER1_JOURNALS
from biomcp.domain.records import EvidenceType, PubMedRecord, QualityBreakdown

__all__ = [
    "JournalTiers",
    "QualityConfig",
    "QualityWeights",
    "journal_key",
    "parse_sample_size",
    "score_quality",
    "total_score",
]

_ISSN = re.compile(r"^(\d{4})-?(\d{3}[\dX])$")


def _issn_key(issn: str) -> str | None:
    match = _ISSN.match(issn.strip().upper())
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


_HUMAN_STUDY_TYPES = frozenset(
    {
        "controlled clinical trial",
        "pragmatic clinical trial",
        "equivalence trial",
        "adaptive clinical trial",
        "clinical trial, phase i",
        "clinical trial, phase ii",
        "clinical trial, phase iii",
        "clinical trial, phase iv",
        "clinical trial",
        "observational study",
        "comparative study",
        "multicenter study",
        "clinical study",
        "twin study",
        "validation study",
        "evaluation study",
    }
)
_HUMAN_STUDY_MESH = frozenset(
    {
        "cohort studies",
        "prospective studies",
        "retrospective studies",
        "case-control studies",
        "cross-sectional studies",
        "longitudinal studies",
        "follow-up studies",
        "non-randomized controlled trials as topic",
    }
)
_RANDOMIZED_TEXT = re.compile(r"\brandomi[sz]ed\b|\brandomly (?:assigned|allocated)\b", re.I)
_PEOPLE = (
    r"patients|participants|subjects|individuals|persons|people|women|men|children|adults|"
    r"adolescents|infants|neonates|newborns|volunteers|respondents|residents|veterans|"
    r"pregnancies|mothers|smokers|survivors|cases|controls|eyes|mice|rats|animals"
)
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
_NOT_ADJECTIVE = (
    r"(?:in|of|with|from|per|and|or|to|at|by|for|among|on|vs|versus|"
    r"hours?|days?|weeks?|months?|years?|times|mg|kg|g|ml|doses?|sessions?|cycles?|visits?)"
)
_NUM = r"(\d{1,3}(?:,\d{3})+|\d+)(?![.,]\d)"
_SAMPLE_PATTERNS = (
    re.compile(rf"\b[nN]\s?=\s?{_NUM}"),
    # "120 adult women", "3849 consecutive patients"; not "104 weeks in patients".
    re.compile(
        rf"(?<![\d.,]){_NUM}\s+(?:(?!{_NOT_ADJECTIVE}\b)[a-zA-Z-]+\s+){{0,3}}?(?:{_PEOPLE})\b",
        re.IGNORECASE,
    ),
    re.compile(
        rf"\b(?:total of|sample of|cohort of|enrolled|recruited|randomi[sz]ed|included)\s+{_NUM}",
        re.IGNORECASE,
    ),
)


def parse_sample_size(text: str) -> int | None:
    """The largest study size stated in `text`: "n = 1,234", "3849 patients", "120 adult
    women", "a total of 560", "enrolled 85"; None when nothing is stated. Numbers that look
    like years (1900-2099 followed by a people word) are ignored."""
    sizes: list[int] = []
    for pattern in _SAMPLE_PATTERNS:
        for match in pattern.finditer(text):
            value = int(match.group(1).replace(",", ""))
            looks_like_year = 1900 <= value <= 2099 and "," not in match.group(1)
            if value > 0 and not (looks_like_year and pattern is not _SAMPLE_PATTERNS[0]):
                sizes.append(value)
    return max(sizes) if sizes else None


def _design_points(record: PubMedRecord, evidence: EvidenceClassification) -> int:
    types = {t.casefold() for t in record.publication_types}
    if evidence.evidence_type is EvidenceType.OTHER:
        return 0
    if types & {"randomized controlled trial", "meta-analysis", "systematic review"}:
        return 3
    text = f"{record.title or ''} {record.abstract_text}"
    if evidence.evidence_type is EvidenceType.CLINICAL:
        return 3 if _RANDOMIZED_TEXT.search(text) else 2
    humans = "humans" in record.mesh_descriptors
    if evidence.evidence_type is not EvidenceType.PRECLINICAL and (
        types & _HUMAN_STUDY_TYPES or (humans and record.mesh_descriptors & _HUMAN_STUDY_MESH)
    ):
        return 2
    return 1


def _recency_points(record: PubMedRecord, today: date, config: QualityConfig) -> int:
    year = record.year
    if year is None:
        return 0
    age = today.year - year
    if age <= config.recent_years:
        return 2
    return 1 if age <= config.older_years else 0


def _human_points(record: PubMedRecord, evidence: EvidenceClassification) -> int:
    mesh = record.mesh_descriptors
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
) -> QualityBreakdown:
    """Score a record 0-10 with its breakdown (module docstring). `evidence` may be passed when
    the caller already classified the record; it is computed otherwise."""
    config = config or QualityConfig()
    evidence = evidence or classify_evidence(record)
    n = parse_sample_size(record.abstract_text)
    sample = 0
    if n is not None:
        sample = 2 if n > config.sample_large else 1 if n >= config.sample_medium else 0
    design = _design_points(record, evidence)
    recency = _recency_points(record, today, config)
    journal = config.journals.points(record)
    human = _human_points(record, evidence)
    return QualityBreakdown(
        design=design,
        recency=recency,
        journal=journal,
        human=human,
        sample_size=sample,
        total=total_score(design, recency, journal, human, sample, config.weights),
        sample_size_n=n,
    )


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

"""The normalized PubMed record and the values derived from it.

Every type here is a frozen dataclass: built once by a parser (or a test), never mutated. Text
fields hold readable text (inline markup already flattened by the parser); sequences are tuples so
records are hashable and safe to share between threads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from enum import StrEnum

from biomcp.domain.errors import InvalidRecordError

_PMID = re.compile(r"[1-9][0-9]{0,9}")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_SEASON_MONTH = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}


class EvidenceType(StrEnum):
    """The evidence tier of a record (spec 03 section 3)."""

    CLINICAL = "clinical"
    PRECLINICAL = "preclinical"
    BASIC = "basic"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class PubDate:
    """A publication date as precise as PubMed gives it.

    `month` and `day` are None when PubMed gives only a year (or a season, which maps to the
    season's first month and keeps the season name in `raw`). `raw` keeps the source text of
    MedlineDate / Season forms so nothing is lost.
    """

    year: int
    month: int | None = None
    day: int | None = None
    raw: str | None = None

    def __post_init__(self) -> None:
        if not 1000 <= self.year <= 9999:
            raise InvalidRecordError(f"publication year out of range: {self.year}")
        if self.month is not None and not 1 <= self.month <= 12:
            raise InvalidRecordError(f"publication month out of range: {self.month}")
        if self.day is not None:
            if self.month is None:
                raise InvalidRecordError("a publication day needs a month")
            date(self.year, self.month, self.day)  # raises ValueError on 31 February

    def iso(self) -> str:
        """`YYYY`, `YYYY-MM` or `YYYY-MM-DD`, as precise as the record is."""
        if self.month is None:
            return f"{self.year:04d}"
        if self.day is None:
            return f"{self.year:04d}-{self.month:02d}"
        return f"{self.year:04d}-{self.month:02d}-{self.day:02d}"

    def earliest(self) -> date:
        """The first calendar day this date can mean."""
        return date(self.year, self.month or 1, self.day or 1)

    @classmethod
    def parse(cls, text: str) -> PubDate:
        """Read the free forms PubMed uses: `2019`, `2019 Mar`, `2019 Mar 5`, `2019-03-05`,
        `2019 Spring`, `1998 Dec-1999 Jan` (MedlineDate: the first date wins), `2000 Jul-Aug`.

        Raises:
            InvalidRecordError: when no four-digit year can be found.
        """
        cleaned = text.strip()
        iso = re.fullmatch(r"([0-9]{4})-([0-9]{2})(?:-([0-9]{2}))?", cleaned)
        if iso:
            y, m, d = iso.groups()
            return cls(int(y), int(m), int(d) if d else None)
        year_match = re.search(r"\b(\d{4})\b", cleaned)
        if not year_match:
            raise InvalidRecordError(f"no year in publication date {text!r}")
        year = int(year_match.group(1))
        lower = cleaned.lower()
        rest = lower[year_match.end() :].strip()
        season_first = re.match(r"^(spring|summer|fall|autumn|winter)\b", lower)
        if season_first:
            rest = season_first.group(1)
        month: int | None = None
        day: int | None = None
        token = re.match(r"^([a-z]+|\d{1,2})\b\.?\s*(\d{1,2})?\b", rest)
        if token:
            word, day_text = token.groups()
            if word.isdigit():
                month = int(word) if 1 <= int(word) <= 12 else None
            elif word[:3] in _MONTHS:
                month = _MONTHS.index(word[:3]) + 1
            elif word in _SEASON_MONTH:
                month = _SEASON_MONTH[word]
            if month is not None and day_text and word not in _SEASON_MONTH:
                candidate = int(day_text)
                try:
                    date(year, month, candidate)
                    day = candidate
                except ValueError:
                    day = None
        # Keep the source text only where the structured value loses something.
        lossy = re.search(r"[-–/]|spring|summer|fall|autumn|winter", lower[4:])
        raw = cleaned if lossy or season_first or (month is None and rest) else None
        return cls(year, month, day, raw)


@dataclass(frozen=True, slots=True)
class AbstractSection:
    """One paragraph of an abstract: `label` as printed (e.g. "RESULTS"), `category` the
    NlmCategory (BACKGROUND, OBJECTIVE, METHODS, RESULTS, CONCLUSIONS, UNASSIGNED) or None."""

    text: str
    label: str | None = None
    category: str | None = None


@dataclass(frozen=True, slots=True)
class Journal:
    title: str | None = None
    iso_abbreviation: str | None = None
    issn: str | None = None
    eissn: str | None = None
    volume: str | None = None
    issue: str | None = None


@dataclass(frozen=True, slots=True)
class Grant:
    """A funding entry of the record's GrantList."""

    grant_id: str | None = None
    acronym: str | None = None
    agency: str | None = None
    country: str | None = None


@dataclass(frozen=True, slots=True)
class Author:
    """A person (last / fore name, initials) or a group (`collective_name`)."""

    last_name: str | None = None
    fore_name: str | None = None
    initials: str | None = None
    collective_name: str | None = None
    affiliations: tuple[str, ...] = ()
    orcid: str | None = None

    @property
    def display_name(self) -> str:
        if self.collective_name:
            return self.collective_name
        return " ".join(p for p in (self.last_name, self.initials or self.fore_name) if p)


@dataclass(frozen=True, slots=True)
class MeshQualifier:
    name: str
    ui: str | None = None
    major: bool = False


@dataclass(frozen=True, slots=True)
class MeshHeading:
    descriptor: str
    ui: str | None = None
    major: bool = False
    qualifiers: tuple[MeshQualifier, ...] = ()

    @property
    def is_major(self) -> bool:
        """Major topic when the descriptor or any of its qualifiers is starred."""
        return self.major or any(q.major for q in self.qualifiers)


class NoticeKind(StrEnum):
    """CommentsCorrections RefTypes that change how far a record can be trusted."""

    RETRACTION_IN = "RetractionIn"
    RETRACTION_OF = "RetractionOf"
    ERRATUM_IN = "ErratumIn"
    ERRATUM_FOR = "ErratumFor"
    EXPRESSION_OF_CONCERN_IN = "ExpressionOfConcernIn"
    EXPRESSION_OF_CONCERN_FOR = "ExpressionOfConcernFor"
    REPUBLISHED_IN = "RepublishedIn"
    REPUBLISHED_FROM = "RepublishedFrom"
    CORRECTED_AND_REPUBLISHED_IN = "CorrectedandRepublishedIn"
    CORRECTED_AND_REPUBLISHED_FROM = "CorrectedandRepublishedFrom"


@dataclass(frozen=True, slots=True)
class Notice:
    """A retraction, erratum, expression of concern or republication linked to the record."""

    kind: NoticeKind
    pmid: str | None = None
    source: str | None = None


@dataclass(frozen=True, slots=True)
class PubMedRecord:
    """A normalized PubMed citation.

    `edat` is the Entrez date (History `entrez`, else `pubmed`) and `lr` the last revision
    (DateRevised); both are timezone-aware UTC datetimes. `abstract` keeps the sections in order.
    """

    pmid: str
    title: str | None = None
    abstract: tuple[AbstractSection, ...] = ()
    journal: Journal = field(default_factory=Journal)
    publication_types: tuple[str, ...] = ()
    mesh: tuple[MeshHeading, ...] = ()
    keywords: tuple[str, ...] = ()
    pdat: PubDate | None = None
    edat: datetime | None = None
    lr: datetime | None = None
    pmcid: str | None = None
    doi: str | None = None
    authors: tuple[Author, ...] = ()
    languages: tuple[str, ...] = ()
    notices: tuple[Notice, ...] = ()
    pages: str | None = None
    grants: tuple[Grant, ...] = ()

    def __post_init__(self) -> None:
        if not _PMID.fullmatch(self.pmid):
            raise InvalidRecordError(f"PMID must be digits without a leading zero: {self.pmid!r}")
        for name in ("edat", "lr"):
            value = getattr(self, name)
            if value is not None and (value.tzinfo is None or value.utcoffset() is None):
                raise InvalidRecordError(f"{name} must be timezone-aware (UTC), got {value!r}")

    @property
    def doc_id(self) -> str:
        """The public key of the record (`pmid:<digits>`)."""
        return f"pmid:{self.pmid}"

    @property
    def is_structured(self) -> bool:
        """True when the abstract has labelled sections."""
        return any(s.label for s in self.abstract)

    @property
    def abstract_text(self) -> str:
        """The abstract as one readable string, labelled sections as `LABEL: text`."""
        return "\n".join(f"{s.label}: {s.text}" if s.label else s.text for s in self.abstract)

    @property
    def mesh_descriptors(self) -> frozenset[str]:
        """Lower-cased MeSH descriptor names, for rule matching."""
        return frozenset(h.descriptor.casefold() for h in self.mesh)

    @property
    def is_retracted(self) -> bool:
        return "Retracted Publication" in self.publication_types or any(
            n.kind is NoticeKind.RETRACTION_IN for n in self.notices
        )

    @property
    def year(self) -> int | None:
        if self.pdat is not None:
            return self.pdat.year
        return self.edat.year if self.edat is not None else None


def utc(year: int, month: int = 1, day: int = 1, hour: int = 0, minute: int = 0) -> datetime:
    """A UTC datetime: the only kind of instant a record holds."""
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class SampleSizeReading:
    """What `quality.read_sample_size` read: the sample size `n` and the `phrase` it came from
    (None when nothing was stated), and the counts it `refused` as not participants."""

    n: int | None
    phrase: str | None
    refused: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class QualityBreakdown:
    """The document-level quality score (spec 03 section 5) with every component kept.

    `sample_size` is the additive v1.1 field; `sample_size_n` the largest sample size parsed
    from the abstract (None when none was found), so the score can be explained. `scored_in`
    is the calendar year whose "today" the recency was counted from (None for a score stored
    before it was recorded): recency moves with the calendar, so a score from an earlier year
    may be out of date (`quality.rescore_recency`). `sample_size_reading` is what the sample
    size was read from, kept so a reader need not read the abstract again (None for a score
    stored before it was kept).
    """

    design: int
    recency: int
    journal: int
    human: int
    sample_size: int
    total: int
    sample_size_n: int | None = None
    scored_in: int | None = None
    sample_size_reading: SampleSizeReading | None = None

    def as_dict(self) -> dict[str, int | None]:
        return {
            "design": self.design,
            "recency": self.recency,
            "journal": self.journal,
            "human": self.human,
            "sample_size": self.sample_size,
            "total": self.total,
        }


@dataclass(frozen=True, slots=True)
class Chunk:
    """A citable piece of one abstract.

    `text` is what gets embedded and shown: the title is prepended to the first chunk of a
    record and a labelled section's label precedes its text. `start` / `end` are character
    offsets of the body in the section's text (the whole abstract text for unstructured
    records) and `overlap` is how many leading characters of the body repeat the previous
    chunk, so the bodies minus their overlaps rebuild the section exactly.
    """

    pmid: str
    chunk_id: str
    uuid: str
    text: str
    section: str | None
    section_index: int
    start: int
    end: int
    overlap: int
    token_count: int

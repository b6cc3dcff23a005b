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
from typing import Literal

from biomcp.domain.errors import InvalidRecordError
from biomcp.domain.registries import registry_of

_PMID = re.compile(r"[1-9][0-9]{0,9}")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_SEASONS = frozenset({"spring", "summer", "fall", "autumn", "winter"})


class EvidenceType(StrEnum):
    """The evidence tier of a record (spec 03 section 3)."""

    CLINICAL = "clinical"
    PRECLINICAL = "preclinical"
    BASIC = "basic"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class PubDate:
    """A publication date exactly as precise as PubMed gives it.

    `month` and `day` are set only when the record names one month (one day): a Season
    (`1990 Spring`) or a MedlineDate range (`1979 Jul-Sep`, `1998 Dec-1999 Jan`) has none, and
    keeps the record's own text in `raw`. The year is always known: a range gives its first.
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

    @property
    def text(self) -> str:
        """What the record says: its Season / MedlineDate text, else the structured date
        written as NLM writes it (`2019 Mar 5`)."""
        if self.raw:
            return " ".join(self.raw.split())
        month = _MONTH_NAMES[self.month - 1] if self.month else None
        return " ".join(str(p) for p in (self.year, month, self.day) if p is not None)

    def earliest(self) -> date:
        """The first calendar day this date can mean."""
        return date(self.year, self.month or 1, self.day or 1)

    @classmethod
    def parse(cls, text: str) -> PubDate:
        """Read the free forms PubMed uses: `2019`, `2019 Mar`, `2019 Mar 5`, `2019-03-05`,
        `2019 Spring`, `1979 Jul-Sep`, `1979 Apr 12-18`, `1998 Dec-1999 Jan`, `1979-1980`.

        A range or a season keeps its text in `raw` and gives no month: only a date naming
        one month keeps it (`1979 Apr 12-18` is April, no day). Nothing is guessed.

        Raises:
            InvalidRecordError: when no four-digit year can be found.
        """
        cleaned = " ".join(text.split())
        iso = re.fullmatch(r"([0-9]{4})-([0-9]{2})(?:-([0-9]{2}))?", cleaned)
        if iso:
            y, m, d = iso.groups()
            return cls(int(y), int(m), int(d) if d else None)
        years = re.findall(r"\b\d{4}\b", cleaned)
        if not years:
            raise InvalidRecordError(f"no year in publication date {text!r}")
        year = int(years[0])
        rest = re.sub(r"\b\d{4}\b", " ", cleaned.lower())
        words = re.findall(r"[a-z]+", rest)
        numbers = [int(n) for n in re.findall(r"\b\d{1,2}\b", rest)]
        ranged = bool(re.search(r"[-–/]", rest))
        month, day = None, None
        if len(set(years)) == 1:  # a span across years names no one month
            month, day = _one_month_and_day(year, words, numbers, ranged=ranged)
        # The source text is kept wherever the structured value says less than it.
        raw = None if _says_all(cleaned.lower(), month, day) else cleaned
        return cls(year, month, day, raw)


def _month_of(word: str) -> int | None:
    prefix = word[:3]
    return _MONTHS.index(prefix) + 1 if len(word) >= 3 and prefix in _MONTHS else None


def _says_all(text: str, month: int | None, day: int | None) -> bool:
    """True when `text` is a plain `YYYY [Mon|MM] [DD]` that `month` and `day` render whole."""
    plain = re.fullmatch(r"\d{4}(?: ([a-z]+)\.?| (\d{1,2}))?(?: (\d{1,2}))?", text)
    if plain is None:
        return False
    word, number, day_text = plain.groups()
    named = _month_of(word) if word else int(number) if number else None
    if word and named is None:  # a season or any other word the numbers cannot say
        return False
    return named == month and (int(day_text) if day_text else None) == day


def _one_month_and_day(
    year: int, words: list[str], numbers: list[int], *, ranged: bool
) -> tuple[int | None, int | None]:
    """The month (and day) when the date names exactly one, else None."""
    if any(w in _SEASONS for w in words):
        return None, None
    months = {m for m in (_month_of(w) for w in words) if m is not None}
    if len(months) > 1 or (ranged and not months):
        return None, None
    if months:
        month, days = months.pop(), numbers
    elif numbers and 1 <= numbers[0] <= 12:
        month, days = numbers[0], numbers[1:]
    else:
        return None, None
    if ranged or len(days) != 1:
        return month, None
    try:
        date(year, month, days[0])
    except ValueError:
        return month, None
    return month, days[0]


@dataclass(frozen=True, slots=True)
class AbstractSection:
    """One paragraph of an abstract: `label` as printed (e.g. "RESULTS"), `category` the
    NlmCategory (BACKGROUND, OBJECTIVE, METHODS, RESULTS, CONCLUSIONS, UNASSIGNED) or None.
    `text` is empty only for a labelled section that states its label alone."""

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
    `pmid_version` is the PMID's `Version` attribute (1 for all but a few versioned articles).
    `trial_ids` are the trial registry ids it names, canonical (`domain.registries`).
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
    pmid_version: int = 1
    trial_ids: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not _PMID.fullmatch(self.pmid):
            raise InvalidRecordError(f"PMID must be digits without a leading zero: {self.pmid!r}")
        if self.pmid_version < 1:
            raise InvalidRecordError(f"PMID version must be 1 or more: {self.pmid_version}")
        for trial_id in self.trial_ids:
            if registry_of(trial_id) is None:
                raise InvalidRecordError(f"not a canonical trial registry id: {trial_id!r}")
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
        """The abstract as one readable string, labelled sections as `LABEL: text` (a label
        without text as the label alone)."""
        return "\n".join(
            f"{s.label}: {s.text}" if s.label and s.text else s.label or s.text
            for s in self.abstract
        )

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
    stored before it was kept). `retracted` says the record was retracted when scored: its
    design, human and sample-size points are then 0 (`quality` module docstring).
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
    retracted: bool = False

    def as_dict(self) -> dict[str, int | None]:
        return {
            "design": self.design,
            "recency": self.recency,
            "journal": self.journal,
            "human": self.human,
            "sample_size": self.sample_size,
            "total": self.total,
        }


ChunkSource = Literal["abstract", "fulltext"]


@dataclass(frozen=True, slots=True)
class Chunk:
    """A citable piece of one record: of its abstract, or of its PMC full text.

    `text` is what gets embedded and shown: the title is prepended to the first chunk of a
    record and a labelled section's label precedes its text. `start` / `end` are character
    offsets of the body in the section's text (the whole abstract text for unstructured
    records) and `overlap` is how many leading characters of the body repeat the previous
    chunk, so the bodies minus their overlaps rebuild the section exactly.

    A full-text chunk (`source` "fulltext") also says where it sits in the article:
    `section_path` ("Results > Primary outcome", "Table 2") and `anchor` (its paragraphs,
    "p2-p3", or its table rows, "r1-r12").
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
    source: ChunkSource = "abstract"
    section_path: str | None = None
    anchor: str | None = None

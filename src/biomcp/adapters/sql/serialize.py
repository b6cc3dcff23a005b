"""PubMed records, quality breakdowns and datetimes to JSON-ready values and back.

`record_to_json` writes every field of a `PubMedRecord`, so `record_from_json` rebuilds an equal
record: the `record_json` column is the source of truth a stored document is read from, the
other columns of `pubmed_docs` are projections of it for filtering. The layout carries a format
number (`"f": 1`) so a later layout can still read rows written by this one.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from biomcp.domain.records import (
    AbstractSection,
    Author,
    Grant,
    Journal,
    MeshHeading,
    MeshQualifier,
    Notice,
    NoticeKind,
    PubDate,
    PubMedRecord,
    QualityBreakdown,
    SampleSizeReading,
)

__all__ = [
    "RECORD_FORMAT",
    "datetime_from_json",
    "datetime_to_json",
    "quality_from_json",
    "quality_to_json",
    "record_from_json",
    "record_to_json",
    "to_utc",
]

#: The layout number written in every `record_json`.
RECORD_FORMAT = 1

JsonDict = dict[str, Any]


def to_utc(value: datetime) -> datetime:
    """The same instant in UTC; a naive value is rejected (the domain never makes one)."""
    if value.utcoffset() is None:
        raise ValueError(f"naive datetime where an aware one is required: {value!r}")
    return value.astimezone(UTC)


def datetime_to_json(value: datetime | None) -> str | None:
    """ISO 8601 with its offset, microseconds kept."""
    return None if value is None else value.isoformat()


def datetime_from_json(value: str | None) -> datetime | None:
    if value is None:
        return None
    return datetime.fromisoformat(value)


def _section_to_json(section: AbstractSection) -> JsonDict:
    return {"text": section.text, "label": section.label, "category": section.category}


def _section_from_json(data: JsonDict) -> AbstractSection:
    return AbstractSection(text=data["text"], label=data["label"], category=data["category"])


def _journal_to_json(journal: Journal) -> JsonDict:
    return {
        "title": journal.title,
        "iso_abbreviation": journal.iso_abbreviation,
        "issn": journal.issn,
        "eissn": journal.eissn,
        "volume": journal.volume,
        "issue": journal.issue,
    }


def _journal_from_json(data: JsonDict) -> Journal:
    return Journal(
        title=data["title"],
        iso_abbreviation=data["iso_abbreviation"],
        issn=data["issn"],
        eissn=data["eissn"],
        volume=data["volume"],
        issue=data["issue"],
    )


def _mesh_to_json(heading: MeshHeading) -> JsonDict:
    return {
        "descriptor": heading.descriptor,
        "ui": heading.ui,
        "major": heading.major,
        "qualifiers": [{"name": q.name, "ui": q.ui, "major": q.major} for q in heading.qualifiers],
    }


def _mesh_from_json(data: JsonDict) -> MeshHeading:
    return MeshHeading(
        descriptor=data["descriptor"],
        ui=data["ui"],
        major=data["major"],
        qualifiers=tuple(
            MeshQualifier(name=q["name"], ui=q["ui"], major=q["major"]) for q in data["qualifiers"]
        ),
    )


def _pdat_to_json(pdat: PubDate | None) -> JsonDict | None:
    if pdat is None:
        return None
    return {"year": pdat.year, "month": pdat.month, "day": pdat.day, "raw": pdat.raw}


def _pdat_from_json(data: JsonDict | None) -> PubDate | None:
    """The stored date; one with source text is read again from it, so a month that an older
    parser derived from a season or a range (`1990 Spring` as March) is not shown."""
    if data is None:
        return None
    stored = PubDate(year=data["year"], month=data["month"], day=data["day"], raw=data["raw"])
    if stored.raw is None:
        return stored
    try:
        again = PubDate.parse(stored.raw)
    except ValueError:
        return stored
    return again if again.year == stored.year else stored


def _author_to_json(author: Author) -> JsonDict:
    return {
        "last_name": author.last_name,
        "fore_name": author.fore_name,
        "initials": author.initials,
        "collective_name": author.collective_name,
        "affiliations": list(author.affiliations),
        "orcid": author.orcid,
    }


def _author_from_json(data: JsonDict) -> Author:
    return Author(
        last_name=data["last_name"],
        fore_name=data["fore_name"],
        initials=data["initials"],
        collective_name=data["collective_name"],
        affiliations=tuple(data["affiliations"]),
        orcid=data["orcid"],
    )


def _notice_to_json(notice: Notice) -> JsonDict:
    return {"kind": notice.kind.value, "pmid": notice.pmid, "source": notice.source}


def _notice_from_json(data: JsonDict) -> Notice:
    return Notice(kind=NoticeKind(data["kind"]), pmid=data["pmid"], source=data["source"])


def record_to_json(record: PubMedRecord) -> JsonDict:
    """Every field of `record` as JSON-ready values (module docstring)."""
    return {
        "f": RECORD_FORMAT,
        "pmid": record.pmid,
        "title": record.title,
        "abstract": [_section_to_json(s) for s in record.abstract],
        "journal": _journal_to_json(record.journal),
        "publication_types": list(record.publication_types),
        "mesh": [_mesh_to_json(h) for h in record.mesh],
        "keywords": list(record.keywords),
        "pdat": _pdat_to_json(record.pdat),
        "edat": datetime_to_json(record.edat),
        "lr": datetime_to_json(record.lr),
        "pmcid": record.pmcid,
        "doi": record.doi,
        "authors": [_author_to_json(a) for a in record.authors],
        "languages": list(record.languages),
        "notices": [_notice_to_json(n) for n in record.notices],
        "pages": record.pages,
        # additive (older rows have no key): read back as no grants
        "grants": [
            {"id": g.grant_id, "acronym": g.acronym, "agency": g.agency, "country": g.country}
            for g in record.grants
        ],
        "pmid_version": record.pmid_version,  # additive: older rows read back as version 1
        "trial_ids": list(record.trial_ids),  # additive: older rows read back as none
    }


def retracted_from_json(data: JsonDict) -> bool:
    """`PubMedRecord.is_retracted` of a stored record, read without rebuilding all of it (the
    search's retraction filter reads it for every candidate).

    Raises:
        ValueError: on an unknown layout number or a malformed record.
    """
    if data.get("f") != RECORD_FORMAT:
        raise ValueError(f"unknown record_json layout: {data.get('f')!r}")
    try:
        partial = PubMedRecord(
            pmid=data["pmid"],
            publication_types=tuple(data["publication_types"]),
            notices=tuple(_notice_from_json(n) for n in data["notices"]),
        )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"malformed record_json: {exc!r}") from exc
    return partial.is_retracted


def record_from_json(data: JsonDict) -> PubMedRecord:
    """The record `record_to_json` wrote.

    Raises:
        ValueError: on an unknown layout number, a missing key or a value the record rejects.
    """
    if data.get("f") != RECORD_FORMAT:
        raise ValueError(f"unknown record_json layout: {data.get('f')!r}")
    try:
        return PubMedRecord(
            pmid=data["pmid"],
            title=data["title"],
            abstract=tuple(_section_from_json(s) for s in data["abstract"]),
            journal=_journal_from_json(data["journal"]),
            publication_types=tuple(data["publication_types"]),
            mesh=tuple(_mesh_from_json(h) for h in data["mesh"]),
            keywords=tuple(data["keywords"]),
            pdat=_pdat_from_json(data["pdat"]),
            edat=datetime_from_json(data["edat"]),
            lr=datetime_from_json(data["lr"]),
            pmcid=data["pmcid"],
            doi=data["doi"],
            authors=tuple(_author_from_json(a) for a in data["authors"]),
            languages=tuple(data["languages"]),
            notices=tuple(_notice_from_json(n) for n in data["notices"]),
            pages=data["pages"],
            grants=tuple(
                Grant(g["id"], g["acronym"], g["agency"], g["country"])
                for g in data.get("grants", ())
            ),
            pmid_version=data.get("pmid_version", 1),
            trial_ids=tuple(data.get("trial_ids", ())),
        )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"malformed record_json: {exc!r}") from exc


def quality_to_json(quality: QualityBreakdown) -> JsonDict:
    """The breakdown with every component, `sample_size_n`, `scored_in` and what the sample
    size was read from (when kept) included."""
    data: JsonDict = {
        **quality.as_dict(),
        "sample_size_n": quality.sample_size_n,
        "scored_in": quality.scored_in,
    }
    reading = quality.sample_size_reading
    if reading is not None:
        data["sample_size_text"] = reading.phrase
        data["sample_size_refused"] = list(reading.refused)
    if quality.retracted:
        data["retracted"] = True
    return data


def quality_from_json(data: JsonDict) -> QualityBreakdown:
    """Raises ValueError on a missing component."""
    try:
        return QualityBreakdown(
            design=data["design"],
            recency=data["recency"],
            journal=data["journal"],
            human=data["human"],
            sample_size=data["sample_size"],
            total=data["total"],
            sample_size_n=data.get("sample_size_n"),
            scored_in=data.get("scored_in"),
            sample_size_reading=(
                SampleSizeReading(
                    data.get("sample_size_n"),
                    data.get("sample_size_text"),
                    tuple(data["sample_size_refused"]),
                )
                if "sample_size_refused" in data
                else None
            ),
            retracted=bool(data.get("retracted", False)),
        )
    except KeyError as exc:
        raise ValueError(f"malformed quality_json: missing {exc}") from exc

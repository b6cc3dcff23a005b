"""Records with every field set, and `DocumentUpsert`s derived by the real domain, for the
metadata-store tests."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

from biomcp.domain import classify_evidence, content_hash, score_quality
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
)
from biomcp.ports.documents import DocumentUpsert

__all__ = ["FakeClock", "full_record", "revised", "upsert_of"]

_TODAY = date(2025, 8, 18)


def full_record(pmid: str = "31452104", **overrides: Any) -> PubMedRecord:
    """A record using every field and nested type: labelled sections with categories, an ISO
    abbreviation and both ISSNs, MeSH with qualifiers (one starred), a MedlineDate `raw`
    publication date, datetimes with microseconds and a non-UTC offset, a person with
    affiliations and ORCID, a collective author, several notices and non-ASCII text."""
    fields: dict[str, Any] = {
        "pmid": pmid,
        "title": "Semaglutide and weight loss in adults with obesity: a randomized trial",
        "abstract": (
            AbstractSection("Obesity is common.", label="BACKGROUND", category="BACKGROUND"),
            AbstractSection(
                "In adults (n = 1961), weight fell by 14.9% vs 2.4% (95% CI −13.4 to −11.5; "
                "P<0.001); µg doses ± titration.",
                label="RESULTS",
                category="RESULTS",
            ),
            AbstractSection("Unlabelled tail.", label=None, category=None),
        ),
        "journal": Journal(
            title="The New England journal of medicine",
            iso_abbreviation="N Engl J Med",
            issn="0028-4793",
            eissn="1533-4406",
            volume="384",
            issue="11",
        ),
        "publication_types": ("Journal Article", "Randomized Controlled Trial"),
        "mesh": (
            MeshHeading(
                "Obesity",
                ui="D009765",
                major=False,
                qualifiers=(
                    MeshQualifier("drug therapy", ui="Q000188", major=True),
                    MeshQualifier("epidemiology", ui="Q000453"),
                ),
            ),
            MeshHeading("Humans", ui="D006801"),
            MeshHeading("Glucagon-Like Peptides", ui=None, major=True),
        ),
        "keywords": ("GLP-1", "weight loss", "Säure"),
        "pdat": PubDate(1998, None, None, raw="1998 Dec-1999 Jan"),
        "edat": datetime(2021, 2, 10, 6, 0, 0, 123456, tzinfo=UTC),
        "lr": datetime(2023, 11, 14, 9, 30, 15, 654321, tzinfo=timezone(timedelta(hours=-5))),
        "pmcid": "PMC8123456",
        "doi": "10.1056/NEJMoa2032183",
        "grants": (
            Grant("R01 GM097142", "GM", "NIGMS NIH HHS", "United States"),
            Grant(None, "HHMI", "Howard Hughes Medical Institute", None),
        ),
        "authors": (
            Author(
                last_name="Wilding",
                fore_name="John P H",
                initials="JPH",
                affiliations=("University of Liverpool, UK", "Aintree Hospital"),
                orcid="0000-0003-2839-8404",
            ),
            Author(collective_name="STEP 1 Study Group"),
            Author(last_name="Núñez", fore_name=None, initials=None),
        ),
        "languages": ("eng", "fre"),
        "notices": (
            Notice(NoticeKind.ERRATUM_IN, pmid="33567185", source="N Engl J Med. 2021;384:1"),
            Notice(NoticeKind.EXPRESSION_OF_CONCERN_IN, pmid=None, source="Lancet 2022"),
            Notice(NoticeKind.CORRECTED_AND_REPUBLISHED_FROM, pmid="30000001"),
        ),
        "pages": "989-1002",
    }
    fields.update(overrides)
    return PubMedRecord(**fields)


def upsert_of(record: PubMedRecord) -> DocumentUpsert:
    """`record` with its evidence, quality and hash derived by the domain."""
    evidence = classify_evidence(record)
    quality = score_quality(record, _TODAY, evidence=evidence)
    return DocumentUpsert(record, evidence, quality, content_hash(record))


def revised(record: PubMedRecord, **changes: Any) -> PubMedRecord:
    """`record` with `changes` applied."""
    return replace(record, **changes)


class FakeClock:
    """A Clock the test moves by hand (aware UTC, never backward)."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2025, 8, 18, 12, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, **delta: float) -> datetime:
        self._now += timedelta(**delta)
        return self._now

"""The JSON shapes the use cases answer with (spec 01, plus the additive v1.1 fields).

Timestamps are ISO 8601 UTC with a `Z` (`2025-08-17T15:59:02Z`); publication dates keep the
precision PubMed gave (`2024`, `2024-05`, `2024-05-11`).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time
from typing import Any

from biomcp.domain.design import classify_design
from biomcp.domain.quality import read_sample_size
from biomcp.ports.documents import StoredDocument
from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.retractions import retraction_notice

__all__ = ["document_payload", "iso_utc", "parse_doc_id", "parse_iso_utc"]

_DOC_ID = re.compile(r"(?:pmid:)?([1-9][0-9]{0,11})")


def iso_utc(value: datetime | None) -> str | None:
    """`2025-08-17T15:59:02Z` (microseconds dropped), or None."""
    if value is None:
        return None
    return value.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def parse_iso_utc(text: str, *, field: str = "timestamp") -> datetime:
    """An ISO 8601 timestamp or date as an aware UTC datetime. A date means its midnight UTC; a
    timestamp without an offset is read as UTC.

    Raises:
        InvalidRequestError: for anything else.
    """
    raw = text.strip()
    if not raw:
        raise InvalidRequestError(f"{field} is empty: give an ISO 8601 UTC timestamp")
    try:
        if len(raw) == 10:
            return datetime.combine(date.fromisoformat(raw), time(), tzinfo=UTC)
        parsed = datetime.fromisoformat(raw.replace("z", "Z"))
    except ValueError:
        raise InvalidRequestError(
            f"{field} {text!r} is not an ISO 8601 timestamp; use e.g. 2025-08-17T15:59:02Z",
            details={"field": field, "value": text},
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def parse_doc_id(value: str) -> str:
    """The PMID of a `pmid:<digits>` document id (bare digits are accepted too).

    Raises:
        InvalidRequestError: when `value` is neither.
    """
    match = _DOC_ID.fullmatch(value.strip())
    if match is None:
        raise InvalidRequestError(
            f"{value!r} is not a document id: use pmid:<digits>, e.g. pmid:29768149",
            details={"field": "doc_id", "value": value},
        )
    return match.group(1)


def document_payload(doc: StoredDocument) -> dict[str, Any]:
    """The `rag.get` response (and the paper resource): spec 01's fields, then the v1.1 ones
    (`evidence_type`, `study_design` and the rule that decided it, the full
    `quality_breakdown` with what was read for the sample size, flags, identifiers, trial
    registry ids, authors, MeSH). The study design is the one stored with the tier (the same
    rules decided both); a document stored before designs were kept has it derived here from
    its record."""
    record = doc.record
    quality = doc.quality
    design = doc.evidence.design or classify_design(record)
    # What the sample size was read from: kept with the score, or (a score stored before it
    # was kept) read again from the abstract.
    reading = quality.sample_size_reading or read_sample_size(record.abstract_text)
    return {
        "doc_id": record.doc_id,
        "title": record.title,
        "abstract": record.abstract_text or None,
        "journal": record.journal.title or record.journal.iso_abbreviation,
        "pub_types": list(record.publication_types),
        "pdat": record.pdat.iso() if record.pdat is not None else None,
        "edat": iso_utc(record.edat),
        "lr": iso_utc(record.lr),
        "pmcid": record.pmcid,
        "quality": {
            "design": quality.design,
            "recency": quality.recency,
            "journal": quality.journal,
            "human": quality.human,
            "total": quality.total,
        },
        "version": doc.version,
        # --- v1.1 (additive) ---
        "evidence_type": str(doc.evidence.evidence_type),
        "evidence_rule": doc.evidence.rule,
        "has_numbers": doc.evidence.has_numbers,
        "has_biomarker": doc.evidence.has_biomarker,
        "study_design": str(design.design),
        "design_rule": design.rule,
        "quality_breakdown": {
            "design": quality.design,
            "study_design": str(design.design),
            "recency": quality.recency,
            "journal": quality.journal,
            "human": quality.human,
            "sample_size": quality.sample_size,
            "sample_size_n": quality.sample_size_n,
            # What was read: the phrase the stored n came from, and the counts refused as
            # not participants (232,878 examinations); the phrase is left out if a reading
            # done again does not give the stored n (older rules: see versioning).
            "sample_size_text": reading.phrase if reading.n == quality.sample_size_n else None,
            "sample_size_refused": list(reading.refused),
            "retracted": quality.retracted,  # design, human and sample size count 0
            "total": quality.total,
        },
        "doi": record.doi,
        # A Season or MedlineDate range as the record writes it (`pdat` keeps its year only).
        "pdat_text": record.pdat.raw if record.pdat is not None else None,
        "authors": [author.display_name for author in record.authors],
        "mesh_terms": [heading.descriptor for heading in record.mesh],
        "trial_ids": list(record.trial_ids),
        "retracted": record.is_retracted,
        "retraction": retraction_notice(record),
        "url": f"https://pubmed.ncbi.nlm.nih.gov/{record.pmid}/",
    }

"""Shapes of the live answers: PubMed records, summaries and links as spec 04's JSON."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from biomcp.domain.citations import expand_pages
from biomcp.domain.errors import InvalidRecordError
from biomcp.domain.records import Author, MeshHeading, PubDate, PubMedRecord
from biomcp.ports.entrez import (
    DocSummary,
    Link,
)
from biomcp.usecases.live.common import pubmed_url
from biomcp.usecases.payloads import iso_utc
from biomcp.usecases.retractions import retraction_notice

#: The publication type PubMed gives a retracted paper (ESummary's PubType flags, EFetch's types).
RETRACTED_TYPE = "Retracted Publication"
#: ESummary's type of the reference to a record's retraction notice.
RETRACTION_IN = "retraction in"
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_AUTHORS_SHOWN = 3


def author_string(names: Sequence[str]) -> str | None:
    """`Doe J, Smith A, Roe B`, or the first three and `et al.`."""
    if not names:
        return None
    shown = ", ".join(names[:_AUTHORS_SHOWN])
    return shown + (", et al." if len(names) > _AUTHORS_SHOWN else "")


def _standard_date(text: str | None) -> str | None:
    """`2023 Mar 15` -> `2023-03-15` (as precise as given); unreadable text as given."""
    if not text or not text.strip():
        return None
    try:
        return PubDate.parse(text).iso()
    except (InvalidRecordError, ValueError):
        return text.strip()


def brief_summary(doc: DocSummary) -> dict[str, Any]:
    source = doc.source
    if source and doc.pdat:
        source = f"{source}. {doc.pdat}"
    return {
        "pmid": doc.pmid,
        "title": doc.title,
        "authors": author_string(doc.authors),
        "source": source,
        "pubDate": _standard_date(doc.pdat),
        "epubDate": _standard_date(doc.epubdate),
        **summary_retraction(doc),
    }


def summary_retracted(doc: DocSummary | None) -> bool:
    """Whether an ESummary marks the article retracted (its PubType list or a `Retraction in`
    reference)."""
    return doc is not None and (
        RETRACTED_TYPE in doc.pub_types
        or any(ref.kind.casefold() == RETRACTION_IN for ref in doc.references)
    )


def summary_retraction(doc: DocSummary | None) -> dict[str, Any]:
    """`retracted`, and for a retracted article its `retractionNotice` (the PMID and citation
    of its `Retraction in` reference, both None when the summary lists none)."""
    if doc is None or not summary_retracted(doc):
        return {"retracted": False}
    notice: dict[str, str | None] = {"noticePmid": None, "source": None}
    for ref in doc.references:
        if ref.kind.casefold() == RETRACTION_IN:
            notice = {"noticePmid": ref.pmid, "source": ref.source}
            break
    return {"retracted": True, "retractionNotice": notice}


def unique_links(linksets: Sequence[Any], source: str, linkname: str) -> list[Link]:
    """The links of `source` under `linkname`, each PMID once, the source itself left out."""
    seen: dict[str, Link] = {}
    for linkset in linksets:
        if len(linksets) > 1 and source not in linkset.source_pmids:
            continue
        for link in linkset.links.get(linkname, ()):
            if link.pmid != source and link.pmid not in seen:
                seen[link.pmid] = link
    return list(seen.values())


def similarity_scores(links: Sequence[Link]) -> dict[str, tuple[float | None, int | None]]:
    """{PMID: (score in [0, 1], NCBI's integer score)} of similar-article links.

    Each score is divided by the best score among `links`, so the most similar article
    scores 1. NCBI publishes no upper bound for its scores. The source's link to itself
    carries the largest 32-bit integer, a marker rather than a similarity. So neither can be
    the divisor, and scores compare within one source's list only. A link without a score
    keeps None.
    """
    best = max((link.score for link in links if link.score is not None), default=0)
    return {
        link.pmid: (
            None if link.score is None else round(link.score / best, 4) if best > 0 else 0.0,
            link.score,
        )
        for link in links
    }


def _publication_date(pdat: PubDate | None) -> dict[str, Any] | None:
    if pdat is None:
        return None
    return {
        "year": pdat.year,
        "month": _MONTHS[pdat.month - 1] if pdat.month else None,
        "day": pdat.day,
        "medlineDate": pdat.text,
        "isoDate": pdat.iso(),
    }


def _journal_info(record: PubMedRecord) -> dict[str, Any]:
    journal = record.journal
    return {
        "title": journal.title,
        "isoAbbreviation": journal.iso_abbreviation,
        "volume": journal.volume,
        "issue": journal.issue,
        "pages": expand_pages(record.pages),
        "publicationDate": _publication_date(record.pdat),
    }


def _author(author: Author, *, affiliation: bool) -> dict[str, Any]:
    shaped: dict[str, Any] = {
        "lastName": author.last_name,
        "firstName": author.fore_name,
        "initials": author.initials,
    }
    if affiliation:
        shaped["affiliation"] = "; ".join(author.affiliations) or None
    if author.collective_name:
        shaped["collectiveName"] = author.collective_name
    if author.orcid:
        shaped["orcid"] = author.orcid
    return shaped


def _mesh_terms(headings: Iterable[MeshHeading]) -> list[dict[str, Any]]:
    terms = []
    for heading in headings:
        term: dict[str, Any] = {
            "descriptorName": heading.descriptor,
            "qualifierName": ", ".join(q.name for q in heading.qualifiers) or None,
            "isMajorTopic": heading.is_major,
            "ui": heading.ui,
        }
        if heading.qualifiers:
            term["qualifiers"] = [
                {"qualifierName": q.name, "ui": q.ui, "isMajorTopic": q.major}
                for q in heading.qualifiers
            ]
        terms.append(term)
    return terms


def abstract_plus(
    record: PubMedRecord, *, include_mesh: bool, include_grants: bool
) -> dict[str, Any]:
    article: dict[str, Any] = {
        "pmid": record.pmid,
        "title": record.title,
        "abstractText": record.abstract_text or None,
        "authors": [_author(a, affiliation=True) for a in record.authors],
        "journalInfo": _journal_info(record),
        "publicationTypes": list(record.publication_types),
        "keywords": list(record.keywords),
    }
    if record.is_structured:
        article["abstractSections"] = [
            {"label": s.label, "nlmCategory": s.category, "text": s.text} for s in record.abstract
        ]
    if include_mesh:
        article["meshTerms"] = _mesh_terms(record.mesh)
    if include_grants:
        article["grantList"] = [
            {"grantId": g.grant_id, "agency": g.agency, "country": g.country, "acronym": g.acronym}
            for g in record.grants
        ]
    article["doi"] = record.doi
    article["pmcid"] = record.pmcid
    article.update(_retraction(record))
    return article


def citation_data(
    record: PubMedRecord, *, include_mesh: bool, include_grants: bool
) -> dict[str, Any]:
    article: dict[str, Any] = {
        "pmid": record.pmid,
        "title": record.title,
        "authors": [_author(a, affiliation=False) for a in record.authors],
        "journalInfo": _journal_info(record),
        "publicationTypes": list(record.publication_types),
        "doi": record.doi,
        "pmcid": record.pmcid,
        "pubmedUrl": pubmed_url(record.pmid),
    }
    if include_mesh:
        article["meshTerms"] = _mesh_terms(record.mesh)
    if record.is_retracted:  # minimal otherwise; a retracted paper is cited as retracted
        article.update(_retraction(record))
    return article


def _retraction(record: PubMedRecord) -> dict[str, Any]:
    """`retracted` and the retraction notice (the PMID and citation of the RetractionIn
    comment; null when the record is not retracted)."""
    notice = retraction_notice(record)
    return {
        "retracted": notice is not None,
        "retractionNotice": (
            None
            if notice is None
            else {"noticePmid": notice["notice_pmid"], "source": notice["source"]}
        ),
    }


def query_summary(
    key: str, checkpoint: Any, job: Any, pending: int = 0, records: int = 0
) -> dict[str, Any]:
    """One saved query in the info resource: its last sync carries the term (what
    `pubmed_sync_delta` takes to sync the key again); `pending` counts its PMIDs found by
    ESearch and not returned by EFetch yet (every sync of the key asks for them again);
    `records` the records its syncs brought (`recordsTracked` false: at least that many, the
    key was synced before they were recorded)."""
    last_sync = None
    if job is not None:
        last_sync = {
            "jobId": job.job_id,
            "term": job.term,
            "status": job.status,
            "startedAt": iso_utc(job.started_at),
            "finishedAt": iso_utc(job.finished_at),
            "inserted": job.inserted,
            "updated": job.updated,
            "skipped": job.skipped,
        }
    return {
        "queryKey": key,
        "lastEdat": iso_utc(checkpoint.last_edat) if checkpoint is not None else None,
        "lastScanAt": iso_utc(checkpoint.last_scan_at) if checkpoint is not None else None,
        "coversFrom": iso_utc(checkpoint.covers_from) if checkpoint is not None else None,
        "lastSync": last_sync,
        "pendingPmids": pending,
        "records": records,
        "recordsTracked": checkpoint.records_tracked if checkpoint is not None else True,
    }


def ncbi_timestamp(text: str | None) -> str | None:
    """EInfo's `2025/05/23 10:00` as `2025-05-23T10:00:00` (NCBI's local time, as given)."""
    if not text:
        return None
    for pattern in ("%Y/%m/%d %H:%M", "%Y/%m/%d %H:%M:%S", "%Y/%m/%d"):
        try:
            return datetime.strptime(text.strip(), pattern).isoformat()
        except ValueError:
            continue
    return text

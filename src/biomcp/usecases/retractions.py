"""Retraction awareness: find stored records PubMed has retracted since they were synced.

A record is retracted when PubMed gives it the publication type "Retracted Publication" or a
`RetractionIn` comment (`PubMedRecord.is_retracted`); both arrive with the record, so a record
already retracted when it is synced is stored flagged. A paper retracted *after* its sync keeps
its old stored copy until something fetches it again: each sync therefore re-checks the stored
PMIDs with one ESearch per batch,

    (30000001[uid] OR 30000002[uid] OR ...) AND "Retracted Publication"[pt]

(sent by POST once the term is long), and the sync re-fetches and stores those whose stored
copy is not flagged yet (or not indexed yet), so the flag and the notice become current.

The documents table does not record which query key brought a document in (syncs of different
keys share documents), so every stored PMID is re-checked, not only the key's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from biomcp.domain.records import NoticeKind, PubMedRecord
from biomcp.ports.entrez import EntrezClient
from biomcp.ports.metadata import MetadataStore

__all__ = [
    "RECHECK_BATCH",
    "RETRACTED_TERM",
    "RetractionCheck",
    "find_retracted",
    "retraction_notice",
    "retraction_term",
    "stored_pmids",
]

#: PMIDs per re-check ESearch: about 14 characters each, so a batch is a ~3 kB POST body.
RECHECK_BATCH = 200
#: The publication type PubMed gives a retracted paper.
RETRACTED_TERM = '"Retracted Publication"[pt]'
_PAGE = 5000


@dataclass(frozen=True, slots=True)
class RetractionCheck:
    """What one re-check found: how many stored PMIDs were asked about and which of them
    PubMed lists as retracted (`requests`: ESearch calls made)."""

    checked: int
    retracted: tuple[str, ...]
    requests: int


def retraction_term(pmids: Sequence[str]) -> str:
    """The ESearch term matching those of `pmids` that are retracted publications."""
    if not pmids:
        raise ValueError("no PMIDs to re-check")
    ids = " OR ".join(f"{pmid}[uid]" for pmid in pmids)
    return f"({ids}) AND {RETRACTED_TERM}"


async def stored_pmids(
    metadata: MetadataStore, *, exclude: frozenset[str] = frozenset()
) -> list[str]:
    """Every stored PMID (ascending), less `exclude`."""
    found: list[str] = []
    after = ""
    while True:
        page = await metadata.document_pmids(after, _PAGE)
        found.extend(p for p in page if p not in exclude)
        if len(page) < _PAGE:
            return found
        after = page[-1]


async def find_retracted(
    entrez: EntrezClient, pmids: Sequence[str], *, batch: int = RECHECK_BATCH
) -> RetractionCheck:
    """Those of `pmids` PubMed lists as retracted publications, one ESearch per `batch`.

    Raises:
        EntrezError: an ESearch failed (the caller reports it as a warning).
    """
    retracted: list[str] = []
    requests = 0
    for start in range(0, len(pmids), batch):
        part = pmids[start : start + batch]
        result = await entrez.esearch(retraction_term(part), retmax=len(part))
        requests += 1
        asked = set(part)
        retracted.extend(p for p in result.pmids if p in asked)
    return RetractionCheck(len(pmids), tuple(retracted), requests)


def retraction_notice(record: PubMedRecord) -> dict[str, str | None] | None:
    """The retraction notice of a retracted record (`notice_pmid`, the PMID of the notice from
    its `RetractionIn` comment, and `source`, the notice's citation), None when the record is
    not retracted. A record typed "Retracted Publication" without the comment has a notice
    with both fields None."""
    if not record.is_retracted:
        return None
    for notice in record.notices:
        if notice.kind is NoticeKind.RETRACTION_IN:
            return {"notice_pmid": notice.pmid, "source": notice.source}
    return {"notice_pmid": None, "source": None}

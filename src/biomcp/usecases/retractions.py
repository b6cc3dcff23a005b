"""Retraction awareness: find stored records PubMed has retracted since they were synced.

A record is retracted when PubMed gives it the publication type "Retracted Publication" or a
`RetractionIn` comment (`PubMedRecord.is_retracted`); both arrive with the record, so a record
already retracted when it is synced is stored flagged. A paper retracted *after* its sync keeps
its old stored copy until something fetches it again: each sync therefore re-checks the stored
PMIDs, and the sync re-fetches and stores those whose stored copy is not flagged yet (or not
indexed yet), so the flag and the notice become current. The re-check asks PubMed one of two
ways, whichever takes fewer requests (`find_retracted`):

* by PMID, one ESearch per batch of stored PMIDs (sent by POST once the term is long):

      (30000001[uid] OR 30000002[uid] OR ...) AND "Retracted Publication"[pt]

  what a small store costs least with;
* every retracted publication PubMed lists (`"Retracted Publication"[pt]`, enumerated by
  Entrez date past the ESearch cap), intersected here with the stored PMIDs: a number of
  requests that does not grow with the store, so a store of 50,000 records costs a handful of
  requests instead of 250.

When PubMed lists no retracted publication at all it leaves the publication type out of the
query and says so (`QuotedPhraseNotFound`); the re-check then finds nothing retracted (it does
not take the rest of the query's answer, every PMID asked about, for retractions).

The documents table does not record which query key brought a document in (syncs of different
keys share documents), so every stored PMID is re-checked, not only the key's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from biomcp.domain.records import NoticeKind, PubMedRecord
from biomcp.ports.documents import DocumentStore
from biomcp.ports.entrez import ESEARCH_ID_CAP, EntrezClient, SearchResult

__all__ = [
    "EPOCH",
    "RECHECK_BATCH",
    "RETRACTED_TERM",
    "RetractionCheck",
    "find_retracted",
    "pmid_term",
    "retraction_notice",
    "retraction_term",
    "stored_pmids",
]

#: PMIDs per re-check ESearch: about 14 characters each, so a batch is a ~3 kB POST body.
RECHECK_BATCH = 200
#: The publication type PubMed gives a retracted paper.
RETRACTED_TERM = '"Retracted Publication"[pt]'
_DROPPED = "retracted publication"  # the type as `EntrezWarning.dropped` names it
#: The first Entrez date the enumeration of every retracted publication searches from.
EPOCH = date(1800, 1, 1)
#: ESearch requests per ESearch cap of ids when the retracted publications outnumber the cap
#: and are enumerated by splitting the dates (an estimate: the splits follow the calendar,
#: the retractions crowd into recent years).
_REQUESTS_PER_CAP = 5
_PAGE = 5000


@dataclass(frozen=True, slots=True)
class RetractionCheck:
    """What one re-check found: how many stored PMIDs were asked about and which of them
    PubMed lists as retracted (`requests`: ESearch calls made)."""

    checked: int
    retracted: tuple[str, ...]
    requests: int


def pmid_term(pmids: Sequence[str]) -> str:
    """The ESearch term matching `pmids` (those PubMed has: it leaves an unknown one out)."""
    if not pmids:
        raise ValueError("no PMIDs to search for")
    return " OR ".join(f"{pmid}[uid]" for pmid in pmids)


def retraction_term(pmids: Sequence[str]) -> str:
    """The ESearch term matching those of `pmids` that are retracted publications."""
    return f"({pmid_term(pmids)}) AND {RETRACTED_TERM}"


async def stored_pmids(
    metadata: DocumentStore, *, exclude: frozenset[str] = frozenset()
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
    entrez: EntrezClient, pmids: Sequence[str], *, today: date, batch: int = RECHECK_BATCH
) -> RetractionCheck:
    """Those of `pmids` PubMed lists as retracted publications (in the order of `pmids`), asked
    by PMID (one ESearch per `batch`) or through every retracted publication PubMed lists
    (Entrez dates `EPOCH` to `today`), whichever takes fewer requests: when `pmids` fill more
    than one batch, one ESearch first counts the retracted publications to decide.

    Raises:
        EntrezError: an ESearch failed (the caller reports it as a warning).
    """
    if not pmids:
        return RetractionCheck(0, (), 0)
    by_pmid = -(-len(pmids) // batch)
    requests = 0
    if by_pmid > 1:
        listed = await entrez.esearch(RETRACTED_TERM, retmax=0)
        requests += 1
        if listed.count == 0 or _none_listed(listed):
            return RetractionCheck(len(pmids), (), requests)
        if _enumeration_requests(listed.count) < by_pmid:
            every = await entrez.esearch_delta(RETRACTED_TERM, EPOCH, today)
            requests += every.requests
            if every.complete:
                retracted = frozenset(every.pmids)
                return RetractionCheck(
                    len(pmids), tuple(p for p in pmids if p in retracted), requests
                )
            # A day held more than the cap and some ids were left out: ask by PMID instead.
    found: list[str] = []
    for start in range(0, len(pmids), batch):
        part = pmids[start : start + batch]
        result = await entrez.esearch(retraction_term(part), retmax=len(part))
        requests += 1
        if _none_listed(result):
            break  # the answer is the PMIDs asked about, the publication type left out
        answered = frozenset(result.pmids)
        found.extend(p for p in part if p in answered)
    return RetractionCheck(len(pmids), tuple(found), requests)


def _none_listed(result: SearchResult) -> bool:
    """PubMed said it has no "Retracted Publication" (and searched without that term)."""
    return any(warning.dropped == _DROPPED for warning in result.warnings)


def _enumeration_requests(count: int) -> int:
    """About the ESearch requests that enumerating `count` ids by Entrez date takes."""
    return 1 if count <= ESEARCH_ID_CAP else _REQUESTS_PER_CAP * -(-count // ESEARCH_ID_CAP)


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

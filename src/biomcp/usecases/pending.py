"""PMIDs a sync found and EFetch did not return: kept pending per query key (step 7 of
`usecases.sync`).

NCBI's answers now and then lag for a record in flux: ESearch lists a PMID that EFetch does not
return yet. Holding the checkpoint for it would make every later sync fetch a window that only
grows, for a record that may take weeks to appear. Instead the PMID is recorded as pending (in
the metadata store, per query key) and every later sync of the key asks for it again beside its
window, until one of two things happens:

* it arrives and is indexed: it is pending no more;
* it is missed again and ESearch no longer finds it: PubMed removed it, and it is pending no
  more either (`gone_from_pubmed`).

At most `limit` PMIDs are kept pending per key: past it the newly missed hold the checkpoint,
as before, so an outage that empties EFetch's answers cannot fill the table.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from biomcp.ports.entrez import EntrezClient
from biomcp.ports.saved_queries import PendingPmid, SavedQueryStore
from biomcp.usecases.retractions import pmid_term

__all__ = ["Settled", "gone_from_pubmed", "sample", "settle_pending"]


def sample(pmids: Sequence[str], size: int = 5) -> str:
    """A few of `pmids`, for a warning."""
    return ", ".join(pmids[:size]) + (", ..." if len(pmids) > size else "")


@dataclass(frozen=True, slots=True)
class Settled:
    """What settling a sync's pending PMIDs left."""

    #: pending for the key now
    pending: tuple[str, ...] = ()
    #: pending before, arrived and indexed by this sync
    arrived: tuple[str, ...] = ()
    #: pending before, no longer in PubMed
    gone: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    #: more were missed than the key may keep pending: the checkpoint must stay
    hold_checkpoint: bool = False


async def settle_pending(
    metadata: SavedQueryStore,
    entrez: EntrezClient,
    query_key: str,
    before: Sequence[PendingPmid],
    *,
    missing: Sequence[str],
    settled: Collection[str],
    limit: int,
    batch: int,
    at: datetime,
) -> Settled:
    """Record what EFetch did not return (`missing`) as pending, and what was pending and is
    now done with (`settled`: stored and indexed, or reported deleted) as pending no more, in
    one call to the store, with a warning for what is still missing.

    Raises:
        MetadataStoreError: from the store (the caller's checkpoint must not move then).
    """
    pending = {p.pmid: p for p in before}
    missed = list(dict.fromkeys(missing))
    if not pending and not missed:
        return Settled()
    warnings: list[str] = []
    arrived = [pmid for pmid in pending if pmid in settled]
    new = [pmid for pmid in missed if pmid not in pending]
    again = [pending[pmid] for pmid in missed if pmid in pending]
    gone = await gone_from_pubmed(entrez, [p.pmid for p in again], batch, warnings)
    gone_before: tuple[str, ...] = ()
    if gone:
        again = [p for p in again if p.pmid not in gone]
        missed = [pmid for pmid in missed if pmid not in gone]
        gone_before = tuple(p for p in pending if p in gone)
        warnings.append(
            f"{len(gone)} pending PMIDs are no longer in PubMed (ESearch finds them no "
            f"more: {sample(gone_before)}); they are pending no more"
        )
    hold = False
    if new and len(pending) - len(arrived) + len(new) > limit:
        hold = True
        warnings.append(
            f"{len(new)} PMIDs found by ESearch were not returned by EFetch "
            f"(e.g. {sample(new)}): more than the {limit} a query key keeps pending, so "
            "the checkpoint stays where it was and the next sync asks for them again"
        )
        missed = [p.pmid for p in again]
    elif new:
        warnings.append(
            f"{len(new)} PMIDs found by ESearch were not returned by EFetch "
            f"(e.g. {sample(new)}); they are kept pending and every sync of this key asks "
            "for them again until they arrive"
        )
    if again:
        oldest = min(p.first_missed_at for p in again)
        warnings.append(
            f"{len(again)} pending PMIDs are still not returned by EFetch "
            f"(e.g. {sample([p.pmid for p in again])}; pending since "
            f"{oldest.date().isoformat()}, missed by up to "
            f"{max(p.misses for p in again) + 1} syncs)"
        )
    now = await metadata.settle_pending(query_key, missed=missed, arrived=[*arrived, *gone], at=at)
    return Settled(
        pending=tuple(p.pmid for p in now),
        arrived=tuple(arrived),
        gone=gone_before,
        warnings=tuple(warnings),
        hold_checkpoint=hold,
    )


async def gone_from_pubmed(
    entrez: EntrezClient, pmids: Sequence[str], batch: int, warnings: list[str]
) -> set[str]:
    """Those of `pmids` ESearch no longer finds: PubMed removed them (one ESearch by PMID per
    `batch`). PubMed leaves a PMID it does not know out of an OR of PMIDs, so the answer holds
    exactly the ones it still has. A failed ESearch is a warning (appended to `warnings`) and
    nothing is taken for gone."""
    gone: set[str] = set()
    try:
        for start in range(0, len(pmids), batch):
            part = pmids[start : start + batch]
            answer = await entrez.esearch(pmid_term(part), retmax=len(part))
            found = frozenset(answer.pmids)
            gone.update(pmid for pmid in part if pmid not in found)
    except Exception as exc:  # a cancellation (BaseException) still stops the sync
        reason = f"{type(exc).__name__}: {exc}"[:300]
        warnings.append(
            f"could not ask PubMed whether the pending PMIDs still exist ({reason}); "
            "they stay pending"
        )
        return set()
    return gone

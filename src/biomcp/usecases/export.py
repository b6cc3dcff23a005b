"""ExportRecords: the stored records of the corpus, or of one saved query, written out for a
reference manager, a screening tool or a spreadsheet (`domain.export`'s formats, and `jsonl`:
one `rag_get` payload per line).

It reads SQL only (no NCBI, no model, no vector store), 500 records at a time, in PMID order,
so the same corpus exports to the same text and memory stays bounded whatever its size. The
filters are search's: evidence tiers, study designs, a year range, a lowest quality; retracted
records are left out unless asked for (then flagged), and the summary counts what was left out.

A living review screens what its saved query brought since the last screening. An export of one
query says where the next one starts (`next_added_since`): the moment it read the query's
records, or, while a sync of the query is running, that sync's start, because the records a
sync stores carry their store time but become visible only when it commits. Passing it as the
next `added_since` loses no record and repeats at most a running sync's (screening tools drop
repeated PMIDs). It assumes the clocks of the processes that sync and export agree, as the
jobs' times already do. An export `new` keeps that moment for itself: it starts at the key's
export mark (every record of the key the first time), and `mark` moves the mark on once the
caller has the whole export.

An export `new` also carries the key's earlier records that were retracted since its mark, as
flagged entries, so a screening tool learns of the retraction. The store knows them this way: a
sync stores a record again, flagged, when PubMed retracts it (the retraction re-check). The
store keeps the moment it first wrote the record retracted (`StoredDocument.retracted_at`). So
a record held by the key before the mark, and first written retracted at or after the mark, is
carried. One retracted already when the key first brought it is not carried: the export that
brought it flagged it. One retracted later is carried by the next export only.
The filters apply to carried records too, except the lowest quality: a retraction may lower it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from biomcp.domain.design import classify_design
from biomcp.domain.export import (
    ExportedRecord,
    ExportFormat,
    bibtex_entry,
    csv_header,
    csv_row,
    ris_entry,
)
from biomcp.ports.clock import Clock
from biomcp.ports.documents import StoredDocument
from biomcp.ports.fulltext import FullTextState
from biomcp.ports.jobs import RECENT_JOBS
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.vectors import SearchFilters
from biomcp.usecases.documents import fulltext_state_payload
from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.payloads import document_payload, iso_utc
from biomcp.usecases.saved_queries import records_of_query
from biomcp.usecases.search_filters import check_designs, check_filters

__all__ = ["EXPORT_FORMATS", "ExportRecords", "ExportSummary"]

EXPORT_FORMATS = tuple(f.value for f in ExportFormat)
#: Records read from SQL per round trip.
_PAGE = 500


@dataclass(frozen=True, slots=True)
class ExportSummary:
    """What an export wrote: `exported` records of the `considered` ones (the corpus, or the
    saved query's, or those it brought `added_since`), `filtered_out` by the filters and
    `retracted_left_out`. For one saved query, `next_added_since` is the `added_since` of the
    next export that takes up where this one stopped, and `sync_running` says that a sync of
    the query was running (what it brings comes with that next export). `new` says that the
    export started at the key's export mark (`added_since`, None for a first one).
    `retracted_carried` counts the exported entries of a `new` export that are earlier records
    of the key retracted since its mark (also counted in `considered` and `exported`)."""

    format: str
    query_key: str | None
    added_since: datetime | None
    considered: int
    exported: int
    filtered_out: int
    retracted_left_out: int
    next_added_since: datetime | None = None
    sync_running: bool = False
    new: bool = False
    retracted_carried: int = 0

    def as_payload(self) -> dict[str, Any]:
        payload = {
            "format": self.format,
            "query_key": self.query_key,
            "added_since": iso_utc(self.added_since),
            "considered": self.considered,
            "exported": self.exported,
            "filtered_out": self.filtered_out,
            "retracted_left_out": self.retracted_left_out,
            "next_added_since": iso_utc(self.next_added_since),
            "sync_running": self.sync_running,
            "new": self.new,
        }
        if self.new:
            payload["retracted_carried"] = self.retracted_carried
        return payload


@dataclass(frozen=True, slots=True)
class _Selection:
    """The PMIDs an export considers, the `added_since` they were chosen by, and where the next
    export of the same saved query starts (`ExportSummary`)."""

    pmids: list[str]
    added_since: datetime | None
    next_added_since: datetime | None = None
    sync_running: bool = False
    #: Earlier records of the key retracted since the mark (`new` only), carried flagged.
    carried: frozenset[str] = frozenset()


class ExportRecords:
    """Writes stored records in one of `EXPORT_FORMATS`."""

    def __init__(self, metadata: MetadataStore, *, clock: Clock) -> None:
        self._metadata = metadata
        self._clock = clock

    async def run(
        self,
        write: Callable[[str], object],
        *,
        format: str = "ris",
        query_key: str | None = None,
        filters: SearchFilters | None = None,
        study_designs: Collection[str] | None = None,
        include_retracted: bool = False,
        added_since: datetime | None = None,
        new: bool = False,
    ) -> ExportSummary:
        """Write the records (those `query_key` holds, else every stored one) that pass
        `filters` (evidence tiers, years, lowest quality, journals, document ids) and
        `study_designs`, in `format`, through `write` (called with text pieces, in order).
        `added_since` (with `query_key`) keeps the records a sync of the key first recorded at
        or after it: what a living review has not screened yet. `new` (with `query_key`)
        starts at the key's export mark instead, which `mark` then moves on.

        Raises:
            InvalidRequestError: an unknown format, evidence type or study design, a year range
                that ends before it starts; a `query_key` synced before its records were
                recorded; `added_since` or `new` without a `query_key`, or both.
            NotFoundError: no saved query `query_key` holds records.
            MetadataStoreError: from the store.
        """
        chosen = _format(format)
        if filters is not None:
            check_filters(filters)
        designs = frozenset(d.strip().casefold() for d in study_designs or () if d.strip())
        check_designs(designs)
        if added_since is not None and added_since.tzinfo is None:
            added_since = added_since.replace(tzinfo=UTC)  # as ISO 8601 text without an offset
        key = query_key.strip() if query_key is not None else None
        chosen_records = await self._select(key, added_since, new=new)
        carried = chosen_records.carried
        pmids = sorted([*chosen_records.pmids, *carried], key=int)
        lenient = _without_quality(filters)
        if chosen is ExportFormat.CSV:
            write(csv_header())
        exported = filtered = retracted = carried_count = 0
        for start in range(0, len(pmids), _PAGE):
            page = pmids[start : start + _PAGE]
            docs = await self._metadata.get_documents(page)
            tabular = chosen in (ExportFormat.CSV, ExportFormat.JSONL)
            held = await self._metadata.queries_holding(page) if chosen is ExportFormat.CSV else {}
            states = await self._metadata.fulltext_states(page) if tabular else {}
            for pmid in page:
                doc = docs.get(pmid)
                if doc is None:  # deleted since the PMIDs were read
                    continue
                item = _exported(doc, tuple(held.get(pmid, ())), states.get(pmid))
                if not _passes(item, lenient if pmid in carried else filters, designs):
                    filtered += 1
                    continue
                if item.retracted and not include_retracted and pmid not in carried:
                    retracted += 1
                    continue
                write(_entry(chosen, item, doc, states.get(pmid), first=exported == 0))
                exported += 1
                carried_count += pmid in carried
        return ExportSummary(
            format=chosen.value,
            query_key=key,
            added_since=chosen_records.added_since,
            considered=len(pmids),
            exported=exported,
            filtered_out=filtered,
            retracted_left_out=retracted,
            next_added_since=chosen_records.next_added_since,
            sync_running=chosen_records.sync_running,
            new=new,
            retracted_carried=carried_count,
        )

    async def _select(
        self, key: str | None, added_since: datetime | None, *, new: bool
    ) -> _Selection:
        """The PMIDs an export considers: every stored one, or those `key` holds (since
        `added_since`, or since its export mark when `new`), and where the next export of
        `key` starts."""
        if new:
            if key is None or added_since is not None:
                raise InvalidRequestError(
                    "new needs a query_key and no added_since: it starts where the key's "
                    "last new export ended",
                    details={"field": "new"},
                )
            added_since = await self._metadata.export_mark(key)
        if key is None:
            if added_since is not None:
                raise InvalidRequestError(
                    "added_since needs a query_key: each saved query records when it brought "
                    "each record",
                    details={"field": "added_since"},
                )
            return _Selection(await self._every_pmid(), None)
        next_since, running = await self._next_since(key)  # read before the records
        pmids = await records_of_query(
            self._metadata, key, purpose="export it", added_since=added_since
        )
        carried: frozenset[str] = frozenset()
        if new and added_since is not None:
            carried = await self._retracted_since(key, added_since, exclude=frozenset(pmids))
        return _Selection(pmids, added_since, next_since, running, carried)

    async def _retracted_since(
        self, key: str, mark: datetime, *, exclude: frozenset[str]
    ) -> frozenset[str]:
        """The records `key` held before `mark` (less `exclude`) that the store first wrote
        retracted at or after `mark`: retracted since the last export."""
        earlier = [p for p in await self._metadata.records_of(key) if p not in exclude]
        found: set[str] = set()
        for start in range(0, len(earlier), _PAGE):
            found |= await self._metadata.retracted_since(earlier[start : start + _PAGE], mark)
        return frozenset(found)

    async def mark_of(self, query_key: str) -> datetime | None:
        """Where the next `new` export of `query_key` starts; None before its first.

        Raises:
            MetadataStoreError: from the store.
        """
        return await self._metadata.export_mark(query_key.strip())

    async def mark(self, summary: ExportSummary) -> None:
        """Move the export mark of a `new` export's key to where the next one starts: call it
        once the export is complete where it went (a failed one leaves the mark, so the next
        export repeats it). Nothing for another export."""
        if summary.new and summary.query_key is not None and summary.next_added_since is not None:
            await self._metadata.set_export_mark(summary.query_key, summary.next_added_since)

    async def _next_since(self, key: str) -> tuple[datetime, bool]:
        """Where the next export of `key` starts, and whether a sync of it is running: now,
        or the start of a sync of `key` still marked running (one whose process died stays
        so until the key's next sync; that only repeats records). Read before the records:
        a sync that starts later stores its records at a later time."""
        read_at = self._clock.now()
        jobs = await self._metadata.list_jobs(key, limit=RECENT_JOBS)
        started = [job.started_at for job in jobs if job.status == "running"]
        return min([read_at, *started]), bool(started)

    async def _every_pmid(self) -> list[str]:
        pmids: list[str] = []
        after = ""
        while page := await self._metadata.document_pmids(after=after, limit=10_000):
            pmids += page
            after = page[-1]
        return pmids


def _format(value: str) -> ExportFormat:
    try:
        return ExportFormat(value.strip().casefold())
    except ValueError:
        raise InvalidRequestError(
            f"unknown export format {value!r}: use {', '.join(EXPORT_FORMATS)}",
            details={"field": "format", "allowed": list(EXPORT_FORMATS)},
        ) from None


def _exported(
    doc: StoredDocument, queries: tuple[str, ...], state: FullTextState | None
) -> ExportedRecord:
    design = doc.evidence.design or classify_design(doc.record)
    return ExportedRecord(
        record=doc.record,
        evidence=doc.evidence,
        quality=doc.quality,
        design=str(design.design),
        queries=queries,
        fulltext=state.status if state is not None else "",
    )


def _without_quality(filters: SearchFilters | None) -> SearchFilters | None:
    """`filters` less the lowest quality, for records carried as retracted."""
    if filters is None or filters.min_quality is None:
        return filters
    return replace(filters, min_quality=None)


def _passes(item: ExportedRecord, filters: SearchFilters | None, designs: frozenset[str]) -> bool:
    """Whether the record passes search's filters, read from the record as indexing reads them
    (`year` is the record's, the journal its title or else its ISO abbreviation)."""
    if designs and item.design not in designs:
        return False
    if filters is None:
        return True
    if filters.doc_ids is not None and item.record.doc_id not in filters.doc_ids:
        return False
    if filters.evidence_types and str(item.evidence.evidence_type) not in filters.evidence_types:
        return False
    year = item.record.year
    if filters.year_min is not None and (year is None or year < filters.year_min):
        return False
    if filters.year_max is not None and (year is None or year > filters.year_max):
        return False
    if filters.min_quality is not None and item.quality.total < filters.min_quality:
        return False
    if filters.journals:
        journal = item.record.journal.title or item.record.journal.iso_abbreviation or ""
        if journal.casefold() not in {j.casefold() for j in filters.journals}:
            return False
    return True


def _entry(
    chosen: ExportFormat,
    item: ExportedRecord,
    doc: StoredDocument,
    state: FullTextState | None,
    *,
    first: bool,
) -> str:
    match chosen:
        case ExportFormat.RIS:
            return ("" if first else "\n") + ris_entry(item) + "\n"
        case ExportFormat.BIBTEX:
            return ("" if first else "\n") + bibtex_entry(item) + "\n"
        case ExportFormat.CSV:
            return csv_row(item)
        case ExportFormat.JSONL:
            payload = {**document_payload(doc), "fulltext": fulltext_state_payload(state)}
            return json.dumps(payload, ensure_ascii=False) + "\n"
        case ExportFormat.PMIDS:
            return item.record.pmid + "\n"

"""`pubmed_convert_ids`: PMIDs, PMCIDs and DOIs in any mix, converted through NCBI's PMC ID
converter.

The converter takes one kind of id per request (its `idtype`), so the ids are grouped by kind,
one request per kind (at most three; at most 200 ids in all, the converter's own limit). Every
id asked for gets an answer: `found` with its PMID, PMCID (and the versioned PMCID when one was
given) and DOI, or `not_found` with the converter's reason (its `errmsg`, or that it answered
nothing for the id). The converter knows only articles in PubMed Central: a PMID of an article
outside PMC is `not_found` there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from biomcp.domain.identifiers import (
    ArticleId,
    IdConversion,
    IdKind,
    group_by_kind,
    parse_article_id,
    parse_article_ids,
)
from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.live.common import LiveContext, within_deadline

__all__ = ["MAX_CONVERT_IDS", "IdConverter"]

#: The most ids one call converts (the converter's own per-request limit).
MAX_CONVERT_IDS = 200
_SHOWN_INVALID = 20
_NO_RECORD = "the ID converter returned no record for this id"


class IdConverter:
    """PMID / PMCID / DOI conversion."""

    def __init__(self, context: LiveContext) -> None:
        self.context = context

    @within_deadline
    async def convert_ids(self, ids: Sequence[str]) -> dict[str, Any]:
        """Each of `ids` (PMIDs, PMCIDs with or without version, DOIs, mixed) with the
        article's PMID, PMCID and DOI, or the reason there is no match.

        Raises:
            InvalidRequestError: no ids, more than 200, or some that are not a PMID, PMCID or
                DOI (the error names them).
            EntrezError: NCBI failed.
        """
        wanted = _checked(ids)
        groups = group_by_kind(wanted)
        answers = await asyncio.gather(
            *(self._convert_kind(kind, members) for kind, members in groups.items())
        )
        by_key: dict[tuple[str, str], IdConversion] = {}
        for kind, records in zip(groups, answers, strict=True):
            for record in records:
                key = _record_key(kind, record)
                if key is not None:
                    by_key.setdefault((kind, key), record)
        rows = [_row(item, by_key.get((item.kind, item.key))) for item in wanted]
        found = sum(row["status"] == "found" for row in rows)
        return {
            "records": rows,
            "found": found,
            "notFound": len(rows) - found,
            "requests": len(groups),
        }

    async def _convert_kind(
        self, kind: IdKind, members: list[ArticleId]
    ) -> tuple[IdConversion, ...]:
        sent = list(dict.fromkeys(m.value for m in members))
        return await self.context.call(self.context.entrez.idconv(sent, idtype=kind))


def _checked(ids: Sequence[str]) -> list[ArticleId]:
    if isinstance(ids, str) or not isinstance(ids, Sequence) or not ids:
        raise InvalidRequestError(
            "ids must be a list of 1 to 200 PMIDs, PMCIDs or DOIs", details={"field": "ids"}
        )
    if len(ids) > MAX_CONVERT_IDS:
        raise InvalidRequestError(
            f"at most {MAX_CONVERT_IDS} ids per call, got {len(ids)}",
            details={"field": "ids", "count": len(ids)},
        )
    texts = [i if isinstance(i, str) else repr(i) for i in ids]
    wanted, invalid = parse_article_ids(texts)
    if invalid:
        shown = [text[:100] for text in invalid[:_SHOWN_INVALID]]
        raise InvalidRequestError(
            f"{len(invalid)} id(s) are not a PMID, PMCID (PMC...) or DOI (10.xxxx/...): "
            + ", ".join(repr(s) for s in shown),
            details={"field": "ids", "invalid": shown},
        )
    return wanted


def _record_key(kind: IdKind, record: IdConversion) -> str | None:
    """The normal form of the id a record answers for, of the kind that was sent."""
    parsed = parse_article_id(record.requested_id) if record.requested_id else None
    if parsed is not None and parsed.kind == kind:
        return parsed.key
    fallback = {"pmid": record.pmid, "pmcid": record.pmcid, "doi": record.doi}[kind]
    parsed = parse_article_id(fallback) if fallback and record.error is None else None
    return parsed.key if parsed is not None and parsed.kind == kind else None


def _row(item: ArticleId, record: IdConversion | None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "requestedId": item.given,
        "idType": item.kind,
        "status": "not_found",
        "pmid": None,
        "pmcid": None,
        "pmcidVersion": None,
        "doi": None,
        "reason": None,
    }
    if record is None:
        row["reason"] = _NO_RECORD
        return row
    if record.error is not None or not (record.pmid or record.pmcid or record.doi):
        row["reason"] = record.error or _NO_RECORD
        return row
    row.update(status="found", pmid=record.pmid, pmcid=record.pmcid, doi=record.doi)
    if item.versioned is not None:
        row["pmcidVersion"] = item.versioned
        if record.versions and item.versioned not in record.versions:
            row["reason"] = (
                f"PMC lists versions {', '.join(record.versions[:10])}, not {item.versioned}"
            )
    return row

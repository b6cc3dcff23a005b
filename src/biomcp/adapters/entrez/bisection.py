"""Every PMID of a date window, under ESearch's cap on the ids one answer may list.

A window whose count fits under the cap is read in one query. A larger window is split by
dates into parts sized to fit, and each part is visited the same way. A single day over the
cap is split by PMID ranges (`lo:hi[uid]`) until each range fits. The walk knows no HTTP: it
asks a `WindowSearch` callable, so it runs as well over an in-memory fake.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import date, timedelta

from biomcp.ports.entrez import (
    ESEARCH_ID_CAP,
    EntrezRequestError,
    EntrezWarning,
    SearchResult,
    WindowEnumeration,
)

__all__ = ["WindowSearch", "enumerate_window"]

#: `search(query, lo, hi)`: the ids matching `query` between the days `lo` and `hi`, both
#: included, listing up to the cap of them and counting them all.
WindowSearch = Callable[[str, date, date], Awaitable[SearchResult]]

#: The PMID range a day over the cap is split from.
_PMID_RANGE = (1, 99_999_999)


async def enumerate_window(
    search: WindowSearch, term: str, mindate: date, maxdate: date, *, cap: int = ESEARCH_ID_CAP
) -> WindowEnumeration:
    """Every PMID matching `term` from `mindate` to `maxdate`, each once.

    `requests` counts the calls to `search`. `complete` is False when a day could not be
    split under `cap` (a warning names it) or the server ignored a PMID range.

    Raises:
        EntrezRequestError: `maxdate` is before `mindate`.
    """
    if maxdate < mindate:
        raise EntrezRequestError(f"empty date window: {mindate} > {maxdate}")
    walk = _Walk(search, term, cap)
    await walk.visit(mindate, maxdate)
    pmids = tuple(walk.found)
    return WindowEnumeration(
        pmids=pmids,
        count=len(pmids),
        requests=walk.requests,
        complete=walk.complete,
        warnings=tuple(dict.fromkeys(walk.warnings)),
    )


class _Walk:
    """The state of one enumeration: the ids found, NCBI's warnings, the queries made."""

    def __init__(self, search: WindowSearch, term: str, cap: int) -> None:
        self._search = search
        self._term = term
        self._cap = cap
        self.found: dict[str, None] = {}
        self.warnings: list[EntrezWarning] = []
        self.requests = 0
        self.complete = True

    async def search(self, query: str, lo: date, hi: date) -> SearchResult:
        self.requests += 1
        return await self._search(query, lo, hi)

    async def visit(self, lo: date, hi: date) -> None:
        result = await self.search(self._term, lo, hi)
        self.warnings.extend(result.warnings)  # NCBI's on the term, e.g. a part it dropped
        if result.count <= self._cap:
            self.found.update(dict.fromkeys(result.pmids))
        elif lo == hi:
            await self.split_day(lo, result.count)
        else:
            spans = _spans(lo, hi, result.count, self._cap)
            await asyncio.gather(*(self.visit(a, b) for a, b in spans))

    async def split_day(self, day: date, count: int) -> None:
        if await self.split_ids(day, *_PMID_RANGE, count):
            return
        self.warnings.append(
            EntrezWarning(
                "WindowOverCap",
                f"{day.isoformat()} holds {count} records, more than PubMed's "
                f"{self._cap}-id cap, and could not be split further; "
                "some PMIDs of that day were not enumerated",
                source="client",
            )
        )

    async def split_ids(self, day: date, lo: int, hi: int, count: int) -> bool:
        if lo >= hi:
            self.complete = False
            return False
        mid = (lo + hi) // 2
        halves = [(lo, mid), (mid + 1, hi)]
        term = self._term
        results = [await self.search(f"({term}) AND {a}:{b}[uid]", day, day) for a, b in halves]
        if sum(r.count for r in results) > count:
            self.complete = False  # the server ignored the range: the halves overlap
            return False
        ok = True
        for (a, b), result in zip(halves, results, strict=True):
            if result.count <= self._cap:
                self.found.update(dict.fromkeys(result.pmids))
            else:
                ok = await self.split_ids(day, a, b, result.count) and ok
        return ok


def _spans(lo: date, hi: date, count: int, cap: int) -> list[tuple[date, date]]:
    """`lo..hi` cut into consecutive spans, enough that `count` ids spread evenly fill each
    to at most four fifths of `cap`, never more spans than days."""
    days = (hi - lo).days + 1
    parts = min(days, max(2, -(-count * 5 // (cap * 4))))
    bounds = [lo + timedelta(days=days * k // parts) for k in range(parts + 1)]
    spans = [
        (bounds[k], bounds[k + 1] - timedelta(days=1))
        for k in range(parts)
        if bounds[k + 1] > bounds[k]
    ]
    spans[-1] = (spans[-1][0], hi)
    return spans

"""Paging through a live PubMed search, past ESearch's 9,999-result window.

PubMed's ESearch returns ids from the first 9,999 results of a query only (`retstart` at most
9,998, `retstart + retmax` at most 9,999). A search page is therefore one of two kinds:

* **offset pages** (the first 9,999 results, in the sort in force): plain `retstart`, never
  asking past the window (`retmax` is clipped to `9,999 - retstart`);
* **date-slice pages** (everything after them): the query's records walked by Entrez date
  (EDAT), newest first, in day windows that each hold at most 9,999 records (a day holding
  more is split by PMID range, `lo:hi[uid]`, as the corpus sync's `esearch_delta` does), the
  sort in force within a window. The first 9,999 results, already seen on offset pages, are
  left out: each deep page asks for them once (`retstart=0`, `retmax=9,999`) and skips them,
  so every record of the query is reached exactly once.

Where a page stops is a `Cursor`, handed to the caller as an opaque string (`nextCursor`):
URL-safe base64 of a small JSON object, at most `MAX_CURSOR_CHARS` characters, bound to the
query it came from by a fingerprint of the effective term and the sort. A cursor that does not
decode, does not validate or belongs to another query is a `VALIDATION` error.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

from biomcp.ports.entrez import ESEARCH_ID_CAP, SearchResult
from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.live.common import LiveContext

__all__ = [
    "EDAT_FLOOR",
    "MAX_CURSOR_CHARS",
    "MAX_OFFSET",
    "Cursor",
    "DateSlicePager",
    "DeepPage",
    "Slice",
    "corrected_for_cursor",
    "decode_cursor",
    "encode_cursor",
    "first_deep_cursor",
    "query_fingerprint",
]

#: ESearch's largest `retstart` for PubMed.
MAX_OFFSET = ESEARCH_ID_CAP - 1
MAX_CURSOR_CHARS = 512
#: The oldest Entrez date a date-slice walk looks at (PubMed's open-ended searches use 1000).
EDAT_FLOOR = date(1000, 1, 1)
#: PMIDs are below this (a day over the cap is split by PMID range within it).
_UID_CEILING = 999_999_999
#: ESearch requests one deep page may spend finding windows and reading them (the top-9,999
#: request aside); when they run out the page is returned short, its cursor continuing.
_DEEP_BUDGET = 12
#: Ids asked per request within a window (more than a page: some are skipped).
_CHUNK = 2000
#: ESearch requests spent splitting one day by PMID range, at most.
_UID_BUDGET = 40
_VERSION = 1
#: The longest correction (JSON-encoded) a cursor carries: the worst deep cursor stays within
#: MAX_CURSOR_CHARS.
_CORRECTED_MAX = 200


@dataclass(frozen=True, slots=True)
class Slice:
    """A window of the date-slice walk: Entrez dates [lo, hi] (whole days), and on a single
    day split by PMID, the PMID range [uid_lo, uid_hi]; `size` records, `done` of them read."""

    lo: date
    hi: date
    size: int
    done: int = 0
    uid_lo: int | None = None
    uid_hi: int | None = None


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where the next page starts: an `offset` in the first 9,999 results, or the date-slice
    walk's position (`rest_hi` / `rest_uid`: the newest part not yet read; `window`: the
    window being read). `corrected` is the spelling correction the pages search with."""

    fingerprint: str
    offset: int = 0
    deep: bool = False
    rest_hi: date | None = None
    rest_uid: int | None = None
    window: Slice | None = None
    span: int = 30
    corrected: str | None = None


@dataclass(frozen=True, slots=True)
class DeepPage:
    """One date-slice page: its PMIDs, the cursor after it (None: the walk is complete), the
    last ESearch request's parameters, and how many ESearch requests it took."""

    pmids: tuple[str, ...]
    next: Cursor | None
    last_params: list[tuple[str, str]]
    requests: int


def query_fingerprint(term: str, sort: str) -> str:
    """What binds a cursor to its query: a short digest of the effective term and the sort."""
    digest = hashlib.sha256(json.dumps([term, sort]).encode("utf-8")).hexdigest()
    return digest[:16]


# --- cursor text -----------------------------------------------------------------------------


def _day(value: date) -> int:
    return value.year * 10000 + value.month * 100 + value.day


def _from_day(value: Any) -> date:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("a date is not a number")
    return date(value // 10000, value // 100 % 100, value % 100)


def encode_cursor(cursor: Cursor) -> str:
    """The cursor as the opaque string handed out (URL-safe base64 of compact JSON)."""
    data: dict[str, Any] = {"v": _VERSION, "q": cursor.fingerprint}
    if cursor.corrected is not None:
        data["c"] = cursor.corrected
    if not cursor.deep:
        data["o"] = cursor.offset
    else:
        assert cursor.rest_hi is not None  # noqa: S101 - a deep cursor always has one
        data["h"] = _day(cursor.rest_hi)
        data["hu"] = cursor.rest_uid
        data["s"] = cursor.span
        if cursor.window is not None:
            w = cursor.window
            data["w"] = [_day(w.lo), _day(w.hi), w.size, w.done, w.uid_lo, w.uid_hi]
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=True)
    return base64.urlsafe_b64encode(text.encode("ascii")).decode("ascii").rstrip("=")


def decode_cursor(text: str, fingerprint: str) -> Cursor:
    """The cursor `text` stands for, checked, for the query with `fingerprint`.

    Raises:
        InvalidRequestError: not a cursor this server hands out, or one from another query.
    """
    if not isinstance(text, str) or not 0 < len(text) <= MAX_CURSOR_CHARS:
        raise _bad_cursor(f"a cursor is a string of 1 to {MAX_CURSOR_CHARS} characters")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        data = json.loads(raw.decode("ascii"))
        cursor = _cursor(data)
    except (binascii.Error, UnicodeDecodeError, ValueError, TypeError, KeyError) as exc:
        raise _bad_cursor(f"it does not decode ({type(exc).__name__})") from None
    if cursor.fingerprint != fingerprint:
        raise InvalidRequestError(
            "the cursor belongs to another search: send the same queryTerm, sortBy, dateRange "
            "and filterByPublicationTypes as the page that returned it",
            details={"field": "cursor"},
        )
    return cursor


def _cursor(data: Any) -> Cursor:
    if not isinstance(data, dict) or data.get("v") != _VERSION:
        raise ValueError("not a version-1 cursor")
    fingerprint = data["q"]
    corrected = data.get("c")
    if not isinstance(fingerprint, str) or len(fingerprint) != 16:
        raise ValueError("bad fingerprint")
    if corrected is not None and (not isinstance(corrected, str) or not corrected.strip()):
        raise ValueError("bad correction")
    if "o" in data:
        offset = _integer(data["o"], 0, MAX_OFFSET)
        return Cursor(fingerprint, offset=offset, corrected=corrected)
    rest_hi = _from_day(data["h"])
    rest_uid = None if data.get("hu") is None else _integer(data["hu"], 0, _UID_CEILING)
    span = _integer(data["s"], 1, 400_000)
    window = None
    if data.get("w") is not None:
        lo, hi, size, done, uid_lo, uid_hi = data["w"]
        window = Slice(
            _from_day(lo),
            _from_day(hi),
            _integer(size, 0, ESEARCH_ID_CAP),
            _integer(done, 0, ESEARCH_ID_CAP),
            None if uid_lo is None else _integer(uid_lo, 1, _UID_CEILING),
            None if uid_hi is None else _integer(uid_hi, 1, _UID_CEILING),
        )
        if window.lo > window.hi or window.hi > rest_hi:
            raise ValueError("bad window")
    return Cursor(
        fingerprint,
        deep=True,
        rest_hi=rest_hi,
        rest_uid=rest_uid,
        window=window,
        span=span,
        corrected=corrected,
    )


def _integer(value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{value!r} is not an integer from {low} to {high}")
    return value


def _bad_cursor(reason: str) -> InvalidRequestError:
    return InvalidRequestError(
        f"cursor is not one this server returned: {reason}. Pass nextCursor unchanged, or "
        "start again without a cursor",
        details={"field": "cursor"},
    )


def corrected_for_cursor(corrected: str | None) -> str | None:
    """The correction a cursor may carry (None for a long one: the cursor stays small, and the
    pages after the first search the query as written)."""
    if corrected is None or len(json.dumps(corrected)) > _CORRECTED_MAX:
        return None
    return corrected


def first_deep_cursor(fingerprint: str, corrected: str | None) -> Cursor:
    """The cursor that starts the date-slice walk (after the first 9,999 results)."""
    tomorrow = datetime.now(UTC).date() + timedelta(days=1)
    return Cursor(fingerprint, deep=True, rest_hi=tomorrow, corrected=corrected)


def _ncbi(day: date) -> str:
    return f"{day.year:04d}/{day.month:02d}/{day.day:02d}"


# --- the date-slice walk ---------------------------------------------------------------------


class DateSlicePager:
    """The date-slice pages of a search (see the module docstring)."""

    def __init__(self, context: LiveContext) -> None:
        self.context = context

    async def page(self, term: str, sort: str, cursor: Cursor, wanted: int) -> DeepPage:
        """Up to `wanted` PMIDs of `term` from `cursor` on, skipping the first 9,999 results
        (in `sort`), and the cursor after them."""
        top = await self.context.call(
            self.context.entrez.esearch(term, retstart=0, retmax=ESEARCH_ID_CAP, sort=sort)
        )
        seen = set(top.pmids)
        requests = 1
        pmids: list[str] = []
        params: list[tuple[str, str]] = []
        state: Cursor | None = cursor
        while state is not None and len(pmids) < wanted and _may_go_on(requests, pmids):
            if state.window is None or state.window.done >= state.window.size:
                state, spent = await self._next_window(term, state)
                requests += spent
                continue
            window = state.window
            retmax = min(_CHUNK, ESEARCH_ID_CAP - window.done)
            params = _slice_params(term, window, retmax, sort)
            values = dict(params)
            result = await self.context.call(
                self.context.entrez.esearch(
                    values["term"],
                    datetype="edat",
                    mindate=values["mindate"],
                    maxdate=values["maxdate"],
                    retstart=window.done,
                    retmax=retmax,
                    sort=sort,
                )
            )
            requests += 1
            consumed = 0
            for pmid in result.pmids:
                if len(pmids) >= wanted:
                    break
                consumed += 1
                if pmid not in seen:
                    pmids.append(pmid)
            done = window.done + consumed
            if consumed == len(result.pmids) and len(result.pmids) < retmax:
                done = window.size  # the window ran out early: it is finished
            state = replace(state, window=replace(window, done=min(done, window.size)))
        last = state.window if state is not None else None
        if state is not None and last is not None and last.done >= last.size:
            state = _after(state)
        return DeepPage(tuple(pmids), state, params, requests)

    async def _count(self, term: str, lo: date, hi: date, uids: tuple[int, int] | None) -> int:
        query = term if uids is None else _uid_term(term, *uids)
        result: SearchResult = await self.context.call(
            self.context.entrez.esearch(
                query, datetype="edat", mindate=_ncbi(lo), maxdate=_ncbi(hi), retmax=0
            )
        )
        return result.count

    async def _next_window(self, term: str, state: Cursor) -> tuple[Cursor | None, int]:
        """The next window of the walk from `state` (None: nothing is left), and the ESearch
        requests spent finding it. A window holds 1 to 9,999 records."""
        if state.window is not None:
            following = _after(state)
            if following is None:
                return None, 0
            state = following
        hi = state.rest_hi
        assert hi is not None  # noqa: S101 - a deep cursor always has one
        if hi < EDAT_FLOOR:
            return None, 0
        if state.rest_uid is not None:
            return await self._uid_window(term, state)
        spent = 1
        rest = await self._count(term, EDAT_FLOOR, hi, None)
        if rest == 0:
            return None, spent
        if rest <= ESEARCH_ID_CAP:
            return replace(state, window=Slice(EDAT_FLOOR, hi, rest)), spent
        # Bracket the span (days back from `hi`): `low` days hold `low_count` <= the cap,
        # `high` days more than the cap; aim at a window at least a quarter full.
        low, low_count = 0, 0
        high = hi.toordinal() - EDAT_FLOOR.toordinal() + 1
        span = min(max(1, state.span), high - 1)
        while spent < _DEEP_BUDGET:
            lo = date.fromordinal(hi.toordinal() - span + 1)
            count = await self._count(term, lo, hi, None)
            spent += 1
            if count > ESEARCH_ID_CAP:
                high = span
            else:
                low, low_count = span, count
                if count * 4 >= ESEARCH_ID_CAP:
                    break
            if high - low <= 1:
                break
            if count > ESEARCH_ID_CAP:
                guess = span * ESEARCH_ID_CAP * 4 // (count * 5)
            elif count == 0:
                guess = span * 16
            else:
                guess = span * ESEARCH_ID_CAP * 3 // (count * 4)
            span = guess if low < guess < high else (low + high) // 2
        if low_count > 0:
            lo = date.fromordinal(hi.toordinal() - low + 1)
            return replace(state, window=Slice(lo, hi, low_count), span=low), spent
        if low > 0:  # the newest `low` days hold nothing: skip them
            state = replace(state, rest_hi=date.fromordinal(hi.toordinal() - low), span=1)
        if high - low <= 1:  # the day after them holds more than the cap: split it by PMID
            split, used = await self._uid_window(term, replace(state, rest_uid=_UID_CEILING))
            return split, spent + used
        return state, spent  # out of budget for this page: the next one goes on from here

    async def _uid_window(self, term: str, state: Cursor) -> tuple[Cursor | None, int]:
        """A PMID-range window within the single day `state.rest_hi`: the widest range
        [lo, `state.rest_uid`] holding at most 9,999 records, at least half full when it can
        be: guessed from a sample of the day's PMIDs, then by bisection (a day over the cap is
        rare, a bulk load; this costs 3 requests or so, at most `_UID_BUDGET`)."""
        day = state.rest_hi
        top = state.rest_uid
        if day is None or top is None:
            return None, 0
        count = await self._count(term, day, day, (1, top))
        spent = 1
        if count <= ESEARCH_ID_CAP:
            window = Slice(day, day, count, 0, 1, top)
            if count == 0:
                return _after(replace(state, window=window)), spent
            return replace(state, window=window), spent
        lo_bad, lo_good, good = 1, top + 1, 0
        # First guesses from a sample of the day's PMIDs: [the k-th largest, top] holds at
        # least k records, so the median usually gives a half-full window at once.
        sample = await self.context.call(
            self.context.entrez.esearch(
                _uid_term(term, 1, top),
                datetype="edat",
                mindate=_ncbi(day),
                maxdate=_ncbi(day),
                retmax=ESEARCH_ID_CAP,
            )
        )
        spent += 1
        ids = sorted(
            (int(p) for p in sample.pmids if p.isdigit() and 0 < int(p) <= top), reverse=True
        )
        k = len(ids) // 2
        while k >= 1 and spent < _UID_BUDGET:
            count = await self._count(term, day, day, (ids[k], top))
            spent += 1
            if count > ESEARCH_ID_CAP:
                lo_bad, k = max(lo_bad, ids[k]), k // 2
            else:
                lo_good, good = ids[k], count
                break
        while lo_good - lo_bad > 1 and good * 2 < ESEARCH_ID_CAP and spent < _UID_BUDGET:
            mid = (lo_bad + lo_good) // 2
            count = await self._count(term, day, day, (mid, top))
            spent += 1
            if count > ESEARCH_ID_CAP:
                lo_bad = mid
            else:
                lo_good, good = mid, count
                if count * 2 >= ESEARCH_ID_CAP:
                    break
        if lo_good > top:  # no progress within the budget (one PMID over the cap cannot be)
            raise InvalidRequestError(
                f"PubMed's records of {day.isoformat()} for this search could not be split "
                f"under its {ESEARCH_ID_CAP}-record window: this search cannot be paged further",
                details={"field": "cursor"},
            )
        window = Slice(day, day, good, 0, lo_good, top)
        if good == 0:
            return _after(replace(state, window=window)), spent
        return replace(state, window=window), spent


def _may_go_on(requests: int, pmids: list[str]) -> bool:
    """Whether a deep page may send another request: within its budget, or, while it has
    found nothing yet, within four times that (a page is not returned empty lightly)."""
    return requests < _DEEP_BUDGET or (not pmids and requests < 4 * _DEEP_BUDGET)


def _after(state: Cursor) -> Cursor | None:
    """The cursor past its window (None when the walk has reached the floor)."""
    window = state.window
    if window is None:
        return state
    if window.uid_lo is not None and window.uid_lo > 1:
        return replace(state, rest_hi=window.lo, rest_uid=window.uid_lo - 1, window=None)
    next_hi = window.lo - timedelta(days=1)
    if next_hi < EDAT_FLOOR:
        return None
    return replace(state, rest_hi=next_hi, rest_uid=None, window=None)


def _slice_params(term: str, window: Slice, retmax: int, sort: str) -> list[tuple[str, str]]:
    return [
        ("term", _uid_term(term, window.uid_lo, window.uid_hi)),
        ("datetype", "edat"),
        ("mindate", _ncbi(window.lo)),
        ("maxdate", _ncbi(window.hi)),
        ("retstart", str(window.done)),
        ("retmax", str(retmax)),
        ("sort", sort),
    ]


def _uid_term(term: str, lo: int | None, hi: int | None) -> str:
    return term if lo is None or hi is None else f"({term}) AND {lo}:{hi}[uid]"

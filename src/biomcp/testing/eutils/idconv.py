"""The fake PMC ID converter, and the route wrapper the fake's non-E-utility lookups share.

`GET /tools/idconv/api/v1/articles/?ids=...&idtype=pmid|pmcid|doi&format=json` (also at the
root as `/idconv`) answers from the corpus: the articles' own ids (`PubmedData/ArticleIdList`,
not their references' ids). The answer follows the shape NCBI documents for the converter's
JSON (`status`, `responseDate`, `request`, `records` with `requested-id`, `pmcid`, `pmid`,
`doi`; an id without a match: `status: error` and an `errmsg`). This answer format is
SYNTHETIC: built from NCBI's documentation, not recorded from NCBI. As NCBI's converter, it
knows only articles in PMC: an article of the corpus without a PMCID is "not found in PMC".

Both lookups (this one and ECitMatch, `citmatch`) go through the same fault injection and
request log as the E-utilities: `lookup_route` does that.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from urllib.parse import parse_qsl

from lxml import etree
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from biomcp.testing.eutils import faults as fault_bodies
from biomcp.testing.eutils.faults import Fault
from biomcp.testing.eutils.handlers import Params, Reply
from biomcp.testing.eutils.state import ServerState, now

__all__ = ["IDCONV_PATHS", "IdIndex", "answer_idconv", "idconv_routes", "lookup_route"]

IDCONV_PATHS = ("/tools/idconv/api/v1/articles/", "/tools/idconv/api/v1/articles", "/idconv")
_MAX_IDS = 200
_NOT_IN_PMC = "Identifier not found in PMC"
_INVALID = "invalid article id"
_JSON = "application/json"

#: A lookup's answer to one request (run off the event loop) and its in-band error body.
Handler = Callable[[ServerState, Params], Reply]
ErrorBody = Callable[[str], Reply]


class IdIndex:
    """The corpus's article ids by PMID, PMCID and DOI (DOIs case-folded), rebuilt when the
    corpus changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version = -1
        self.by_pmid: dict[str, tuple[str, str | None, str | None]] = {}
        self.by_pmcid: dict[str, str] = {}
        self.by_doi: dict[str, str] = {}

    def refresh(self, state: ServerState) -> IdIndex:
        with self._lock:
            if self._version != state.corpus.version:
                self._build(state)
                self._version = state.corpus.version
        return self

    def _build(self, state: ServerState) -> None:
        by_pmid: dict[str, tuple[str, str | None, str | None]] = {}
        for entry in state.corpus.entries():
            pmcid, doi = _own_ids(entry.raw)
            by_pmid[entry.pmid] = (entry.pmid, pmcid, doi)
        self.by_pmid = by_pmid
        self.by_pmcid = {p: pmid for pmid, p, _ in by_pmid.values() if p}
        self.by_doi = {d.casefold(): pmid for pmid, _, d in by_pmid.values() if d}


def _own_ids(raw: bytes) -> tuple[str | None, str | None]:
    """The article's PMCID and DOI from `PubmedData/ArticleIdList` (not its references')."""
    try:
        root = etree.fromstring(raw, etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError:
        return None, None
    ids: dict[str, str] = {}
    for node in root.iterfind("PubmedData/ArticleIdList/ArticleId"):
        kind = (node.get("IdType") or "").lower()
        text = (node.text or "").strip()
        if kind in ("pmc", "doi") and text and kind not in ids:
            ids[kind] = text
    pmcid = ids.get("pmc")
    if pmcid and not pmcid.upper().startswith("PMC"):
        pmcid = f"PMC{pmcid}"
    return pmcid, ids.get("doi")


def _kind(value: str) -> str | None:
    text = value.strip()
    if text.isdigit():
        return "pmid"
    if text.upper().startswith("PMC") and text[3:].split(".")[0].isdigit():
        return "pmcid"
    if text.startswith("10.") and "/" in text:
        return "doi"
    return None


def answer_idconv(index: IdIndex, state: ServerState, params: Params) -> Reply:
    """The converter's JSON for `ids` (comma-separated, of one `idtype`, at most 200)."""
    raw_ids = [i.strip() for v in params.all("ids") for i in v.split(",") if i.strip()]
    request = ";".join(f"{k}={v}" for k, v in params.pairs if k.lower() != "api_key")
    if not raw_ids:
        return idconv_error("Parameter 'ids' is required")
    if len(raw_ids) > _MAX_IDS:
        return idconv_error(f"Too many ids: at most {_MAX_IDS} per request")
    idtype = (params.get("idtype") or "").lower() or None
    if idtype not in (None, "pmid", "pmcid", "doi"):
        return idconv_error(f"Invalid idtype: {idtype}")
    ids = index.refresh(state)
    records = [_record(ids, value, idtype) for value in raw_ids]
    body = {
        "status": "ok",
        "responseDate": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S"),
        "request": request,
        "records": records,
    }
    return Reply(json.dumps(body).encode(), _JSON)


def _record(ids: IdIndex, value: str, idtype: str | None) -> dict[str, object]:
    kind = _kind(value)
    if kind is None or (idtype is not None and kind != idtype):
        return {"requested-id": value, "status": "error", "errmsg": _INVALID}
    if kind == "pmid":
        pmid: str | None = value if value in ids.by_pmid else None
    elif kind == "pmcid":
        pmid = ids.by_pmcid.get(value.upper().split(".")[0])
    else:
        pmid = ids.by_doi.get(value.casefold())
    found = ids.by_pmid.get(pmid) if pmid else None
    if found is None or found[1] is None:
        return {"requested-id": value, "status": "error", "errmsg": _NOT_IN_PMC}
    record: dict[str, object] = {"requested-id": value, "pmcid": found[1], "pmid": int(found[0])}
    if found[2]:
        record["doi"] = found[2]
    return record


def idconv_routes(state: ServerState) -> list[Route]:
    """The converter's routes over `state` (GET and POST)."""
    index = IdIndex()

    def handler(state: ServerState, params: Params) -> Reply:
        return answer_idconv(index, state, params)

    endpoint = lookup_route(state, "idconv", handler, idconv_error)
    return [Route(path, endpoint, methods=["GET", "POST"]) for path in IDCONV_PATHS]


def idconv_error(message: str) -> Reply:
    """The converter refusing a request as a whole."""
    body = {"status": "error", "responseDate": "", "request": "", "message": message}
    return Reply(json.dumps(body).encode(), _JSON)


# --------------------------------------------------------------------------- route wrapper


def lookup_route(
    state: ServerState, endpoint: str, handler: Handler, error_body: ErrorBody
) -> Callable[[Request], Awaitable[Response]]:
    """A Starlette endpoint for a lookup: parameters from the query string and a form body,
    the fault plan consulted (faults aimed at no endpoint, or random ones, apply), the request
    logged like the E-utilities' (the API key masked)."""

    async def answer(request: Request) -> Response:
        arrived = now()
        pairs = list(request.query_params.multi_items())
        if request.method == "POST":
            body = (await request.body()).decode("utf-8", "replace")
            pairs += parse_qsl(body, keep_blank_values=True)
        params = Params(pairs)
        fault = state.faults.next_fault(endpoint)
        response = await _respond(state, handler, error_body, params, fault)
        grouped: dict[str, str] = {}
        for key, value in pairs:
            grouped.setdefault(key, "***" if key.lower() == "api_key" else value)
        state.record(
            {
                "t": arrived,
                "endpoint": endpoint,
                "method": request.method,
                "params": grouped,
                "has_api_key": any(k.lower() == "api_key" and v for k, v in pairs),
                "status": response.status_code,
                "fault": fault.kind if fault is not None else None,
            }
        )
        return response

    return answer


async def _respond(
    state: ServerState, handler: Handler, error_body: ErrorBody, params: Params, fault: Fault | None
) -> Response:
    loop = asyncio.get_running_loop()

    async def normal() -> Reply:
        return await loop.run_in_executor(state.executor, handler, state, params)

    if fault is None:
        reply = await normal()
        return Response(reply.body, reply.status, media_type=reply.media_type)
    kind = fault.kind
    if kind == "429":
        return Response(
            fault_bodies.rate_limit_body(),
            status_code=429,
            media_type=_JSON,
            headers={"Retry-After": fault_bodies.retry_after_header(fault.retry_after)},
        )
    if kind in ("500", "502", "503"):
        status = int(kind)
        return Response(fault_bodies.http_error_page(status), status, media_type="text/html")
    if kind == "html":
        return Response(fault_bodies.html_error_page(), media_type="text/html")
    if kind == "ncbi_error":
        reply = error_body(fault_bodies.NCBI_ERROR_MESSAGE)
        return Response(reply.body, reply.status, media_type=reply.media_type)
    if kind == "slow":
        await asyncio.sleep(fault.delay)
        reply = await normal()
        return Response(reply.body, reply.status, media_type=reply.media_type)
    if kind in fault_bodies.STREAMED_KINDS:
        return fault_bodies.streamed_response(fault, state.faults)
    reply = await normal()  # the cut kinds: truncated, truncated_xml, truncated_medline
    body = fault_bodies.cut_body(kind, reply.body)
    return Response(body, reply.status, media_type=reply.media_type)

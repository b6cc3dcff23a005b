"""The fake PMC ID converter, and the route wrapper the fake's non-E-utility lookups share.

`GET /tools/idconv/api/v1/articles/?ids=...&idtype=pmid|pmcid|doi&format=json` (also at the
root as `/idconv`) answers from the corpus: the articles' own ids (`PubmedData/ArticleIdList`,
not their references' ids). The answer follows the shape NCBI documents for the converter's
JSON (`status`, `responseDate`, `request`, `records` with `requested-id`, `pmcid`, `pmid`,
`doi`; an id without a match: `status: error` and an `errmsg`). This answer format is
SYNTHETIC: built from NCBI's documentation, not recorded from NCBI. As NCBI's converter, it
knows only articles in PMC: an article of the corpus without a PMCID is "not found in PMC".

Both lookups (this one and ECitMatch, `citmatch`) go through the same fault injection and
request log as the E-utilities (`routes.request_route`).
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime

from lxml import etree
from starlette.routing import Route

from biomcp.testing.eutils.handlers import Params, Reply
from biomcp.testing.eutils.routes import request_route
from biomcp.testing.eutils.state import ServerState

__all__ = ["IDCONV_PATHS", "IdIndex", "answer_idconv", "idconv_routes"]

IDCONV_PATHS = ("/tools/idconv/api/v1/articles/", "/tools/idconv/api/v1/articles", "/idconv")
_MAX_IDS = 200
_NOT_IN_PMC = "Identifier not found in PMC"
_INVALID = "invalid article id"
_JSON = "application/json"


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

    endpoint = request_route(state, "idconv", handler, idconv_error)
    return [Route(path, endpoint, methods=["GET", "POST"]) for path in IDCONV_PATHS]


def idconv_error(message: str) -> Reply:
    """The converter refusing a request as a whole."""
    body = {"status": "error", "responseDate": "", "request": "", "message": message}
    return Reply(json.dumps(body).encode(), _JSON)

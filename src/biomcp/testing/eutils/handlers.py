"""The five E-utilities over the fake's state: pure functions from request parameters to a
response body. Errors NCBI reports in-band (status 200, an `<ERROR>` element) are reported the
same way here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from biomcp.testing.eutils import mesh, render
from biomcp.testing.eutils.medline import article_extras, to_medline
from biomcp.testing.eutils.pmc import pmc_reply
from biomcp.testing.eutils.query import (
    BinOp,
    QuerySyntaxError,
    Term,
    parse_date_bound,
    parse_query,
    translate,
)
from biomcp.testing.eutils.spell import espell_xml
from biomcp.testing.eutils.state import ServerState

__all__ = ["ESEARCH_CAP", "RETSTART_ERROR", "Params", "Reply", "handle"]

#: PubMed's ESearch returns ids from the first 9,999 results only.
ESEARCH_CAP = 9999
RETSTART_ERROR = (
    "Search Backend failed: Exception:\n'retstart' cannot be larger than 9998. For PubMed, "
    "ESearch can only retrieve the first 9,999 records matching the query. To obtain more than "
    "9,999 PubMed records, consider using EDirect that contains additional logic to batch "
    "PubMed search results automatically so that an arbitrary number can be retrieved. For "
    "details see https://www.ncbi.nlm.nih.gov/books/NBK25499/"
)
_ROOTS = {
    "esearch": "eSearchResult",
    "efetch": "eFetchResult",
    "esummary": "eSummaryResult",
    "elink": "eLinkResult",
    "einfo": "eInfoResult",
    "espell": "eSpellResult",
}
_XML = "text/xml"
_TEXT = "text/plain"
_LINK_NAMES = tuple(name for name, _, _ in render.LINK_NAMES)
_DATE_COLUMNS = {"edat": "edat", "pdat": "pdat", "mdat": "mdat"}


class _RequestError(Exception):
    """An in-band NCBI error for the current endpoint."""


@dataclass(frozen=True, slots=True)
class Reply:
    body: bytes
    media_type: str = _XML
    status: int = 200


class Params:
    """Request parameters (query string and form body together). Names are matched
    case-insensitively (`WebEnv`, `webenv`); values keep their order."""

    def __init__(self, pairs: Sequence[tuple[str, str]]) -> None:
        self.pairs = list(pairs)

    def all(self, name: str) -> list[str]:
        wanted = name.lower()
        return [v for k, v in self.pairs if k.lower() == wanted]

    def get(self, name: str) -> str | None:
        values = self.all(name)
        return values[0].strip() if values else None

    def integer(self, name: str, default: int) -> int:
        raw = self.get(name)
        if raw is None or raw == "":
            return default
        try:
            return int(raw)
        except ValueError:
            raise _RequestError(f"Invalid {name}: {raw!r} is not an integer") from None

    def ids(self) -> list[str]:
        """Every `id`, comma-separated or repeated, de-duplicated in order."""
        found = (i.strip() for value in self.all("id") for i in value.split(","))
        return list(dict.fromkeys(i for i in found if i))


def handle(state: ServerState, endpoint: str, params: Params) -> Reply:
    """Answer one E-utility request."""
    root = _ROOTS[endpoint]
    try:
        if endpoint == "einfo":
            return _einfo(state, params)
        if endpoint == "espell":
            return Reply(espell_xml(state, params.get("db"), params.get("term") or ""))
        db = params.get("dbfrom" if endpoint == "elink" else "db")
        if endpoint == "elink" and db is None:
            db = params.get("db")
        if (db or "").lower() == "mesh" and endpoint in ("esearch", "esummary"):
            return _mesh(params, endpoint)
        if endpoint in ("efetch", "elink") and (params.get("db") or "").lower() == "pmc":
            return Reply(pmc_reply(state, endpoint, params.all("id")))
        if (db or "").lower() != "pubmed":
            raise _RequestError(f"Invalid db name specified: {db or ''}")
        handler = {"esearch": _esearch, "efetch": _efetch, "esummary": _esummary}.get(endpoint)
        return handler(state, params) if handler is not None else _elink(state, params)
    except (_RequestError, QuerySyntaxError) as exc:
        return Reply(render.error_xml(root, str(exc)))


# --------------------------------------------------------------------------- ESearch


def _esearch(state: ServerState, params: Params) -> Reply:
    term = params.get("term") or ""
    retstart = max(0, params.integer("retstart", 0))
    retmax = min(max(0, params.integer("retmax", 20)), 10000)
    if retstart >= ESEARCH_CAP:
        raise _RequestError(RETSTART_ERROR)
    node = parse_query(term)
    index = state.index()
    result = index.evaluate(node)
    docs = result.docs
    window = _window(params)
    if window is not None:
        column, low, high = window
        docs = docs & index.date_range(column, low, high)
    pmids = [index.entries[d].pmid for d in index.sort(docs, params.get("sort"))]
    page = pmids[:ESEARCH_CAP][retstart : retstart + retmax]

    query_key = webenv = None
    if (params.get("usehistory") or "").lower() == "y":
        webenv, query_key = state.history.store(params.get("WebEnv") or None, pmids)

    if result.node is not None:
        translation = translate(result.node)
    else:  # nothing left: NCBI echoes the query as typed
        translation = "(" + " ".join(_raw(t) for t in result.not_found) + ")"
    if window is not None:
        column, low, high = window
        if isinstance(result.node, BinOp):
            translation = f"({translation})"
        tag = column.upper()
        translation += f" AND {low:%Y/%m/%d}[{tag}] : {high:%Y/%m/%d}[{tag}]"

    errors: list[tuple[str, str]] = [("FieldNotFound", f) for f in result.unknown_fields]
    warnings: list[tuple[str, str]] = [
        ("OutputMessage", f"Unknown field tag [{f}]: the term was searched in All Fields.")
        for f in result.unknown_fields
    ]
    for missing in result.not_found:
        if missing.quoted:
            warnings.append(("QuotedPhraseNotFound", f'"{missing.text}"'))
        else:
            errors.append(("PhraseNotFound", missing.label()))
    if not pmids:
        warnings.append(("OutputMessage", "No items found."))
    if (params.get("rettype") or "").lower() == "count":
        return Reply(render.esearch_count_xml(len(pmids)))
    body = render.esearch_xml(
        count=len(pmids),
        retstart=retstart,
        ids=page,
        translation=translation,
        query_key=query_key,
        webenv=webenv,
        errors=errors,
        warnings=warnings,
    )
    return Reply(body)


def _raw(term: Term) -> str:
    return f"{term.text}[{term.search_field.name}]"


def _window(params: Params) -> tuple[str, date, date] | None:
    """(column, first day, last day) from datetype with mindate / maxdate or reldate."""
    datetype = (params.get("datetype") or "pdat").lower()
    column = _DATE_COLUMNS.get(datetype)
    if column is None:
        raise _RequestError(f"Invalid datetype: {datetype}")
    mindate, maxdate, reldate = params.get("mindate"), params.get("maxdate"), params.get("reldate")
    if mindate or maxdate:
        low = parse_date_bound(mindate, upper=False) if mindate else date.min
        high = parse_date_bound(maxdate, upper=True) if maxdate else date.max
        return column, low, high
    if reldate:
        days = params.integer("reldate", 0)
        today = datetime.now(UTC).date()
        return column, today - timedelta(days=days), today
    return None


# --------------------------------------------------------------------------- EFetch


def _history_page(state: ServerState, params: Params) -> list[str] | None:
    webenv, query_key = params.get("WebEnv"), params.get("query_key")
    if not webenv or not query_key:
        return None
    pmids = state.history.get(webenv, query_key)
    if pmids is None:
        raise _RequestError(f"Unable to obtain query #{query_key}")
    retstart = max(0, params.integer("retstart", 0))
    retmax = max(0, params.integer("retmax", 20))
    return pmids[retstart : retstart + retmax]


def _efetch(state: ServerState, params: Params) -> Reply:
    pmids = params.ids() or _history_page(state, params)
    if not pmids:
        raise _RequestError("Empty id list - nothing todo")
    rettype = (params.get("rettype") or "").lower()
    retmode = (params.get("retmode") or ("text" if rettype == "medline" else "xml")).lower()
    withheld = state.withheld
    found = (state.corpus.get(p) for p in pmids if p not in withheld)
    entries = [e for e in found if e is not None]
    if retmode == "xml" and rettype in ("", "xml", "abstract", "full", "medline"):
        return Reply(render.efetch_xml(e.raw for e in entries))
    if retmode == "text" and rettype == "medline":
        texts = [
            to_medline(record, article_extras(e.raw))
            for e in entries
            if (record := e.record) is not None
        ]
        return Reply(("\n" + "\n".join(texts)).encode(), _TEXT)
    if retmode == "text" and rettype == "uilist":
        return Reply("".join(f"{e.pmid}\n" for e in entries).encode(), _TEXT)
    raise _RequestError(
        f"This fake serves rettype/retmode xml, medline/text and uilist/text only, "
        f"not {rettype or '(none)'}/{retmode}"
    )


# --------------------------------------------------------------------------- ESummary


def _esummary(state: ServerState, params: Params) -> Reply:
    pmids = params.ids() or _history_page(state, params)
    if not pmids:
        raise _RequestError("Neither query_key nor id specified")
    items = []
    for pmid in pmids:
        entry = state.corpus.get(pmid)
        record = entry.record if entry is not None else None
        extras = article_extras(entry.raw) if entry is not None and record is not None else None
        items.append((pmid, record, extras))
    return Reply(render.esummary_xml(items, state.build))


# --------------------------------------------------------------------------- ELink


def _elink(state: ServerState, params: Params) -> Reply:
    db = (params.get("db") or "pubmed").lower()
    if db != "pubmed":
        raise _RequestError(f"Invalid db name specified: {db}")
    cmd = (params.get("cmd") or "neighbor").lower()
    if cmd not in ("neighbor", "neighbor_score"):
        raise _RequestError(f"Invalid cmd specified: {cmd} (this fake serves neighbor and "
                            "neighbor_score)")  # fmt: skip
    linkname = params.get("linkname") or "pubmed_pubmed"
    groups = [
        ids
        for value in params.all("id")
        if (ids := tuple(dict.fromkeys(i.strip() for i in value.split(",") if i.strip())))
    ]
    if not groups:
        raise _RequestError("Empty id list - nothing todo")
    linksets = [
        render.LinkSetOut(ids, ((linkname, _links(state, linkname, ids)),)) for ids in groups
    ]
    return Reply(render.elink_xml(linksets, with_scores=cmd == "neighbor_score"))


def _links(
    state: ServerState, linkname: str, ids: tuple[str, ...]
) -> tuple[tuple[str, int | None], ...]:
    """The links of a LinkSet: the relation table first, else (similar articles only) the
    computed neighbours; several source ids merge, keeping each linked id's best score."""
    if linkname not in _LINK_NAMES:
        return ()
    table = state.relations.get(linkname, {})
    merged: dict[str, int | None] = {}
    for pmid in ids:
        if pmid in table:
            found: list[tuple[str, int | None]] = table[pmid]
        elif linkname == "pubmed_pubmed" and pmid in state.corpus:
            found = [(p, s) for p, s in state.index().similar(pmid)]
        else:
            found = []
        for linked, score in found:
            best = merged.get(linked)
            if linked not in merged or (score is not None and (best is None or score > best)):
                merged[linked] = score
    if len(ids) > 1 and any(s is not None for s in merged.values()):
        return tuple(sorted(merged.items(), key=lambda item: -(item[1] or 0)))
    return tuple(merged.items())


# --------------------------------------------------------------------------- EInfo


def _einfo(state: ServerState, params: Params) -> Reply:
    db = params.get("db")
    if not db:
        return Reply(render.einfo_dblist())
    if db.lower() != "pubmed":
        raise _RequestError(f"Can not retrieve DbInfo for db={db}")
    return Reply(
        render.einfo_db(count=len(state.corpus), last_update=state.last_update, build=state.build)
    )


# --------------------------------------------------------------------------- db=mesh


def _mesh(params: Params, endpoint: str) -> Reply:
    """ESearch / ESummary in `db=mesh`, over the synthetic vocabulary of `mesh.py`."""
    if endpoint == "esearch":
        retstart = max(0, params.integer("retstart", 0))
        retmax = min(max(0, params.integer("retmax", 20)), 10000)
        return Reply(mesh.mesh_esearch(params.get("term") or "", retstart, retmax))
    uids = params.ids()
    if not uids:
        raise _RequestError("Empty id list - nothing todo")
    return Reply(mesh.mesh_esummary(uids))

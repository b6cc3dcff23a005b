"""The parser of ESummary answers for `db=mesh` (version 2.0), into the domain's
`MeshDescriptor`.

NCBI documents the shape in its `eSummary_mesh` DTD: `eSummaryResult/DocumentSummarySet/
DocumentSummary uid=...` holding `DS_MeshTerms/string` (the preferred term first, then the
entry terms), `DS_ScopeNote`, `DS_Subheading/string` (the allowed qualifiers),
`DS_IdxLinks/LinksType/TreeNum` (one per tree location, beside `Parent` and `Children`),
`DS_YearIntroduced`, `DS_HeadingMappedTo` (supplementary records) and, in current answers,
`DS_MeshUI` / `DS_RecordType`. Element names are matched case-insensitively (NCBI's JSON
lower-cases them, and its spellings of `MeshUI` vary); a record without a UI element gets one
from its numeric uid (68009203 -> D009203).

Every document goes through `xmlsafe.parse_document` (no entities, no DTD, no network). What
comes from outside is bounded: at most `MAX_RECORDS` records, `MAX_LIST_ITEMS` strings per list
and `MAX_TEXT_CHARS` characters per string.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import cast

from lxml import etree

from biomcp.adapters.entrez.xmlsafe import classify_ncbi_error, parse_document
from biomcp.domain.mesh import (
    MeshDescriptor,
    parse_mesh_ui,
    qualifier,
    uid_to_ui,
    unique_terms,
)

__all__ = ["MAX_LIST_ITEMS", "MAX_RECORDS", "MAX_TEXT_CHARS", "parse_mesh_summaries"]

MAX_RECORDS = 200
MAX_LIST_ITEMS = 500
MAX_TEXT_CHARS = 4000

_ROOTS = frozenset({"eSummaryResult"})


def parse_mesh_summaries(xml: bytes) -> tuple[MeshDescriptor, ...]:
    """The records of an ESummary `db=mesh` answer, in document order.

    A summary holding NCBI's per-uid `<error>` (an unknown uid), or without a uid or a name,
    is left out: the caller compares what it asked for with what came back.

    Raises:
        EntrezRequestError, EntrezUnavailableError: an `<ERROR>` and no summary at all.
        EntrezResponseError: not an eSummaryResult (see `xmlsafe.parse_document`).
    """
    root = parse_document(xml, expected_roots=_ROOTS, what="an ESummary <eSummaryResult>")
    found = False
    records: list[MeshDescriptor] = []
    for node in root.iterfind("DocumentSummarySet/DocumentSummary"):
        found = True
        if len(records) >= MAX_RECORDS:
            break
        if (record := _record(node)) is not None:
            records.append(record)
    if not found:
        error = next((t for e in root.iter("ERROR") if (t := _text(e))), None)
        if error is not None:
            raise classify_ncbi_error(error)
    return tuple(records)


def _record(node: etree._Element) -> MeshDescriptor | None:
    uid = (node.get("uid") or "").strip()
    if not uid or node.find("error") is not None:
        return None
    fields = _fields(node)
    terms = _strings(fields.get("ds_meshterms"))
    if not terms:
        return None
    ui = parse_mesh_ui(_text(fields.get("ds_meshui")) or "") or uid_to_ui(uid) or uid
    name = terms[0]
    trees = (
        _text(link)
        for links in _children(fields.get("ds_idxlinks"))
        for link in _children(links)
        if _local(link) == "treenum"
    )
    mapped = _strings(fields.get("ds_headingmappedto")) or tuple(
        t for t in (_text(fields.get("ds_headingmappedto")),) if t
    )
    return MeshDescriptor(
        uid=uid,
        ui=ui,
        name=name,
        tree_numbers=unique_terms(t for t in trees if t)[:MAX_LIST_ITEMS],
        entry_terms=unique_terms(terms[1:], exclude=name),
        scope_note=_text(fields.get("ds_scopenote")),
        qualifiers=tuple(
            dict.fromkeys(qualifier(q) for q in _strings(fields.get("ds_subheading")))
        ),
        year_introduced=_text(fields.get("ds_yearintroduced")),
        mapped_to=tuple(m.lstrip("*") for m in mapped),
    )


def _fields(node: etree._Element) -> dict[str, etree._Element]:
    found: dict[str, etree._Element] = {}
    for child in _children(node):
        found.setdefault(_local(child), child)
    return found


def _children(node: etree._Element | None) -> Iterator[etree._Element]:
    if node is None:
        return iter(())
    return (c for c in node.iterchildren() if isinstance(c.tag, str))


def _local(node: etree._Element) -> str:
    return etree.QName(node).localname.lower()


def _strings(node: etree._Element | None) -> tuple[str, ...]:
    texts: list[str] = []
    for child in _children(node):
        if len(texts) >= MAX_LIST_ITEMS:
            break
        if (text := _text(child)) is not None:
            texts.append(text)
    return tuple(texts)


def _text(node: etree._Element | None) -> str | None:
    if node is None:
        return None
    text = " ".join("".join(cast("Iterable[str]", node.itertext())).split())
    return text[:MAX_TEXT_CHARS] or None

"""Parsers for the E-utilities answers other than EFetch: ESearch, ESummary, ELink, EInfo.

Pure functions: raw response bytes in, the port's frozen values out. Every document is read by
`xmlsafe.parse_document`, so all of them share the same safety (no entities, no DTD, no network)
and the same document-level failures: `EntrezResponseError` for what is not the expected XML,
`EntrezRequestError` / `EntrezUnavailableError` for NCBI's `<ERROR>` payloads.

Text is read with every run of whitespace collapsed to one space; empty elements (NCBI sends
many, like `<EPubDate></EPubDate>`) become None, never "".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import cast

from lxml import etree

from biomcp.adapters.entrez.xmlsafe import classify_ncbi_error, parse_document
from biomcp.ports.entrez import (
    DatabaseInfo,
    DocSummary,
    EntrezError,
    EntrezResponseError,
    EntrezWarning,
    FieldInfo,
    Link,
    LinkInfo,
    LinkSet,
    SearchResult,
    SummaryReference,
)

__all__ = ["parse_einfo", "parse_elink", "parse_esearch", "parse_espell", "parse_esummary"]

_ESEARCH_ROOTS = frozenset({"eSearchResult"})
_ESUMMARY_ROOTS = frozenset({"eSummaryResult"})
_ELINK_ROOTS = frozenset({"eLinkResult"})
_EINFO_ROOTS = frozenset({"eInfoResult"})
_ESPELL_ROOTS = frozenset({"eSpellResult"})
_PMC_DIGITS = re.compile(r"PMC\s*(\d+)", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_INTEGER = re.compile(r"-?[0-9]+")
# Where an ELink LinkSet names its source ids: IdList for links, the others for llinks/acheck.
_SOURCE_ID_PATHS = (
    "IdList/Id",
    "IdUrlList/IdUrlSet/Id",
    "IdCheckList/Id",
    "IdCheckList/IdLinkSet/Id",
)


# --------------------------------------------------------------------------- ESearch


def parse_esearch(xml: bytes) -> SearchResult:
    """Parse an ESearch answer (`eSearchResult`).

    Reads Count, RetStart, RetMax (0 when absent, as in `rettype=count` answers), IdList,
    QueryTranslation, WebEnv and QueryKey. `ErrorList` entries (PhraseNotFound,
    FieldNotFound...) become `EntrezWarning(kind=<tag>, source="ErrorList")`, `WarningList`
    entries (OutputMessage, QuotedPhraseNotFound, PhraseIgnored...) `source="WarningList"`,
    in document order. An `<ERROR>` beside a Count is kept as an ErrorList warning of kind
    "ERROR": NCBI answered, with a complaint.

    Raises:
        EntrezRequestError, EntrezUnavailableError: NCBI answered an `<ERROR>` and no Count
            (see `xmlsafe.classify_ncbi_error`).
        EntrezResponseError: not an eSearchResult (see `xmlsafe.parse_document`), no Count and
            no `<ERROR>`, or a number that is not one.
    """
    root = parse_document(xml, expected_roots=_ESEARCH_ROOTS, what="an ESearch <eSearchResult>")
    count_text = _text(root.find("Count"))
    if count_text is None:
        raise _missing(root, "ESearch answer without <Count>")
    warnings: list[EntrezWarning] = []
    for tag, source in (("ErrorList", "ErrorList"), ("WarningList", "WarningList")):
        for entry in _children(root.find(tag)):
            warnings.append(
                EntrezWarning(
                    kind=str(entry.tag),
                    message=_text(entry) or "",
                    source="ErrorList" if source == "ErrorList" else "WarningList",
                )
            )
    for error in root.iterchildren("ERROR"):
        if message := _text(error):
            warnings.append(EntrezWarning(kind="ERROR", message=message, source="ErrorList"))
    return SearchResult(
        count=_int(count_text, "ESearch Count"),
        retstart=_int(_text(root.find("RetStart")) or "0", "ESearch RetStart"),
        retmax=_int(_text(root.find("RetMax")) or "0", "ESearch RetMax"),
        pmids=_texts(root.iterfind("IdList/Id")),
        query_translation=_text(root.find("QueryTranslation")),
        webenv=_text(root.find("WebEnv")),
        query_key=_text(root.find("QueryKey")),
        warnings=tuple(warnings),
    )


# --------------------------------------------------------------------------- ESummary


def parse_esummary(xml: bytes) -> tuple[DocSummary, ...]:
    """Parse an ESummary answer (`eSummaryResult`), version 2.0 or, as a fallback, version 1.

    Version 2.0 (`DocumentSummarySet/DocumentSummary uid=...`): Title, FullJournalName
    (journal), Source, PubType/flag, PubDate (pdat), EPubDate, History's `entrez` date (edat,
    as NCBI writes it: "2011/12/07 06:00"), Authors/Author/Name, Volume, Issue, Pages,
    Lang/string, ArticleIds (doi; pmc normalized to "PMC<digits>"), ISSN, ESSN. A summary
    holding an `<error>` (NCBI's "cannot get document summary") gives `DocSummary(pmid,
    error=text)`. Version 1 (`DocSum` with `Item Name=...`) maps the same names.

    Summaries come in document order; one without a uid is skipped. An `<ERROR>` beside
    summaries is ignored (the summaries are the answer).

    Raises:
        EntrezRequestError, EntrezUnavailableError: an `<ERROR>` and no summary at all.
        EntrezResponseError: not an eSummaryResult (see `xmlsafe.parse_document`).
    """
    root = parse_document(xml, expected_roots=_ESUMMARY_ROOTS, what="an ESummary <eSummaryResult>")
    summaries: list[DocSummary] = []
    found = False
    for node in root.iterfind("DocumentSummarySet/DocumentSummary"):
        found = True
        if summary := _summary_v2(node):
            summaries.append(summary)
    for node in root.iterfind("DocSum"):
        found = True
        if summary := _summary_v1(node):
            summaries.append(summary)
    if not found and (error := _first_error(root)) is not None:
        raise classify_ncbi_error(error)
    return tuple(summaries)


def _summary_v2(node: etree._Element) -> DocSummary | None:
    uid = _attr(node, "uid")
    if uid is None:
        return None
    error = node.find("error")
    if error is not None:
        return DocSummary(uid, error=_text(error) or "cannot get document summary")
    ids: dict[str, str] = {}
    for article_id in node.iterfind("ArticleIds/ArticleId"):
        kind = _text(article_id.find("IdType"))
        value = _text(article_id.find("Value"))
        if kind and value and kind.lower() not in ids:
            ids[kind.lower()] = value
    edat: str | None = None
    for date in node.iterfind("History/PubMedPubDate"):
        if (_text(date.find("PubStatus")) or "").lower() == "entrez":
            edat = _text(date.find("Date"))
            break
    return DocSummary(
        pmid=uid,
        title=_text(node.find("Title")),
        journal=_text(node.find("FullJournalName")),
        source=_text(node.find("Source")),
        pub_types=_texts(node.iterfind("PubType/flag")),
        pdat=_text(node.find("PubDate")),
        epubdate=_text(node.find("EPubDate")),
        edat=edat,
        authors=_texts(node.iterfind("Authors/Author/Name")),
        volume=_text(node.find("Volume")),
        issue=_text(node.find("Issue")),
        pages=_text(node.find("Pages")),
        languages=_texts(node.iterfind("Lang/string")),
        doi=ids.get("doi"),
        pmcid=_pmcid(ids.get("pmc"), ids.get("pmcid")),
        issn=_text(node.find("ISSN")),
        eissn=_text(node.find("ESSN")),
        references=tuple(
            SummaryReference(kind, _text(ref.find("RefSource")), _text(ref.find("PMID")))
            for ref in node.iterfind("References/Reference")
            if (kind := _text(ref.find("RefType")))
        ),
    )


def _summary_v1(node: etree._Element) -> DocSummary | None:
    uid = _text(node.find("Id"))
    if uid is None:
        return None
    items: dict[str, etree._Element] = {}
    for entry in node.iterfind("Item"):
        items.setdefault(entry.get("Name") or "", entry)
    error = _text(items.get("error"))
    if error is not None:
        return DocSummary(uid, error=error)
    return DocSummary(
        pmid=uid,
        title=_text(items.get("Title")),
        journal=_text(items.get("FullJournalName")),
        source=_text(items.get("Source")),
        pub_types=_sub_items(items.get("PubTypeList"), "PubType"),
        pdat=_text(items.get("PubDate")),
        epubdate=_text(items.get("EPubDate")),
        edat=_first(_sub_items(items.get("History"), "entrez")),
        authors=_sub_items(items.get("AuthorList"), "Author"),
        volume=_text(items.get("Volume")),
        issue=_text(items.get("Issue")),
        pages=_text(items.get("Pages")),
        languages=_sub_items(items.get("LangList"), "Lang"),
        doi=_first(_sub_items(items.get("ArticleIds"), "doi")) or _text(items.get("DOI")),
        pmcid=_pmcid(
            _first(_sub_items(items.get("ArticleIds"), "pmc")),
            _first(_sub_items(items.get("ArticleIds"), "pmcid")),
        ),
        issn=_text(items.get("ISSN")),
        eissn=_text(items.get("ESSN")),
    )


def _sub_items(parent: etree._Element | None, name: str) -> tuple[str, ...]:
    """The non-blank texts of a v1 list Item's `<Item Name=name>` children, in order."""
    if parent is None:
        return ()
    return _texts(e for e in parent.iterfind("Item") if e.get("Name") == name)


def _first(values: tuple[str, ...]) -> str | None:
    return values[0] if values else None


def _pmcid(*candidates: str | None) -> str | None:
    """ "PMC3245039", "3245039", "pmc-id: PMC3245039;" -> "PMC3245039"; None when none holds one."""
    for candidate in candidates:
        if not candidate:
            continue
        match = _PMC_DIGITS.search(candidate)
        digits = match.group(1) if match else None
        if digits is None and (bare := _DIGITS.fullmatch(candidate.strip())):
            digits = bare.group()
        if digits is not None:
            return f"PMC{int(digits)}"
    return None


# --------------------------------------------------------------------------- ELink


def parse_elink(xml: bytes) -> tuple[LinkSet, ...]:
    """Parse an ELink answer (`eLinkResult`) into one `LinkSet` per `<LinkSet>`, in order.

    `source_pmids` are the LinkSet's IdList ids (for `cmd=llinks` / `acheck` answers, the ids of
    IdUrlList / IdCheckList); `links` maps each LinkSetDb's LinkName to its links, in document
    order, each with its Score when NCBI sent one. LinkSets without LinkSetDb (llinks, acheck,
    or simply nothing linked) have empty `links`.

    A LinkSet holding an `<ERROR>` and no LinkSetDb failed; it is skipped when other LinkSets
    are fine.

    Raises:
        EntrezRequestError, EntrezUnavailableError: every LinkSet failed with an `<ERROR>`, or
            there is no LinkSet and an `<ERROR>`.
        EntrezResponseError: not an eLinkResult (see `xmlsafe.parse_document`), or a Score that
            is not an integer.
    """
    root = parse_document(xml, expected_roots=_ELINK_ROOTS, what="an ELink <eLinkResult>")
    link_sets: list[LinkSet] = []
    errors: list[str] = []
    for node in root.iterfind("LinkSet"):
        error = _first_error(node)
        if error is not None and node.find("LinkSetDb") is None:
            errors.append(error)
            continue
        link_sets.append(_link_set(node))
    if not link_sets:
        error = errors[0] if errors else _first_error(root)
        if error is not None:
            raise classify_ncbi_error(error)
    return tuple(link_sets)


def _link_set(node: etree._Element) -> LinkSet:
    sources: list[str] = []
    for path in _SOURCE_ID_PATHS:
        sources.extend(i for i in _texts(node.iterfind(path)) if i not in sources)
    links: dict[str, list[Link]] = {}
    for db in node.iterfind("LinkSetDb"):
        name = _text(db.find("LinkName"))
        if name is None:
            continue
        found = links.setdefault(name, [])
        for link in db.iterfind("Link"):
            # Plain-text leaves: findtext is several times cheaper than a flattening read.
            pmid = (link.findtext("Id") or "").strip()
            if not pmid:
                continue
            score = (link.findtext("Score") or "").strip()
            found.append(Link(pmid, _int(score, "ELink Score") if score else None))
    return LinkSet(tuple(sources), {name: tuple(found) for name, found in links.items()})


# --------------------------------------------------------------------------- EInfo


def parse_einfo(xml: bytes) -> DatabaseInfo:
    """Parse an EInfo answer for one database (`eInfoResult/DbInfo`).

    DbName, MenuName, Description, DbBuild, Count, LastUpdate; FieldList/Field (Name, FullName,
    Description, TermCount, IsDate and IsNumerical "Y"); LinkList/Link (Name, Menu,
    Description, DbTo). Fields and links without a Name are skipped; an empty Count or
    TermCount is None.

    Raises:
        EntrezRequestError, EntrezUnavailableError: NCBI answered an `<ERROR>` (an unknown db).
        EntrezResponseError: not an eInfoResult (see `xmlsafe.parse_document`), the list of
            databases (`DbList`, EInfo called without `db`) instead of a `DbInfo`, or a number
            that is not one.
    """
    root = parse_document(xml, expected_roots=_EINFO_ROOTS, what="an EInfo <eInfoResult>")
    info = root.find("DbInfo")
    if info is None:
        if root.find("DbList") is not None:
            raise EntrezResponseError(
                "expected DbInfo for one database, got DbList (the list of databases: EInfo "
                "was called without db)"
            )
        raise _missing(root, "expected DbInfo in the EInfo answer")
    fields = tuple(
        FieldInfo(
            name=name,
            full_name=_text(field.find("FullName")),
            description=_text(field.find("Description")),
            term_count=_optional_int(_text(field.find("TermCount")), "EInfo TermCount"),
            is_date=_yes(field.find("IsDate")),
            is_numerical=_yes(field.find("IsNumerical")),
        )
        for field in info.iterfind("FieldList/Field")
        if (name := _text(field.find("Name")))
    )
    links = tuple(
        LinkInfo(
            name=name,
            menu=_text(link.find("Menu")),
            description=_text(link.find("Description")),
            db_to=_text(link.find("DbTo")),
        )
        for link in info.iterfind("LinkList/Link")
        if (name := _text(link.find("Name")))
    )
    return DatabaseInfo(
        db_name=_text(info.find("DbName")) or "",
        count=_optional_int(_text(info.find("Count")), "EInfo Count"),
        last_update=_text(info.find("LastUpdate")),
        menu_name=_text(info.find("MenuName")),
        description=_text(info.find("Description")),
        build=_text(info.find("DbBuild")),
        fields=fields,
        links=links,
    )


# --------------------------------------------------------------------------- ESpell


def parse_espell(xml: bytes) -> str | None:
    """Parse an ESpell answer (`eSpellResult`): its `CorrectedQuery`, or None when NCBI
    suggests nothing (the element empty or absent). The empty `<ERROR/>` NCBI always sends is
    not an error.

    Raises:
        EntrezRequestError, EntrezUnavailableError: an `<ERROR>` with text and no correction.
        EntrezResponseError: not an eSpellResult (see `xmlsafe.parse_document`).
    """
    root = parse_document(xml, expected_roots=_ESPELL_ROOTS, what="an ESpell <eSpellResult>")
    corrected = _text(root.find("CorrectedQuery"))
    if corrected is None and (error := _first_error(root)) is not None:
        raise classify_ncbi_error(error)
    return corrected


# --------------------------------------------------------------------------- helpers


def _text(node: etree._Element | None) -> str | None:
    """The node's text content, whitespace collapsed; None when absent or blank."""
    if node is None:
        return None
    text = " ".join("".join(cast("Iterable[str]", node.itertext())).split())
    return text or None


def _texts(nodes: Iterable[etree._Element]) -> tuple[str, ...]:
    return tuple(t for t in (_text(n) for n in nodes) if t)


def _attr(node: etree._Element, name: str) -> str | None:
    value = node.get(name)
    if value is None:
        return None
    return value.strip() or None


def _children(node: etree._Element | None) -> Iterator[etree._Element]:
    if node is None:
        return iter(())
    return node.iterchildren(tag=etree.Element)


def _yes(node: etree._Element | None) -> bool:
    return (_text(node) or "").upper() == "Y"


def _int(text: str, what: str) -> int:
    if _INTEGER.fullmatch(text) is None:
        raise EntrezResponseError(f"{what} is not an integer: {text[:50]!r}")
    return int(text)


def _optional_int(text: str | None, what: str) -> int | None:
    return None if text is None else _int(text, what)


def _first_error(node: etree._Element) -> str | None:
    """The first non-blank `<ERROR>` text among the node's children, or the node's own `<ERROR>`
    descendants when none is a child."""
    for error in node.iterchildren("ERROR"):
        if text := _text(error):
            return text
    for error in node.iter("ERROR"):
        if text := _text(error):
            return text
    return None


def _missing(root: etree._Element, message: str) -> EntrezError:
    """NCBI's own `<ERROR>` when it sent one, else `EntrezResponseError(message)`."""
    error = _first_error(root)
    if error is not None:
        return classify_ncbi_error(error)
    return EntrezResponseError(message)

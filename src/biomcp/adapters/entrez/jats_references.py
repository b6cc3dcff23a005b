"""Read a JATS `<ref>` into a `Reference`: its parts, its PMID and DOI, its citation line.

Parts come from `element-citation`, `mixed-citation` and NLM 2.x `citation` alike: names and
collaborations (in a `person-group` or directly in the citation), `<etal/>`, `article-title`,
`chapter-title`, `source`, `year`, `volume`, `issue`, `fpage`/`lpage` or `elocation-id`,
`publisher-loc`/`publisher-name`. The PMID and DOI come from `pub-id`, `object-id`, or an
`ext-link`/`uri` naming a DOI or a PubMed page. A citation without those parts (free text)
keeps its own text, whitespace tidied, without its PMID and DOI elements.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import cast

from lxml import etree

from biomcp.adapters.entrez.xmlsafe import XLINK_NS
from biomcp.domain.fulltext_references import Reference, citation_text, tidy, vancouver_name

__all__ = ["parse_reference"]

_CITATIONS = ("element-citation", "mixed-citation", "citation")
_HREF = f"{{{XLINK_NS}}}href"
_MAX_TEXT = 1000
_MAX_FIELD = 500
_MAX_NAMES = 100
#: Elements whose text is an identifier, not part of the citation's words.
_ID_TAGS = frozenset({"pub-id", "object-id"})
_PARTS = frozenset({"article-title", "chapter-title", "source"})
_DOI = re.compile(r"\b(10\.\d{4,9}/\S+)", re.IGNORECASE)
_PUBMED_URL = re.compile(r"(?:pubmed|ncbi\.nlm\.nih\.gov/pubmed)/(\d{1,9})\b", re.IGNORECASE)


def parse_reference(ref: etree._Element) -> Reference | None:
    """The reference a `<ref>` holds (its first citation, or the first of its
    `citation-alternatives`), or None when it holds none."""
    holder = ref.find("citation-alternatives")
    choices = [*ref, *(holder if holder is not None else ())]
    citation = next((c for c in choices if _local(c) in _CITATIONS), None)
    if citation is None:
        return None
    label = _text(ref.find("label"))
    pmid, doi, url = _identifiers(citation)
    if not any(_local(c) in _PARTS for c in citation):
        words = tidy(_words(citation))[:_MAX_TEXT]
        return Reference(label, words, pmid, doi, url=url, kind=_kind(citation))
    authors, et_al = _people(citation, ("author", None))
    editors, _ = _people(citation, ("editor",))
    kind = _kind(citation)
    title = _text(citation.find("article-title")) or _text(citation.find("chapter-title"))
    source = _text(citation.find("source"))
    if title is None and (kind or "journal") != "journal":
        title, source = source, None  # a book: its own title
    reference = Reference(
        label,
        "",
        pmid,
        doi,
        authors=authors,
        et_al=et_al,
        editors=editors,
        title=title,
        journal=source,
        year=_text(citation.find("year")) or _text(citation.find("date/year")),
        volume=_text(citation.find("volume")),
        issue=_text(citation.find("issue")),
        pages=_pages(citation),
        publisher=_publisher(citation),
        url=url,
        kind=kind,
    )
    return replace(reference, text=citation_text(reference)[:_MAX_TEXT])


def _local(node: etree._Element) -> str | None:
    tag = node.tag
    if not isinstance(tag, str):
        return None
    return tag.rpartition("}")[2]


def _text(node: etree._Element | None) -> str | None:
    """The element's words, whitespace tidied (None when empty or absent)."""
    if node is None:
        return None
    text = tidy("".join(cast("Iterable[str]", node.itertext())))[:_MAX_FIELD]
    return text or None


def _words(node: etree._Element) -> str:
    """The citation's own text, leaving out identifier elements (their tails kept)."""
    out: list[str] = [node.text or ""]
    for child in node:
        if _local(child) not in _ID_TAGS and _local(child) is not None:
            out.append(_words(child))
        out.append(child.tail or "")
    return "".join(out)


def _kind(citation: etree._Element) -> str | None:
    kind = citation.get("publication-type") or citation.get("citation-type")
    return kind.strip().casefold() if kind and kind.strip() else None


def _people(
    citation: etree._Element, roles: tuple[str | None, ...]
) -> tuple[tuple[str, ...], bool]:
    """Names (Vancouver form) and collaborations of the given roles, and whether an `<etal>`
    says there are more. Names outside any `person-group` count as authors."""
    groups = [g for g in citation.iterfind("person-group") if g.get("person-group-type") in roles]
    if None in roles:
        groups.insert(0, citation)
    names: list[str] = []
    et_al = False
    for group in groups:
        for node in _people_nodes(group):
            if _local(node) == "etal":
                et_al = True
            elif (name := _name(node)) and len(names) < _MAX_NAMES:
                names.append(name)
    return tuple(names), et_al


def _people_nodes(group: etree._Element) -> Iterator[etree._Element]:
    for node in group:
        if _local(node) in ("name", "string-name", "collab", "etal"):
            yield node


def _name(node: etree._Element) -> str | None:
    if _local(node) != "name":
        return _text(node)
    surname = _text(node.find("surname")) or ""
    given = _text(node.find("given-names")) or ""
    suffix = _text(node.find("suffix")) or ""
    return vancouver_name(surname, given, suffix) or None


def _pages(citation: etree._Element) -> str | None:
    first = _text(citation.find("fpage"))
    last = _text(citation.find("lpage"))
    if first and last and last != first:
        return f"{first}-{last}"
    return first or _text(citation.find("elocation-id"))


def _publisher(citation: etree._Element) -> str | None:
    place = _text(citation.find("publisher-loc"))
    name = _text(citation.find("publisher-name"))
    if place and name and place not in name:
        return f"{place}: {name}"
    return name or place


def _identifiers(citation: etree._Element) -> tuple[str | None, str | None, str | None]:
    """PMID, DOI and the first other web address the citation gives."""
    pmid = doi = url = None
    for node in _id_nodes(citation):
        kind = (node.get("pub-id-type") or "").casefold()
        value = _text(node) or ""
        href = node.get(_HREF) or value
        if kind == "pmid" and value.isdigit():
            pmid = pmid or value
        elif kind == "doi" and value:
            doi = doi or value[:200]
        elif _local(node) in ("ext-link", "uri") and href:
            if found := _DOI.search(href):
                doi = doi or found.group(1).rstrip(".")[:200]
            elif found := _PUBMED_URL.search(href):
                pmid = pmid or found.group(1)
            else:
                url = url or href[:300]
    return pmid, doi, url


def _id_nodes(citation: etree._Element) -> Iterable[etree._Element]:
    for node in citation.iter():
        if _local(node) in ("pub-id", "object-id", "ext-link", "uri"):
            yield node

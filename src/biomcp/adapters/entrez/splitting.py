"""EFetch answers split per PubMed article: the XML (`<PubmedArticle>` or
`<PubmedBookArticle>`) or the MEDLINE record of each PMID.

Both XML splitters read a document NCBI sent without resolving entities, loading a DTD or
fetching anything: a document declaring entities is refused (`EntrezResponseError`).
`split_article_xml` returns each element exactly as NCBI wrote it (the text of the live tools'
`full_xml`); `split_article_set` re-serializes each with the namespaces it needs (what the
response cache stores).
"""

from __future__ import annotations

from typing import Any
from xml.parsers import expat

from lxml import etree

from biomcp.adapters.entrez.xmlsafe import parse_document
from biomcp.ports.entrez import EntrezResponseError

__all__ = ["split_article_set", "split_article_xml", "split_medline"]

_ARTICLE_TAGS = ("PubmedArticle", "PubmedBookArticle")
_PMID_PATHS = (
    ("PubmedArticleSet", "PubmedArticle", "MedlineCitation", "PMID"),
    ("PubmedArticleSet", "PubmedBookArticle", "BookDocument", "PMID"),
)


def split_article_xml(xml: bytes) -> dict[str, str]:
    """{PMID: the `<PubmedArticle>` (or `<PubmedBookArticle>`) element exactly as NCBI wrote
    it} of a PubmedArticleSet the client already checked (expat: no DTD is loaded, nothing is
    fetched, a document declaring entities is refused)."""
    parser = expat.ParserCreate()
    path: list[str] = []
    pieces: dict[str, str] = {}
    state: dict[str, Any] = {"start": None, "pmid": None, "text": None}

    def start(name: str, attrs: dict[str, str]) -> None:
        path.append(name)
        if len(path) == 2 and name in _ARTICLE_TAGS:
            state.update(start=parser.CurrentByteIndex, pmid=None)
        elif tuple(path) in _PMID_PATHS and state["pmid"] is None:
            state["text"] = []

    def end(name: str) -> None:
        if state["text"] is not None and tuple(path) in _PMID_PATHS:
            state["pmid"] = "".join(state["text"]).strip()
            state["text"] = None
        if len(path) == 2 and name in _ARTICLE_TAGS and state["start"] is not None:
            close = xml.index(b">", parser.CurrentByteIndex) + 1
            if state["pmid"]:
                pieces[state["pmid"]] = xml[state["start"] : close].decode("utf-8", "replace")
            state["start"] = None
        path.pop()

    def text(data: str) -> None:
        if state["text"] is not None:
            state["text"].append(data)

    def refuse_entities(*_: object) -> None:
        raise EntrezResponseError("the article set declares entities: refused")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    parser.EntityDeclHandler = refuse_entities
    try:
        parser.Parse(xml, True)
    except expat.ExpatError as exc:
        raise EntrezResponseError(f"unreadable PubmedArticleSet: {exc}") from None
    return pieces


def split_article_set(xml: bytes) -> tuple[dict[str, bytes], list[str]]:
    """({PMID: the `<PubmedArticle>` or `<PubmedBookArticle>` XML}, deleted PMIDs) of an EFetch
    answer. Each article is serialized with the namespace declarations it needs.

    Raises:
        EntrezResponseError, EntrezRequestError, EntrezUnavailableError: not a PubmedArticleSet
            (see `xmlsafe.parse_document`).
    """
    root = parse_document(
        xml, expected_roots=frozenset({"PubmedArticleSet"}), what="a <PubmedArticleSet> document"
    )
    articles: dict[str, bytes] = {}
    deleted: list[str] = []
    for child in root.iterchildren(tag=etree.Element):
        if child.tag == "PubmedArticle":
            pmid = child.findtext("MedlineCitation/PMID")
        elif child.tag == "PubmedBookArticle":
            pmid = child.findtext("BookDocument/PMID")
        else:
            if child.tag == "DeleteCitation":
                deleted += [p.strip() for p in (e.text for e in child.iterfind("PMID")) if p]
            continue
        if pmid and pmid.strip():
            articles[pmid.strip()] = etree.tostring(child, encoding="UTF-8", with_tail=False)
    return articles, deleted


def split_medline(text: str) -> dict[str, str]:
    """{PMID: its MEDLINE record} of an EFetch `rettype=medline` answer (records begin with a
    `PMID- ` line; blank lines between them are dropped)."""
    records: dict[str, str] = {}
    current: list[str] = []

    def flush() -> None:
        if current:
            pmid = current[0].partition("-")[2].strip()
            body = "\n".join(current).rstrip()
            if pmid:
                records[pmid] = body

    for line in text.splitlines():
        if line.startswith("PMID-"):
            flush()
            current = [line]
        elif current and line.strip():
            current.append(line)
    flush()
    return records

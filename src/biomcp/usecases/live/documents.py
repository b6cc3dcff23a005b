"""The raw forms of PubMed records (`full_xml`, `medline_text`): one answer split per PMID."""

from __future__ import annotations

from typing import Any
from xml.parsers import expat

from biomcp.ports.entrez import (
    EntrezResponseError,
)

_ARTICLE_TAGS = ("PubmedArticle", "PubmedBookArticle")
_PMID_PATHS = (
    ("PubmedArticleSet", "PubmedArticle", "MedlineCitation", "PMID"),
    ("PubmedArticleSet", "PubmedBookArticle", "BookDocument", "PMID"),
)


def _split_article_xml(xml: bytes) -> dict[str, str]:
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


def _split_medline(text: str) -> dict[str, str]:
    """{PMID: its MEDLINE record} of MEDLINE text (records start with a `PMID- ` line)."""
    records: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("PMID-"):
            current = records.setdefault(line.partition("-")[2].strip(), [])
            current.append(line)
        elif current is not None and line.strip():
            current.append(line)
    return {pmid: "\n".join(lines) for pmid, lines in records.items() if pmid}

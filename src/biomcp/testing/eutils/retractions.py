"""Retract an article of the fake's corpus after the fact, as PubMed does.

When a paper is retracted, NLM adds the publication type "Retracted Publication" to its
citation and a `CommentsCorrections RefType="RetractionIn"` pointing at the retraction notice
(its citation and PMID), and the citation's DateRevised moves. `retracted_article_xml` makes
those edits to one `<PubmedArticle>`; `FakeCorpus.retract` stores the result in place of the
article, so ESearch (`"Retracted Publication"[pt]`) and EFetch see the retraction.
"""

from __future__ import annotations

from datetime import date, timedelta

from lxml import etree

__all__ = ["RETRACTED_PUBLICATION", "retracted_article_xml"]

RETRACTED_PUBLICATION = "Retracted Publication"
_RETRACTED_UI = "D016441"
#: MedlineCitation's children that come after CommentsCorrectionsList (the DTD's order).
_AFTER_COMMENTS = (
    "GeneSymbolList",
    "MeshHeadingList",
    "NumberOfReferences",
    "PersonalNameSubjectList",
    "OtherID",
    "OtherAbstract",
    "KeywordList",
    "CoiStatement",
    "SpaceFlightMission",
    "InvestigatorList",
    "GeneralNote",
)


def retracted_article_xml(
    raw: bytes, notice_pmid: str, *, source: str | None = None, revised: date | None = None
) -> bytes:
    """`raw` (one `<PubmedArticle>`) marked retracted by the notice `notice_pmid`: the
    publication type added (once), a `RetractionIn` comment citing `source` (default
    `Retraction notice`) and the notice's PMID added (once per notice), and DateRevised set to
    `revised` (default: the day after the current DateRevised, as a revision moves it).

    Raises:
        ValueError: `raw` is not a PubmedArticle with a MedlineCitation and an Article.
    """
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    root = etree.fromstring(raw, parser)
    citation = root.find("MedlineCitation")
    article = citation.find("Article") if citation is not None else None
    if root.tag != "PubmedArticle" or citation is None or article is None:
        raise ValueError("not a PubmedArticle with a MedlineCitation and an Article")
    _add_type(article)
    _add_comment(citation, notice_pmid, source or "Retraction notice")
    _set_revised(citation, revised or _day_after_revised(citation))
    return bytes(etree.tostring(root, encoding="utf-8"))


def _add_type(article: etree._Element) -> None:
    types = article.find("PublicationTypeList")
    if types is None:
        types = etree.SubElement(article, "PublicationTypeList")
    if any((t.text or "").strip() == RETRACTED_PUBLICATION for t in types):
        return
    added = etree.SubElement(types, "PublicationType", UI=_RETRACTED_UI)
    added.text = RETRACTED_PUBLICATION


def _add_comment(citation: etree._Element, notice_pmid: str, source: str) -> None:
    comments = citation.find("CommentsCorrectionsList")
    if comments is None:
        comments = etree.Element("CommentsCorrectionsList")
        following = next((child for child in citation if child.tag in _AFTER_COMMENTS), None)
        if following is None:
            citation.append(comments)
        else:
            following.addprevious(comments)
    for node in comments.iterfind("CommentsCorrections"):
        if node.get("RefType") == "RetractionIn" and node.findtext("PMID") == notice_pmid:
            return
    node = etree.SubElement(comments, "CommentsCorrections", RefType="RetractionIn")
    etree.SubElement(node, "RefSource").text = source
    etree.SubElement(node, "PMID", Version="1").text = notice_pmid


def _day_after_revised(citation: etree._Element) -> date:
    node = citation.find("DateRevised")
    try:
        current = date(
            int(node.findtext("Year") or ""),  # type: ignore[union-attr]
            int(node.findtext("Month") or ""),  # type: ignore[union-attr]
            int(node.findtext("Day") or ""),  # type: ignore[union-attr]
        )
    except (AttributeError, ValueError):
        return date.today()
    return current + timedelta(days=1)


def _set_revised(citation: etree._Element, revised: date) -> None:
    node = citation.find("DateRevised")
    if node is None:
        node = etree.Element("DateRevised")
        citation.find("PMID").addnext(node)  # type: ignore[union-attr]
    for child in list(node):
        node.remove(child)
    etree.SubElement(node, "Year").text = f"{revised.year}"
    etree.SubElement(node, "Month").text = f"{revised.month:02d}"
    etree.SubElement(node, "Day").text = f"{revised.day:02d}"

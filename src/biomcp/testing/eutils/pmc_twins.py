"""The PubMed record of a PMC article, built from its JATS front matter.

The fake serves real PMC articles (`pmc.load_pmc_directory`); a saved-query sync finds them
through PubMed, so each needs a `PubmedArticle` when the corpus has none for its PMID. The
twin carries what the JATS states: title, abstract (one `AbstractText` per titled section),
journal and ISSNs, publication year, authors, DOI, the PMC id in its `ArticleIdList`, and an
Entrez date taken from the article's earliest electronic or print publication date.

Every twin also carries the keyword `TWIN_KEYWORD`, so ESearch on `fake pmc twin[kw]` finds
them all.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast
from xml.sax.saxutils import escape

from lxml import etree

__all__ = ["TWIN_KEYWORD", "TWIN_TERM", "pubmed_twin"]

TWIN_KEYWORD = "fake pmc twin"
#: The ESearch term that finds every twin (and nothing the synthetic generator makes).
TWIN_TERM = f'"{TWIN_KEYWORD}"[kw]'

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_DATE_TYPES = ("epub", "ppub", "epub-ppub", "pmc-release", "collection")
_SKIPPED_ABSTRACTS = frozenset({"graphical", "teaser", "summary", "precis", "web-summary"})


def pubmed_twin(article: etree._Element) -> bytes | None:
    """A `<PubmedArticle>` for a JATS `<article>`, or None when it names no PMID or PMC id."""
    meta = article.find("front/article-meta")
    if meta is None:
        return None
    ids = {(node.get("pub-id-type") or ""): _flat(node) for node in meta.iterfind("article-id")}
    pmid = ids.get("pmid", "")
    pmc = (ids.get("pmc") or ids.get("pmcid") or "").upper().removeprefix("PMC")
    if not (pmid.isdigit() and pmc.isdigit()):
        return None
    year, month, day = _date(meta)
    journal = article.find("front/journal-meta")
    title = _flat(meta.find("title-group/article-title"))
    doi = ids.get("doi")
    doi_ids = f'<ArticleId IdType="doi">{escape(doi)}</ArticleId>' if doi else ""
    return (
        '<PubmedArticle><MedlineCitation Status="PubMed-not-MEDLINE" Owner="NLM">'
        f'<PMID Version="1">{pmid}</PMID>'
        f'<Article PubModel="Electronic">{_journal(journal, year)}'
        f"<ArticleTitle>{escape(title)}</ArticleTitle>{_abstract(meta)}{_authors(meta)}"
        "<Language>eng</Language><PublicationTypeList>"
        '<PublicationType UI="D016428">Journal Article</PublicationType>'
        "</PublicationTypeList></Article>"
        f'<KeywordList Owner="NOTNLM"><Keyword MajorTopicYN="N">{TWIN_KEYWORD}</Keyword>'
        "</KeywordList></MedlineCitation><PubmedData><History>"
        f'<PubMedPubDate PubStatus="entrez"><Year>{year}</Year><Month>{month}</Month>'
        f"<Day>{day}</Day><Hour>6</Hour><Minute>0</Minute></PubMedPubDate></History>"
        "<PublicationStatus>epublish</PublicationStatus><ArticleIdList>"
        f'<ArticleId IdType="pubmed">{pmid}</ArticleId>{doi_ids}'
        f'<ArticleId IdType="pmc">PMC{pmc}</ArticleId></ArticleIdList></PubmedData>'
        "</PubmedArticle>"
    ).encode()


def _date(meta: etree._Element) -> tuple[int, int, int]:
    """(year, month, day) of the first dated `pub-date` in `_DATE_TYPES` order."""
    dates = {
        (node.get("pub-type") or node.get("date-type") or ""): node
        for node in meta.iterfind("pub-date")
    }
    for kind in (*_DATE_TYPES, *dates):
        node = dates.get(kind)
        year = _flat(node.find("year")) if node is not None else ""
        if node is not None and year.isdigit():
            month, day = _flat(node.find("month")), _flat(node.find("day"))
            return (
                int(year),
                int(month) if month.isdigit() and 1 <= int(month) <= 12 else 1,
                int(day) if day.isdigit() and 1 <= int(day) <= 28 else 1,
            )
    return 2000, 1, 1


def _journal(journal: etree._Element | None, year: int) -> str:
    issue = (
        f'<JournalIssue CitedMedium="Internet"><PubDate><Year>{year}</Year></PubDate>'
        "</JournalIssue>"
    )
    if journal is None:
        return f"<Journal>{issue}</Journal>"
    issns = "".join(
        f'<ISSN IssnType="{"Electronic" if node.get("pub-type") == "epub" else "Print"}">'
        f"{escape(_flat(node))}</ISSN>"
        for node in journal.iterfind("issn")
    )
    title = _flat(journal.find("journal-title-group/journal-title")) or _flat(
        journal.find("journal-title")
    )
    abbrev = next(
        (
            _flat(node)
            for node in journal.iterfind("journal-id")
            if node.get("journal-id-type") in ("iso-abbrev", "nlm-ta")
        ),
        title,
    )
    return (
        f"<Journal>{issns}{issue}<Title>{escape(title)}</Title>"
        f"<ISOAbbreviation>{escape(abbrev)}</ISOAbbreviation></Journal>"
    )


def _abstract(meta: etree._Element) -> str:
    """The first abstract that is not a summary or teaser, as `AbstractText`s."""
    chosen = next(
        (
            node
            for node in meta.iterfind("abstract")
            if (node.get("abstract-type") or "") not in _SKIPPED_ABSTRACTS
        ),
        None,
    )
    if chosen is None:
        return ""
    sections = list(chosen.iterfind("sec"))
    if not sections:
        text = " ".join(_flat(p) for p in chosen.iterfind("p"))
        return f"<Abstract><AbstractText>{escape(text)}</AbstractText></Abstract>" if text else ""
    parts = []
    for sec in sections:
        label = _flat(sec.find("title")).rstrip(":. ")
        text = " ".join(_flat(p) for p in sec.iter("p"))
        labelled = f' Label="{escape(label.upper(), {chr(34): "&quot;"})}"' if label else ""
        parts.append(f"<AbstractText{labelled}>{escape(text)}</AbstractText>")
    return f"<Abstract>{''.join(parts)}</Abstract>"


def _authors(meta: etree._Element) -> str:
    authors = []
    for contrib in meta.iterfind("contrib-group/contrib[@contrib-type='author']"):
        surname = _flat(contrib.find("name/surname"))
        given = _flat(contrib.find("name/given-names"))
        if surname:
            initials = "".join(w[0] for w in given.replace("-", " ").split() if w[0].isalpha())
            authors.append(
                f'<Author ValidYN="Y"><LastName>{escape(surname)}</LastName>'
                f"<ForeName>{escape(given)}</ForeName><Initials>{escape(initials)}</Initials>"
                "</Author>"
            )
        elif collective := _flat(contrib.find("collab")):
            authors.append(
                f"<Author><CollectiveName>{escape(collective)}</CollectiveName></Author>"
            )
    return f'<AuthorList CompleteYN="Y">{"".join(authors)}</AuthorList>' if authors else ""


def _flat(node: etree._Element | None) -> str:
    """The element's text, whitespace collapsed ("" for None)."""
    if node is None:
        return ""
    return " ".join("".join(cast("Iterable[str]", node.itertext())).split())

"""The searchable fields of one `PubmedArticle`, read straight from its lxml element.

The fake searches and sorts on these light values instead of full `PubMedRecord`s so that a
corpus of tens of thousands of articles loads in seconds; the full record is parsed lazily, by
the production parser, only for the articles an answer actually shows. The rules mirror that
parser's: the Entrez date is History `entrez`, else `pubmed`; the publication date is
JournalIssue/PubDate, else the (electronic) ArticleDate; authors flagged `ValidYN="N"` and
non-author lists (editors) are left out.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import cast

from lxml import etree

from biomcp.domain.records import PubDate

__all__ = ["ArticleFields", "extract_fields", "fold", "tokenize", "valid_pmid"]

_PMID = re.compile(r"[1-9][0-9]{0,9}")
_TOKEN = re.compile(r"[^\W_]+")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


@dataclass(frozen=True, slots=True)
class ArticleFields:
    """What the fake searches, sorts and links on. Text is whitespace-collapsed, not folded."""

    pmid: str
    title: str
    abstract: tuple[str, ...]
    keywords: tuple[str, ...]
    mesh: tuple[tuple[str, bool], ...]  # (descriptor, major topic)
    pub_types: tuple[str, ...]
    authors: tuple[tuple[str, str], ...]  # (last name or collective name, initials)
    journals: tuple[str, ...]  # ISO abbreviation, MedlineTA, title, ISSNs
    languages: tuple[str, ...]
    edat: datetime | None
    pdat: PubDate | None
    lr: date | None


def valid_pmid(value: str | None) -> bool:
    """PubMed's key rule: digits without a leading zero."""
    return bool(value) and _PMID.fullmatch(value or "") is not None


def fold(text: str) -> str:
    """Case- and accent-insensitive form of `text` ("Müller" -> "muller")."""
    folded = text.casefold()
    if folded.isascii():
        return folded
    decomposed = unicodedata.normalize("NFKD", folded)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def tokenize(text: str) -> tuple[str, ...]:
    """Folded alphanumeric runs: PubMed-like word tokens ("COVID-19" -> covid, 19)."""
    return tuple(_TOKEN.findall(fold(text)))


def extract_fields(article: etree._Element) -> ArticleFields | None:
    """The fields of one `PubmedArticle` element, or None when it has no valid PMID (the
    production parser skips such articles too)."""
    citation = article.find("MedlineCitation")
    if citation is None:
        return None
    pmid = _text(citation.find("PMID"))
    if pmid is None or not valid_pmid(pmid):
        return None
    art = citation.find("Article")
    if art is None:
        art = etree.Element("Article")
    journals: list[str] = []
    journal = art.find("Journal")
    if journal is not None:
        journals.extend(_leaves(journal.iterfind("ISOAbbreviation")))
        journals.extend(_leaves(citation.iterfind("MedlineJournalInfo/MedlineTA")))
        journals.extend(_texts(journal.iterfind("Title")))
        journals.extend(_leaves(journal.iterfind("ISSN")))
        journals.extend(_leaves(citation.iterfind("MedlineJournalInfo/ISSNLinking")))
    mesh: list[tuple[str, bool]] = []
    for heading in citation.iterfind("MeshHeadingList/MeshHeading"):
        descriptor = heading.find("DescriptorName")
        name = _text(descriptor)
        if descriptor is not None and name:
            major = descriptor.get("MajorTopicYN") == "Y" or any(
                q.get("MajorTopicYN") == "Y" for q in heading.iterfind("QualifierName")
            )
            mesh.append((name, major))
    return ArticleFields(
        pmid=pmid,
        title=_text(art.find("ArticleTitle")) or _text(art.find("VernacularTitle")) or "",
        abstract=_texts(art.iterfind("Abstract/AbstractText")),
        keywords=_texts(citation.iterfind("KeywordList/Keyword")),
        mesh=tuple(mesh),
        pub_types=_leaves(art.iterfind("PublicationTypeList/PublicationType")),
        authors=_authors(art),
        journals=tuple(dict.fromkeys(journals)),
        languages=_leaves(art.iterfind("Language")),
        edat=_edat(article.find("PubmedData")),
        pdat=_pdat(art),
        lr=_lr(citation),
    )


def _authors(art: etree._Element) -> tuple[tuple[str, str], ...]:
    found: list[tuple[str, str]] = []
    for author_list in art.iterfind("AuthorList"):
        if author_list.get("Type", "authors") != "authors":
            continue
        for node in author_list.iterfind("Author"):
            if node.get("ValidYN", "Y") == "N":
                continue
            parts = {child.tag: child for child in node}
            last = _text(parts.get("LastName")) or _text(parts.get("CollectiveName"))
            if last:
                found.append((last, _text(parts.get("Initials")) or ""))
    return tuple(found)


def _edat(pubmed_data: etree._Element | None) -> datetime | None:
    if pubmed_data is None:
        return None
    for status in ("entrez", "pubmed"):
        for node in pubmed_data.iterfind(f"History/PubMedPubDate[@PubStatus='{status}']"):
            try:
                return _moment(node)
            except ValueError:
                continue
    return None


def _lr(citation: etree._Element) -> date | None:
    node = citation.find("DateRevised")
    if node is None:
        return None
    try:
        return _moment(node).date()
    except ValueError:
        return None


def _moment(node: etree._Element) -> datetime:
    parts = {child.tag: child.text for child in node}
    year = parts.get("Year")
    if not year:
        raise ValueError("no Year")
    month = _month(parts.get("Month") or "1")
    if month is None:
        raise ValueError("bad Month")
    return datetime(
        int(year),
        month,
        int(parts.get("Day") or 1),
        int(parts.get("Hour") or 0),
        int(parts.get("Minute") or 0),
        tzinfo=UTC,
    )


def _month(text: str) -> int | None:
    text = text.strip()
    if text.isdigit():
        value = int(text)
        return value if 1 <= value <= 12 else None
    prefix = text[:3].lower()
    return _MONTHS.index(prefix) + 1 if prefix in _MONTHS else None


def _pdat(art: etree._Element) -> PubDate | None:
    node = art.find("Journal/JournalIssue/PubDate")
    if node is not None and (found := _pub_date(node)) is not None:
        return found
    dated = art.find("ArticleDate[@DateType='Electronic']")
    if dated is None:
        dated = art.find("ArticleDate")
    return _pub_date(dated) if dated is not None else None


def _pub_date(node: etree._Element) -> PubDate | None:
    fields = {child.tag: child.text for child in node}
    year = (fields.get("Year") or "").strip()
    parts = [year, fields.get("Season") or fields.get("Month"), fields.get("Day")]
    text = " ".join(p.strip() for p in parts if p) if year else fields.get("MedlineDate")
    if not text:
        return None
    try:
        return PubDate.parse(text)
    except ValueError:  # InvalidRecordError is a ValueError too
        return None


def _text(node: etree._Element | None) -> str | None:
    if node is None:
        return None
    text = " ".join("".join(cast("Iterable[str]", node.itertext())).split())
    return text or None


def _texts(nodes: Iterable[etree._Element | None]) -> tuple[str, ...]:
    return tuple(t for t in (_text(n) for n in nodes) if t)


def _leaves(nodes: Iterable[etree._Element]) -> tuple[str, ...]:
    """Texts of elements that hold plain text only (no inline markup): cheaper than `_text`."""
    found: list[str] = []
    for node in nodes:
        text = node.text
        if text and (text := text.strip()):
            found.append(text if len(node) == 0 else _text(node) or text)
    return tuple(found)

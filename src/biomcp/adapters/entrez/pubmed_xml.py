"""Turn PubMed EFetch XML (`PubmedArticleSet`) into immutable `PubMedRecord`s.

The parser is defensive on two fronts:

* **Safety.** lxml is configured never to resolve entities, never to touch the network and never
  to load a DTD, so the remote DTDs named in NCBI's DOCTYPE lines are not fetched, external
  entities (XXE) are not read and nested entities (billion laughs) are not expanded. A document
  that declares its own entities in an internal DTD subset is refused outright: NCBI never sends
  one, so such a document is hostile or broken.
* **Faithfulness without fragility.** Every `PubmedArticle` is parsed on its own: an article
  without a PMID (or with an invalid one) is skipped and reported in `problems`; a bad optional
  field (an impossible date, say) is dropped, reported, and the record is kept.

Inline markup (`<i>`, `<sub>`, MathML...) is flattened to readable text: the text content in
document order with every run of whitespace collapsed to one space.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar, cast

from lxml import etree

from biomcp.domain.records import (
    AbstractSection,
    Author,
    Journal,
    MeshHeading,
    MeshQualifier,
    Notice,
    NoticeKind,
    PubDate,
    PubMedRecord,
    utc,
)

__all__ = ["ParsedArticleSet", "PubMedXmlError", "parse_pubmed_articles"]

MATHML_NS = "http://www.w3.org/1998/Math/MathML"
_XLINK_NS = "http://www.w3.org/1999/xlink"

_T = TypeVar("_T")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_NOTICE_KINDS = {kind.value: kind for kind in NoticeKind}
_ORCID = re.compile(r"(\d{4})-?(\d{4})-?(\d{4})-?(\d{3}[\dX])", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_UNDEFINED_PREFIX = re.compile(r"Namespace prefix ([A-Za-z_][\w.-]*) (?:on|for) ")
_ROOT_START = re.compile(rb"<PubmedArticleSet(?=[\s/>])")
_HTML_SNIFF = re.compile(rb"<\s*(?:!doctype\s+html|html[\s>])", re.IGNORECASE)
_HTML_TITLE = re.compile(rb"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
# MathML annotations carry the formula again in another notation (TeX, content MathML).
_MATHML_ANNOTATIONS = (f"{{{MATHML_NS}}}annotation", f"{{{MATHML_NS}}}annotation-xml")


class PubMedXmlError(Exception):
    """The input is not a PubmedArticleSet at all: malformed or truncated XML, an HTML page,
    an NCBI `<ERROR>` payload, another E-utilities document, or a document declaring entities."""


@dataclass(frozen=True, slots=True)
class ParsedArticleSet:
    """What one EFetch response held.

    Attributes:
        records: one record per `PubmedArticle` that had a valid PMID, in document order.
        book_pmids: PMIDs of `PubmedBookArticle` entries (books are reported, not parsed).
        deleted_pmids: PMIDs listed in `DeleteCitation`.
        problems: human-readable notes on what was skipped: articles dropped entirely (no or
            invalid PMID, unexpected error) and optional fields dropped from kept records.
    """

    records: tuple[PubMedRecord, ...] = ()
    book_pmids: tuple[str, ...] = ()
    deleted_pmids: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


_local = threading.local()


def _parser() -> etree.XMLParser:
    """The hardened parser, one per thread (lxml parsers must not be shared between threads)."""
    parser: etree.XMLParser | None = getattr(_local, "parser", None)
    if parser is None:
        parser = etree.XMLParser(
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            dtd_validation=False,
            huge_tree=False,
            remove_comments=True,
        )
        _local.parser = parser
    return parser


def parse_pubmed_articles(xml: bytes) -> ParsedArticleSet:
    """Parse an EFetch `db=pubmed retmode=xml` response.

    Args:
        xml: the raw response body (bytes, so the XML declaration's encoding is honoured).

    Returns:
        The records, the book and deleted PMIDs, and the problems met along the way.

    Raises:
        PubMedXmlError: when the input is not a PubmedArticleSet at all. Nothing else escapes:
            a bad article is skipped and reported in `problems`, the others are kept.
    """
    root = _parse_document(xml)
    records: list[PubMedRecord] = []
    books: list[str] = []
    deleted: list[str] = []
    problems: list[str] = []
    articles = 0
    for position, child in enumerate(root.iterchildren(tag=etree.Element), start=1):
        tag = child.tag
        if tag == "PubmedArticle":
            articles += 1
            index = articles
            try:
                record = _parse_article(child, index, problems)
            except Exception as exc:  # one broken article must not lose the others
                problems.append(f"PubmedArticle #{index}: skipped: {type(exc).__name__}: {exc}")
                continue
            if record is not None:
                records.append(record)
        elif tag == "PubmedBookArticle":
            pmid = _text(child.find("BookDocument/PMID"))
            if pmid:
                books.append(pmid)
            else:
                problems.append(f"PubmedBookArticle (element #{position}): no PMID")
        elif tag == "DeleteCitation":
            deleted.extend(p for p in (_text(e) for e in child.iterfind("PMID")) if p)
        elif tag == "ERROR":
            problems.append(f"NCBI error inside the article set: {_text(child) or '(empty)'}")
        else:
            problems.append(f"element #{position}: unexpected <{tag}> ignored")
    return ParsedArticleSet(tuple(records), tuple(books), tuple(deleted), tuple(problems))


# --------------------------------------------------------------------------- document level


def _parse_document(xml: bytes) -> etree._Element:
    if isinstance(xml, bytearray | memoryview):
        xml = bytes(xml)
    if not isinstance(xml, bytes):
        raise PubMedXmlError(f"expected the response body as bytes, got {type(xml).__name__}")
    if xml[:1].isspace():
        xml = xml.lstrip()  # a stray newline before `<?xml` is a fatal error to libxml2
    if not xml:
        raise PubMedXmlError("empty response: no XML at all")
    try:
        root = _fromstring(xml)
    except etree.XMLSyntaxError as exc:
        prefixes = _undefined_prefixes(exc)
        patched = _declare_prefixes(xml, prefixes) if prefixes else None
        if patched is None:
            raise _syntax_error(xml, exc) from exc
        try:
            root = _fromstring(patched)
        except (etree.LxmlError, ValueError) as again:
            raise _syntax_error(xml, again) from again
        xml = patched
    except (etree.LxmlError, ValueError) as exc:
        raise _syntax_error(xml, exc) from exc

    if _declares_entities(root):
        raise PubMedXmlError(
            "document declares its own entities (internal DTD subset): refused, NCBI never "
            "sends them and they are the vehicle of XXE and entity-expansion attacks"
        )
    tag = root.tag
    if tag != "PubmedArticleSet":
        error = _first_error_text(root)
        if error is not None:
            raise PubMedXmlError(f"NCBI returned an error instead of articles: {error}")
        if isinstance(tag, str) and tag.lower().endswith("html"):
            raise PubMedXmlError(f"received an HTML page, not PubMed XML{_html_title(xml)}")
        raise PubMedXmlError(f"expected a <PubmedArticleSet> document, got <{tag}>")
    if root.find("ERROR") is not None and not any(
        root.find(tag) is not None
        for tag in ("PubmedArticle", "PubmedBookArticle", "DeleteCitation")
    ):
        error = _first_error_text(root) or "(empty ERROR element)"
        raise PubMedXmlError(f"NCBI returned an error instead of articles: {error}")
    if b"MathML" in xml:
        _tidy_mathml(root)
    return root


def _tidy_mathml(root: etree._Element) -> None:
    """Make MathML flatten to its visible text.

    Annotations (the formula again as TeX or content MathML) are removed, and so is the
    whitespace-only text between MathML elements, which is layout, not content (MathML itself
    ignores it): `<mi>V</mi>\n  <mo>.</mo>` reads `V.` and not `V .`. Token text, including
    a deliberate space in `<mtext> </mtext>`, and the text around the formula are kept.
    """
    etree.strip_elements(root, *_MATHML_ANNOTATIONS, with_tail=False)
    for node in root.iter(f"{{{MATHML_NS}}}*"):
        if len(node) and node.text is not None and not node.text.strip():
            node.text = None
        parent = node.getparent()
        if (
            node.tail is not None
            and not node.tail.strip()
            and parent is not None
            and isinstance(parent.tag, str)
            and parent.tag.startswith(f"{{{MATHML_NS}}}")
        ):
            node.tail = None


def _fromstring(xml: bytes) -> etree._Element:
    return etree.fromstring(xml, _parser())


def _undefined_prefixes(exc: etree.XMLSyntaxError) -> list[str]:
    """Prefixes used without a declaration (e.g. `mml:` when the DTD was meant to bind it)."""
    found: list[str] = []
    for entry in cast("Iterable[Any]", exc.error_log):
        match = _UNDEFINED_PREFIX.search(entry.message)
        if match and match.group(1) not in found and match.group(1) != "xmlns":
            found.append(match.group(1))
    return found


def _declare_prefixes(xml: bytes, prefixes: Iterable[str]) -> bytes | None:
    """Bind undeclared prefixes on the root element, as NCBI's DTD would (None: cannot)."""
    match = _ROOT_START.search(xml)
    if match is None:
        return None
    namespaces = {"mml": MATHML_NS, "xlink": _XLINK_NS}
    declarations = b"".join(
        f' xmlns:{p}="{namespaces.get(p, "urn:x-biomcp:undeclared:" + p)}"'.encode("ascii")
        for p in prefixes
    )
    return xml[: match.end()] + declarations + xml[match.end() :]


def _syntax_error(xml: bytes, exc: Exception) -> PubMedXmlError:
    if _HTML_SNIFF.search(xml[:2048]):
        return PubMedXmlError(f"received an HTML page, not PubMed XML{_html_title(xml)}")
    return PubMedXmlError(f"not well-formed XML (truncated or corrupted response?): {exc}")


def _html_title(xml: bytes) -> str:
    match = _HTML_TITLE.search(xml[:65536])
    if match is None:
        return ""
    title = " ".join(match.group(1).decode("utf-8", "replace").split())[:200]
    return f": {title!r}" if title else ""


def _declares_entities(root: etree._Element) -> bool:
    dtd = root.getroottree().docinfo.internalDTD
    return dtd is not None and any(True for _ in cast("Any", dtd).iterentities())


def _first_error_text(root: etree._Element) -> str | None:
    """The first non-blank `<ERROR>` text anywhere in the document (eSpell sends empty ones)."""
    for error in root.iter("ERROR"):
        if text := _text(error):
            return text
    return None


# --------------------------------------------------------------------------- article level


class _FieldGuard:
    """Reads one optional field; on failure drops it, notes why in `problems`, keeps going."""

    __slots__ = ("pmid", "problems")

    def __init__(self, pmid: str, problems: list[str]) -> None:
        self.pmid = pmid
        self.problems = problems

    def __call__(self, name: str, read: Callable[[], _T], default: _T) -> _T:
        try:
            return read()
        except Exception as exc:  # a bad optional field is dropped, the record is kept
            self.problems.append(f"pmid {self.pmid}: dropped {name}: {type(exc).__name__}: {exc}")
            return default


def _parse_article(article: etree._Element, index: int, problems: list[str]) -> PubMedRecord | None:
    citation = article.find("MedlineCitation")
    if citation is None:
        problems.append(f"PubmedArticle #{index}: skipped: no MedlineCitation")
        return None
    pmid = _text(citation.find("PMID"))
    if not pmid:
        problems.append(f"PubmedArticle #{index}: skipped: no PMID")
        return None
    try:
        PubMedRecord(pmid)  # validate the key before doing any more work
    except ValueError as exc:
        problems.append(f"PubmedArticle #{index}: skipped: {exc}")
        return None

    optional = _FieldGuard(pmid, problems)
    art = citation.find("Article")
    if art is None:
        art = etree.Element("Article")  # a citation without an Article: keep the bare PMID
    pubmed_data = article.find("PubmedData")

    return PubMedRecord(
        pmid=pmid,
        title=optional("title", lambda: _title(art), None),
        abstract=optional("abstract", lambda: _abstract(art), ()),
        journal=optional("journal", lambda: _journal(art), Journal()),
        publication_types=optional(
            "publication_types",
            lambda: _texts(art.iterfind("PublicationTypeList/PublicationType")),
            (),
        ),
        mesh=optional("mesh", lambda: _mesh(citation), ()),
        keywords=optional("keywords", lambda: _texts(citation.iterfind("KeywordList/Keyword")), ()),
        pdat=_pdat(art, optional),
        edat=optional("edat", lambda: _edat(pubmed_data), None),
        lr=optional("lr", lambda: _date_revised(citation), None),
        pmcid=optional("pmcid", lambda: _pmcid(pubmed_data), None),
        doi=optional("doi", lambda: _doi(art, pubmed_data), None),
        authors=optional("authors", lambda: _authors(art), ()),
        languages=optional("languages", lambda: _texts(art.iterfind("Language")), ()),
        notices=optional("notices", lambda: _notices(citation), ()),
        pages=optional("pages", lambda: _pages(art), None),
    )


def _title(art: etree._Element) -> str | None:
    return _text(art.find("ArticleTitle")) or _text(art.find("VernacularTitle"))


def _abstract(art: etree._Element) -> tuple[AbstractSection, ...]:
    sections: list[AbstractSection] = []
    for node in art.iterfind("Abstract/AbstractText"):
        text = _text(node)
        if text:
            sections.append(
                AbstractSection(
                    text,
                    label=_attr(node, "Label"),
                    category=_attr(node, "NlmCategory"),
                )
            )
    return tuple(sections)


def _journal(art: etree._Element) -> Journal:
    journal = art.find("Journal")
    if journal is None:
        return Journal()
    issn: str | None = None
    eissn: str | None = None
    for node in journal.iterfind("ISSN"):
        value = _text(node)
        if not value:
            continue
        if (node.get("IssnType") or "").strip().lower() == "electronic":
            eissn = eissn or value
        else:  # Print, or no IssnType at all
            issn = issn or value
    return Journal(
        title=_text(journal.find("Title")),
        iso_abbreviation=_text(journal.find("ISOAbbreviation")),
        issn=issn,
        eissn=eissn,
        volume=_text(journal.find("JournalIssue/Volume")),
        issue=_text(journal.find("JournalIssue/Issue")),
    )


def _pages(art: etree._Element) -> str | None:
    medline = _text(art.find("Pagination/MedlinePgn"))
    if medline:
        return medline
    start = _text(art.find("Pagination/StartPage"))
    end = _text(art.find("Pagination/EndPage"))
    if start and end and end != start:
        return f"{start}-{end}"
    return start or end


def _pdat(art: etree._Element, optional: _FieldGuard) -> PubDate | None:
    """JournalIssue/PubDate, else the electronic ArticleDate when the former has no usable year."""
    pub_date = art.find("Journal/JournalIssue/PubDate")
    found: PubDate | None = None
    if pub_date is not None:
        found = optional("pdat (JournalIssue/PubDate)", lambda: _pub_date(pub_date), None)
    if found is not None:
        return found
    article_date = art.find("ArticleDate[@DateType='Electronic']")
    if article_date is None:
        article_date = art.find("ArticleDate")
    if article_date is None:
        return None
    return optional("pdat (ArticleDate)", lambda: _pub_date(article_date), None)


def _pub_date(node: etree._Element) -> PubDate | None:
    medline = _text(node.find("MedlineDate"))
    year = _text(node.find("Year"))
    if not year:
        return PubDate.parse(medline) if medline else None
    season = _text(node.find("Season"))
    if season:
        return PubDate.parse(f"{year} {season}")
    month_text = _text(node.find("Month"))
    day_text = _text(node.find("Day"))
    if month_text is None:
        return PubDate(int(year))
    month = _month(month_text)
    if month is None:  # e.g. "Mar-Apr" in a Month field: keep the source text
        return PubDate.parse(" ".join(p for p in (year, month_text, day_text) if p))
    return PubDate(int(year), month, int(day_text) if day_text else None)


def _month(text: str | None) -> int | None:
    """`3`, `03`, `Mar`, `March`, `Sept.` -> 3..; anything else (`Mar-Apr`) -> None."""
    if not text:
        return None
    if text.isdigit():
        value = int(text)
        return value if 1 <= value <= 12 else None
    word = text.rstrip(".")
    prefix = word[:3].lower()
    if word.isalpha() and len(word) >= 3 and prefix in _MONTHS:
        return _MONTHS.index(prefix) + 1
    return None


def _datetime(node: etree._Element) -> datetime:
    year = _text(node.find("Year"))
    if not year:
        raise ValueError("no Year")
    month = _month(_text(node.find("Month")) or "1")
    if month is None:
        raise ValueError(f"bad Month {_text(node.find('Month'))!r}")
    return utc(
        int(year),
        month,
        int(_text(node.find("Day")) or 1),
        int(_text(node.find("Hour")) or 0),
        int(_text(node.find("Minute")) or 0),
    )


def _edat(pubmed_data: etree._Element | None) -> datetime | None:
    """History `entrez`, else `pubmed`; an unreadable `entrez` falls back to `pubmed` too."""
    if pubmed_data is None:
        return None
    errors: list[str] = []
    for status in ("entrez", "pubmed"):
        for node in pubmed_data.iterfind(f"History/PubMedPubDate[@PubStatus='{status}']"):
            try:
                return _datetime(node)
            except ValueError as exc:
                errors.append(f"{status}: {exc}")
    if errors:
        raise ValueError("; ".join(errors))
    return None


def _date_revised(citation: etree._Element) -> datetime | None:
    node = citation.find("DateRevised")
    if node is None:
        return None
    moment = _datetime(node)
    return moment.replace(hour=0, minute=0)


def _mesh(citation: etree._Element) -> tuple[MeshHeading, ...]:
    headings: list[MeshHeading] = []
    for heading in citation.iterfind("MeshHeadingList/MeshHeading"):
        descriptor = heading.find("DescriptorName")
        name = _text(descriptor)
        if descriptor is None or not name:
            continue
        qualifiers = tuple(
            MeshQualifier(q_name, ui=_attr(q, "UI"), major=_yes(q, "MajorTopicYN"))
            for q in heading.iterfind("QualifierName")
            if (q_name := _text(q))
        )
        headings.append(
            MeshHeading(
                name,
                ui=_attr(descriptor, "UI"),
                major=_yes(descriptor, "MajorTopicYN"),
                qualifiers=qualifiers,
            )
        )
    return tuple(headings)


def _doi(art: etree._Element, pubmed_data: etree._Element | None) -> str | None:
    if pubmed_data is not None:
        for node in pubmed_data.iterfind("ArticleIdList/ArticleId[@IdType='doi']"):
            if doi := _text(node):
                return doi
    for node in art.iterfind("ELocationID[@EIdType='doi']"):
        if node.get("ValidYN", "Y") != "N" and (doi := _text(node)):
            return doi
    return None


def _pmcid(pubmed_data: etree._Element | None) -> str | None:
    if pubmed_data is None:
        return None
    for node in pubmed_data.iterfind("ArticleIdList/ArticleId[@IdType='pmc']"):
        digits = _DIGITS.search(_text(node) or "")
        if digits:
            return f"PMC{int(digits.group())}"
    return None


def _authors(art: etree._Element) -> tuple[Author, ...]:
    """Article/AuthorList authors. Entries flagged `ValidYN="N"` are ones PubMed itself does not
    display (misspelled names kept for searching) and are left out."""
    authors: list[Author] = []
    for author_list in art.iterfind("AuthorList"):
        if author_list.get("Type", "authors") != "authors":
            continue
        for node in author_list.iterfind("Author"):
            if node.get("ValidYN", "Y") == "N":
                continue
            author = Author(
                last_name=_text(node.find("LastName")),
                fore_name=_text(node.find("ForeName")),
                initials=_text(node.find("Initials")),
                collective_name=_text(node.find("CollectiveName")),
                affiliations=_texts(node.iterfind("AffiliationInfo/Affiliation")),
                orcid=_orcid(node),
            )
            if author.last_name or author.fore_name or author.collective_name:
                authors.append(author)
    return tuple(authors)


def _orcid(author: etree._Element) -> str | None:
    for node in author.iterfind("Identifier"):
        if (node.get("Source") or "").upper() != "ORCID":
            continue
        match = _ORCID.search(_text(node) or "")
        if match:
            return "-".join(match.groups()).upper()
    return None


def _notices(citation: etree._Element) -> tuple[Notice, ...]:
    notices: list[Notice] = []
    for node in citation.iterfind("CommentsCorrectionsList/CommentsCorrections"):
        kind = _NOTICE_KINDS.get((node.get("RefType") or "").strip())
        if kind is not None:
            notices.append(
                Notice(kind, pmid=_text(node.find("PMID")), source=_text(node.find("RefSource")))
            )
    return tuple(notices)


# --------------------------------------------------------------------------- text helpers


def _text(node: etree._Element | None) -> str | None:
    """The node's full text in document order (inline markup flattened), whitespace collapsed;
    None when absent or blank."""
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


def _yes(node: etree._Element, name: str) -> bool:
    return (node.get(name) or "").strip().upper() == "Y"

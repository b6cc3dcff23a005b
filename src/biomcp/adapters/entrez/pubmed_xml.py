"""Turn PubMed EFetch XML (`PubmedArticleSet`) into immutable `PubMedRecord`s.

The parser is defensive on two fronts:

* **Safety.** The document is read by `xmlsafe.parse_document`: no entity is resolved, no DTD
  loaded, nothing fetched, and a document declaring its own entities is refused. What is not a
  PubmedArticleSet at all raises the port's errors (`EntrezResponseError`, or for NCBI's
  `<ERROR>` payloads `EntrezRequestError` / `EntrezUnavailableError`).
* **Faithfulness without fragility.** Every `PubmedArticle` is parsed on its own: an article
  without a PMID (or with an invalid one) is skipped and reported in `problems`; a bad optional
  field (an impossible date, say) is dropped, reported, and the record is kept.

Inline markup (`<i>`, `<sub>`, MathML...) is flattened to readable text: the text content in
document order with every run of whitespace collapsed to one space.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from lxml import etree

from biomcp.adapters.entrez.pubmed_fields import (
    date_revised,
    entrez_date,
    node_attr,
    node_text,
    node_texts,
    node_yes,
    pub_date,
)
from biomcp.adapters.entrez.xmlsafe import MATHML_NS, parse_document
from biomcp.domain.records import (
    AbstractSection,
    Author,
    Grant,
    Journal,
    MeshHeading,
    MeshQualifier,
    Notice,
    NoticeKind,
    PubDate,
    PubMedRecord,
)
from biomcp.domain.registries import trial_ids

__all__ = ["ParsedArticleSet", "parse_pubmed_articles"]

_ROOTS = frozenset({"PubmedArticleSet"})

_T = TypeVar("_T")
_NOTICE_KINDS = {kind.value: kind for kind in NoticeKind}
_ORCID = re.compile(r"(\d{4})-?(\d{4})-?(\d{4})-?(\d{3}[\dX])", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_ACCESSIONS = "AccessionNumberList/AccessionNumber"
# MathML annotations carry the formula again in another notation (TeX, content MathML).
_MATHML_ANNOTATIONS = (f"{{{MATHML_NS}}}annotation", f"{{{MATHML_NS}}}annotation-xml")


@dataclass(frozen=True, slots=True)
class ParsedArticleSet:
    """What one EFetch response held.

    Attributes:
        records: one record per PMID among the `PubmedArticle`s with a valid one, in document
            order; of a versioned PMID's copies, the highest `Version` is kept.
        book_pmids: PMIDs of `PubmedBookArticle` entries (books are reported, not parsed).
        deleted_pmids: PMIDs listed in `DeleteCitation`.
        problems: human-readable notes on what was skipped: articles dropped entirely (no or
            invalid PMID, unexpected error) and optional fields dropped from kept records.
    """

    records: tuple[PubMedRecord, ...] = ()
    book_pmids: tuple[str, ...] = ()
    deleted_pmids: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


def parse_pubmed_articles(xml: bytes) -> ParsedArticleSet:
    """Parse an EFetch `db=pubmed retmode=xml` response.

    Args:
        xml: the raw response body (bytes, so the XML declaration's encoding is honoured).

    Returns:
        The records, the book and deleted PMIDs, and the problems met along the way.

    Raises:
        EntrezResponseError: the input is not a PubmedArticleSet at all: empty, malformed or
            truncated XML, an HTML page, another E-utilities document, a document declaring
            entities.
        EntrezRequestError, EntrezUnavailableError: NCBI sent an `<ERROR>` payload instead of
            articles (classified by `xmlsafe.classify_ncbi_error`). An `<ERROR>` inside a set
            that also holds articles is only reported in `problems`.

        Nothing else escapes: a bad article is skipped and reported in `problems`, the others
        are kept.
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
            pmid = node_text(child.find("BookDocument/PMID"))
            if pmid:
                books.append(pmid)
            else:
                problems.append(f"PubmedBookArticle (element #{position}): no PMID")
        elif tag == "DeleteCitation":
            deleted.extend(p for p in (node_text(e) for e in child.iterfind("PMID")) if p)
        elif tag == "ERROR":
            problems.append(f"NCBI error inside the article set: {node_text(child) or '(empty)'}")
        else:
            problems.append(f"element #{position}: unexpected <{tag}> ignored")
    return ParsedArticleSet(
        _latest_versions(records), tuple(books), tuple(deleted), tuple(problems)
    )


# --------------------------------------------------------------------------- document level


def _parse_document(xml: bytes) -> etree._Element:
    root = parse_document(xml, expected_roots=_ROOTS, what="a <PubmedArticleSet> document")
    raw = bytes(xml) if isinstance(xml, bytearray | memoryview) else xml
    if b"MathML" in raw or b"mml:" in raw:  # `mml:` may have been bound by parse_document
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
    pmid = node_text(citation.find("PMID"))
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

    abstract: tuple[AbstractSection, ...] = optional("abstract", lambda: _abstract(art), ())
    return PubMedRecord(
        pmid=pmid,
        title=optional("title", lambda: _title(art), None),
        abstract=abstract,
        journal=optional("journal", lambda: _journal(art), Journal()),
        publication_types=optional(
            "publication_types",
            lambda: node_texts(art.iterfind("PublicationTypeList/PublicationType")),
            (),
        ),
        mesh=optional("mesh", lambda: _mesh(citation), ()),
        keywords=optional(
            "keywords", lambda: node_texts(citation.iterfind("KeywordList/Keyword")), ()
        ),
        pdat=_pdat(art, optional),
        edat=optional("edat", lambda: entrez_date(pubmed_data), None),
        lr=optional("lr", lambda: date_revised(citation), None),
        pmcid=optional("pmcid", lambda: _pmcid(pubmed_data), None),
        doi=optional("doi", lambda: _doi(art, pubmed_data), None),
        authors=optional("authors", lambda: _authors(art), ()),
        languages=optional("languages", lambda: node_texts(art.iterfind("Language")), ()),
        notices=optional("notices", lambda: _notices(citation), ()),
        pages=optional("pages", lambda: _pages(art), None),
        grants=optional("grants", lambda: _grants(art), ()),
        pmid_version=optional("pmid version", lambda: _pmid_version(citation), 1),
        trial_ids=optional("trial ids", lambda: _trial_ids(art, abstract), ()),
    )


def _grants(art: etree._Element) -> tuple[Grant, ...]:
    return tuple(
        Grant(
            grant_id=node_text(node.find("GrantID")),
            acronym=node_text(node.find("Acronym")),
            agency=node_text(node.find("Agency")),
            country=node_text(node.find("Country")),
        )
        for node in art.iterfind("GrantList/Grant")
    )


def _title(art: etree._Element) -> str | None:
    return node_text(art.find("ArticleTitle")) or node_text(art.find("VernacularTitle"))


def _abstract(art: etree._Element) -> tuple[AbstractSection, ...]:
    sections: list[AbstractSection] = []
    for node in art.iterfind("Abstract/AbstractText"):
        text = node_text(node)
        label = node_attr(node, "Label")
        if text or label:  # `<AbstractText Label="LEVEL OF EVIDENCE: 4"/>` says its label
            sections.append(
                AbstractSection(text or "", label=label, category=node_attr(node, "NlmCategory"))
            )
    return tuple(sections)


def _trial_ids(art: etree._Element, abstract: tuple[AbstractSection, ...]) -> tuple[str, ...]:
    """Registry ids from the DataBankList and from the abstract's text."""
    banks = [
        (node_text(bank.find("DataBankName")), node_texts(bank.iterfind(_ACCESSIONS)))
        for bank in art.iterfind("DataBankList/DataBank")
    ]
    return trial_ids(banks, (s.text for s in abstract))


def _journal(art: etree._Element) -> Journal:
    journal = art.find("Journal")
    if journal is None:
        return Journal()
    issn: str | None = None
    eissn: str | None = None
    for node in journal.iterfind("ISSN"):
        value = node_text(node)
        if not value:
            continue
        if (node.get("IssnType") or "").strip().lower() == "electronic":
            eissn = eissn or value
        else:  # Print, or no IssnType at all
            issn = issn or value
    return Journal(
        title=node_text(journal.find("Title")),
        iso_abbreviation=node_text(journal.find("ISOAbbreviation")),
        issn=issn,
        eissn=eissn,
        volume=node_text(journal.find("JournalIssue/Volume")),
        issue=node_text(journal.find("JournalIssue/Issue")),
    )


def _pages(art: etree._Element) -> str | None:
    medline = node_text(art.find("Pagination/MedlinePgn"))
    if medline:
        return medline
    start = node_text(art.find("Pagination/StartPage"))
    end = node_text(art.find("Pagination/EndPage"))
    if start and end and end != start:
        return f"{start}-{end}"
    return start or end


def _pmid_version(citation: etree._Element) -> int:
    node = citation.find("PMID")
    value = node_attr(node, "Version") if node is not None else None
    return int(value) if value else 1


def _latest_versions(records: list[PubMedRecord]) -> tuple[PubMedRecord, ...]:
    """One record per PMID, where the set's first copy stood: the highest `Version` (the later
    copy on a tie, as a later copy in a file replaces an earlier one)."""
    kept: dict[str, PubMedRecord] = {}
    for record in records:
        held = kept.get(record.pmid)
        if held is None or record.pmid_version >= held.pmid_version:
            kept[record.pmid] = record
    return tuple(kept.values())


def _pdat(art: etree._Element, optional: _FieldGuard) -> PubDate | None:
    """JournalIssue/PubDate, else the electronic ArticleDate when the former has no usable year."""
    issue_date = art.find("Journal/JournalIssue/PubDate")
    found: PubDate | None = None
    if issue_date is not None:
        found = optional("pdat (JournalIssue/PubDate)", lambda: pub_date(issue_date), None)
    if found is not None:
        return found
    article_date = art.find("ArticleDate[@DateType='Electronic']")
    if article_date is None:
        article_date = art.find("ArticleDate")
    if article_date is None:
        return None
    return optional("pdat (ArticleDate)", lambda: pub_date(article_date), None)


def _mesh(citation: etree._Element) -> tuple[MeshHeading, ...]:
    headings: list[MeshHeading] = []
    for heading in citation.iterfind("MeshHeadingList/MeshHeading"):
        descriptor = heading.find("DescriptorName")
        name = node_text(descriptor)
        if descriptor is None or not name:
            continue
        qualifiers = tuple(
            MeshQualifier(q_name, ui=node_attr(q, "UI"), major=node_yes(q, "MajorTopicYN"))
            for q in heading.iterfind("QualifierName")
            if (q_name := node_text(q))
        )
        headings.append(
            MeshHeading(
                name,
                ui=node_attr(descriptor, "UI"),
                major=node_yes(descriptor, "MajorTopicYN"),
                qualifiers=qualifiers,
            )
        )
    return tuple(headings)


def _doi(art: etree._Element, pubmed_data: etree._Element | None) -> str | None:
    if pubmed_data is not None:
        for node in pubmed_data.iterfind("ArticleIdList/ArticleId[@IdType='doi']"):
            if doi := node_text(node):
                return doi
    for node in art.iterfind("ELocationID[@EIdType='doi']"):
        if node.get("ValidYN", "Y") != "N" and (doi := node_text(node)):
            return doi
    return None


def _pmcid(pubmed_data: etree._Element | None) -> str | None:
    if pubmed_data is None:
        return None
    for node in pubmed_data.iterfind("ArticleIdList/ArticleId[@IdType='pmc']"):
        digits = _DIGITS.search(node_text(node) or "")
        if digits:
            return f"PMC{int(digits.group())}"
    return None


_AUTHOR_NAME_TAGS = frozenset({"LastName", "ForeName", "Initials", "CollectiveName"})


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
            names: dict[str, str | None] = {}
            affiliations: list[str] = []
            for child in node:  # one pass over the children instead of a find() per field
                tag = child.tag
                if tag == "AffiliationInfo":
                    affiliation = node_text(child.find("Affiliation"))
                    if affiliation:
                        affiliations.append(affiliation)
                elif tag in _AUTHOR_NAME_TAGS and tag not in names:
                    names[tag] = node_text(child)
            author = Author(
                last_name=names.get("LastName"),
                fore_name=names.get("ForeName"),
                initials=names.get("Initials"),
                collective_name=names.get("CollectiveName"),
                affiliations=tuple(affiliations),
                orcid=_orcid(node),
            )
            if author.last_name or author.fore_name or author.collective_name:
                authors.append(author)
    return tuple(authors)


def _orcid(author: etree._Element) -> str | None:
    for node in author.iterfind("Identifier"):
        if (node.get("Source") or "").upper() != "ORCID":
            continue
        match = _ORCID.search(node_text(node) or "")
        if match:
            return "-".join(match.groups()).upper()
    return None


def _notices(citation: etree._Element) -> tuple[Notice, ...]:
    notices: list[Notice] = []
    for node in citation.iterfind("CommentsCorrectionsList/CommentsCorrections"):
        kind = _NOTICE_KINDS.get((node.get("RefType") or "").strip())
        if kind is not None:
            notices.append(
                Notice(
                    kind,
                    pmid=node_text(node.find("PMID")),
                    source=node_text(node.find("RefSource")),
                )
            )
    return tuple(notices)

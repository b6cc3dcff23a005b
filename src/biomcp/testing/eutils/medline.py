"""MEDLINE (`rettype=medline`) text for a PubMed record, as EFetch prints it.

`to_medline` is a pure function of a `PubMedRecord` plus, optionally, `ArticleExtras`: the
few citation facts the record does not keep (owner, status, completion date, linking ISSN,
electronic publication date...), read from the article's XML by `article_extras`. Without
extras the record alone gives a faithful but shorter text (OWN defaults to NLM, STAT to MEDLINE
for an indexed record and PubMed-not-MEDLINE otherwise).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from lxml import etree

from biomcp.domain.records import PubDate, PubMedRecord

__all__ = ["ArticleExtras", "article_extras", "medline_date", "to_medline"]

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_WIDTH = 80
_INDENT = " " * 6
_NOT_AID = frozenset({"pubmed", "pmc", "mid", "pmcid"})


@dataclass(frozen=True, slots=True)
class ArticleExtras:
    """Citation facts a `PubMedRecord` leaves out, for MEDLINE text and ESummary.

    Dates are `YYYYMMDD` (`completed`, `epub`); `history` maps a PubStatus to
    `YYYY/MM/DD HH:MM`; `issns` are (value, type) in document order, the linking ISSN last;
    `elocations` and `article_ids` are (type, value) in document order.
    """

    owner: str | None = None
    status: str | None = None
    completed: str | None = None
    epub: str | None = None
    issns: tuple[tuple[str, str], ...] = ()
    medline_ta: str | None = None
    nlm_unique_id: str | None = None
    country: str | None = None
    keyword_owner: str | None = None
    elocations: tuple[tuple[str, str], ...] = ()
    article_ids: tuple[tuple[str, str], ...] = ()
    history: tuple[tuple[str, str], ...] = ()
    publication_status: str | None = None

    def history_date(self, status: str) -> str | None:
        return next((when for s, when in self.history if s == status), None)


def article_extras(raw: bytes) -> ArticleExtras:
    """Read `ArticleExtras` from one `<PubmedArticle>` element's XML (entities, DTDs and the
    network off). Missing parts are simply absent."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    article = etree.fromstring(raw, parser)
    citation = article.find("MedlineCitation")
    if citation is None:
        return ArticleExtras()
    art = citation.find("Article")
    journal = art.find("Journal") if art is not None else None
    issns = [
        (value, node.get("IssnType") or "Print")
        for node in (journal.iterfind("ISSN") if journal is not None else ())
        if (value := _text(node))
    ]
    if linking := _text(citation.find("MedlineJournalInfo/ISSNLinking")):
        issns.append((linking, "Linking"))
    epub = None
    if art is not None:
        dated = art.find("ArticleDate[@DateType='Electronic']")
        if dated is not None and _text(dated.find("Year")):
            epub = _compact(dated)
    history = []
    for node in article.iterfind("PubmedData/History/PubMedPubDate"):
        status = node.get("PubStatus")
        if status and _text(node.find("Year")):
            try:
                history.append((status, _stamp(node)))
            except ValueError:
                continue
    completed = citation.find("DateCompleted")
    keyword_list = citation.find("KeywordList")
    return ArticleExtras(
        owner=citation.get("Owner"),
        status=citation.get("Status"),
        completed=_compact(completed) if completed is not None else None,
        epub=epub,
        issns=tuple(issns),
        medline_ta=_text(citation.find("MedlineJournalInfo/MedlineTA")),
        nlm_unique_id=_text(citation.find("MedlineJournalInfo/NlmUniqueID")),
        country=_text(citation.find("MedlineJournalInfo/Country")),
        keyword_owner=keyword_list.get("Owner") if keyword_list is not None else None,
        elocations=tuple(
            (node.get("EIdType") or "", value)
            for node in (art.iterfind("ELocationID") if art is not None else ())
            if node.get("ValidYN", "Y") != "N" and (value := _text(node))
        ),
        article_ids=tuple(
            (node.get("IdType") or "", value)
            for node in article.iterfind("PubmedData/ArticleIdList/ArticleId")
            if (value := _text(node))
        ),
        history=tuple(history),
        publication_status=_text(article.find("PubmedData/PublicationStatus")),
    )


def to_medline(record: PubMedRecord, extras: ArticleExtras | None = None) -> str:
    """The record in MEDLINE format: one `TAG - value` line per fact (tags padded to four
    characters), long values wrapped near 80 columns with six-space continuation lines. The
    text ends with a newline; EFetch separates records with a blank line."""
    x = extras or ArticleExtras()
    journal = record.journal
    lines: list[str] = []

    def add(tag: str, value: str | None) -> None:
        if value:
            lines.extend(_field(tag, value))

    add("PMID", record.pmid)
    add("OWN", x.owner or "NLM")
    add("STAT", x.status or ("MEDLINE" if record.mesh else "PubMed-not-MEDLINE"))
    add("DCOM", x.completed)
    add("LR", record.lr.strftime("%Y%m%d") if record.lr else None)
    issns = x.issns or tuple(
        (value, kind)
        for value, kind in ((journal.issn, "Print"), (journal.eissn, "Electronic"))
        if value
    )
    for value, kind in issns:
        add("IS", f"{value} ({kind})")
    add("VI", journal.volume)
    add("IP", journal.issue)
    add("DP", medline_date(record.pdat))
    add("TI", record.title)
    add("PG", record.pages)
    elocations = x.elocations or ((("doi", record.doi),) if record.doi else ())
    for kind, value in elocations:
        add("LID", f"{value} [{kind}]")
    add("AB", " ".join(f"{s.label}: {s.text}" if s.label else s.text for s in record.abstract))
    for author in record.authors:
        if author.collective_name:
            add("CN", author.collective_name)
        else:
            full = ", ".join(p for p in (author.last_name, author.fore_name) if p)
            add("FAU", full)
            add("AU", author.display_name)
            add("AUID", f"ORCID: {author.orcid}" if author.orcid else None)
        for affiliation in author.affiliations:
            add("AD", affiliation)
    for language in record.languages:
        add("LA", language)
    for pub_type in record.publication_types:
        add("PT", pub_type)
    add("DEP", x.epub)
    add("PL", x.country)
    add("TA", x.medline_ta or journal.iso_abbreviation)
    add("JT", journal.title)
    add("JID", x.nlm_unique_id)
    for heading in record.mesh:
        star = "*" if heading.major else ""
        qualifiers = "".join(f"/{'*' if q.major else ''}{q.name}" for q in heading.qualifiers)
        add("MH", f"{star}{heading.descriptor}{qualifiers}")
    add("PMC", record.pmcid)
    if record.keywords:
        add("OTO", x.keyword_owner)
    for keyword in record.keywords:
        add("OT", keyword)
    entrez = _stamp_of(record.edat)
    add("EDAT", x.history_date("pubmed") or entrez)
    add("MHDA", x.history_date("medline"))
    add("CRDT", x.history_date("entrez") or entrez)
    for status, when in x.history:
        add("PHST", f"{when} [{status}]")
    article_ids = x.article_ids or ((("doi", record.doi),) if record.doi else ())
    for kind, value in article_ids:
        if kind not in _NOT_AID:
            add("AID", f"{value} [{kind}]")
    add("PST", x.publication_status)
    add("SO", _source(record, x))
    return "\n".join(lines) + "\n"


def medline_date(pdat: PubDate | None) -> str | None:
    """A publication date as MEDLINE and ESummary print it: `2023 Dec`, `1976 Sep 28`,
    `1990 Spring` (source forms such as seasons and ranges are kept as given)."""
    if pdat is None:
        return None
    if pdat.raw:
        return pdat.raw
    parts = [str(pdat.year)]
    if pdat.month is not None:
        parts.append(_MONTHS[pdat.month - 1])
        if pdat.day is not None:
            parts.append(str(pdat.day))
    return " ".join(parts)


def _source(record: PubMedRecord, x: ArticleExtras) -> str | None:
    """The SO line: `TA. DP;VI(IP):PG. doi: DOI. Epub YYYY Mon D.`"""
    abbreviation = x.medline_ta or record.journal.iso_abbreviation
    if not abbreviation:
        return None
    citation = f"{abbreviation}. {medline_date(record.pdat) or ''}"
    volume, issue = record.journal.volume, record.journal.issue
    if volume or issue:
        citation += f";{volume or ''}" + (f"({issue})" if issue else "")
    if record.pages:
        citation += f":{record.pages}"
    citation += "."
    if record.doi:
        citation += f" doi: {record.doi}."
    if x.epub:
        citation += f" Epub {x.epub[:4]} {_MONTHS[int(x.epub[4:6]) - 1]} {int(x.epub[6:8])}."
    return citation


def _field(tag: str, value: str) -> list[str]:
    wrapped = textwrap.wrap(
        " ".join(value.split()),
        width=_WIDTH - len(_INDENT),
        break_long_words=False,
        break_on_hyphens=False,
    ) or [""]
    return [f"{tag:<4}- {wrapped[0]}", *(_INDENT + line for line in wrapped[1:])]


def _stamp_of(moment: datetime | None) -> str | None:
    return moment.strftime("%Y/%m/%d %H:%M") if moment is not None else None


def _stamp(node: etree._Element) -> str:
    year = int(_text(node.find("Year")) or "")
    month = _month(_text(node.find("Month")) or "1")
    day = int(_text(node.find("Day")) or 1)
    hour = int(_text(node.find("Hour")) or 0)
    minute = int(_text(node.find("Minute")) or 0)
    return f"{year:04d}/{month:02d}/{day:02d} {hour:02d}:{minute:02d}"


def _compact(node: etree._Element) -> str | None:
    try:
        year = int(_text(node.find("Year")) or "")
        month = _month(_text(node.find("Month")) or "1")
        day = int(_text(node.find("Day")) or 1)
    except ValueError:
        return None
    return f"{year:04d}{month:02d}{day:02d}"


def _month(text: str) -> int:
    if text.isdigit():
        return int(text)
    prefix = text[:3].title()
    if prefix not in _MONTHS:
        raise ValueError(f"bad month {text!r}")
    return _MONTHS.index(prefix) + 1


def _text(node: etree._Element | None) -> str | None:
    if node is None:
        return None
    text = " ".join("".join(cast("Iterable[str]", node.itertext())).split())
    return text or None

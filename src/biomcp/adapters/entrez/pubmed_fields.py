"""Readers of PubMed XML fields: flattened text, attributes, and dates (`PubDate` and
History timestamps), shared by the article parser (`pubmed_xml`)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import cast

from lxml import etree

from biomcp.domain.records import PubDate, utc

__all__ = [
    "date_revised",
    "entrez_date",
    "history_datetime",
    "month_number",
    "node_attr",
    "node_text",
    "node_texts",
    "node_yes",
    "pub_date",
]

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def node_text(node: etree._Element | None) -> str | None:
    """The node's full text in document order (inline markup flattened), whitespace collapsed;
    None when absent or blank."""
    if node is None:
        return None
    # Most elements hold plain text: skip the itertext generator for them (a hot path).
    raw = node.text if len(node) == 0 else "".join(cast("Iterable[str]", node.itertext()))
    if not raw:
        return None
    return " ".join(raw.split()) or None


def node_texts(nodes: Iterable[etree._Element]) -> tuple[str, ...]:
    return tuple(t for t in (node_text(n) for n in nodes) if t)


def node_attr(node: etree._Element, name: str) -> str | None:
    value = node.get(name)
    if value is None:
        return None
    return value.strip() or None


def node_yes(node: etree._Element, name: str) -> bool:
    return (node.get(name) or "").strip().upper() == "Y"


def pub_date(node: etree._Element) -> PubDate | None:
    medline = node_text(node.find("MedlineDate"))
    year = node_text(node.find("Year"))
    if not year:
        return PubDate.parse(medline) if medline else None
    season = node_text(node.find("Season"))
    if season:
        return PubDate.parse(f"{year} {season}")
    month_text = node_text(node.find("Month"))
    day_text = node_text(node.find("Day"))
    if month_text is None:
        return PubDate(int(year))
    month = month_number(month_text)
    if month is None:  # e.g. "Mar-Apr" in a Month field: keep the source text
        return PubDate.parse(" ".join(p for p in (year, month_text, day_text) if p))
    return PubDate(int(year), month, int(day_text) if day_text else None)


def month_number(text: str | None) -> int | None:
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


def history_datetime(node: etree._Element) -> datetime:
    year = node_text(node.find("Year"))
    if not year:
        raise ValueError("no Year")
    month = month_number(node_text(node.find("Month")) or "1")
    if month is None:
        raise ValueError(f"bad Month {node_text(node.find('Month'))!r}")
    return utc(
        int(year),
        month,
        int(node_text(node.find("Day")) or 1),
        int(node_text(node.find("Hour")) or 0),
        int(node_text(node.find("Minute")) or 0),
    )


def entrez_date(pubmed_data: etree._Element | None) -> datetime | None:
    """History `entrez`, else `pubmed`; an unreadable `entrez` falls back to `pubmed` too."""
    if pubmed_data is None:
        return None
    errors: list[str] = []
    for status in ("entrez", "pubmed"):
        for node in pubmed_data.iterfind(f"History/PubMedPubDate[@PubStatus='{status}']"):
            try:
                return history_datetime(node)
            except ValueError as exc:
                errors.append(f"{status}: {exc}")
    if errors:
        raise ValueError("; ".join(errors))
    return None


def date_revised(citation: etree._Element) -> datetime | None:
    node = citation.find("DateRevised")
    if node is None:
        return None
    moment = history_datetime(node)
    return moment.replace(hour=0, minute=0)

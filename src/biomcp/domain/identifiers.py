"""Article identifiers: recognising a PMID, a PMCID (with its version) or a DOI in whatever form
a person or a model writes it, and the one normal form each is compared in.

Accepted forms (surrounding spaces ignored):

* PMID: `23193287`, `PMID:23193287`, `pmid 23193287` (digits, no leading zero, at most 10);
* PMCID: `PMC3531190`, `pmc3531190`, `PMC3531190.2` (the version after the dot is kept apart);
* DOI: `10.1093/nar/gks1195`, `doi:10.1093/...`, `https://doi.org/10.1093/...`,
  `http://dx.doi.org/10.1093/...` (compared case-insensitively, as DOIs are).

Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "ID_KINDS",
    "MAX_ID_CHARS",
    "ArticleId",
    "IdConversion",
    "IdKind",
    "doi_key",
    "group_by_kind",
    "parse_article_id",
    "parse_article_ids",
]

IdKind = Literal["pmid", "pmcid", "doi"]
ID_KINDS: tuple[IdKind, ...] = ("pmid", "pmcid", "doi")
#: The longest identifier read; DOIs are rarely over 100 characters.
MAX_ID_CHARS = 300

_PMID = re.compile(r"(?:pmid\s*:?\s*)?([1-9][0-9]{0,9})", re.IGNORECASE)
_PMCID = re.compile(r"(?:pmcid\s*:?\s*)?pmc\s*([1-9][0-9]{0,9})(?:\.([1-9][0-9]{0,3}))?", re.I)
_DOI_PREFIX = re.compile(r"^(?:doi\s*:\s*|https?://(?:dx\.)?doi\.org/|doi\.org/)", re.IGNORECASE)
_DOI = re.compile(r"10\.[0-9]{4,9}/\S+")


@dataclass(frozen=True, slots=True)
class ArticleId:
    """One identifier as given (`given`) and recognised: its `kind`, its normal `value`
    (PMID digits, `PMC` + digits, the bare DOI) and, for a versioned PMCID, its `version`."""

    given: str
    kind: IdKind
    value: str
    version: int | None = None

    @property
    def key(self) -> str:
        """What two spellings of the same identifier share (DOIs case-folded)."""
        return doi_key(self.value) if self.kind == "doi" else self.value

    @property
    def versioned(self) -> str | None:
        """`PMC3531190.2` for a PMCID given with a version, else None."""
        return f"{self.value}.{self.version}" if self.version is not None else None


@dataclass(frozen=True, slots=True)
class IdConversion:
    """One record of NCBI's ID converter: the id as it was sent (`requested_id`), the
    article's PMID, PMCID and DOI when it knows them, the PMCID's versions it lists, and its
    error message (`errmsg`) when it has no match."""

    requested_id: str
    pmid: str | None = None
    pmcid: str | None = None
    doi: str | None = None
    versions: tuple[str, ...] = ()
    error: str | None = None


def doi_key(doi: str) -> str:
    """A DOI in the form two spellings of it share: prefixes removed, case-folded."""
    return _DOI_PREFIX.sub("", doi.strip()).casefold()


def parse_article_id(text: str) -> ArticleId | None:
    """`text` recognised as a PMID, PMCID or DOI, or None when it is none of them."""
    given = text.strip()
    if not given or len(given) > MAX_ID_CHARS:
        return None
    if match := _PMID.fullmatch(given):
        return ArticleId(given, "pmid", match.group(1))
    if match := _PMCID.fullmatch(given):
        version = int(match.group(2)) if match.group(2) else None
        return ArticleId(given, "pmcid", f"PMC{match.group(1)}", version)
    bare = _DOI_PREFIX.sub("", given)
    if _DOI.fullmatch(bare):
        return ArticleId(given, "doi", bare)
    return None


def parse_article_ids(texts: Iterable[str]) -> tuple[list[ArticleId], list[str]]:
    """The identifiers recognised in `texts` (each distinct one once, in order) and the texts
    that are not identifiers (as given)."""
    found: dict[tuple[str, str], ArticleId] = {}
    invalid: list[str] = []
    for text in texts:
        parsed = parse_article_id(text)
        if parsed is None:
            invalid.append(text)
        else:
            found.setdefault((parsed.kind, parsed.key + f".{parsed.version or ''}"), parsed)
    return list(found.values()), invalid


def group_by_kind(ids: Sequence[ArticleId]) -> dict[IdKind, list[ArticleId]]:
    """`ids` by kind, in the order of `ID_KINDS` (NCBI's ID converter takes one kind per
    request)."""
    groups: dict[IdKind, list[ArticleId]] = {}
    for kind in ID_KINDS:
        members = [i for i in ids if i.kind == kind]
        if members:
            groups[kind] = members
    return groups

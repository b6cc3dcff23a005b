"""Full text from PubMed Central (`pubmed_fetch_fulltext`): PMIDs and PMCIDs to JATS articles
within a character budget.

PMIDs are mapped to PMCIDs through ELink (`pubmed_pmc`, one request for all of them); the
PMCIDs are fetched through EFetch `db=pmc` (one request); each requested id gets a status
(`biomcp.domain.fulltext`): `available`, `not_in_pmc`, `not_open_access`, `withdrawn` or
`upstream_error` (its ELink or EFetch failed, or its `<article>` could not be read). When
every id failed upstream the call fails with NCBI's error (the envelope's `UPSTREAM`,
`RATE_LIMIT`, `ENTREZ` or `TIMEOUT`): there is never an answer with nothing in it.

The budget: articles are rendered in the order asked; each takes what it needs of the call's
`max_chars` when its selected text fits what is left, else comes as an outline (sections with
their sizes) so the caller can ask again for the sections it wants. Asked-for references fill
what is left after a whole article; `referencesOmitted` counts those that did not fit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from biomcp.domain.fulltext import (
    FullTextArticle,
    FullTextStatus,
    article_status,
    cut,
    render_article,
)
from biomcp.ports.entrez import EntrezError
from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.fulltext_payloads import article_body
from biomcp.usecases.live.common import LiveContext, check_range, within_deadline

__all__ = ["MAX_FULLTEXT_IDS", "FullText"]

MAX_FULLTEXT_IDS = 10
MAX_CHARS = 100_000
MIN_CHARS = 1_000
MAX_SECTION_CHARS = 50_000
MIN_SECTION_CHARS = 200
MAX_FILTERS = 20
MAX_FILTER_CHARS = 200
_ID = re.compile(r"(?:PMC)?[0-9]{1,12}", re.IGNORECASE)
_PMC_ARTICLE_URL = "https://pmc.ncbi.nlm.nih.gov/articles/{pmcid}/"


@dataclass(slots=True)
class _Wanted:
    """One requested id and what was learned about it."""

    given: str
    pmid: str | None
    pmcid: str | None
    status: FullTextStatus | None = None
    message: str | None = None
    article: FullTextArticle | None = None
    error: EntrezError | None = None


class FullText:
    """`fetch_fulltext`: PMC open-access full text (JATS) for PMIDs and PMCIDs."""

    def __init__(self, context: LiveContext) -> None:
        self.context = context

    @within_deadline
    async def fetch_fulltext(
        self,
        ids: Sequence[str],
        *,
        sections: Sequence[str] = (),
        max_chars: int = 20_000,
        max_section_chars: int = 6_000,
        outline: bool = False,
        include_references: bool = False,
        include_captions: bool = True,
    ) -> dict[str, Any]:
        """Full text of up to `MAX_FULLTEXT_IDS` articles given by PMID (`123`) or PMCID
        (`PMC123`), with a status for every id (see the module docstring).

        Raises:
            InvalidRequestError: a bad id or bound.
            EntrezError: every id failed upstream (the first failure is raised).
        """
        wanted = _parse_ids(ids)
        check_range("maxChars", max_chars, MIN_CHARS, MAX_CHARS)
        check_range("maxSectionChars", max_section_chars, MIN_SECTION_CHARS, MAX_SECTION_CHARS)
        filters = _parse_filters(sections)
        urls: list[str] = []
        await self._map_pmids(wanted, urls)
        await self._fetch_articles(wanted, urls)
        failures = [w.error for w in wanted if w.error is not None]
        if failures and len(failures) == len(wanted):
            raise failures[0]
        used = 0
        shown: list[dict[str, Any]] = []
        for item in wanted:
            entry, cost = _entry(
                item,
                remaining=max_chars - used,
                max_section_chars=min(max_section_chars, max_chars),
                filters=filters,
                outline=outline,
                include_references=include_references,
                include_captions=include_captions,
            )
            used += cost
            shown.append(entry)
        return {
            "articles": shown,
            "maxChars": max_chars,
            "usedChars": used,
            "eutilsUrls": urls,
        }

    async def _map_pmids(self, wanted: list[_Wanted], urls: list[str]) -> None:
        """PMCIDs of the requested PMIDs, through ELink `pubmed_pmc` (one request)."""
        pmids = list(dict.fromkeys(w.pmid for w in wanted if w.pmcid is None and w.pmid))
        if not pmids:
            return
        params = [("dbfrom", "pubmed"), ("cmd", "neighbor"), ("linkname", "pubmed_pmc")]
        urls.append(self.context.url("elink", params + [("id", p) for p in pmids], db="pmc"))
        try:
            link_sets = await self.context.call(self.context.entrez.elink_pmc(pmids))
        except EntrezError as exc:
            for item in wanted:
                if item.pmcid is None:
                    item.status, item.message, item.error = "upstream_error", str(exc), exc
            return
        found: dict[str, str] = {}
        for link_set in link_sets:
            links = link_set.links.get("pubmed_pmc", ())
            for source in link_set.source_pmids:
                if links and source not in found:
                    found[source] = f"PMC{links[0].pmid}"
        for item in wanted:
            if item.pmcid is None and item.pmid is not None:
                if item.pmid in found:
                    item.pmcid = found[item.pmid]
                else:
                    item.status = "not_in_pmc"
                    item.message = f"PubMed links PMID {item.pmid} to no PMC article"

    async def _fetch_articles(self, wanted: list[_Wanted], urls: list[str]) -> None:
        """The JATS articles of the known PMCIDs, through EFetch `db=pmc` (one request)."""
        pmcids = list(dict.fromkeys(w.pmcid for w in wanted if w.status is None and w.pmcid))
        if not pmcids:
            return
        numeric = ",".join(p.removeprefix("PMC") for p in pmcids)
        urls.append(self.context.url("efetch", [("id", numeric), ("retmode", "xml")], db="pmc"))
        try:
            answer = await self.context.call(self.context.entrez.efetch_pmc(pmcids))
        except EntrezError as exc:
            for item in wanted:
                if item.status is None:
                    item.status, item.message, item.error = "upstream_error", str(exc), exc
            return
        by_id = {a.pmcid: a for a in answer.articles}
        for item in wanted:
            if item.status is not None or item.pmcid is None:
                continue
            article = by_id.get(item.pmcid)
            if item.pmcid in answer.problems:
                item.status, item.message = "upstream_error", answer.problems[item.pmcid]
            elif article is None:
                item.status = "not_in_pmc"
                item.message = f"PMC returned no article for {item.pmcid}"
            else:
                item.article = article
                item.pmid = item.pmid or article.pmid
                item.status = article_status(article)
                item.message = _status_message(item.status, article)


# --- arguments -----------------------------------------------------------------------------


def _parse_ids(ids: Sequence[str]) -> list[_Wanted]:
    if isinstance(ids, str) or not isinstance(ids, Sequence) or not ids:
        raise InvalidRequestError(
            f"ids must be a list of 1 to {MAX_FULLTEXT_IDS} PMIDs or PMCIDs",
            details={"field": "ids"},
        )
    if len(ids) > MAX_FULLTEXT_IDS:
        raise InvalidRequestError(
            f"ids holds {len(ids)} ids; at most {MAX_FULLTEXT_IDS} per call",
            details={"field": "ids", "max": MAX_FULLTEXT_IDS},
        )
    wanted: dict[str, _Wanted] = {}
    for raw in ids:
        text = raw.strip() if isinstance(raw, str) else ""
        if not _ID.fullmatch(text):
            raise InvalidRequestError(
                f"{str(raw)[:40]!r} is neither a PMID (digits) nor a PMCID (PMC + digits)",
                details={"field": "ids", "value": str(raw)[:40]},
            )
        if text[:3].upper() == "PMC":
            key = f"PMC{int(text[3:])}"
            wanted.setdefault(key, _Wanted(key, None, key))
        else:
            key = str(int(text))
            wanted.setdefault(key, _Wanted(key, key, None))
    return list(wanted.values())


def _parse_filters(sections: Sequence[str]) -> list[str]:
    if isinstance(sections, str) or len(sections) > MAX_FILTERS:
        raise InvalidRequestError(
            f"sections must be a list of at most {MAX_FILTERS} titles or types",
            details={"field": "sections"},
        )
    found: list[str] = []
    for name in sections:
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_FILTER_CHARS:
            raise InvalidRequestError(
                f"each section filter is a title word or a type of 1 to {MAX_FILTER_CHARS} "
                "characters",
                details={"field": "sections"},
            )
        found.append(name.strip())
    return found


# --- answers -------------------------------------------------------------------------------


def _status_message(status: FullTextStatus, article: FullTextArticle) -> str | None:
    if status == "not_open_access":
        return (
            f"{article.pmcid} is in PMC but its publisher does not allow the full text to be "
            "downloaded: only its front matter is given"
        )
    if status == "withdrawn":
        return f"{article.pmcid} was withdrawn from PMC"
    return None


def _entry(
    item: _Wanted,
    *,
    remaining: int,
    max_section_chars: int,
    filters: Sequence[str],
    outline: bool,
    include_references: bool,
    include_captions: bool,
) -> tuple[dict[str, Any], int]:
    """One article's part of the answer, and the characters of text it used."""
    entry: dict[str, Any] = {"id": item.given, "status": item.status or "upstream_error"}
    article = item.article
    for key, value in (("pmid", item.pmid), ("pmcid", item.pmcid), ("message", item.message)):
        if value:
            entry[key] = value
    if article is None:
        return entry, 0
    entry.update(_front(article))
    if item.status == "not_open_access":  # the front matter PMC gives: its abstract, if it fits
        abstract, _ = cut(article.abstract, max_section_chars)
        if abstract and len(abstract) <= remaining:
            entry["abstract"] = abstract
            return entry, len(abstract)
    if item.status != "available":
        return entry, 0
    rendered = render_article(
        article,
        remaining=max(0, remaining),
        max_section_chars=max_section_chars,
        section_filter=filters,
        outline=outline,
        include_references=include_references,
        include_captions=include_captions,
    )
    entry.update(article_body(article, rendered))
    return entry, rendered.used


def _front(article: FullTextArticle) -> dict[str, Any]:
    front: dict[str, Any] = {
        "title": article.title,
        "journal": article.journal,
        "year": article.year,
        "articleType": article.article_type,
        "doi": article.doi,
        "access": article.access,
        "url": _PMC_ARTICLE_URL.format(pmcid=article.pmcid),
    }
    if article.license is not None:
        license_ = {
            "url": article.license.url,
            "type": article.license.type,
            "text": article.license.text,
        }
        front["license"] = {k: v for k, v in license_.items() if v}
    return {k: v for k, v in front.items() if v}

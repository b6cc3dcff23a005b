"""The EntrezClient adapter: NCBI E-utilities over httpx, polite and resilient.

* Every request carries `db`, `tool`, `email` and, when configured, `api_key`; the key is
  redacted from every log line (`redaction`) and error message the client (or httpx)
  produces. Sending, retrying and error mapping are `caller.EutilsCaller`'s.
* Requests wait for the process-wide rate limit (`ratelimit.shared_limiter`).
* Answers are streamed and read within `max_response_bytes` (NCBI_MAX_RESPONSE_MB), counted
  both as received and once decompressed (`body.read_bounded`): a larger answer, or a gzip
  bomb, is refused as soon as a count passes the limit, the connection is dropped, and the
  call fails with `EntrezResponseError` at once (the same request would get the same answer).
* 429, 5xx, timeouts, connection failures, NCBI "backend failed" payloads and unreadable 200
  answers (HTML pages, XML without its closing root, MEDLINE text whose last record lacks its
  end, a compressed stream cut short) are retried with exponential backoff and jitter,
  honouring `Retry-After`, up to `max_retries` retries and within `deadline_s`; then they
  surface as the port's typed errors (an answer still cut short: `EntrezResponseError`). No
  httpx or lxml exception leaves this module, and nothing cut short is returned, so nothing
  cut short can be cached.
* EFetch goes in batches, by POST when a batch holds more than `post_threshold` ids.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import httpx

from biomcp import __version__
from biomcp.adapters.entrez.bisection import enumerate_window
from biomcp.adapters.entrez.budget import budget_file, budget_identity
from biomcp.adapters.entrez.budget_sql import SqlBudget
from biomcp.adapters.entrez.caller import ClientStats, EutilsCaller
from biomcp.adapters.entrez.eutils_xml import (
    parse_einfo,
    parse_elink,
    parse_esearch,
    parse_espell,
    parse_esummary,
)
from biomcp.adapters.entrez.jats import parse_pmc_articles
from biomcp.adapters.entrez.lookups import IDCONV_MAX_IDS, parse_ecitmatch, parse_idconv
from biomcp.adapters.entrez.medline import read_medline_text
from biomcp.adapters.entrez.mesh_xml import parse_mesh_summaries
from biomcp.adapters.entrez.pubmed_xml import parse_pubmed_articles
from biomcp.adapters.entrez.ratelimit import RateLimiter, shared_limiter
from biomcp.adapters.entrez.redaction import install_redaction
from biomcp.adapters.entrez.splitting import split_article_xml
from biomcp.domain.citematch import CitMatchAnswer
from biomcp.domain.fulltext import PmcArticleSet
from biomcp.domain.identifiers import IdConversion, IdKind
from biomcp.domain.mesh import MeshDescriptor
from biomcp.ports.entrez import (
    ESEARCH_ID_CAP,
    DatabaseInfo,
    DateType,
    DocSummary,
    EntrezRequestError,
    FetchResult,
    LinkSet,
    SearchResult,
    WindowEnumeration,
)

__all__ = ["DEFAULT_BASE_URL", "EntrezSettings", "HttpEntrezClient"]

DEFAULT_BASE_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
DEFAULT_IDCONV_URL = "https://pmc.ncbi.nlm.nih.gov/tools/idconv/api/v1/articles/"
#: The default largest answer, received or decompressed, in MiB. The largest answers the
#: client asks for are EFetch batches of 500 PubMed records: about 5 MiB for ordinary records
#: (some 10 KiB each), 30 to 50 MiB for 500 reviews with long reference lists. 64 MiB lets
#: those through while bounding what one answer may cost: the body, then lxml's tree of it
#: (a few times its size), a few hundred MiB at worst instead of whatever the wire sends.
DEFAULT_MAX_RESPONSE_MB = 64
_MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class EntrezSettings:
    """Plain values the adapter needs (the application settings object fills them in)."""

    base_url: str = DEFAULT_BASE_URL
    #: NCBI's PMC ID converter (NCBI_IDCONV_BASE_URL); not an E-utility, same identity rules.
    idconv_base_url: str = DEFAULT_IDCONV_URL
    api_key: str | None = None
    tool: str = f"bio-mcp/{__version__}"
    email: str | None = None
    request_delay_ms: int = 0
    max_retries: int = 3
    timeout_s: float = 30.0
    deadline_s: float = 120.0
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 16.0
    retry_after_max_s: float = 60.0
    fetch_batch_size: int = 500
    post_threshold: int = 200
    fetch_concurrency: int = 3
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_MB * _MIB
    #: The folder whose budget file every local process shares (None: this process alone).
    budget_dir: Path | None = None
    #: A PostgreSQL database whose budget table every replica shares; used instead of
    #: `budget_dir` when set (never shown: the URL may hold a password).
    budget_database_url: str | None = None

    def __repr__(self) -> str:
        # Never print the key, even in a traceback's locals.
        key = "***" if self.api_key else None
        return f"EntrezSettings(base_url={self.base_url!r}, api_key={key!r}, tool={self.tool!r})"


def _ncbi_date(day: date) -> str:
    return f"{day.year:04d}/{day.month:02d}/{day.day:02d}"


def _batches(items: Sequence[str], size: int) -> list[list[str]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(i.strip() for i in items if i and i.strip()))


class HttpEntrezClient:
    """EntrezClient over httpx. Create one per process; close it with `aclose()`.

    The httpx client is created lazily on the first request, so constructing this object
    connects to nothing.
    """

    def __init__(
        self,
        settings: EntrezSettings | None = None,
        *,
        limiter: RateLimiter | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.settings = settings or EntrezSettings()
        self._base = self.settings.base_url.rstrip("/")
        self._limiter = limiter or shared_limiter(
            self._base,
            has_api_key=bool(self.settings.api_key),
            min_interval_s=self.settings.request_delay_ms / 1000,
            budget=self._budget(),
        )
        self.stats = ClientStats()
        self._caller = EutilsCaller(self.settings, self._limiter, self.stats, transport)
        if self.settings.api_key:
            install_redaction([self.settings.api_key])

    # --- plumbing ------------------------------------------------------------------------

    def _budget(self) -> Path | SqlBudget | None:
        """Where this identity's budget is shared: the database, else the folder, else nowhere."""
        key = self.settings.api_key
        if self.settings.budget_database_url:
            return SqlBudget(self.settings.budget_database_url, budget_identity(self._base, key))
        if self.settings.budget_dir is not None:
            return budget_file(self.settings.budget_dir, self._base, key)
        return None

    @property
    def queue_length(self) -> int:
        return self._limiter.queue_length

    async def aclose(self) -> None:
        await self._caller.aclose()

    def redact(self, text: str) -> str:
        """`text` with the API key (plain or URL-encoded) replaced by `***`."""
        return self._caller.redact(text)

    # --- ESearch -------------------------------------------------------------------------

    async def esearch(
        self,
        term: str,
        *,
        datetype: DateType | None = None,
        mindate: str | None = None,
        maxdate: str | None = None,
        retstart: int = 0,
        retmax: int = 20,
        sort: str | None = None,
        usehistory: bool = False,
        webenv: str | None = None,
    ) -> SearchResult:
        if not term.strip():
            raise EntrezRequestError("ESearch needs a non-empty term")
        params = [("term", term), ("retstart", str(retstart)), ("retmax", str(retmax))]
        if datetype:
            params.append(("datetype", datetype))
        if mindate:
            params.append(("mindate", mindate))
        if maxdate:
            params.append(("maxdate", maxdate))
        if sort:
            params.append(("sort", sort))
        if usehistory:
            params.append(("usehistory", "y"))
        if webenv:
            params.append(("WebEnv", webenv))
        return await self._caller.call("esearch", params, parse_esearch, post=len(term) > 1500)

    async def esearch_delta(
        self, term: str, mindate: date, maxdate: date, datetype: DateType = "edat"
    ) -> WindowEnumeration:
        async def search(query: str, lo: date, hi: date) -> SearchResult:
            return await self.esearch(
                query,
                datetype=datetype,
                mindate=_ncbi_date(lo),
                maxdate=_ncbi_date(hi),
                retmax=ESEARCH_ID_CAP,
            )

        return await enumerate_window(search, term, mindate, maxdate)

    # --- EFetch --------------------------------------------------------------------------

    def _id_params(self, pmids: Sequence[str]) -> tuple[list[tuple[str, str]], bool]:
        return [("id", ",".join(pmids))], len(pmids) > self.settings.post_threshold

    async def efetch(self, pmids: Sequence[str]) -> FetchResult:
        wanted = _unique(pmids)
        if not wanted:
            return FetchResult(records=())
        semaphore = asyncio.Semaphore(max(1, self.settings.fetch_concurrency))

        async def one(batch: list[str]) -> FetchResult:
            async with semaphore:
                params, post = self._id_params(batch)
                params += [("retmode", "xml")]
                parsed = await self._caller.call("efetch", params, parse_pubmed_articles, post=post)
                return FetchResult(
                    parsed.records, (), parsed.book_pmids, parsed.deleted_pmids, parsed.problems
                )

        parts = await asyncio.gather(
            *(one(b) for b in _batches(wanted, self.settings.fetch_batch_size))
        )
        return _merge_fetches(parts, wanted)

    async def efetch_history(
        self, webenv: str, query_key: str, retstart: int = 0, retmax: int = 500
    ) -> FetchResult:
        params = [
            ("WebEnv", webenv),
            ("query_key", query_key),
            ("retstart", str(retstart)),
            ("retmax", str(retmax)),
            ("retmode", "xml"),
        ]
        parsed = await self._caller.call("efetch", params, parse_pubmed_articles)
        return FetchResult(
            parsed.records, (), parsed.book_pmids, parsed.deleted_pmids, parsed.problems
        )

    async def efetch_xml(self, pmids: Sequence[str]) -> bytes:
        wanted = _unique(pmids)
        if not wanted:
            raise EntrezRequestError("EFetch needs at least one PMID")
        params, post = self._id_params(wanted)

        def checked(body: bytes) -> bytes:
            parse_pubmed_articles(body)  # refuses HTML, truncation, error payloads
            return body

        return await self._caller.call("efetch", [*params, ("retmode", "xml")], checked, post=post)

    async def efetch_xml_articles(self, pmids: Sequence[str]) -> dict[str, str]:
        return split_article_xml(await self.efetch_xml(pmids))

    async def efetch_medline(self, pmids: Sequence[str]) -> str:
        wanted = _unique(pmids)
        if not wanted:
            raise EntrezRequestError("EFetch needs at least one PMID")
        params, post = self._id_params(wanted)
        params += [("rettype", "medline"), ("retmode", "text")]
        return await self._caller.call("efetch", params, read_medline_text, post=post)

    # --- ESummary, ELink, EInfo ----------------------------------------------------------

    async def esummary(
        self,
        pmids: Sequence[str] = (),
        *,
        webenv: str | None = None,
        query_key: str | None = None,
        retstart: int = 0,
        retmax: int = 20,
    ) -> tuple[DocSummary, ...]:
        params: list[tuple[str, str]] = [("version", "2.0")]
        post = False
        wanted = _unique(pmids)
        if wanted:
            id_params, post = self._id_params(wanted)
            params += id_params
        elif webenv and query_key:
            params += [
                ("WebEnv", webenv),
                ("query_key", query_key),
                ("retstart", str(retstart)),
                ("retmax", str(retmax)),
            ]
        else:
            raise EntrezRequestError("ESummary needs PMIDs or a WebEnv and query_key")
        return await self._caller.call("esummary", params, parse_esummary, post=post)

    async def elink(
        self,
        pmids: Sequence[str],
        *,
        linkname: str = "pubmed_pubmed",
        with_scores: bool = True,
    ) -> tuple[LinkSet, ...]:
        wanted = _unique(pmids)
        if not wanted:
            raise EntrezRequestError("ELink needs at least one PMID")
        cmd = "neighbor_score" if with_scores and linkname == "pubmed_pubmed" else "neighbor"
        params = [("dbfrom", "pubmed"), ("cmd", cmd), ("linkname", linkname)]
        params += [("id", pmid) for pmid in wanted]
        return await self._caller.call("elink", params, parse_elink, post=len(wanted) > 100)

    async def einfo(self, db: str = "pubmed") -> DatabaseInfo:
        return await self._caller.call("einfo", [], parse_einfo, db=db)

    async def espell(self, term: str) -> str | None:
        if not term.strip():
            raise EntrezRequestError("ESpell needs a non-empty term")
        return await self._caller.call(
            "espell", [("term", term)], parse_espell, post=len(term) > 1500
        )

    async def mesh_search(self, term: str, *, retmax: int = 20) -> SearchResult:
        if not term.strip():
            raise EntrezRequestError("ESearch needs a non-empty term")
        params = [("term", term), ("retstart", "0"), ("retmax", str(retmax))]
        return await self._caller.call("esearch", params, parse_esearch, db="mesh")

    async def mesh_summaries(self, uids: Sequence[str]) -> tuple[MeshDescriptor, ...]:
        wanted = _unique(uids)
        if not wanted:
            raise EntrezRequestError("ESummary needs at least one MeSH UID")
        params = [("version", "2.0"), ("id", ",".join(wanted))]
        return await self._caller.call("esummary", params, parse_mesh_summaries, db="mesh")

    # --- lookups: the PMC ID converter and ECitMatch (not .fcgi E-utilities) --------------

    async def idconv(self, ids: Sequence[str], *, idtype: IdKind) -> tuple[IdConversion, ...]:
        wanted = _unique(ids)
        if not wanted:
            raise EntrezRequestError("the ID converter needs at least one id")
        if len(wanted) > IDCONV_MAX_IDS:
            raise EntrezRequestError(f"the ID converter takes at most {IDCONV_MAX_IDS} ids")
        params = [("ids", ",".join(wanted)), ("idtype", idtype), ("format", "json")]
        url = self.settings.idconv_base_url
        return await self._caller.call("idconv", params, parse_idconv, db=None, url=url)

    async def ecitmatch(self, lines: Sequence[str]) -> tuple[CitMatchAnswer, ...]:
        wanted = [line.strip() for line in lines if line.strip()]
        if not wanted:
            raise EntrezRequestError("ECitMatch needs at least one citation line")
        keys = [line.split("|")[5] if line.count("|") >= 6 else "" for line in wanted]
        if not all(keys):
            raise EntrezRequestError("every ECitMatch line needs six |-separated fields")
        bdata = "\r".join(wanted)
        return await self._caller.call(
            "ecitmatch",
            [("retmode", "xml"), ("bdata", bdata)],
            lambda body: parse_ecitmatch(body, keys),
            post=len(bdata) > 1500,
            url=f"{self._base}/ecitmatch.cgi",
        )

    # --- PMC full text (pubmed_fetch_fulltext) -------------------------------------------

    async def elink_pmc(self, pmids: Sequence[str]) -> tuple[LinkSet, ...]:
        wanted = _unique(pmids)
        if not wanted:
            raise EntrezRequestError("ELink needs at least one PMID")
        params = [("dbfrom", "pubmed"), ("cmd", "neighbor"), ("linkname", "pubmed_pmc")]
        params += [("id", pmid) for pmid in wanted]
        return await self._caller.call(
            "elink", params, parse_elink, post=len(wanted) > 100, db="pmc"
        )

    async def efetch_pmc(self, pmcids: Sequence[str]) -> PmcArticleSet:
        wanted = _unique(i.upper().removeprefix("PMC") for i in pmcids)
        if not wanted:
            raise EntrezRequestError("EFetch needs at least one PMC id")
        params = [("id", ",".join(wanted)), ("retmode", "xml")]
        return await self._caller.call(
            "efetch", params, parse_pmc_articles, post=len(wanted) > 200, db="pmc"
        )


def _merge_fetches(parts: Sequence[FetchResult], wanted: Sequence[str]) -> FetchResult:
    records = [r for p in parts for r in p.records]
    books = [b for p in parts for b in p.book_pmids]
    deleted = [d for p in parts for d in p.deleted_pmids]
    seen = {r.pmid for r in records} | set(books) | set(deleted)
    return FetchResult(
        records=tuple(records),
        missing=tuple(p for p in wanted if p not in seen),
        book_pmids=tuple(books),
        deleted_pmids=tuple(deleted),
        problems=tuple(x for p in parts for x in p.problems),
    )

"""A response cache for EFetch and EInfo in front of any `EntrezClient`.

`CachingEntrezClient(inner, path, ttl_s=..., max_bytes=...)` is an `EntrezClient` itself. It
keeps, in one SQLite file (`cache_sqlite`), or in a PostgreSQL table that replicas share
(`cache_pg`), any `EntrezCacheStore`:

* each PubMed article's XML by PMID, shared by `efetch` (parsed records) and `efetch_xml`
  (the raw set), so fetching the same PMIDs again, in either form, asks NCBI for nothing;
* each article's MEDLINE text by PMID (`efetch_medline`);
* EInfo answers by database (`einfo`).

Only the PMIDs not cached (or expired) are requested, in one EFetch per 500. An entry lives
`ttl_s` seconds; when the store outgrows `max_bytes`, the oldest entries are evicted first.
Entries are keyed by `namespace` too (the E-utilities base URL), so pointing the server at
another NCBI never serves the first one's answers. PMIDs NCBI did not return are not cached:
the next call asks again. ESearch, ESummary, ELink and history-server fetches pass through, as
their answers change from day to day.

Nothing cut short is ever stored: articles come from a parsed `<PubmedArticleSet>` (XML without
its closing root does not parse), and a MEDLINE record is stored only when it ends with its
`SO` line (`medline.incomplete_medline`), whatever the inner client let through.

Cached sets are reassembled as `<PubmedArticleSet>` documents without NCBI's DOCTYPE line, so a
set is the same whether it came from NCBI or from the cache. The cache never makes a call fail:
when the store cannot be read or written, a warning is logged and NCBI is asked. The inner
client's errors pass through unchanged.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path
from typing import Any, Protocol

from biomcp.adapters.entrez.cache_sqlite import SqliteEntrezCache
from biomcp.adapters.entrez.medline import incomplete_medline
from biomcp.adapters.entrez.pubmed_xml import parse_pubmed_articles
from biomcp.adapters.entrez.splitting import split_article_set, split_article_xml, split_medline
from biomcp.domain.citematch import CitMatchAnswer
from biomcp.domain.fulltext import PmcArticleSet
from biomcp.domain.identifiers import IdConversion, IdKind
from biomcp.domain.mesh import MeshDescriptor
from biomcp.ports.entrez import (
    DatabaseInfo,
    DateType,
    DocSummary,
    EntrezClient,
    EntrezRequestError,
    EntrezResponseError,
    FetchResult,
    FieldInfo,
    LinkInfo,
    LinkSet,
    SearchResult,
    WindowEnumeration,
)

__all__ = ["CacheStats", "CachingEntrezClient", "EntrezCacheStore"]

_log = logging.getLogger("biomcp.entrez.cache")

_ARTICLE = "article"
_MEDLINE = "medline"
_EINFO = "einfo"
_BATCH = 500
_SET_HEAD = b'<?xml version="1.0" encoding="UTF-8"?>\n<PubmedArticleSet>\n'
_SET_TAIL = b"\n</PubmedArticleSet>\n"


class EntrezCacheStore(Protocol):
    """Where `CachingEntrezClient` keeps its entries, each keyed by (namespace, kind, key).

    A store never raises: when it cannot be read or written it logs a warning and answers
    as if empty (a miss, nothing stored). It keeps the total size of its bodies within its own
    bound, the oldest going first, and drops entries past its time to live.
    """

    #: Where the entries are, for warnings (a file's path, or "in the database").
    where: str

    def lookup(self, ns: str, kind: str, keys: Sequence[str], oldest: float) -> dict[str, bytes]:
        """The bodies of `keys` stored at `oldest` or later (expired ones may be dropped)."""
        ...

    def write(self, ns: str, kind: str, bodies: Mapping[str, bytes], now: float) -> tuple[int, int]:
        """Store `bodies` as of `now`, replacing older ones; (rows stored, rows evicted)."""
        ...

    def delete(self, ns: str, kind: str, keys: Sequence[str]) -> None:
        """Forget the entries of `keys`."""
        ...

    def count(self) -> int:
        """The number of entries held (every namespace, fresh or not)."""
        ...

    def size_bytes(self) -> int:
        """What the bodies weigh in all (every namespace)."""
        ...

    def clear(self) -> None:
        """Forget every entry (every namespace)."""
        ...

    def close(self) -> None:
        """Release the connection (idempotent; the next call opens another)."""
        ...


@dataclass(slots=True)
class CacheStats:
    """What the cache did since it was created: entries answered from the store (`hits`),
    entries asked of NCBI (`misses`), entries written and evicted."""

    hits: int = 0
    misses: int = 0
    stored: int = 0
    evicted: int = 0


class CachingEntrezClient:
    """`EntrezClient` answering EFetch and EInfo from its cache when it can.

    Args:
        inner: the client that asks NCBI.
        cache_path: the SQLite file (created with its parent folders on first use), or a
            store of entries (a shared one keeps the bound it was built with).
        ttl_s: seconds an entry stays fresh; 0 or less disables the cache (every call passes
            through).
        max_bytes: the most the cached bodies may weigh in all; the oldest go first.
        namespace: what keeps answers of different NCBI servers apart (the base URL).
        clock: seconds since the epoch (tests pass their own).
    """

    def __init__(
        self,
        inner: EntrezClient,
        cache_path: Path | str | EntrezCacheStore,
        *,
        ttl_s: float = 86_400.0,
        max_bytes: int = 256 * 1024 * 1024,
        namespace: str = "",
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_bytes < 0:
            raise ValueError("max_bytes must be >= 0")
        self.inner = inner
        self.ttl_s = float(ttl_s)
        self.max_bytes = int(max_bytes)
        self.namespace = namespace
        self.cache_stats = CacheStats()
        self._clock = clock
        if isinstance(cache_path, str | Path):
            cache_path = SqliteEntrezCache(cache_path, ttl_s=self.ttl_s, max_bytes=self.max_bytes)
        self.store: EntrezCacheStore = cache_path

    @property
    def cache_path(self) -> Path:
        """The SQLite file of the cache.

        Raises:
            AttributeError: the cache is not a file (a shared store).
        """
        if not isinstance(self.store, SqliteEntrezCache):
            raise AttributeError(f"{self.store!r} is not a file")
        return self.store.path

    @property
    def enabled(self) -> bool:
        return self.ttl_s > 0 and self.max_bytes > 0

    # -- what status pages read from the inner client ------------------------------------------

    @property
    def stats(self) -> Any:
        """The inner client's request statistics (None when it keeps none)."""
        return getattr(self.inner, "stats", None)

    @property
    def queue_length(self) -> int:
        return int(getattr(self.inner, "queue_length", 0) or 0)

    # -- pass-through calls --------------------------------------------------------------------

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
    ) -> SearchResult:
        return await self.inner.esearch(
            term,
            datetype=datetype,
            mindate=mindate,
            maxdate=maxdate,
            retstart=retstart,
            retmax=retmax,
            sort=sort,
            usehistory=usehistory,
        )

    async def esearch_delta(
        self, term: str, mindate: date, maxdate: date, datetype: DateType = "edat"
    ) -> WindowEnumeration:
        return await self.inner.esearch_delta(term, mindate, maxdate, datetype)

    async def efetch_history(
        self, webenv: str, query_key: str, retstart: int = 0, retmax: int = 500
    ) -> FetchResult:
        return await self.inner.efetch_history(webenv, query_key, retstart, retmax)

    async def esummary(
        self,
        pmids: Sequence[str] = (),
        *,
        webenv: str | None = None,
        query_key: str | None = None,
        retstart: int = 0,
        retmax: int = 20,
    ) -> tuple[DocSummary, ...]:
        return await self.inner.esummary(
            pmids, webenv=webenv, query_key=query_key, retstart=retstart, retmax=retmax
        )

    async def elink(
        self,
        pmids: Sequence[str],
        *,
        linkname: str = "pubmed_pubmed",
        with_scores: bool = True,
    ) -> tuple[LinkSet, ...]:
        return await self.inner.elink(pmids, linkname=linkname, with_scores=with_scores)

    async def aclose(self) -> None:
        """Close the store's connection, then the inner client."""
        self.close()
        await self.inner.aclose()

    # -- cached calls --------------------------------------------------------------------------

    async def efetch(self, pmids: Sequence[str]) -> FetchResult:
        if not self.enabled:
            return await self.inner.efetch(pmids)
        wanted = _unique(pmids)
        if not wanted:
            return FetchResult(records=())
        found, deleted = await self._articles(wanted)
        try:
            parsed = parse_pubmed_articles(_assemble(found[p] for p in wanted if p in found))
        except EntrezResponseError as exc:  # a damaged entry: forget it and ask NCBI
            _log.warning("NCBI cache %s: unreadable cached articles (%s)", self.store.where, exc)
            await asyncio.to_thread(self.store.delete, self.namespace, _ARTICLE, list(found))
            return await self.inner.efetch(wanted)
        seen = {r.pmid for r in parsed.records} | set(parsed.book_pmids) | set(deleted)
        return FetchResult(
            records=parsed.records,
            missing=tuple(p for p in wanted if p not in seen),
            book_pmids=parsed.book_pmids,
            deleted_pmids=tuple(deleted),
            problems=parsed.problems,
        )

    async def efetch_xml(self, pmids: Sequence[str]) -> bytes:
        if not self.enabled:
            return await self.inner.efetch_xml(pmids)
        wanted = _unique(pmids)
        if not wanted:
            raise EntrezRequestError("EFetch needs at least one PMID")
        found, _ = await self._articles(wanted)
        return _assemble(found[p] for p in wanted if p in found)

    async def efetch_xml_articles(self, pmids: Sequence[str]) -> dict[str, str]:
        return split_article_xml(await self.efetch_xml(pmids))

    async def efetch_medline(self, pmids: Sequence[str]) -> str:
        if not self.enabled:
            return await self.inner.efetch_medline(pmids)
        wanted = _unique(pmids)
        if not wanted:
            raise EntrezRequestError("EFetch needs at least one PMID")
        cached = await asyncio.to_thread(self._lookup, _MEDLINE, wanted)
        found = {key: body.decode("utf-8") for key, body in cached.items()}
        misses = [p for p in wanted if p not in found]
        for batch in _batches(misses, _BATCH):
            text = await self.inner.efetch_medline(batch)
            fresh = split_medline(text)
            found.update(fresh)
            whole = {k: v for k, v in fresh.items() if incomplete_medline(v) is None}
            if len(whole) < len(fresh):
                _log.warning(
                    "NCBI cache %s: %d MEDLINE record(s) cut short, not cached",
                    self.store.where,
                    len(fresh) - len(whole),
                )
            await self._store(_MEDLINE, {k: v.encode("utf-8") for k, v in whole.items()})
        self._count(len(wanted) - len(misses), len(misses))
        records = [found[p] for p in wanted if p in found]
        return "\n" + "\n\n".join(records) + "\n" if records else "\n"

    async def einfo(self, db: str = "pubmed") -> DatabaseInfo:
        if not self.enabled:
            return await self.inner.einfo(db)
        cached = await asyncio.to_thread(self._lookup, _EINFO, [db])
        if db in cached:
            try:
                info = _database_info(json.loads(cached[db]))
            except (ValueError, TypeError, KeyError) as exc:
                _log.warning("NCBI cache %s: unreadable EInfo entry (%s)", self.store.where, exc)
            else:
                self._count(1, 0)
                return info
        info = await self.inner.einfo(db)
        self._count(0, 1)
        await self._store(_EINFO, {db: json.dumps(asdict(info)).encode("utf-8")})
        return info

    # -- housekeeping --------------------------------------------------------------------------

    def __len__(self) -> int:
        """The number of entries held (every namespace, fresh or not)."""
        return self.store.count()

    def size_bytes(self) -> int:
        """What the cached bodies weigh in all (every namespace)."""
        return self.store.size_bytes()

    def clear(self) -> None:
        """Forget every entry (every namespace)."""
        self.store.clear()

    def close(self) -> None:
        """Close the store's connection (idempotent; the next call reopens it)."""
        self.store.close()

    def __repr__(self) -> str:
        return f"CachingEntrezClient({self.inner!r}, {self.store!r}, ttl_s={self.ttl_s})"

    # -- internals -----------------------------------------------------------------------------

    def _count(self, hits: int, misses: int) -> None:
        self.cache_stats.hits += hits
        self.cache_stats.misses += misses

    async def _articles(self, wanted: list[str]) -> tuple[dict[str, bytes], list[str]]:
        """The article XML of every PMID of `wanted` that PubMed has (cached or fetched now),
        and the PMIDs NCBI reported deleted."""
        found = await asyncio.to_thread(self._lookup, _ARTICLE, wanted)
        misses = [p for p in wanted if p not in found]
        deleted: list[str] = []
        for batch in _batches(misses, _BATCH):
            fresh, gone = split_article_set(await self.inner.efetch_xml(batch))
            found.update(fresh)
            deleted += gone
            await self._store(_ARTICLE, fresh)
        self._count(len(wanted) - len(misses), len(misses))
        return found, deleted

    async def _store(self, kind: str, bodies: dict[str, bytes]) -> None:
        kept = {key: body for key, body in bodies.items() if len(body) <= self.max_bytes}
        if kept:
            stored, evicted = await asyncio.to_thread(
                self.store.write, self.namespace, kind, kept, self._clock()
            )
            self.cache_stats.stored += stored
            self.cache_stats.evicted += evicted

    def _connection(self) -> sqlite3.Connection | None:
        """The SQLite connection; None when the file is unusable or the store is not a file."""
        connection = getattr(self.store, "connection", None)
        return connection() if connection is not None else None

    def _lookup(self, kind: str, keys: Sequence[str]) -> dict[str, bytes]:
        """The fresh entries of `keys`."""
        oldest = self._clock() - self.ttl_s
        return self.store.lookup(self.namespace, kind, keys, oldest)

    async def espell(self, term: str) -> str | None:
        """Passes through: spelling suggestions are not cached."""
        return await self.inner.espell(term)

    async def mesh_search(self, term: str, *, retmax: int = 20) -> SearchResult:
        """Passes through: MeSH lookups are small and rare."""
        return await self.inner.mesh_search(term, retmax=retmax)

    async def mesh_summaries(self, uids: Sequence[str]) -> tuple[MeshDescriptor, ...]:
        """Passes through: MeSH lookups are small and rare."""
        return await self.inner.mesh_summaries(uids)

    async def idconv(self, ids: Sequence[str], *, idtype: IdKind) -> tuple[IdConversion, ...]:
        """Passes through: identifier conversions are not cached."""
        return await self.inner.idconv(ids, idtype=idtype)

    async def ecitmatch(self, lines: Sequence[str]) -> tuple[CitMatchAnswer, ...]:
        """Passes through: citation matches are not cached."""
        return await self.inner.ecitmatch(lines)

    async def elink_pmc(self, pmids: Sequence[str]) -> tuple[LinkSet, ...]:
        """Passes through: PubMed-to-PMC links are not cached."""
        return await self.inner.elink_pmc(pmids)

    async def efetch_pmc(self, pmcids: Sequence[str]) -> PmcArticleSet:
        """Passes through: full texts are large and fetched rarely; they are not cached."""
        return await self.inner.efetch_pmc(pmcids)


# --- documents -------------------------------------------------------------------------------


def _assemble(articles: Iterable[bytes]) -> bytes:
    return _SET_HEAD + b"\n".join(articles) + _SET_TAIL


def _database_info(data: dict[str, Any]) -> DatabaseInfo:
    return DatabaseInfo(
        db_name=data["db_name"],
        count=data.get("count"),
        last_update=data.get("last_update"),
        menu_name=data.get("menu_name"),
        description=data.get("description"),
        build=data.get("build"),
        fields=tuple(FieldInfo(**f) for f in data.get("fields", ())),
        links=tuple(LinkInfo(**link) for link in data.get("links", ())),
    )


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(i.strip() for i in items if i and i.strip()))


def _batches(items: Sequence[str], size: int) -> list[list[str]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]

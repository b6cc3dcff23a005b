"""CachingEntrezClient: EFetch per PMID and EInfo from a SQLite file, TTL, bounded size."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from biomcp.adapters.entrez.cache import CachingEntrezClient
from biomcp.adapters.entrez.pubmed_xml import parse_pubmed_articles
from biomcp.adapters.entrez.splitting import split_article_set, split_medline
from biomcp.ports.entrez import (
    DatabaseInfo,
    EntrezRequestError,
    EntrezUnavailableError,
    FetchResult,
    FieldInfo,
    LinkInfo,
)
from biomcp.testing.eutils import FakeCorpus, article_extras, generate_articles, to_medline
from biomcp.testing.eutils.render import efetch_xml

pytestmark = pytest.mark.unit

CORPUS = FakeCorpus.from_xml_bytes(
    generate_articles(12, start=date(2021, 1, 1), end=date(2021, 12, 31), seed=3)
)
PMIDS = CORPUS.pmids()
DELETED = "39999999"


class Recording:
    """A stateful stand-in for NCBI: serves CORPUS and records every request it answers."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[str, ...]]] = []
        self.closed = False
        self.down = False

    def _record(self, endpoint: str, ids: Sequence[str]) -> None:
        if self.down:
            raise EntrezUnavailableError("NCBI is down")
        self.calls.append((endpoint, tuple(ids)))

    async def efetch_xml(self, pmids: Sequence[str]) -> bytes:
        self._record("efetch_xml", pmids)
        body = efetch_xml(raw for p in pmids if (raw := CORPUS.raw(p)) is not None)
        if DELETED in pmids:
            tail = f"<DeleteCitation><PMID>{DELETED}</PMID></DeleteCitation></PubmedArticleSet>"
            body = body.replace(b"</PubmedArticleSet>", tail.encode())
        return body

    async def efetch(self, pmids: Sequence[str]) -> FetchResult:
        self._record("efetch", pmids)
        parsed = parse_pubmed_articles(await self.efetch_xml(pmids))
        self.calls.pop()
        seen = {r.pmid for r in parsed.records}
        return FetchResult(parsed.records, tuple(p for p in pmids if p not in seen))

    async def efetch_medline(self, pmids: Sequence[str]) -> str:
        self._record("efetch_medline", pmids)
        texts = []
        for pmid in pmids:
            entry = CORPUS.get(pmid)
            if entry is not None and entry.record is not None:
                texts.append(to_medline(entry.record, article_extras(entry.raw)))
        return "\n" + "\n".join(texts)

    async def einfo(self, db: str = "pubmed") -> DatabaseInfo:
        self._record("einfo", (db,))
        return DatabaseInfo(
            db_name=db,
            count=len(CORPUS),
            last_update="2025/05/23 10:00",
            menu_name="PubMed",
            fields=(FieldInfo("ALL", "All Fields", "All terms", 123, False, False),),
            links=(LinkInfo("pubmed_pubmed", "Similar articles", "Similar", "pubmed"),),
        )

    async def esearch(self, term: str, **kwargs: Any) -> Any:
        self._record("esearch", (term,))
        return "searched"

    async def aclose(self) -> None:
        self.closed = True


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def make(
    tmp_path: Path, *, ttl_s: float = 3600, max_bytes: int = 10_000_000, **kw: Any
) -> tuple[CachingEntrezClient, Recording, Clock]:
    inner, clock = Recording(), Clock()
    cache = CachingEntrezClient(
        inner,  # type: ignore[arg-type]
        tmp_path / "cache" / "ncbi.sqlite3",
        ttl_s=ttl_s,
        max_bytes=max_bytes,
        clock=clock,
        **kw,
    )
    return cache, inner, clock


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_a_second_identical_fetch_asks_ncbi_nothing(tmp_path: Path) -> None:
    cache, inner, _ = make(tmp_path)
    wanted = PMIDS[:4]
    first = run(cache.efetch(wanted))
    second = run(cache.efetch(wanted))
    assert inner.calls == [("efetch_xml", tuple(wanted))]
    assert [r.pmid for r in first.records] == wanted
    assert second == first
    direct = parse_pubmed_articles(efetch_xml(CORPUS.raw(p) or b"" for p in wanted))
    assert second.records == direct.records  # the cached copy parses to the same records
    assert cache.cache_stats.hits == 4
    assert cache.cache_stats.misses == 4


def test_parsed_and_raw_fetches_share_one_cache_and_only_misses_are_asked(
    tmp_path: Path,
) -> None:
    cache, inner, _ = make(tmp_path)
    run(cache.efetch(PMIDS[:3]))
    xml = run(cache.efetch_xml([PMIDS[2], PMIDS[1], PMIDS[5]]))
    assert inner.calls == [("efetch_xml", tuple(PMIDS[:3])), ("efetch_xml", (PMIDS[5],))]
    pieces, _ = split_article_set(xml)
    assert list(pieces) == [PMIDS[2], PMIDS[1], PMIDS[5]]  # in the order asked
    parsed = parse_pubmed_articles(xml)
    assert [r.pmid for r in parsed.records] == [PMIDS[2], PMIDS[1], PMIDS[5]]


def test_unknown_and_deleted_pmids_are_reported_and_never_cached(tmp_path: Path) -> None:
    cache, inner, _ = make(tmp_path)
    result = run(cache.efetch([PMIDS[0], "1", DELETED]))
    assert [r.pmid for r in result.records] == [PMIDS[0]]
    assert result.missing == ("1",)
    assert result.deleted_pmids == (DELETED,)
    run(cache.efetch([PMIDS[0], "1"]))
    assert inner.calls[-1] == ("efetch_xml", ("1",))  # asked again, the known one was not


def test_entries_expire_after_the_ttl(tmp_path: Path) -> None:
    cache, inner, clock = make(tmp_path, ttl_s=60)
    run(cache.efetch(PMIDS[:2]))
    clock.now += 59
    run(cache.efetch(PMIDS[:2]))
    assert len(inner.calls) == 1
    clock.now += 2
    run(cache.efetch(PMIDS[:2]))
    assert len(inner.calls) == 2
    assert len(cache) == 2  # the expired rows were replaced, not duplicated


def test_the_oldest_entries_are_evicted_to_stay_under_the_size_bound(tmp_path: Path) -> None:
    one = len(split_article_set(efetch_xml([CORPUS.raw(PMIDS[0]) or b""]))[0][PMIDS[0]])
    bound = one * 3 + one // 2  # room for three articles, not four
    cache, inner, clock = make(tmp_path, max_bytes=bound)
    for pmid in PMIDS[:6]:
        clock.now += 1
        run(cache.efetch([pmid]))
    assert cache.size_bytes() <= bound
    assert len(cache) == 3
    inner.calls.clear()
    run(cache.efetch(PMIDS[3:6]))
    assert inner.calls == []  # the three newest stayed
    run(cache.efetch([PMIDS[0]]))
    assert inner.calls == [("efetch_xml", (PMIDS[0],))]  # the oldest went first
    assert cache.cache_stats.evicted >= 3


def test_a_zero_ttl_passes_every_call_through(tmp_path: Path) -> None:
    cache, inner, _ = make(tmp_path, ttl_s=0)
    assert not cache.enabled
    run(cache.efetch(PMIDS[:2]))
    run(cache.efetch(PMIDS[:2]))
    run(cache.einfo())
    run(cache.einfo())
    assert [c[0] for c in inner.calls] == ["efetch", "efetch", "einfo", "einfo"]
    assert not (tmp_path / "cache").exists()


def test_einfo_is_cached_and_round_trips(tmp_path: Path) -> None:
    cache, inner, _ = make(tmp_path)
    first = run(cache.einfo("pubmed"))
    second = run(cache.einfo("pubmed"))
    assert second == first
    assert inner.calls == [("einfo", ("pubmed",))]


def test_a_medline_record_cut_short_is_never_cached(tmp_path: Path) -> None:
    """An inner client that lets a cut answer through (the last record without its SO line):
    the whole records are cached, the cut one is not, and is asked for again next time."""
    cache, inner, _ = make(tmp_path)
    whole: str = run(inner.efetch_medline(PMIDS[:2]))
    inner.calls.clear()
    cut = whole[: whole.rindex("\nSO  - ") + 1]

    async def cut_answer(pmids: Sequence[str]) -> str:
        inner.calls.append(("efetch_medline", tuple(pmids)))
        return cut

    inner.efetch_medline = cut_answer  # type: ignore[method-assign]
    run(cache.efetch_medline(PMIDS[:2]))
    assert len(cache) == 1
    run(cache.efetch_medline(PMIDS[:2]))
    assert inner.calls[-1] == ("efetch_medline", (PMIDS[1],))


def test_medline_text_is_cached_per_pmid(tmp_path: Path) -> None:
    cache, inner, _ = make(tmp_path)
    first = run(cache.efetch_medline(PMIDS[:2]))
    again = run(cache.efetch_medline([PMIDS[1], PMIDS[0], "1"]))
    assert inner.calls == [("efetch_medline", tuple(PMIDS[:2])), ("efetch_medline", ("1",))]
    records = split_medline(again)
    assert list(records) == [PMIDS[1], PMIDS[0]]
    assert split_medline(first) == {PMIDS[0]: records[PMIDS[0]], PMIDS[1]: records[PMIDS[1]]}
    assert records[PMIDS[0]].startswith(f"PMID- {PMIDS[0]}\n")


def test_another_ncbi_never_sees_the_first_ones_answers(tmp_path: Path) -> None:
    cache, inner, _ = make(tmp_path, namespace="http://one")
    run(cache.efetch(PMIDS[:1]))
    other = CachingEntrezClient(
        inner,  # type: ignore[arg-type]
        cache.cache_path,
        namespace="http://two",
    )
    run(other.efetch(PMIDS[:1]))
    assert len(inner.calls) == 2
    other.close()


def test_errors_pass_through_and_nothing_is_cached(tmp_path: Path) -> None:
    cache, inner, _ = make(tmp_path)
    inner.down = True
    with pytest.raises(EntrezUnavailableError):
        run(cache.efetch(PMIDS[:1]))
    with pytest.raises(EntrezRequestError):
        run(cache.efetch_xml([]))
    assert len(cache) == 0
    inner.down = False
    assert [r.pmid for r in run(cache.efetch(PMIDS[:1])).records] == PMIDS[:1]


def test_an_unusable_file_only_costs_the_cache(tmp_path: Path) -> None:
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the folder should be")
    cache, inner, _ = make(tmp_path)
    run(cache.efetch(PMIDS[:1]))
    run(cache.efetch(PMIDS[:1]))
    assert len(inner.calls) == 2
    assert len(cache) == 0


def test_other_calls_pass_through_and_close_closes_the_inner_client(tmp_path: Path) -> None:
    cache, inner, _ = make(tmp_path)
    assert run(cache.esearch("asthma")) == "searched"
    run(cache.aclose())
    assert inner.closed


def test_a_damaged_entry_is_dropped_and_fetched_again(tmp_path: Path) -> None:
    cache, inner, _ = make(tmp_path)
    run(cache.efetch(PMIDS[:1]))
    conn = cache._connection()
    assert conn is not None
    with conn:
        conn.execute("UPDATE entries SET body = ?", (b"<PubmedArticle><broken",))
    result = run(cache.efetch(PMIDS[:1]))
    assert [r.pmid for r in result.records] == PMIDS[:1]
    assert inner.calls[-1] == ("efetch", tuple(PMIDS[:1]))


# --- what the live tools read through the cache ----------------------------------------------


@pytest.mark.parametrize("level", ["abstract_plus", "full_xml", "medline_text", "citation_data"])
def test_the_live_tools_read_cached_answers_in_their_declared_shape(
    tmp_path: Path, level: str
) -> None:
    from jsonschema import Draft202012Validator
    from lxml import etree

    from biomcp.entrypoints.mcp.tools.live.schemas import LIVE_OUTPUTS
    from biomcp.usecases.live import LivePubMed

    cache, inner, _ = make(tmp_path)
    live = LivePubMed(cache)
    wanted = [PMIDS[3], "1", PMIDS[0]]
    first = run(live.fetch(wanted, detail_level=level))
    again = run(live.fetch(wanted, detail_level=level))
    assert again == first
    assert [ids for _, ids in inner.calls] == [tuple(wanted), ("1",)]  # only the unknown again
    Draft202012Validator(LIVE_OUTPUTS["fetchArticleDetails"]).validate(first)
    assert [a["pmid"] for a in first["articles"]] == [PMIDS[3], PMIDS[0]]
    assert first["notFoundPmids"] == ["1"]
    for article in first["articles"]:
        if level == "full_xml":
            raw = CORPUS.raw(article["pmid"])
            assert raw is not None
            mine = etree.fromstring(article["fullXml"].encode())
            assert etree.tostring(mine, method="c14n") == etree.tostring(
                etree.fromstring(raw), method="c14n"
            )
        elif level == "medline_text":
            assert article["medlineText"].startswith(f"PMID- {article['pmid']}\n")
            assert "\n\n" not in article["medlineText"]
        else:
            assert article["title"]
            assert "meshTerms" in article

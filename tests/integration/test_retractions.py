"""Retraction awareness end to end: the fake E-utilities over HTTP, real stores, the
deterministic embedder, and the server's tools through an in-process MCP client.

A record retracted after its first sync is found by the next sync's re-check (one ESearch per
batch of stored PMIDs, `[uid]` + `"Retracted Publication"[pt]`), re-fetched and stored
flagged; `rag_search` then leaves it out unless `include_retracted`, and `rag_get` and
`pubmed_fetch_article_details` show the notice and its PMID.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from mcp import Client

import biomcp
from biomcp.adapters.entrez.client import EntrezSettings, HttpEntrezClient
from biomcp.adapters.entrez.ratelimit import RateLimiter
from biomcp.domain.records import Notice, NoticeKind
from biomcp.entrypoints.mcp.contract import SPEC_OUTPUTS, V10_OUTPUTS, V11_OUTPUTS
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.mcp.tools.live.schemas import LIVE_OUTPUTS
from biomcp.entrypoints.services import Services
from biomcp.ports.entrez import EntrezUnavailableError, SearchResult
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from biomcp.testing.eutils.retractions import retracted_article_xml
from biomcp.usecases import retractions
from biomcp.usecases.documents import GetDocument
from biomcp.usecases.retractions import (
    RECHECK_BATCH,
    RETRACTED_TERM,
    RetractionCheck,
    find_retracted,
    retraction_term,
)
from biomcp.usecases.search import SearchConfig, SearchCorpus
from tests.support.mcp_inprocess import call_json as _call
from tests.support.mcp_inprocess import serve, test_settings
from tests.support.servers import run_biomcp, server_env
from tests.support.sql_records import full_record, revised, upsert_of
from tests.support.sync_harness import (
    FAST_RETRIES,
    BackendSpec,
    SteppingClock,
    embedder,
    entrez_client,
    make_corpus,
    make_sync,
    matching,
    record_of,
    replace_abstract,
    run,
)

pytestmark = pytest.mark.integration

N = 120
START, END = date(2024, 1, 1), date(2024, 6, 30)
NOW = datetime(2024, 7, 1, 12, tzinfo=UTC)
MESH = "Humans"
TERM = f"{MESH}[mh]"
KEY = "retractions_v1"
NOTICE = "39000001"
NOTICE_SOURCE = "J Fake Res. 2024 Aug;12(8):e1. doi: 10.0000/fake.retraction"
QUERY = "zorblaxin event rate"


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    with FakeEutilsServer(make_corpus(N, START, END, seed=23), warm=True) as server:
        yield server


def _old_matches(corpus: FakeCorpus, count: int) -> list[str]:
    """`count` matching PMIDs whose Entrez date is well before the last one: outside the
    window of a sync with the default overlap, so only the re-check can see them again."""
    found = matching(corpus, MESH, hi=END - timedelta(days=60))
    assert len(found) >= count
    return found[:count]


def _zorblax(corpus: FakeCorpus, pmids: Sequence[str]) -> None:
    """Give `pmids` abstracts with a word no other record has (so a query finds them first)."""
    for number, pmid in enumerate(pmids):
        replace_abstract(
            corpus,
            pmid,
            f"Zorblaxin lowered the event rate by {30 + number}% in {400 + number} adults.",
        )


def _retract_over_http(fake: FakeEutilsServer, pmid: str, notice: str = NOTICE) -> None:
    """Retract `pmid` through the fake's admin route, its DateRevised moved a week on."""
    lr = record_of(fake.corpus, pmid).lr
    assert lr is not None
    answer = httpx.post(
        f"{fake.base_url}/_fake/retract",
        json={
            "pmid": pmid,
            "notice_pmid": notice,
            "source": NOTICE_SOURCE,
            "revised": (lr.date() + timedelta(days=7)).isoformat(),
        },
        timeout=30,
    )
    assert answer.status_code == 200, answer.text


def _recheck_searches(fake: FakeEutilsServer) -> list[str]:
    return [
        entry["params"]["term"]
        for entry in fake.log
        if entry["endpoint"] == "esearch" and "[pt]" in entry["params"].get("term", "")
    ]


# --- the fake ------------------------------------------------------------------------------


def test_the_fake_retracts_after_the_fact_and_esearch_answers_the_recheck_term() -> None:
    corpus = make_corpus(12, START, END, seed=5)
    pmids = corpus.pmids()
    target = pmids[3]
    assert not record_of(corpus, target).is_retracted
    corpus.retract(target, NOTICE, source=NOTICE_SOURCE, revised=date(2024, 8, 1))
    corpus.retract(target, NOTICE, source=NOTICE_SOURCE)  # twice: nothing doubles...
    record = record_of(corpus, target)
    assert record.is_retracted
    assert record.publication_types.count("Retracted Publication") == 1
    assert [(n.kind.value, n.pmid, n.source) for n in record.notices] == [
        ("RetractionIn", NOTICE, NOTICE_SOURCE)
    ]
    assert record.lr == datetime(2024, 8, 2, tzinfo=UTC)  # ...but LR moves on a day
    with pytest.raises(ValueError, match="PubmedArticle"):
        retracted_article_xml(b"<Other/>", NOTICE)

    with FakeEutilsServer(corpus) as server, httpx.Client(base_url=server.base_url) as http:
        assert (
            http.post("/_fake/retract", json={"pmid": "1", "notice_pmid": "2"}).status_code == 404
        )
        assert http.post("/_fake/retract", json={"pmid": target}).status_code == 400
        assert (
            http.post("/_fake/retract", json={"pmid": pmids[7], "notice_pmid": "39000002"})
        ).status_code == 200
        # The re-check's term, sent by POST as the client does for long terms.
        term = retraction_term(pmids[:10])
        assert term.endswith(f"AND {RETRACTED_TERM}")
        answer = http.post("/esearch.fcgi", data={"db": "pubmed", "term": term, "retmax": "10"})
        assert answer.status_code == 200
        assert sorted(re.findall(r"<Id>(\d+)</Id>", answer.text)) == sorted([target, pmids[7]])
        # A retracted record outside the PMIDs asked about is not reported.
        only_first = http.post(
            "/esearch.fcgi", data={"db": "pubmed", "term": retraction_term(pmids[:3])}
        )
        assert "<Count>0</Count>" in only_first.text


# --- the metadata store's flags -----------------------------------------------------------


def test_the_store_reads_the_current_retraction_flags(backend: BackendSpec) -> None:
    typed = full_record("31000001", publication_types=("Journal Article", "Retracted Publication"))
    noticed = full_record(
        "31000002", notices=(Notice(NoticeKind.RETRACTION_IN, NOTICE, NOTICE_SOURCE),)
    )
    erratum = full_record("31000003", notices=(Notice(NoticeKind.ERRATUM_IN, "39000009"),))
    plain = full_record("31000004")

    async def scenario() -> None:
        async with backend.stores() as (metadata, _):
            await metadata.upsert_documents([upsert_of(r) for r in (typed, noticed, erratum)])
            await metadata.upsert_documents([upsert_of(plain)])
            asked = ["31000001", "31000002", "31000003", "31000004", "31999999"]
            assert await metadata.retracted_pmids(asked) == {"31000001", "31000002"}
            assert await metadata.retracted_pmids([]) == set()
            # Retracted later: the flag follows the stored copy.
            await metadata.upsert_documents(
                [upsert_of(revised(plain, publication_types=("Retracted Publication",)))]
            )
            assert await metadata.retracted_pmids(["31000004"]) == {"31000004"}

    run(scenario())


# --- the sync ------------------------------------------------------------------------------


def test_a_record_retracted_after_its_first_sync_is_flagged_by_the_next_and_left_out_of_search(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    corpus = fake.corpus
    expected = matching(corpus, MESH)
    targets = _old_matches(corpus, 4)
    _zorblax(corpus, targets)
    retracted, kept = targets[:3], targets[3]

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        counting = embedder()
        entrez = entrez_client(fake.base_url)
        async with backend.stores(clock) as (metadata, vectors):
            sync = make_sync(entrez, metadata, vectors, counting, clock, backend.collection)
            first = await sync.run(KEY, TERM)
            assert first.inserted == len(expected)
            assert first.newly_retracted == ()
            assert first.retractions_rechecked == 0  # nothing was stored outside the window
            assert first.warnings == ()

            config = SearchConfig(collection=backend.collection, oversample=1)
            search = SearchCorpus(vectors, counting, config=config, metadata=metadata)
            before = await search.run(QUERY, top_k=3)
            assert {h.doc_id for h in before} <= {f"pmid:{p}" for p in targets}
            assert not any(h.retracted for h in before)

            for pmid in retracted:
                _retract_over_http(fake, pmid)
            fake.clear_log()
            clock.advance(timedelta(days=2))
            second = await sync.run(KEY, TERM)  # the default overlap: they are outside it
            jsonschema.validate(second.as_payload(), SPEC_OUTPUTS["pubmed.sync_delta"])
            assert set(retracted).isdisjoint(
                entry["params"].get("id", "")
                for entry in fake.log
                if entry["endpoint"] == "efetch" and "mindate" in entry["params"]
            )
            assert second.newly_retracted == tuple(sorted(retracted))
            assert second.retractions_rechecked == len(expected) - second.pmids_found
            assert second.pmids_found < len(expected)
            rechecks = _recheck_searches(fake)
            batches = -(-second.retractions_rechecked // sync.config.recheck_batch_size)
            assert len(rechecks) == batches
            assert any(f"pmid:{retracted[0]}" in w for w in second.warnings)
            assert second.checkpoint == first.checkpoint  # nothing new: it did not move back

            for pmid in retracted:
                stored = await metadata.get_document(pmid)
                assert stored is not None
                assert stored.record.is_retracted
                assert stored.version == stored.indexed_version == 2
            documents = GetDocument(metadata)
            payload = await documents.run(f"pmid:{retracted[0]}")
            jsonschema.validate(payload, V11_OUTPUTS["rag.get"])
            assert payload["retracted"] is True
            assert payload["retraction"] == {"notice_pmid": NOTICE, "source": NOTICE_SOURCE}
            assert "Retracted Publication" in payload["pub_types"]
            fine = await documents.run(f"pmid:{kept}")
            assert (fine["retracted"], fine["retraction"]) == (False, None)

            # Left out by default, and the page stays full (over-fetch past the 3 retracted).
            hits = await search.run(QUERY, top_k=3)
            assert len(hits) == 3
            assert not {h.doc_id for h in hits} & {f"pmid:{p}" for p in retracted}
            assert hits[0].doc_id == f"pmid:{kept}"
            assert not any(h.retracted for h in hits)
            # Included, flagged, on request.
            flagged = await search.run(QUERY, top_k=4, include_retracted=True)
            assert {h.doc_id for h in flagged} == {f"pmid:{p}" for p in targets}
            assert {h.doc_id for h in flagged if h.retracted} == {f"pmid:{p}" for p in retracted}
            results = [h.as_payload() for h in flagged]
            jsonschema.validate({"results": results}, V11_OUTPUTS["rag.search"])
            assert [r["retracted"] for r in results] == [h.retracted for h in flagged]

            # The next sync finds them flagged already: no re-fetch, nothing new.
            fake.clear_log()
            clock.advance(timedelta(days=1))
            third = await sync.run(KEY, TERM)
            assert third.newly_retracted == ()
            assert third.updated == 0
            assert not any("retracted" in w for w in third.warnings)
            fetched = " ".join(
                str(e["params"].get("id", "")) for e in fake.log if e["endpoint"] == "efetch"
            )
            assert not any(pmid in fetched for pmid in retracted)
        await entrez.aclose()

    run(scenario())


def test_a_record_already_retracted_when_synced_is_stored_flagged(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    corpus = fake.corpus
    target, neighbour = _old_matches(corpus, 2)
    _zorblax(corpus, [target, neighbour])
    corpus.retract(target, NOTICE, source=NOTICE_SOURCE)

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        counting = embedder()
        entrez = entrez_client(fake.base_url)
        async with backend.stores(clock) as (metadata, vectors):
            sync = make_sync(entrez, metadata, vectors, counting, clock, backend.collection)
            report = await sync.run(KEY, TERM)
            assert report.newly_retracted == ()  # flagged at ingest, not "newly"
            stored = await metadata.get_document(target)
            assert stored is not None
            assert stored.record.is_retracted
            assert stored.version == 1
            payload = await GetDocument(metadata).run(f"pmid:{target}")
            assert payload["retraction"] == {"notice_pmid": NOTICE, "source": NOTICE_SOURCE}

            config = SearchConfig(collection=backend.collection)
            search = SearchCorpus(vectors, counting, config=config, metadata=metadata)
            assert f"pmid:{target}" not in {h.doc_id for h in await search.run(QUERY, top_k=5)}
            included = await search.run(QUERY, top_k=5, include_retracted=True)
            assert any(h.doc_id == f"pmid:{target}" and h.retracted for h in included)

            # A re-check of a record stored flagged and indexed fetches nothing again.
            clock.advance(timedelta(days=1))
            fake.clear_log()
            again = await sync.run(KEY, TERM)
            assert again.newly_retracted == ()
            assert len(_recheck_searches(fake)) == 1
            assert not any(
                target in str(e["params"].get("id", ""))
                for e in fake.log
                if e["endpoint"] == "efetch"
            )
        await entrez.aclose()

    run(scenario())


def _efetched(fake: FakeEutilsServer) -> list[str]:
    """Every PMID the fake was asked to EFetch since its log was cleared."""
    return [
        pmid
        for entry in fake.log
        if entry["endpoint"] == "efetch"
        for pmid in str(entry["params"].get("id", "")).split(",")
        if pmid
    ]


def test_when_pubmed_lists_no_retracted_publication_the_recheck_refetches_nothing(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    # PubMed leaves a publication type it has no record of out of the query (and says so),
    # so the by-PMID re-check's answer is then every PMID asked about: none of them is retracted.
    async def scenario() -> None:
        clock = SteppingClock(NOW)
        entrez = entrez_client(fake.base_url)
        async with backend.stores(clock) as (metadata, vectors):
            sync = make_sync(entrez, metadata, vectors, embedder(), clock, backend.collection)
            await sync.run(KEY, TERM)
            for batch in (RECHECK_BATCH, 10):  # by PMID in one batch; counted first
                sync = make_sync(
                    entrez,
                    metadata,
                    vectors,
                    embedder(),
                    clock,
                    backend.collection,
                    recheck_batch_size=batch,
                )
                clock.advance(timedelta(days=2))
                fake.clear_log()
                report = await sync.run(KEY, TERM)
                assert report.retractions_rechecked > 10
                assert (report.updated, report.newly_retracted, report.warnings) == (0, (), ())
                assert len(_efetched(fake)) == report.pmids_found  # the window's, nothing more
                assert len(_recheck_searches(fake)) == 1
        await entrez.aclose()

    run(scenario())


def test_a_store_of_many_batches_is_rechecked_against_every_retracted_publication(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    targets = _old_matches(fake.corpus, 3)

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        entrez = entrez_client(fake.base_url)
        async with backend.stores(clock) as (metadata, vectors):
            sync = make_sync(
                entrez, metadata, vectors, embedder(), clock, backend.collection,
                recheck_batch_size=10,
            )  # fmt: skip
            await sync.run(KEY, TERM)
            for pmid in targets:
                _retract_over_http(fake, pmid)
            clock.advance(timedelta(days=2))
            fake.clear_log()
            report = await sync.run(KEY, TERM)
            assert report.retractions_rechecked > 20  # three batches or more by PMID
            assert report.newly_retracted == tuple(sorted(targets))
            # One count, one enumeration: no term lists PMIDs.
            assert _recheck_searches(fake) == [RETRACTED_TERM, RETRACTED_TERM]
            # The window's records, and the three re-fetched to be stored flagged.
            assert set(targets) <= set(_efetched(fake))
            assert len(_efetched(fake)) == report.pmids_found + len(targets)
            for pmid in targets:
                stored = await metadata.get_document(pmid)
                assert stored is not None
                assert stored.record.is_retracted
        await entrez.aclose()

    run(scenario())


def test_the_recheck_asks_by_pmid_when_that_takes_fewer_requests(
    fake: FakeEutilsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = fake.corpus
    pmids = sorted(corpus.pmids())
    targets = pmids[5], pmids[70], pmids[71]
    for pmid in targets:
        corpus.retract(pmid, NOTICE, source=NOTICE_SOURCE)
    # Three retracted publications over a cap of two: enumerating them is estimated at ten
    # requests (the real cap is 9,999 ids; the enumeration itself still takes one here).
    monkeypatch.setattr(retractions, "ESEARCH_ID_CAP", 2)

    async def scenario() -> None:
        entrez = entrez_client(fake.base_url)
        by_pmid = await find_retracted(entrez, pmids, today=NOW.date(), batch=60)
        assert (by_pmid.checked, by_pmid.retracted, by_pmid.requests) == (N, targets, 1 + 2)
        every = await find_retracted(entrez, pmids, today=NOW.date(), batch=10)
        assert (every.retracted, every.requests) == (targets, 1 + 1)
        one = await find_retracted(entrez, pmids[:60], today=NOW.date(), batch=60)
        assert (one.retracted, one.requests) == (targets[:1], 1)  # one batch: no count first
        assert await find_retracted(entrez, [], today=NOW.date()) == RetractionCheck(0, (), 0)
        await entrez.aclose()

    run(scenario())
    terms = _recheck_searches(fake)
    by_pmid = [retraction_term(pmids[:60]), retraction_term(pmids[60:])]
    assert terms[:5] == [RETRACTED_TERM, *by_pmid, RETRACTED_TERM, RETRACTED_TERM]
    assert terms[5:] == [retraction_term(pmids[:60])]


class _RecheckFails(HttpEntrezClient):
    """The real client, whose retraction re-check ESearch fails as NCBI down would."""

    async def esearch(self, term: str, **kwargs: Any) -> SearchResult:
        if RETRACTED_TERM in term:
            raise EntrezUnavailableError("NCBI answered 503 three times")
        return await super().esearch(term, **kwargs)


def test_a_failed_recheck_is_a_warning_and_the_next_sync_catches_up(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    corpus = fake.corpus
    expected = matching(corpus, MESH)
    (target,) = _old_matches(corpus, 1)

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        counting = embedder()
        settings = EntrezSettings(base_url=fake.base_url, **FAST_RETRIES)
        failing = _RecheckFails(settings, limiter=RateLimiter(1000.0))
        async with backend.stores(clock) as (metadata, vectors):
            sync = make_sync(failing, metadata, vectors, counting, clock, backend.collection)
            await sync.run(KEY, TERM)
            corpus.retract(target, NOTICE, source=NOTICE_SOURCE)
            corpus.add(generate_articles(3, start=NOW.date(), end=NOW.date(), seed=99,
                                         pmid_start=31_000_000))  # fmt: skip
            clock.advance(timedelta(days=2))
            report = await sync.run(KEY, TERM)
            assert any("retraction re-check failed" in w for w in report.warnings)
            assert any("EntrezUnavailableError" in w for w in report.warnings)
            assert report.newly_retracted == ()
            assert report.checkpoint_advanced  # the window's new records still count
            jobs = await metadata.list_jobs(KEY, limit=5)
            assert jobs[0].status == "succeeded"
            stored = await metadata.get_document(target)
            assert stored is not None
            assert not stored.record.is_retracted

            working = entrez_client(fake.base_url)
            sync = make_sync(working, metadata, vectors, counting, clock, backend.collection)
            clock.advance(timedelta(days=1))
            caught_up = await sync.run(KEY, TERM)
            assert caught_up.newly_retracted == (target,)
            assert caught_up.retractions_rechecked >= len(expected) - caught_up.pmids_found
            await working.aclose()
        await failing.aclose()

    run(scenario())


# --- the tools -----------------------------------------------------------------------------


def test_the_tools_leave_out_flag_and_explain_retractions(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    corpus = fake.corpus
    target, neighbour = _old_matches(corpus, 2)
    _zorblax(corpus, [target, neighbour])

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, report = await _call(client, "pubmed_sync_delta", {"query_key": KEY, "term": TERM})
        assert not error, report
        _retract_over_http(fake, target)
        error, report = await _call(client, "pubmed_sync_delta", {"query_key": KEY, "term": TERM})
        assert not error, report
        jsonschema.validate(report, SPEC_OUTPUTS["pubmed.sync_delta"])  # still spec 01's shape
        assert any(f"pmid:{target}" in w for w in report["warnings"])

        error, found = await _call(client, "rag_search", {"query": QUERY, "top_k": 5})
        assert not error, found
        assert f"pmid:{target}" not in {r["doc_id"] for r in found["results"]}
        assert len(found["results"]) == 5
        error, found = await _call(
            client, "rag_search", {"query": QUERY, "top_k": 5, "include_retracted": True}
        )
        assert not error, found
        jsonschema.validate(found, V11_OUTPUTS["rag.search"])
        flags = {r["doc_id"]: r["retracted"] for r in found["results"]}
        assert flags[f"pmid:{target}"] is True
        assert flags[f"pmid:{neighbour}"] is False

        error, doc = await _call(client, "rag_get", {"doc_id": f"pmid:{target}"})
        assert not error, doc
        assert doc["retraction"] == {"notice_pmid": NOTICE, "source": NOTICE_SOURCE}

        for level in ("abstract_plus", "citation_data"):
            error, live = await _call(
                client,
                "pubmed_fetch_article_details",
                {"pmids": [target, neighbour], "detailLevel": level},
            )
            assert not error, live
            jsonschema.validate(live, LIVE_OUTPUTS["fetchArticleDetails"])
            by_pmid = {a["pmid"]: a for a in live["articles"]}
            assert by_pmid[target]["retracted"] is True
            assert by_pmid[target]["retractionNotice"] == {
                "noticePmid": NOTICE,
                "source": NOTICE_SOURCE,
            }
            if level == "abstract_plus":
                assert by_pmid[neighbour]["retracted"] is False
                assert by_pmid[neighbour]["retractionNotice"] is None
            else:  # citation_data stays minimal unless the paper is retracted
                assert "retracted" not in by_pmid[neighbour]

    serve(test_settings(tmp_path, fake.base_url), body)


def test_under_contract_1_0_include_retracted_is_accepted_and_answers_stay_spec_01s(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    corpus = fake.corpus
    target, neighbour = _old_matches(corpus, 2)
    _zorblax(corpus, [target, neighbour])
    corpus.retract(target, NOTICE, source=NOTICE_SOURCE)

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, report = await _call(client, "pubmed_sync_delta", {"query_key": KEY, "term": TERM})
        assert not error, report
        error, plain = await _call(client, "rag_search", {"query": QUERY, "top_k": 5})
        assert not error, plain
        jsonschema.validate(plain, V10_OUTPUTS["rag.search"])
        assert f"pmid:{target}" not in {r["doc_id"] for r in plain["results"]}
        error, found = await _call(
            client, "rag_search", {"query": QUERY, "top_k": 5, "include_retracted": True}
        )
        assert not error, found
        jsonschema.validate(found, V10_OUTPUTS["rag.search"])  # no `retracted` under v1.0
        assert f"pmid:{target}" in {r["doc_id"] for r in found["results"]}
        error, doc = await _call(client, "rag_get", {"doc_id": f"pmid:{target}"})
        assert not error, doc
        jsonschema.validate(doc, V10_OUTPUTS["rag.get"])

    serve(test_settings(tmp_path, fake.base_url, biomcp_contract="1.0"), body)


# --- the library and the CLI -----------------------------------------------------------------


def test_the_library_and_the_cli_leave_retracted_papers_out_unless_asked(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    target, neighbour = _old_matches(fake.corpus, 2)
    _zorblax(fake.corpus, [target, neighbour])
    fake.corpus.retract(target, NOTICE, source=NOTICE_SOURCE)
    data = tmp_path / "data"
    options: dict[str, Any] = {
        "biomcp_data_dir": data,
        "biomcp_embeddings": "deterministic",
        "ncbi_eutils_base_url": fake.base_url,
        "ncbi_max_retries": 0,
    }
    with biomcp.open_corpus(**options) as corpus:
        corpus.sync(KEY, TERM)
        default = {hit.doc_id for hit in corpus.search(QUERY, top_k=5)}
        assert f"pmid:{neighbour}" in default
        assert f"pmid:{target}" not in default
        flagged = {h.doc_id: h.retracted for h in corpus.search(QUERY, 5, include_retracted=True)}
        assert flagged[f"pmid:{target}"] is True
        assert flagged[f"pmid:{neighbour}"] is False

    env = server_env(data, fake.base_url, BIOMCP_EMBEDDINGS="deterministic")
    for extra, shown in (([], False), (["--include-retracted"], True)):
        done = run_biomcp(["search", QUERY, "-n", "5", "--json", *extra], env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        results = json.loads(done.stdout)["results"]
        assert (f"pmid:{target}" in {r["doc_id"] for r in results}) is shown
        assert all(r["retracted"] is (r["doc_id"] == f"pmid:{target}") for r in results)
    table = run_biomcp(["search", QUERY, "-n", "5", "--include-retracted"], env=env, cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    marked = [line for line in table.stdout.splitlines() if "RETRACTED" in line]
    assert len(marked) == 1
    assert f"pmid:{target}" in marked[0]


def test_a_record_the_recheck_refetches_is_not_recorded_as_the_syncing_querys(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    """Another saved query's sync re-checks every stored record: one it re-fetches because
    PubMed retracted it is flagged, and stays the first query's record only (forgetting the
    other query with its records must not take it)."""
    mice = set(matching(fake.corpus, "Mice"))
    target = next(p for p in _old_matches(fake.corpus, 20) if p not in mice)

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        entrez = entrez_client(fake.base_url)
        async with backend.stores(clock) as (metadata, vectors):
            sync = make_sync(entrez, metadata, vectors, embedder(), clock, backend.collection)
            await sync.run(KEY, TERM)
            _retract_over_http(fake, target)
            clock.advance(timedelta(days=2))
            other = await sync.run("mice_v1", "Mice[mh]")
            assert target in other.newly_retracted
            assert target in await metadata.records_held_only_by(KEY)  # not the mice query's
            assert set(await metadata.records_held_only_by("mice_v1")) <= mice
            counts = await metadata.query_record_counts()
            assert counts["mice_v1"] == len(mice)
            await entrez.aclose()

    run(scenario())

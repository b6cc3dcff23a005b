"""The httpx EntrezClient against the fake E-utilities server over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from datetime import date

import httpx
import pytest

from biomcp.adapters.entrez.client import EntrezSettings, HttpEntrezClient
from biomcp.adapters.entrez.ratelimit import RateLimiter
from biomcp.ports.entrez import (
    ESEARCH_ID_CAP,
    EntrezError,
    EntrezRateLimitError,
    EntrezRequestError,
    EntrezResponseError,
    EntrezTimeoutError,
    EntrezUnavailableError,
    WindowEnumeration,
)
from biomcp.testing.eutils.corpus import FakeCorpus
from biomcp.testing.eutils.server import FakeEutilsServer
from biomcp.testing.eutils.synthetic import generate_articles
from tests.conftest import SHARED_DATA

pytestmark = pytest.mark.integration

SECRET_KEY = "s3cr3t-api-key-0123456789abcdef"  # noqa: S105 - a test value
FAST = {"backoff_initial_s": 0.05, "backoff_max_s": 0.2}


def _fast_limiter() -> RateLimiter:
    # Tests that are not about the rate use a fast private limiter.
    return RateLimiter(200)


def _client(
    server: FakeEutilsServer, *, limiter: RateLimiter | None = None, **settings: object
) -> HttpEntrezClient:
    values: dict[str, object] = {"base_url": server.base_url, "email": "ops@example.org", **FAST}
    values.update(settings)
    return HttpEntrezClient(EntrezSettings(**values), limiter=limiter or _fast_limiter())  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def corpus() -> FakeCorpus:
    synthetic = generate_articles(300, start=date(2024, 1, 1), end=date(2024, 1, 30), seed=7)
    corpus = FakeCorpus.from_xml_bytes(synthetic)
    eutils = SHARED_DATA / "eutils"
    if eutils.exists():
        corpus.add(eutils)
    return corpus


@pytest.fixture
def server(corpus: FakeCorpus) -> Iterator[FakeEutilsServer]:
    with FakeEutilsServer(corpus) as fake:
        yield fake


# --- identity and secrecy ----------------------------------------------------------------


def test_every_request_carries_tool_email_and_key_and_the_key_never_reaches_the_logs(
    server: FakeEutilsServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    client = _client(server, api_key=SECRET_KEY, tool="bio-mcp-tests/1.0")

    async def scenario() -> None:
        await client.esearch("trial", retmax=5)
        await client.einfo()
        server.faults.sequence(["503"])
        await client.esearch("trial", retmax=5)  # one retried failure gets logged
        with pytest.raises(EntrezRequestError) as info:
            await client.esearch("(unbalanced", retmax=5)
        assert SECRET_KEY not in str(info.value)
        await client.aclose()

    asyncio.run(scenario())
    assert len(server.log) == 5
    for entry in server.log:
        assert entry["has_api_key"] is True
        assert entry["params"]["tool"] == "bio-mcp-tests/1.0"
        assert entry["params"]["email"] == "ops@example.org"
        assert entry["params"]["db"] == "pubmed"
    assert "retrying" in caplog.text
    assert SECRET_KEY not in caplog.text


def test_requests_without_a_key_send_none(server: FakeEutilsServer) -> None:
    client = _client(server)

    async def scenario() -> None:
        await client.esearch("trial")
        await client.aclose()

    asyncio.run(scenario())
    assert [e["has_api_key"] for e in server.log] == [False]
    assert server.log[0]["params"]["tool"].startswith("bio-mcp/")


# --- the rate limit ----------------------------------------------------------------------


def _max_in_any_second(times: list[float]) -> int:
    times = sorted(times)
    return max(sum(1 for u in times[i:] if u < t + 1.0) for i, t in enumerate(times))


@pytest.mark.slow
@pytest.mark.parametrize(("api_key", "limit"), [(None, 3), (SECRET_KEY, 10)])
def test_fifty_concurrent_calls_stay_within_ncbi_rate_in_every_second(
    corpus: FakeCorpus, api_key: str | None, limit: int
) -> None:
    with FakeEutilsServer(corpus) as fake:
        # The process-wide limiter for this (fresh) server URL: the production path.
        client = HttpEntrezClient(EntrezSettings(base_url=fake.base_url, api_key=api_key))

        async def scenario() -> None:
            await asyncio.gather(*(client.esearch(f"trial {i}", retmax=1) for i in range(50)))
            await client.aclose()

        started = time.monotonic()
        asyncio.run(scenario())
        elapsed = time.monotonic() - started
        times = [e["t"] for e in fake.log]
    assert len(times) == 50
    assert _max_in_any_second(times) <= limit
    # ...and it is not needlessly slow: 50 requests at `limit`/s.
    assert elapsed < 50 / limit * 1.4 + 1


# --- retries -----------------------------------------------------------------------------


def test_429_then_503_then_success_takes_three_requests_and_honours_retry_after(
    server: FakeEutilsServer,
) -> None:
    server.faults.sequence([{"kind": "429", "retry_after": 1}, "503"])
    client = _client(server, max_retries=3)

    async def scenario() -> int:
        result = await client.esearch("trial", retmax=3)
        await client.aclose()
        return result.count

    assert asyncio.run(scenario()) > 0
    log = server.log
    assert [e["status"] for e in log] == [429, 503, 200]
    assert log[1]["t"] - log[0]["t"] >= 0.95  # Retry-After: 1
    assert client.stats.retries == 2


def test_a_persistent_500_becomes_a_typed_error_after_the_configured_retries(
    server: FakeEutilsServer,
) -> None:
    server.faults.random(1.0, ["500"], seed=1)
    client = _client(server, max_retries=2)

    async def scenario() -> None:
        try:
            with pytest.raises(EntrezUnavailableError, match="HTTP 500"):
                await client.esearch("trial")
        finally:
            await client.aclose()

    asyncio.run(scenario())
    assert len(server.log) == 3


def test_persistent_429_becomes_a_rate_limit_error_carrying_retry_after(
    server: FakeEutilsServer,
) -> None:
    server.faults.random(1.0, [{"kind": "429", "retry_after": 0.1}], seed=1)
    client = _client(server, max_retries=1)

    async def scenario() -> EntrezRateLimitError:
        try:
            with pytest.raises(EntrezRateLimitError) as info:
                await client.efetch(["30000000"])
            return info.value
        finally:
            await client.aclose()

    error = asyncio.run(scenario())
    assert error.retry_after == pytest.approx(0.1)
    assert len(server.log) == 2


@pytest.mark.parametrize(
    ("kind", "error"),
    [("truncated", EntrezResponseError), ("html", EntrezResponseError)],
)
def test_a_persistently_unreadable_answer_becomes_a_typed_parse_error(
    server: FakeEutilsServer, kind: str, error: type[EntrezError]
) -> None:
    server.faults.random(1.0, [kind], seed=1)
    client = _client(server, max_retries=1)

    async def scenario() -> None:
        try:
            with pytest.raises(error):
                await client.efetch(["30000001"])
        finally:
            await client.aclose()

    asyncio.run(scenario())


def test_a_single_truncated_answer_is_retried_and_the_records_arrive(
    server: FakeEutilsServer,
) -> None:
    server.faults.sequence(["truncated"], endpoint="efetch")
    client = _client(server)

    async def scenario() -> list[str]:
        result = await client.efetch(["30000001", "30000002"])
        await client.aclose()
        return [r.pmid for r in result.records]

    assert asyncio.run(scenario()) == ["30000001", "30000002"]
    assert [e["status"] for e in server.log] == [200, 200]
    assert server.log[0]["fault"] == "truncated"


def test_a_backend_failure_payload_is_retried_but_a_bad_query_is_not(
    server: FakeEutilsServer,
) -> None:
    server.faults.sequence(["ncbi_error"])
    client = _client(server)

    async def scenario() -> None:
        await client.esearch("trial")
        with pytest.raises(EntrezRequestError):
            await client.esearch("trial AND (", retmax=1)
        await client.aclose()

    asyncio.run(scenario())
    assert len(server.log) == 3  # failure + retry, then the bad query once


def test_a_slow_answer_times_out_and_persistent_slowness_is_a_timeout_error(
    server: FakeEutilsServer,
) -> None:
    server.faults.random(1.0, [{"kind": "slow", "delay": 1.0}], seed=1)
    client = _client(server, timeout_s=0.2, max_retries=1)

    async def scenario() -> None:
        try:
            with pytest.raises(EntrezTimeoutError):
                await client.einfo()
        finally:
            await client.aclose()

    asyncio.run(scenario())


def test_an_unreachable_server_is_an_unavailable_error() -> None:
    client = HttpEntrezClient(
        EntrezSettings(base_url="http://127.0.0.1:9", max_retries=1, **FAST),  # type: ignore[arg-type]
        limiter=_fast_limiter(),
    )

    async def scenario() -> None:
        try:
            with pytest.raises(EntrezUnavailableError, match="unreachable"):
                await client.esearch("trial")
        finally:
            await client.aclose()

    asyncio.run(scenario())


def test_the_deadline_bounds_the_whole_retry_budget(server: FakeEutilsServer) -> None:
    server.faults.random(1.0, [{"kind": "429", "retry_after": 0.5}], seed=1)
    client = _client(server, max_retries=10, deadline_s=1.2)

    async def scenario() -> None:
        try:
            with pytest.raises(EntrezRateLimitError):
                await client.esearch("trial")
        finally:
            await client.aclose()

    started = time.monotonic()
    asyncio.run(scenario())
    assert time.monotonic() - started < 2.0
    assert len(server.log) < 5


# --- complete enumeration past the ESearch cap ---------------------------------------------


ALL_SYNTHETIC = "humans[mh] OR animals[mh]"  # every synthetic article carries one of them


async def _count(fake: FakeEutilsServer, mindate: str, maxdate: str) -> int:
    async with httpx.AsyncClient() as http:
        params = {
            "db": "pubmed",
            "term": ALL_SYNTHETIC,
            "datetype": "edat",
            "mindate": mindate,
            "maxdate": maxdate,
            "retmax": "0",
        }
        response = await http.get(f"{fake.base_url}/esearch.fcgi", params=params)
    return int(response.text.split("<Count>")[1].split("</Count>")[0])


@pytest.mark.slow
def test_25000_records_in_one_window_are_enumerated_each_exactly_once() -> None:
    body = generate_articles(25_000, start=date(2023, 3, 1), end=date(2023, 3, 10), seed=3)
    corpus = FakeCorpus.from_xml_bytes(body)
    expected = set(corpus.pmids())
    assert len(expected) == 25_000
    with FakeEutilsServer(corpus) as fake:
        client = _client(fake)

        async def scenario() -> tuple[int, WindowEnumeration]:
            count = await _count(fake, "2023/03/01", "2023/03/10")
            result = await client.esearch_delta(ALL_SYNTHETIC, date(2023, 3, 1), date(2023, 3, 10))
            await client.aclose()
            return count, result

        count, result = asyncio.run(scenario())
    assert count == 25_000 > ESEARCH_ID_CAP  # the window really is over the cap
    assert result.complete
    assert len(result.pmids) == len(set(result.pmids)) == 25_000
    assert set(result.pmids) == expected
    assert result.requests >= 4


@pytest.mark.slow
def test_a_single_day_over_the_cap_is_split_by_pmid_ranges() -> None:
    body = generate_articles(12_000, start=date(2023, 5, 2), end=date(2023, 5, 2), seed=4)
    corpus = FakeCorpus.from_xml_bytes(body)
    with FakeEutilsServer(corpus) as fake:
        client = _client(fake)

        async def scenario() -> WindowEnumeration:
            result = await client.esearch_delta(ALL_SYNTHETIC, date(2023, 5, 1), date(2023, 5, 3))
            await client.aclose()
            return result

        result = asyncio.run(scenario())
        queries = [e["params"]["term"] for e in fake.log]
    assert result.complete, result.warnings
    assert sorted(result.pmids) == sorted(corpus.pmids())
    assert any("[uid]" in q for q in queries)

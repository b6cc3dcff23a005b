"""The httpx EntrezClient against the fake E-utilities server over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest

from biomcp.adapters.entrez.body import STEP
from biomcp.adapters.entrez.cache import CachingEntrezClient
from biomcp.adapters.entrez.client import EntrezSettings, HttpEntrezClient
from biomcp.adapters.entrez.ratelimit import RateLimiter
from biomcp.adapters.entrez.splitting import split_medline
from biomcp.ports.entrez import (
    ESEARCH_ID_CAP,
    EntrezApiKeyError,
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


def test_a_key_ncbi_does_not_know_is_its_own_error_asked_once_and_never_shown(
    corpus: FakeCorpus,
) -> None:
    """NCBI answers an unknown `api_key` with HTTP 400 "API key invalid" (echoing the key):
    the client raises `EntrezApiKeyError` without retrying, and its message does not carry
    the key; the key NCBI knows, and no key at all, are served."""
    outcomes: dict[str, object] = {}

    async def scenario(fake: FakeEutilsServer) -> None:
        for name, key in (("wrong", SECRET_KEY), ("known", "known-key"), ("none", None)):
            client = _client(fake, api_key=key, max_retries=3)
            try:
                outcomes[name] = (await client.esearch("trial", retmax=0)).count
            except EntrezError as exc:
                outcomes[name] = exc
            finally:
                await client.aclose()

    with FakeEutilsServer(corpus, api_keys={"known-key"}) as fake:
        asyncio.run(scenario(fake))
        statuses = [entry["status"] for entry in fake.log]
    wrong = outcomes["wrong"]
    assert isinstance(wrong, EntrezApiKeyError), wrong
    assert SECRET_KEY not in str(wrong)
    assert "HTTP 400" in str(wrong)
    assert isinstance(outcomes["known"], int)
    assert outcomes["known"] == outcomes["none"]
    assert statuses == [400, 200, 200]  # the refused key was asked once, not retried


# --- the rate limit ----------------------------------------------------------------------


@contextmanager
def _fake_process() -> Iterator[str]:
    """`biomcp fake-eutils` (50 synthetic records) in a process of its own; its base URL."""
    command = [
        sys.executable,
        "-c",
        "from biomcp.entrypoints.cli.main import main; main()",
        "fake-eutils",
        "--synthetic",
        "50",
        "--port",
        "0",
    ]
    with subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert " at http://127.0.0.1:" in line, line
            yield line.split()[-1]
        finally:
            process.terminate()
            process.wait(timeout=30)


@pytest.mark.slow
@pytest.mark.parametrize(("api_key", "limit", "calls"), [(None, 3, 20), (SECRET_KEY, 10, 50)])
def test_concurrent_calls_from_two_clients_and_a_thread_stay_within_ncbi_rate(
    api_key: str | None, limit: int, calls: int
) -> None:
    """Tool calls in one event loop and a sync in another thread, through two clients of one
    NCBI identity: the process-wide limiter's own start log never holds N + 1 starts within
    the window and margin (exact: its own clock), and every request the fake received had a
    start of its own before it (exact too: both stamp the system's monotonic clock, and a
    request arrives after its start), so every request that reached the server was one the
    limiter let through.

    What the fake sees within one second is not asserted: under load its arrival stamps carry
    its own scheduling (in one CI run it stamped three requests together at least 0.43 s later
    after their starts than the next three), which the limiter's margin is sized for on a
    network, not for a descheduled server."""
    # The fake runs in its own process (warm: its index is built before it serves): in this
    # process its event loop would share the GIL with the two client loops, stall, and then
    # stamp the requests queued meanwhile together, a bunching of its own making.
    with _fake_process() as base_url:
        settings = EntrezSettings(base_url=base_url, api_key=api_key)
        tools, sync = HttpEntrezClient(settings), HttpEntrezClient(settings)
        assert tools._limiter is sync._limiter  # the production path: one shared limiter
        limiter = tools._limiter

        async def burst(client: HttpEntrezClient, first: int, count: int) -> None:
            await asyncio.gather(
                *(client.esearch(f"trial {i}", retmax=1) for i in range(first, first + count))
            )
            await client.aclose()

        in_thread = calls // 3
        worker = threading.Thread(target=lambda: asyncio.run(burst(sync, 0, in_thread)))
        started = time.monotonic()
        worker.start()
        asyncio.run(burst(tools, in_thread, calls - in_thread))
        worker.join(timeout=120)
        elapsed = time.monotonic() - started
        log = httpx.get(f"{base_url}/_fake/log", timeout=30).json()
        arrivals = [e["mono"] for e in log]
    starts = list(limiter.history())
    assert len(arrivals) == calls
    # Every attempt took its turn: a retried one (a kept-alive connection the fake had just
    # closed) was started again, and counted again.
    assert len(starts) == calls + tools.stats.retries + sync.stats.retries
    for first, last in zip(starts, starts[limit:], strict=False):
        assert last - first >= limiter.span  # exact: no N + 1 starts within the span
    # The k-th arrival follows at least k starts: no request reached the server unlimited.
    for k, arrived in enumerate(sorted(arrivals)):
        assert sum(1 for start in starts if start < arrived) >= k + 1
    # ...and not needlessly slow (a loose bound: a window and margin per N calls).
    assert elapsed < (calls // limit) * limiter.span * 1.5 + 5


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


# --- the response size limit -------------------------------------------------------------

MIB = 1024 * 1024


def _settle(read: Callable[[], int]) -> int:
    """`read()` once it stops growing (the fake's stream winds down after the hang-up)."""
    last = -1
    for _ in range(50):
        now = read()
        if now == last:
            return now
        last = now
        time.sleep(0.1)
    return last


def test_an_oversized_answer_is_refused_while_streaming_and_not_retried(
    server: FakeEutilsServer,
) -> None:
    """A 200 MB answer (chunked: no length announced) against a 1 MiB limit: refused once
    about 1 MiB was read, asked once, and the connection dropped (the fake stops producing)."""
    server.faults.sequence([{"kind": "oversized", "size": 200_000_000}])
    client = _client(server, max_response_bytes=MIB, max_retries=3)

    async def scenario() -> EntrezResponseError:
        try:
            with pytest.raises(EntrezResponseError, match="limit") as info:
                await client.efetch(["30000001"])
            return info.value
        finally:
            await client.aclose()

    error = asyncio.run(scenario())
    assert "NCBI_MAX_RESPONSE_MB" in str(error)
    assert len(server.log) == 1  # not retried
    assert client.stats.oversized == 1
    assert MIB < client.stats.bytes_received <= MIB + 64 * 1024
    assert client.stats.bytes_decoded <= MIB
    streamed = _settle(lambda: server.faults.bytes_streamed)
    assert streamed < 200_000_000 // 4  # the rest was never produced: the connection closed


@pytest.mark.parametrize(("limit_mib", "bomb_mib"), [(1, 256), (64, 1024)])
def test_a_gzip_bomb_is_refused_after_inflating_about_the_limit(
    server: FakeEutilsServer, limit_mib: int, bomb_mib: int
) -> None:
    """About a thousandth of a bomb's size in gzip (1 MB for the 1 GiB one): refused once the
    inflated bytes pass the limit (1 MiB, and the 64 MiB default), having received about a
    thousandth of that."""
    server.faults.sequence([{"kind": "gzip_bomb", "size": bomb_mib * MIB}])
    limit = limit_mib * MIB
    client = _client(server, max_response_bytes=limit, max_retries=3)

    async def scenario() -> None:
        try:
            with pytest.raises(EntrezResponseError, match="once decompressed"):
                await client.esearch("trial")
        finally:
            await client.aclose()

    asyncio.run(scenario())
    assert len(server.log) == 1
    assert server.log[0]["fault"] == "gzip_bomb"
    assert limit < client.stats.bytes_decoded <= limit + STEP
    # Received: the compressed form of about the limit, plus at most a network chunk or two.
    assert client.stats.bytes_received <= limit // 500 + 256 * 1024


def test_a_compressed_answer_within_the_limit_is_read(server: FakeEutilsServer) -> None:
    client = _client(server, max_response_bytes=MIB)

    async def scenario() -> list[str]:
        result = await client.efetch(["30000001", "30000002"])
        await client.aclose()
        return [r.pmid for r in result.records]

    assert asyncio.run(scenario()) == ["30000001", "30000002"]
    assert 0 < client.stats.bytes_received <= client.stats.bytes_decoded <= MIB


# --- answers cut short ---------------------------------------------------------------------


def _cached(server: FakeEutilsServer, tmp_path: Path, **settings: Any) -> CachingEntrezClient:
    return CachingEntrezClient(
        _client(server, **settings), tmp_path / "ncbi.sqlite3", namespace=server.base_url
    )


@pytest.mark.parametrize(
    ("kind", "fetch"),
    [("truncated_xml", "efetch_xml"), ("truncated_medline", "efetch_medline")],
)
def test_an_answer_cut_short_once_is_retried_then_cached_whole(
    server: FakeEutilsServer, tmp_path: Path, kind: str, fetch: str
) -> None:
    server.faults.sequence([kind], endpoint="efetch")
    cache = _cached(server, tmp_path)
    wanted = ["30000001", "30000002"]

    async def scenario() -> bytes | str:
        try:
            return await getattr(cache, fetch)(wanted)  # type: ignore[no-any-return]
        finally:
            await cache.aclose()

    answer = asyncio.run(scenario())
    assert [e["fault"] for e in server.log] == [kind, None]
    assert cache.stats.retries == 1
    if fetch == "efetch_medline":
        assert isinstance(answer, str)
        assert sorted(split_medline(answer)) == wanted
        assert all(r.splitlines()[-1].startswith("SO  - ") for r in split_medline(answer).values())
    assert len(cache) == 2


@pytest.mark.parametrize(
    ("kind", "fetch"),
    [
        ("truncated_xml", "efetch_xml"),
        ("truncated_xml", "efetch"),
        ("truncated_medline", "efetch_medline"),
    ],
)
def test_an_answer_always_cut_short_is_an_entrez_error_and_nothing_is_cached(
    server: FakeEutilsServer, tmp_path: Path, kind: str, fetch: str
) -> None:
    server.faults.random(1.0, [kind], seed=1)
    cache = _cached(server, tmp_path, max_retries=2)

    async def scenario() -> None:
        try:
            with pytest.raises(EntrezResponseError, match=r"cut short|not well-formed"):
                await getattr(cache, fetch)(["30000001", "30000002"])
        finally:
            await cache.aclose()

    asyncio.run(scenario())
    assert len(server.log) == 3  # the first answer and two retries
    assert len(cache) == 0


def test_a_backend_failure_in_medline_mode_is_retried_not_taken_for_a_bad_query(
    server: FakeEutilsServer,
) -> None:
    server.faults.sequence(["ncbi_error", "html"], endpoint="efetch")
    client = _client(server)

    async def scenario() -> str:
        try:
            return await client.efetch_medline(["30000001"])
        finally:
            await client.aclose()

    text = asyncio.run(scenario())
    assert text.lstrip().startswith("PMID- 30000001")
    assert [e["fault"] for e in server.log] == ["ncbi_error", "html", None]
    assert client.stats.retries == 2


# --- complete enumeration past the ESearch cap ---------------------------------------------


ALL_SYNTHETIC = "humans[mh] OR animals[mh]"  # every synthetic article carries one of them


async def _count(fake: FakeEutilsServer, mindate: str, maxdate: str) -> int:
    # The fake's first search of a large corpus can outlast httpx's 5 s default on a busy machine.
    async with httpx.AsyncClient(timeout=60) as http:
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

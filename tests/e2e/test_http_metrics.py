"""`GET /metrics` of a real `biomcp serve-http` process, after tool calls over MCP.

The server runs on the embedded stores and syncs from the fake E-utilities over HTTP. The
exposition is read back with `prometheus_client`'s own parser.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from biomcp.testing.eutils import FakeEutilsServer
from tests.support.mcp_inprocess import call_structured as call
from tests.support.servers import (
    HttpServer,
    http_client,
    mcp_http,
    recent_fake,
    serve_http,
    server_env,
)

pytestmark = pytest.mark.e2e

#: A query word that must never reach the metrics.
MARKER = "zebrafishmarkerquery"
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(server: HttpServer) -> tuple[str, Samples]:
    """The exposition's text and its samples by name and sorted labels."""
    with http_client(server) as http:
        response = http.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return response.text, samples


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    with recent_fake(20, seed=5) as server:
        yield server


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeEutilsServer
) -> Iterator[HttpServer]:
    root = tmp_path_factory.mktemp("metrics")
    env = server_env(root / "data", fake.base_url)
    with serve_http(["--port", "0"], env=env, cwd=root) as running:
        yield running


def test_metrics_count_tool_calls_by_outcome_time_them_and_count_ncbi_requests(
    server: HttpServer,
) -> None:
    async def calls() -> None:
        async with mcp_http(server.url) as client:
            error, found = await call(
                client, "pubmed_search_articles", {"queryTerm": f"cancer OR {MARKER}"}
            )
            assert not error, found
            error, refused = await call(client, "rag_search", {"query": MARKER, "top_k": 0})
            assert error
            assert refused["error"]["code"] == "VALIDATION"

    asyncio.run(calls())
    text, samples = scrape(server)

    def value(name: str, **labels: str) -> float:
        return samples.get((name, tuple(sorted(labels.items()))), 0.0)

    live = "pubmed_search_articles"
    assert value("biomcp_tool_calls_total", tool=live, outcome="ok") == 1
    assert value("biomcp_tool_calls_total", tool="rag_search", outcome="VALIDATION") == 1
    assert value("biomcp_tool_calls_total", tool="rag_search", outcome="ok") == 0
    assert value("biomcp_tool_call_seconds_count", tool=live) == 1
    assert value("biomcp_tool_call_seconds_count", tool="rag_search") == 1
    assert value("biomcp_tool_call_seconds_bucket", tool=live, le="+Inf") == 1
    assert value("biomcp_ncbi_requests_total") >= 1
    assert value("biomcp_ncbi_waiting") == 0
    assert value("biomcp_http_requests_total", route="/mcp", status="200") >= 2
    assert MARKER not in text
    assert "cancer" not in text


def test_unknown_paths_count_as_other_and_the_index_lists_metrics(server: HttpServer) -> None:
    with http_client(server) as http:
        assert http.get(f"/{MARKER}").status_code == 404
        index = http.get("/").json()
    assert index["endpoints"]["metrics"] == "/metrics"
    text, samples = scrape(server)
    assert samples[("biomcp_http_requests_total", (("route", "other"), ("status", "404")))] >= 1
    assert samples[("biomcp_http_requests_total", (("route", "/"), ("status", "200")))] >= 1
    assert MARKER not in text


def test_the_sync_jobs_gauge_counts_job_states_from_the_job_log(server: HttpServer) -> None:
    async def sync() -> None:
        async with mcp_http(server.url) as client:
            error, report = await call(
                client, "pubmed_sync_delta", {"query_key": "metrics", "term": "cancer"}
            )
            assert not error, report

    asyncio.run(sync())
    _, samples = scrape(server)
    assert samples[("biomcp_sync_jobs", (("state", "succeeded"),))] == 1
    assert ("biomcp_sync_jobs", (("state", "running"),)) not in samples


def test_metrics_off_removes_the_endpoint(tmp_path: Path, fake: FakeEutilsServer) -> None:
    env = server_env(tmp_path / "data", fake.base_url, BIOMCP_METRICS="off")
    with (
        serve_http(["--port", "0"], env=env, cwd=tmp_path) as running,
        http_client(running) as http,
    ):
        assert http.get("/metrics").status_code == 404
        assert http.get("/").json()["endpoints"]["metrics"] is None

"""`LivePubMed` as a facade: one job per concern over one shared `LiveContext`.

The jobs run on the real Entrez client, over the fake E-utilities in process (httpx's ASGI
transport) or over a transport that fails.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

import httpx
import pytest

from biomcp.adapters.entrez.client import EntrezSettings, HttpEntrezClient
from biomcp.adapters.entrez.ratelimit import RateLimiter
from biomcp.ports.entrez import EntrezUnavailableError
from biomcp.testing.eutils import FakeCorpus
from biomcp.testing.eutils.app import create_app
from biomcp.testing.eutils.synthetic import generate_articles
from biomcp.usecases.live import LiveConfig, LiveContext, LivePubMed
from biomcp.usecases.live.articles import ArticleDetails
from biomcp.usecases.live.citations import CitationFormatter
from biomcp.usecases.live.citematch import CitationLookup
from biomcp.usecases.live.fulltext import FullText
from biomcp.usecases.live.identifiers import IdConverter
from biomcp.usecases.live.mesh import MeshLookup
from biomcp.usecases.live.resources import ServerResources
from biomcp.usecases.live.search import LiveSearch

pytestmark = pytest.mark.unit

JOBS: dict[str, Callable[..., Any]] = {
    "search": LiveSearch.search,
    "fetch": ArticleDetails.fetch,
    "relationships": ArticleDetails.relationships,
    "cite": ArticleDetails.cite,
    "format_citations": CitationFormatter.format_citations,
    "lookup_citations": CitationLookup.lookup_citations,
    "fetch_fulltext": FullText.fetch_fulltext,
    "convert_ids": IdConverter.convert_ids,
    "lookup_mesh": MeshLookup.lookup_mesh,
    "server_info": ServerResources.server_info,
    "database_stats": ServerResources.database_stats,
}
NOON = datetime(2030, 1, 2, 12, 0, tzinfo=UTC)


def _fake_client() -> HttpEntrezClient:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(5, start=date(2024, 1, 1), end=date(2024, 3, 1), seed=3)
    )
    transport = httpx.ASGITransport(app=create_app(corpus))
    settings = EntrezSettings(base_url="http://eutils.test", max_retries=0)
    return HttpEntrezClient(settings, limiter=RateLimiter(1000), transport=transport)


def _failing_client() -> HttpEntrezClient:
    transport = httpx.MockTransport(lambda request: httpx.Response(503))
    settings = EntrezSettings(base_url="http://down.test", max_retries=0)
    return HttpEntrezClient(settings, limiter=RateLimiter(1000), transport=transport)


def test_the_facade_offers_every_job_method_under_its_name_with_the_same_parameters() -> None:
    public = {
        name
        for name, member in inspect.getmembers(LivePubMed, inspect.iscoroutinefunction)
        if not name.startswith("_")
    }
    assert public == set(JOBS)
    for name, job_method in JOBS.items():
        facade = inspect.signature(getattr(LivePubMed, name))
        job = inspect.signature(job_method)
        assert list(facade.parameters.values())[1:] == list(job.parameters.values())[1:], name


def test_a_call_made_by_one_job_is_what_the_resources_job_reports() -> None:
    async def scenario() -> tuple[Any, Any]:
        client = _fake_client()
        context = LiveContext(client, LiveConfig(), clock=lambda: NOON)
        resources = ServerResources(context)
        try:
            before = await resources.server_info(mcp_spec_version="test")
            await LiveSearch(context).search("cancer OR asthma OR diabetes")
            after = await resources.server_info(mcp_spec_version="test")
        finally:
            await client.aclose()
        return before["operationalStatus"], after["operationalStatus"]

    before, after = asyncio.run(scenario())
    assert before["ncbiStatus"] == "Unknown: no NCBI request yet"
    assert after["ncbiStatus"] == "Nominal"
    assert after["lastNcbiConnectivityCheck"] == "2030-01-02T12:00:00Z"


def test_a_failed_call_leaves_the_server_info_degraded_with_its_reason() -> None:
    async def scenario() -> Any:
        client = _failing_client()
        live = LivePubMed(client)
        try:
            with pytest.raises(EntrezUnavailableError):
                await live.database_stats()
            info = await live.server_info(mcp_spec_version="test")
        finally:
            await client.aclose()
        return info["operationalStatus"]

    status = asyncio.run(scenario())
    assert str(status["ncbiStatus"]).startswith(
        "Degraded: the last live call failed (EntrezUnavailableError"
    )


def test_the_facade_and_its_jobs_share_one_configuration() -> None:
    config = LiveConfig(server_name="shared-name", deadline_s=7.0)
    live = LivePubMed(_failing_client(), config=config)
    assert live.config is config
    assert live.context.config is config

"""Client behaviour at the transport edge (NCBI is not ours): hostile payloads, settings."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from biomcp.adapters.entrez.client import DEFAULT_BASE_URL, EntrezSettings, HttpEntrezClient
from biomcp.adapters.entrez.ratelimit import RateLimiter
from biomcp.ports.entrez import EntrezResponseError

pytestmark = pytest.mark.unit


def _client_answering(body: bytes) -> HttpEntrezClient:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=body))
    settings = EntrezSettings(base_url="http://ncbi.test", max_retries=0)
    return HttpEntrezClient(settings, limiter=RateLimiter(1000), transport=transport)


def test_an_external_entity_in_an_answer_is_refused_without_reading_the_file(
    tmp_path: Path,
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    payload = (
        f'<?xml version="1.0"?><!DOCTYPE PubmedArticleSet [<!ENTITY x SYSTEM "file://{secret}">]>'
        "<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID><Article>"
        "<ArticleTitle>&x;</ArticleTitle></Article></MedlineCitation></PubmedArticle>"
        "</PubmedArticleSet>"
    ).encode()
    client = _client_answering(payload)

    async def scenario() -> None:
        with pytest.raises(EntrezResponseError) as info:
            await client.efetch(["1"])
        assert "TOP-SECRET" not in str(info.value)
        await client.aclose()

    asyncio.run(scenario())


def test_a_billion_laughs_answer_is_refused_without_expanding() -> None:
    entities = '<!ENTITY l0 "lol">' + "".join(
        f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10)
    )
    payload = (
        f'<?xml version="1.0"?><!DOCTYPE eSearchResult [{entities}]>'
        "<eSearchResult><Count>&l9;</Count></eSearchResult>"
    ).encode()
    client = _client_answering(payload)

    async def scenario() -> None:
        with pytest.raises(EntrezResponseError):
            await client.esearch("x")
        await client.aclose()

    asyncio.run(scenario())


def test_settings_come_from_the_ncbi_environment_variables() -> None:
    settings = EntrezSettings.from_env(
        {
            "NCBI_EUTILS_BASE_URL": "http://127.0.0.1:8081",
            "NCBI_API_KEY": "k-123",
            "NCBI_TOOL_IDENTIFIER": "my-tool/2",
            "NCBI_ADMIN_EMAIL": "a@b.org",
            "NCBI_REQUEST_DELAY_MS": "250",
            "NCBI_MAX_RETRIES": "5",
        }
    )
    assert (settings.base_url, settings.api_key, settings.tool, settings.email) == (
        "http://127.0.0.1:8081", "k-123", "my-tool/2", "a@b.org",
    )  # fmt: skip
    assert (settings.request_delay_ms, settings.max_retries) == (250, 5)
    assert "k-123" not in repr(settings)
    defaults = EntrezSettings.from_env({})
    assert defaults.base_url == DEFAULT_BASE_URL
    assert defaults.api_key is None
    assert defaults.tool.startswith("bio-mcp/")
    with pytest.raises(ValueError, match="NCBI_MAX_RETRIES"):
        EntrezSettings.from_env({"NCBI_MAX_RETRIES": "-1"})


def test_the_response_size_limit_comes_from_ncbi_max_response_mb() -> None:
    assert EntrezSettings.from_env({}).max_response_bytes == 64 * 1024 * 1024
    assert EntrezSettings.from_env({"NCBI_MAX_RESPONSE_MB": "8"}).max_response_bytes == (
        8 * 1024 * 1024
    )
    with pytest.raises(ValueError, match="NCBI_MAX_RESPONSE_MB"):
        EntrezSettings.from_env({"NCBI_MAX_RESPONSE_MB": "0"})


def test_request_delay_slows_the_shared_limiter() -> None:
    client = HttpEntrezClient(
        EntrezSettings(base_url="http://127.0.0.1:7/delay-test", request_delay_ms=700)
    )
    assert client._limiter.interval == pytest.approx(0.7)

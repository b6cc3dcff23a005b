"""Client behaviour at the transport edge (NCBI is not ours): hostile payloads, settings."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from biomcp.adapters.entrez.client import EntrezSettings, HttpEntrezClient
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


def test_request_delay_slows_the_shared_limiter() -> None:
    client = HttpEntrezClient(
        EntrezSettings(base_url="http://127.0.0.1:7/delay-test", request_delay_ms=700)
    )
    assert client._limiter.interval == pytest.approx(0.7)

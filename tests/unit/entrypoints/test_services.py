"""The composition root: adapters given by keyword reach the use cases and stay open; closing
closes exactly what was built, newest first, once; the typed NCBI settings reach the client."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from biomcp.adapters.embeddings import CachingEmbedder
from biomcp.adapters.entrez.cache import CachingEntrezClient
from biomcp.adapters.entrez.client import EntrezSettings, HttpEntrezClient
from biomcp.adapters.sql import SqlMetadataStore
from biomcp.adapters.vectors import EmbeddedVectorStore
from biomcp.entrypoints.backends import entrez_settings
from biomcp.entrypoints.services import Services
from biomcp.entrypoints.settings import Settings
from biomcp.testing.memory import MemoryMetadataStore

pytestmark = pytest.mark.unit


@pytest.fixture
def settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Settings:
    """The model-free embedder and a data folder of its own; no bio-mcp variable, no `.env`."""
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith(("MCP_", "NCBI_", "BIOMCP_", "WEAVIATE_", "OPENAI_")):
            monkeypatch.delenv(name)
    return Settings(biomcp_data_dir=tmp_path / "data", biomcp_embeddings="hashing")


class _CountedStore(EmbeddedVectorStore):
    """The embedded store, counting its closes."""

    closes = 0

    async def aclose(self) -> None:
        self.closes += 1
        await super().aclose()


def test_adapters_given_by_keyword_are_the_ones_the_use_cases_use_and_stay_open(
    settings: Settings, tmp_path: Path
) -> None:
    metadata = MemoryMetadataStore()
    vectors = _CountedStore(tmp_path / "given")
    services = Services(settings, metadata=metadata, vectors=vectors)

    async def scenario() -> None:
        try:
            project = await services.projects.create_project("notes")
            assert await metadata.get_project("notes") == project
            assert project.collection in await vectors.collections()
            assert await services.readiness() == {"metadata": "ok", "vectors": "ok"}
        finally:
            await services.aclose()
        assert services.metadata is metadata  # still given after closing
        assert services.vectors is vectors

    asyncio.run(scenario())
    assert vectors.closes == 0
    data = settings.biomcp_data_dir
    assert not (data / "biomcp.sqlite3").exists()  # the configured stores were never built
    assert not (data / "vectors").exists()


def test_a_given_entrez_client_serves_both_the_syncs_and_the_live_tools(
    settings: Settings,
) -> None:
    given = HttpEntrezClient(EntrezSettings())
    services = Services(settings, entrez=given)

    assert services.ncbi is given
    assert services.entrez is given
    assert services.live.config.tool == EntrezSettings().tool
    asyncio.run(services.aclose())
    assert not (settings.biomcp_data_dir / "ncbi-cache.sqlite3").exists()


def _spy(monkeypatch: pytest.MonkeyPatch, closed: list[str]) -> None:
    """Record each adapter class's close, by name, and run the real one."""

    def recording(cls: type, method: str, name: str) -> None:
        real: Callable[..., Any] = getattr(cls, method)

        if asyncio.iscoroutinefunction(real):

            async def aclose(self: Any) -> None:
                closed.append(name)
                await real(self)

            monkeypatch.setattr(cls, method, aclose)
        else:

            def close(self: Any) -> None:
                closed.append(name)
                real(self)

            monkeypatch.setattr(cls, method, close)

    recording(SqlMetadataStore, "aclose", "metadata")
    recording(EmbeddedVectorStore, "aclose", "vectors")
    recording(CachingEmbedder, "close", "embedding cache")
    recording(CachingEmbedder, "aclose", "embedding cache and model")
    recording(HttpEntrezClient, "aclose", "ncbi")
    recording(CachingEntrezClient, "close", "ncbi cache")
    recording(CachingEntrezClient, "aclose", "ncbi cache and ncbi")


def test_closing_closes_only_what_was_built_newest_first_and_once(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[str] = []
    _spy(monkeypatch, closed)
    services = Services(settings)

    async def scenario() -> None:
        first = services.search  # builds the vectors, the model and its cache, the metadata
        assert services.documents is services.documents  # built once, then kept
        await services.aclose()
        assert closed == ["metadata", "embedding cache", "vectors"]
        await services.aclose()
        assert closed == ["metadata", "embedding cache", "vectors"]  # nothing twice
        assert services.search is not first  # the next use builds afresh
        await services.aclose()

    asyncio.run(scenario())


def test_a_wrapped_client_and_its_cache_each_close_once(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[str] = []
    _spy(monkeypatch, closed)
    services = Services(settings)

    async def scenario() -> None:
        services.live  # noqa: B018 - builds NCBI, its response cache and the stores
        await services.aclose()

    asyncio.run(scenario())
    assert closed == ["vectors", "metadata", "ncbi cache", "ncbi"]


def test_closing_unused_services_closes_nothing_and_writes_nothing(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[str] = []
    _spy(monkeypatch, closed)
    services = Services(settings)

    asyncio.run(services.aclose())

    assert closed == []
    assert not settings.biomcp_data_dir.exists()


def test_the_typed_ncbi_settings_reach_the_eutilities_client(settings: Settings) -> None:
    typed = Settings(
        biomcp_data_dir=settings.biomcp_data_dir,
        ncbi_eutils_base_url="http://127.0.0.1:8765/eutils/",
        ncbi_idconv_base_url="http://127.0.0.1:8765/idconv/",
        ncbi_api_key=" k3y ",
        ncbi_tool_identifier="lab-tool",
        ncbi_admin_email="lab@example.org",
        ncbi_request_delay_ms=150,
        ncbi_max_retries=5,
        ncbi_max_response_mb=8,
    )

    client = entrez_settings(typed)

    assert client.base_url == "http://127.0.0.1:8765/eutils"
    assert client.idconv_base_url == "http://127.0.0.1:8765/idconv/"
    assert client.api_key == "k3y"
    assert (client.tool, client.email) == ("lab-tool", "lab@example.org")
    assert (client.request_delay_ms, client.max_retries) == (150, 5)
    assert client.max_response_bytes == 8 * 1024 * 1024
    assert "k3y" not in repr(client)


def test_unset_ncbi_settings_give_the_clients_defaults(settings: Settings) -> None:
    assert entrez_settings(settings) == EntrezSettings(budget_dir=settings.biomcp_data_dir)


def test_built_names_only_what_was_built_and_never_builds(settings: Settings) -> None:
    services = Services(settings)
    assert services.built("ncbi") is None
    assert "ncbi" not in vars(services)  # asking built nothing
    client = services.ncbi
    assert services.built("ncbi") is client
    assert services.built("settings") is None  # not a part Services builds
    asyncio.run(services.aclose())
    assert services.built("ncbi") is None

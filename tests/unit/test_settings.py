"""The configuration object: defaults, environment names, and clear start-up failures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from biomcp.adapters.entrez.client import DEFAULT_BASE_URL, EntrezSettings
from biomcp.entrypoints.backends import entrez_settings
from biomcp.entrypoints.settings import Settings, format_settings_error

pytestmark = pytest.mark.unit


def _clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no stray .env
    for name in list(__import__("os").environ):
        if name.startswith(("MCP_", "NCBI_", "BIOMCP_", "WEAVIATE_", "OPENAI_")):
            monkeypatch.delenv(name)


def test_defaults_are_the_embedded_stdio_setup(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _clean(monkeypatch, tmp_path)
    settings = Settings()
    assert settings.mcp_transport_type == "stdio"
    assert settings.biomcp_vector_backend == "embedded"
    assert settings.biomcp_embeddings == "onnx"
    assert settings.biomcp_onnx_precision == "auto"
    assert settings.biomcp_database_url is None
    assert settings.biomcp_collection == "PubMedChunk"
    assert settings.biomcp_tool_names == "portable"
    assert settings.loopback


def test_variables_are_read_by_their_spec_names(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _clean(monkeypatch, tmp_path)
    monkeypatch.setenv("BIOMCP_VECTOR_BACKEND", "weaviate")
    monkeypatch.setenv("WEAVIATE_URL", "http://10.0.0.5:8080/")
    monkeypatch.setenv("NCBI_API_KEY", "abc")
    monkeypatch.setenv("MCP_ALLOWED_ORIGINS", "https://a.example, https://b.example")
    monkeypatch.setenv("BIOMCP_SYNC_INITIAL_DAYS", "30")
    monkeypatch.setenv("BIOMCP_ONNX_PRECISION", "fp32")
    settings = Settings()
    assert settings.biomcp_onnx_precision == "fp32"
    assert settings.biomcp_vector_backend == "weaviate"
    assert settings.weaviate_url == "http://10.0.0.5:8080"
    assert settings.allowed_origins == ("https://a.example", "https://b.example")
    assert settings.biomcp_sync_initial_days == 30
    assert entrez_settings(settings).api_key == "abc"
    assert "abc" not in repr(settings)  # secrets never print


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("BIOMCP_VECTOR_BACKEND", "nope"),
        ("BIOMCP_EMBEDDINGS", "word2vec"),
        ("BIOMCP_ONNX_PRECISION", "int4"),
        ("MCP_HTTP_PORT", "70000"),
        ("NCBI_EUTILS_BASE_URL", "ftp://x"),
        ("BIOMCP_SEARCH_ALPHA", "1.5"),
        ("WEAVIATE_CLASS", "lower-case"),
        ("MCP_AUTH_SECRET_KEY", "short"),
        ("BIOMCP_SYNC_INITIAL_DAYS", "-3"),
    ],
)
def test_a_bad_value_fails_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, value: str
) -> None:
    _clean(monkeypatch, tmp_path)
    monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError) as raised:
        Settings()
    message = format_settings_error(raised.value)
    assert message.startswith("invalid configuration:")
    assert name in message
    if name == "MCP_AUTH_SECRET_KEY":
        assert value not in message


def test_openai_embeddings_need_a_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _clean(monkeypatch, tmp_path)
    monkeypatch.setenv("BIOMCP_EMBEDDINGS", "openai")
    with pytest.raises(ValidationError, match="OPENAI_API_KEY"):
        Settings()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert Settings().biomcp_embeddings == "openai"


def _client_from_env(monkeypatch: pytest.MonkeyPatch, environ: dict[str, str]) -> EntrezSettings:
    """The E-utilities client's settings as a process started with `environ` would build them."""
    for name in list(os.environ):
        if name.startswith("NCBI_"):
            monkeypatch.delenv(name)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    return entrez_settings(Settings(_env_file=None))


def test_the_client_settings_come_from_the_ncbi_environment_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = _client_from_env(
        monkeypatch,
        {
            "NCBI_EUTILS_BASE_URL": "http://127.0.0.1:8081",
            "NCBI_API_KEY": "k-123",
            "NCBI_TOOL_IDENTIFIER": "my-tool/2",
            "NCBI_ADMIN_EMAIL": "a@b.org",
            "NCBI_REQUEST_DELAY_MS": "250",
            "NCBI_MAX_RETRIES": "5",
        },
    )
    assert (settings.base_url, settings.api_key, settings.tool, settings.email) == (
        "http://127.0.0.1:8081", "k-123", "my-tool/2", "a@b.org",
    )  # fmt: skip
    assert (settings.request_delay_ms, settings.max_retries) == (250, 5)
    assert "k-123" not in repr(settings)
    defaults = _client_from_env(monkeypatch, {})
    assert defaults.base_url == DEFAULT_BASE_URL
    assert defaults.api_key is None
    assert defaults.tool.startswith("bio-mcp/")
    with pytest.raises(ValueError, match=r"(?i)NCBI_MAX_RETRIES"):
        _client_from_env(monkeypatch, {"NCBI_MAX_RETRIES": "-1"})


def test_the_response_size_limit_comes_from_ncbi_max_response_mb(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _client_from_env(monkeypatch, {}).max_response_bytes == 64 * 1024 * 1024
    assert _client_from_env(monkeypatch, {"NCBI_MAX_RESPONSE_MB": "8"}).max_response_bytes == (
        8 * 1024 * 1024
    )
    with pytest.raises(ValueError, match=r"(?i)NCBI_MAX_RESPONSE_MB"):
        _client_from_env(monkeypatch, {"NCBI_MAX_RESPONSE_MB": "0"})

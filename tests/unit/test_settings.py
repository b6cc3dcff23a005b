"""The configuration object: defaults, environment names, and clear start-up failures."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

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
    assert settings.ncbi_environ()["NCBI_API_KEY"] == "abc"
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

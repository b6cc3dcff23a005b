"""Renamed settings keep their old names: `BIOMCP_COLLECTION` (once `WEAVIATE_CLASS`) and
`BIOMCP_EMBEDDINGS=hashing` (once `deterministic`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from biomcp.adapters.embeddings import HashingEmbedder
from biomcp.entrypoints.cli.commands.clients import server_env
from biomcp.entrypoints.services import Services
from biomcp.entrypoints.settings import (
    Settings,
    format_settings_error,
    old_names,
    unknown_variables,
)

pytestmark = pytest.mark.unit


@pytest.fixture
def clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No bio-mcp variable in the environment and no `.env` but the one a test writes."""
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith(("MCP_", "NCBI_", "BIOMCP_", "WEAVIATE_", "OPENAI_")):
            monkeypatch.delenv(name)
    return tmp_path


def test_biomcp_collection_names_the_corpus_collection(
    clean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIOMCP_COLLECTION", "TrialChunk")

    assert Settings().biomcp_collection == "TrialChunk"
    assert Settings(biomcp_collection="Other").biomcp_collection == "Other"


def test_the_old_name_weaviate_class_still_names_it(
    clean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WEAVIATE_CLASS", "LegacyChunk")

    assert Settings().biomcp_collection == "LegacyChunk"
    assert old_names() == {"weaviate_class": "biomcp_collection"}


def test_where_both_names_are_set_the_new_one_wins(
    clean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (clean / ".env").write_text("WEAVIATE_CLASS=DotOld\nBIOMCP_COLLECTION=DotNew\n")
    assert Settings().biomcp_collection == "DotNew"

    monkeypatch.setenv("WEAVIATE_CLASS", "EnvOld")
    monkeypatch.setenv("BIOMCP_COLLECTION", "EnvNew")
    assert Settings().biomcp_collection == "EnvNew"


def test_a_bad_collection_name_names_both_variables(
    clean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WEAVIATE_CLASS", "lower-case")

    with pytest.raises(ValidationError) as raised:
        Settings()

    [line] = format_settings_error(raised.value).splitlines()[1:]
    assert line.startswith("  BIOMCP_COLLECTION (or its old name WEAVIATE_CLASS): ")


def test_the_old_name_is_no_unknown_variable_and_a_typo_of_the_new_one_is() -> None:
    assert unknown_variables(["WEAVIATE_CLASS", "weaviate_class", "BIOMCP_COLLECTION"]) == []
    assert unknown_variables(["BIOMCP_COLLECTON"]) == [
        "BIOMCP_COLLECTON is not a bio-mcp setting and is ignored; did you mean BIOMCP_COLLECTION?"
    ]


def test_a_client_config_passes_on_the_old_name(tmp_path: Path) -> None:
    env = server_env({"WEAVIATE_CLASS": "LegacyChunk"}, {"BIOMCP_COLLECTION": "X"}, tmp_path)

    assert env == {"BIOMCP_COLLECTION": "X", "WEAVIATE_CLASS": "LegacyChunk"}


@pytest.mark.parametrize("value", ["hashing", "deterministic"])
def test_hashing_and_deterministic_build_the_same_embedder(clean: Path, value: str) -> None:
    settings = Settings(
        biomcp_data_dir=clean, biomcp_embeddings=value, biomcp_embedding_cache=False
    )

    embedder = Services(settings).embedder

    assert settings.hashing_embeddings
    assert isinstance(embedder, HashingEmbedder)
    assert embedder.model_id == "deterministic-v1"  # the id existing corpora carry
    assert embedder.dim == 384
    assert embedder.max_tokens == 256
    reference = HashingEmbedder(max_tokens=256)
    assert embedder.embed_sync(["blood pressure"]) == reference.embed_sync(["blood pressure"])


def test_other_embedders_are_not_the_hashing_one(clean: Path) -> None:
    assert not Settings(biomcp_embeddings="onnx").hashing_embeddings


def test_the_library_takes_the_old_name_as_an_override(clean: Path) -> None:
    from biomcp import open_corpus

    base = Settings(biomcp_data_dir=clean, biomcp_embeddings="hashing")
    with open_corpus(base, weaviate_class="LegacyChunk") as opened:
        assert opened.settings.biomcp_collection == "LegacyChunk"
    with open_corpus(base, biomcp_collection="NewChunk") as opened:
        assert opened.settings.biomcp_collection == "NewChunk"

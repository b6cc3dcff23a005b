"""Where the caches live: in a PostgreSQL metadata database unless BIOMCP_SHARED_CACHES is false,
else in the data folder (the embedded default). Building one connects to nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from biomcp.adapters.embeddings import HashingEmbedder
from biomcp.adapters.embeddings.cache_pg import PgEmbeddingCache
from biomcp.adapters.embeddings.cache_sqlite import SqliteEmbeddingCache
from biomcp.adapters.entrez.cache_pg import PgEntrezCache
from biomcp.adapters.entrez.cache_sqlite import SqliteEntrezCache
from biomcp.entrypoints.backends import build_embedding_cache, build_entrez_cache, build_ncbi
from biomcp.entrypoints.settings import Settings

pytestmark = pytest.mark.unit

PG = "postgresql+psycopg://bio:s3cret@db.invalid/biomcp"


def stores(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **values: object) -> tuple[str, str]:
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith(("MCP_", "NCBI_", "BIOMCP_", "WEAVIATE_", "OPENAI_")):
            monkeypatch.delenv(name)
    settings = Settings(biomcp_data_dir=tmp_path / "data", **values)  # type: ignore[arg-type]
    entrez = build_entrez_cache(settings, build_ncbi(settings))
    embedder = build_embedding_cache(settings, HashingEmbedder())
    assert entrez is not None
    assert not (tmp_path / "data").exists()  # nothing opened yet
    assert "s3cret" not in repr(entrez) + repr(embedder)
    return type(entrez.store).__name__, type(embedder.store).__name__


def test_the_embedded_default_keeps_both_caches_in_the_data_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert stores(monkeypatch, tmp_path) == (
        SqliteEntrezCache.__name__,
        SqliteEmbeddingCache.__name__,
    )


def test_a_postgresql_database_holds_both_caches_by_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert stores(monkeypatch, tmp_path, biomcp_database_url=PG) == (
        PgEntrezCache.__name__,
        PgEmbeddingCache.__name__,
    )


def test_shared_caches_off_keeps_them_in_the_data_folder_over_postgresql(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    found = stores(monkeypatch, tmp_path, biomcp_database_url=PG, biomcp_shared_caches=False)
    assert found == (SqliteEntrezCache.__name__, SqliteEmbeddingCache.__name__)


def test_a_sqlite_database_keeps_them_in_the_data_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'meta.sqlite3'}"
    found = stores(monkeypatch, tmp_path, biomcp_database_url=url)
    assert found == (SqliteEntrezCache.__name__, SqliteEmbeddingCache.__name__)

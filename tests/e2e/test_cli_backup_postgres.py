"""`biomcp backup` / `restore` with PostgreSQL metadata: `pg_dump` / `pg_restore` into fresh
databases, the vectors either copied (embedded store) or rebuilt from SQL (Weaviate, fresh
collection names). A project's collection, which SQL cannot rebuild, comes back either way:
on Weaviate it is exported whole and dropped before the restore."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, make_url

from biomcp.domain.projects import collection_name
from biomcp.testing.eutils import FakeEutilsServer
from tests.support.index_cli import KEY, TERM, JsonCli
from tests.support.servers import recent_fake, run_biomcp, server_env
from tests.support.services import postgres_url, weaviate_url

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ITEMS = [
    {"id": "a", "text": "Aspirin lowers the risk of stroke.", "metadata": {"tags": ["x"]}},
    {"id": "b", "text": "Insulin pumps in type 1 diabetes.", "metadata": {"tags": ["y"]}},
    {"id": "c", "text": "Statins after a stroke, " + "in detail " * 40, "metadata": {}},
]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    with recent_fake(60, seed=31, warm=True) as server:
        yield server


@pytest.fixture
def databases() -> Iterator[list[str]]:
    """Two fresh, empty databases on the test server (dropped afterwards)."""
    base = make_url(postgres_url())
    if shutil.which("pg_dump") is None or shutil.which("pg_restore") is None:
        pytest.skip("pg_dump / pg_restore are not on PATH")
    names = [f"biomcp_bk_{uuid.uuid4().hex[:12]}" for _ in range(2)]
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            for name in names:
                connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
        yield [base.set(database=name).render_as_string(hide_password=False) for name in names]
    finally:
        with admin.connect() as connection:
            for name in names:
                connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


def _vector_env(backend: str) -> tuple[dict[str, str], list[str]]:
    """The settings of each side's vector store, and the Weaviate collections to drop."""
    if backend == "embedded":
        return {}, []
    url = weaviate_url()
    grpc = os.environ.get("BIOMCP_TEST_WEAVIATE_GRPC_PORT", "50051")
    collection = f"Backup{uuid.uuid4().hex[:12]}"
    env = {
        "BIOMCP_VECTOR_BACKEND": "weaviate",
        "WEAVIATE_URL": url,
        "WEAVIATE_GRPC_PORT": grpc,
        "BIOMCP_COLLECTION": collection,
    }
    return env, [collection]


def _project(cli: JsonCli, project: str) -> list[tuple[str, str]]:
    """The hits of a search in `project`: (item id, text)."""
    code, found, err = cli("project", "find", project, "stroke aspirin", "--top-k", "6")
    assert code == 0, err
    return [(item["id"], item["render_text"]) for item in found["items"]]


@pytest.mark.parametrize("backend", ["embedded", "weaviate"])
def test_a_postgres_backup_restores_into_a_fresh_database_with_the_same_corpus(
    fake: FakeEutilsServer, tmp_path: Path, databases: list[str], backend: str
) -> None:
    vectors, collections = _vector_env(backend)
    project = f"lab/{uuid.uuid4().hex[:8]}"
    collections.append(collection_name(project))
    source_url, target_url = databases
    source = JsonCli(
        server_env(tmp_path / "a", fake.base_url, BIOMCP_DATABASE_URL=source_url, **vectors),
        tmp_path,
    )
    if backend == "weaviate":  # the restored side gets its own, fresh collection
        vectors = {**vectors, "BIOMCP_COLLECTION": vectors["BIOMCP_COLLECTION"] + "R"}
        collections.append(vectors["BIOMCP_COLLECTION"])
    target = JsonCli(
        server_env(tmp_path / "b", fake.base_url, BIOMCP_DATABASE_URL=target_url, **vectors),
        tmp_path,
    )
    try:
        upgraded = run_biomcp(["db", "upgrade"], env=source.env, cwd=tmp_path)
        assert upgraded.returncode == 0, upgraded.stderr
        code, report, err = source("sync", "--query-key", KEY, "--term", TERM)
        assert code == 0, err
        assert report["inserted"] > 0
        before = source.searches()
        items = tmp_path / "items.jsonl"
        items.write_text("\n".join(json.dumps(item) for item in ITEMS))
        assert source("project", "create", project)[0] == 0
        assert source("project", "store", project, str(items))[1]["chunks_written"] >= 3
        in_project = _project(source, project)
        assert {hit[0] for hit in in_project} >= {"a", "c"}

        code, manifest, err = source("backup", str(tmp_path / "backup"))
        assert code == 0, err
        assert manifest["metadata_backend"] == "postgresql"
        assert manifest["counts"]["documents"] == report["inserted"]
        assert manifest["vectors"] == ("copied" if backend == "embedded" else "rebuild")
        assert (tmp_path / "backup" / "metadata.pgdump").is_file()
        assert manifest["counts"]["projects"] == 1
        assert manifest["collections"][collection_name(project)] >= 3
        if backend == "weaviate":  # the project's vectors are only in the backup now
            assert set(manifest["exported"]) == {collection_name(project)}
            with httpx.Client(base_url=weaviate_url(), timeout=30) as client:
                client.delete(f"/v1/schema/{collection_name(project)}").raise_for_status()

        code, restored, err = target("restore", str(tmp_path / "backup"))
        assert code == 0, err
        assert restored["ok"] is True
        if backend == "weaviate":
            assert restored["rebuild"]["documents"] == report["inserted"]
        assert target.searches() == before
        assert restored["collections"] == manifest["collections"]
        assert _project(target, project) == in_project
        code, check, _ = target("index", "verify")
        assert (code, check["ok"]) == (0, True)

        code, envelope, _ = target("restore", str(tmp_path / "backup"))
        assert code == 2
        assert "--force" in envelope["error"]["message"]
    finally:
        if collections:
            with httpx.Client(base_url=weaviate_url(), timeout=30) as client:
                for name in collections:
                    client.delete(f"/v1/schema/{name}")

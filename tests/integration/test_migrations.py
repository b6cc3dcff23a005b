"""The packaged Alembic migrations: `upgrade head` on an empty SQLite file and an empty
PostgreSQL schema yields exactly the models (autogenerate finds nothing to do), downgrades
cleanly, runs from the CLI and from the repository's alembic.ini, and tolerates two upgraders
at once."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect, text
from typer.testing import CliRunner

from biomcp.adapters.sql import current_revision, head_revision, upgrade
from biomcp.adapters.sql.migrate import MIGRATIONS_DIR, alembic_config
from biomcp.adapters.sql.models import Base
from biomcp.adapters.sql.store import SqlMetadataStore
from biomcp.domain.records import utc
from biomcp.entrypoints.cli.main import app
from biomcp.ports.saved_queries import Checkpoint
from tests.support.services import postgres_url
from tests.support.sql_databases import postgres_schema

pytestmark = pytest.mark.integration

REPO_ROOT = Path(__file__).resolve().parents[2]
TABLES = {
    "pubmed_docs",
    "checkpoints",
    "checkpoint_audit",
    "sync_jobs",
    "projects",
    "query_records",
}


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.sqlite3'}"
        return
    with postgres_schema(postgres_url()) as url:
        yield url


def schema_differences(url: str) -> list[Any]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            return list(compare_metadata(context, Base.metadata))
    finally:
        engine.dispose()


def tables(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_upgrade_head_on_an_empty_database_matches_the_models(empty_url: str) -> None:
    assert current_revision(empty_url) is None

    assert upgrade(empty_url) == head_revision()

    assert current_revision(empty_url) == head_revision()
    assert tables(empty_url) >= TABLES
    assert schema_differences(empty_url) == []


def test_a_second_upgrade_changes_nothing(empty_url: str) -> None:
    upgrade(empty_url)
    upgrade(empty_url)
    assert current_revision(empty_url) == head_revision()
    assert schema_differences(empty_url) == []


def test_downgrade_to_base_removes_every_table_and_upgrade_restores_them(
    empty_url: str,
) -> None:
    upgrade(empty_url)

    command.downgrade(alembic_config(empty_url), "base")
    assert tables(empty_url) & TABLES == set()
    command.upgrade(alembic_config(empty_url), "head")

    assert schema_differences(empty_url) == []


def test_checkpoints_written_before_0004_keep_their_watermark_and_take_their_last_term(
    empty_url: str,
) -> None:
    """A key synced by an earlier version reads `covers_from` None (the whole history, which
    is what its revisions' ESearch asked for before) and the term of its latest succeeded
    sync job; its records were not recorded as its (0005), a watermark set by hand and never
    synced has none to record."""
    command.upgrade(alembic_config(empty_url), "0003")
    engine = create_engine(empty_url)
    jobs = [
        ("j1", "old", "asthma", "2025-07-01 00:00:00+00:00", "succeeded"),
        ("j2", "old", "asthma[mh]", "2025-08-02 06:00:00+00:00", "succeeded"),
        ("j3", "old", "copd", "2025-08-03 06:00:00+00:00", "failed"),
        ("j4", "other", "copd", "2025-08-04 06:00:00+00:00", "succeeded"),
    ]
    try:
        with engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO checkpoints (query_key, last_edat, last_scan_at) "
                    "VALUES ('old', '2025-08-01 12:00:00+00:00', '2025-08-02 06:00:00+00:00'),"
                    " ('set_only', '2025-01-01 00:00:00+00:00', NULL)"
                )
            )
            for job_id, key, term, started, status in jobs:
                connection.execute(
                    text(
                        "INSERT INTO sync_jobs (job_id, query_key, term, started_at, status,"
                        " counts, warnings) VALUES (:j, :k, :t, :s, :st, '{}', '[]')"
                    ),
                    {"j": job_id, "k": key, "t": term, "s": started, "st": status},
                )
    finally:
        engine.dispose()

    upgrade(empty_url)

    async def read() -> list[Checkpoint]:
        store = SqlMetadataStore(empty_url)
        try:
            return await store.list_checkpoints()
        finally:
            await store.aclose()

    assert asyncio.run(read()) == [
        Checkpoint("old", utc(2025, 8, 1, 12), utc(2025, 8, 2, 6), None, "asthma[mh]", False),
        Checkpoint("set_only", utc(2025, 1, 1), None, None, None, True),  # never synced
    ]

    async def forget() -> list[bool]:
        store = SqlMetadataStore(empty_url)
        try:
            return [(await store.forget_query(k)).records_tracked for k in ("old", "set_only")]
        finally:
            await store.aclose()

    assert asyncio.run(forget()) == [False, True]  # what the CLI's note on forgetting reads


def test_two_upgraders_at_once_both_succeed(empty_url: str) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        heads = list(pool.map(upgrade, [empty_url, empty_url]))
    assert heads == [head_revision(), head_revision()]
    assert schema_differences(empty_url) == []


def test_the_migrations_ship_inside_the_package() -> None:
    assert MIGRATIONS_DIR.is_relative_to(REPO_ROOT / "src" / "biomcp")
    assert (MIGRATIONS_DIR / "env.py").is_file()
    assert (MIGRATIONS_DIR / "script.py.mako").is_file()


def test_the_cli_upgrades_a_database_and_reports_its_revision(empty_url: str) -> None:
    runner = CliRunner()

    before = runner.invoke(app, ["db", "current", "--url", empty_url])
    upgraded = runner.invoke(app, ["db", "upgrade", "--url", empty_url])
    after = runner.invoke(app, ["db", "current", "--url", empty_url])

    assert before.exit_code == 0, before.output
    assert "not migrated" in before.output
    assert upgraded.exit_code == 0, upgraded.output
    assert f"at revision {head_revision()} (head)" in upgraded.output
    assert after.exit_code == 0, after.output
    assert f"at revision {head_revision()} (head)" in after.output
    assert schema_differences(empty_url) == []


def test_the_cli_upgrade_reads_the_database_url_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'env.sqlite3'}"
    monkeypatch.setenv("BIOMCP_DATABASE_URL", url)

    result = CliRunner().invoke(app, ["db", "upgrade"])

    assert result.exit_code == 0, result.output
    assert current_revision(url) == head_revision()


def test_the_cli_reports_an_unreachable_database_without_a_traceback() -> None:
    result = CliRunner().invoke(
        app, ["db", "upgrade", "--url", "postgresql://bio:s3cret@127.0.0.1:1/nothing"]
    )

    assert result.exit_code == 1
    assert "db upgrade:" in result.output
    assert "s3cret" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_the_repository_alembic_ini_upgrades_with_an_x_url(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cli.sqlite3'}"
    env = {k: v for k, v in os.environ.items() if k != "BIOMCP_DATABASE_URL"}

    result = subprocess.run(  # noqa: S603 - our own interpreter
        [sys.executable, "-m", "alembic", "-c", str(REPO_ROOT / "alembic.ini"), "-x", f"url={url}",
         "upgrade", "head"],
        capture_output=True, text=True, timeout=120, check=False, env=env, cwd=tmp_path,
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    assert current_revision(url) == head_revision()
    assert schema_differences(url) == []


def test_the_head_known_without_alembic_is_alembics_head(empty_url: str) -> None:
    """`SCHEMA_HEAD` lets a start skip Alembic when the database is at head: it must be the
    head the migrations folder ends at, and the one an upgraded database is stamped with."""
    from biomcp.adapters.sql.migrate import SCHEMA_HEAD, stamped_revision

    assert head_revision() == SCHEMA_HEAD
    engine = create_engine(empty_url)
    try:
        assert stamped_revision(engine) is None  # no table yet: Alembic decides
        upgrade(empty_url)
        assert stamped_revision(engine) == SCHEMA_HEAD
    finally:
        engine.dispose()


def test_engines_opening_one_fresh_sqlite_file_together_all_connect(tmp_path: Path) -> None:
    """Switching a new file to WAL takes a lock SQLite does not wait for: four engines
    connecting to one fresh file at once used to fail now and then ("database is locked",
    about one fresh file in twenty here); each of 30 fresh files must open for all four."""
    import threading

    from biomcp.adapters.sql.engine import make_engine

    failures: list[BaseException] = []
    for index in range(30):
        engines = [make_engine(f"sqlite:///{tmp_path / f'fresh{index}.sqlite3'}") for _ in range(4)]
        start = threading.Barrier(len(engines))

        def connect(engine: Any, start: threading.Barrier) -> None:
            start.wait()
            try:
                with engine.connect():
                    pass
            except Exception as exc:  # collected: the assertion below names them
                failures.append(exc)

        threads = [threading.Thread(target=connect, args=(e, start)) for e in engines]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for engine in engines:
            engine.dispose()
    assert failures == []


def test_a_key_synced_before_0005_is_untracked_until_a_sync_reads_its_history(
    empty_url: str,
) -> None:
    """Its records were brought before anyone recorded which key brought them: its checkpoint
    says so until a completed sync reads its whole history (`read_history`), and a sync that
    only continues from the checkpoint does not change that."""
    command.upgrade(alembic_config(empty_url), "0004")
    engine = create_engine(empty_url)
    try:
        with engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO checkpoints (query_key, last_edat, last_scan_at, term) "
                    "VALUES ('old', '2025-08-01 12:00:00+00:00', '2025-08-02 06:00:00+00:00',"
                    " 'asthma')"
                )
            )
    finally:
        engine.dispose()
    upgrade(empty_url)

    async def scenario() -> list[bool]:
        store = SqlMetadataStore(empty_url)
        seen = [(await store.get_checkpoint("old")).records_tracked]
        try:
            for read_history in (False, True, False):
                moved = await store.advance_checkpoint(
                    "old",
                    utc(2025, 8, 3),
                    utc(2025, 8, 4),
                    window_start=utc(2025, 7, 20),
                    term="asthma",
                    read_history=read_history,
                )
                seen.append(moved.records_tracked)
            seen.append((await store.get_checkpoint("old")).records_tracked)
            return seen
        finally:
            await store.aclose()

    assert asyncio.run(scenario()) == [False, False, True, True, True]

"""The `MetadataStore` contract run against `SqlMetadataStore` on SQLite and on PostgreSQL,
plus the SQL adapter's own edges: lazy creation of the default file, connection settings,
read-only and broken databases, and vendor errors translated into the port's errors.

PostgreSQL runs when `BIOMCP_TEST_POSTGRES_URL` is set (`scripts/services.sh start postgres`),
each test in a schema of its own; otherwise its tests are skipped (failed when CI is set).
"""

from __future__ import annotations

import functools
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from biomcp.adapters.sql import SqlMetadataStore, upgrade
from biomcp.adapters.sql.engine import make_engine
from biomcp.adapters.sql.locks import lock_file
from biomcp.domain.records import utc
from biomcp.ports.fulltext import FullTextWrite
from biomcp.ports.store_errors import MetadataStoreError, StoreUnavailableError
from tests.contract.metadata_contract import MetadataStoreContract, run
from tests.support.fulltext_articles import state_of, synthetic_article
from tests.support.services import postgres_url
from tests.support.sql_databases import postgres_schema
from tests.support.sql_records import FakeClock, full_record, upsert_of

pytestmark = pytest.mark.contract

_LOCK_PROBE = """
import asyncio, sys
from biomcp.adapters.sql import SqlMetadataStore
from biomcp.ports.store_errors import LockTimeoutError

async def main() -> None:
    store = SqlMetadataStore(sys.argv[1])
    try:
        async with store.query_lock(sys.argv[2], timeout_s=0):
            print("acquired")
    except LockTimeoutError:
        print("timeout")
    finally:
        await store.aclose()

asyncio.run(main())
"""


def lock_in_subprocess(url: str, query_key: str) -> bool:
    """Try `query_key`'s lock from a new Python process; True when it got the lock."""
    probe = subprocess.run(  # noqa: S603 - our own interpreter and snippet
        [sys.executable, "-c", _LOCK_PROBE, url, query_key],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert probe.returncode == 0, probe.stderr
    answer = probe.stdout.strip()
    assert answer in ("acquired", "timeout"), probe.stdout + probe.stderr
    return answer == "acquired"


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


Closing = Callable[[SqlMetadataStore], SqlMetadataStore]


@pytest.fixture
def closing() -> Iterator[Closing]:
    """`closing(store)` returns the store and closes it at teardown."""
    stores: list[SqlMetadataStore] = []

    def register(store: SqlMetadataStore) -> SqlMetadataStore:
        stores.append(store)
        return store

    yield register
    for store in stores:
        run(store.aclose())


class TestSqliteMetadataStore(MetadataStoreContract):
    @pytest.fixture
    def url(self, tmp_path: Path) -> str:
        return sqlite_url(tmp_path / "biomcp.sqlite3")

    @pytest.fixture
    def store(self, url: str, clock: FakeClock) -> Iterator[SqlMetadataStore]:
        store = SqlMetadataStore(url, clock=clock)
        yield store
        run(store.aclose())

    @pytest.fixture
    def lock_elsewhere(self, url: str) -> Callable[[str], bool]:
        return functools.partial(lock_in_subprocess, url)


class TestPostgresMetadataStore(MetadataStoreContract):
    @pytest.fixture
    def url(self) -> Iterator[str]:
        with postgres_schema(postgres_url()) as url:
            upgrade(url)
            yield url

    @pytest.fixture
    def store(self, url: str, clock: FakeClock) -> Iterator[SqlMetadataStore]:
        store = SqlMetadataStore(url, clock=clock)
        yield store
        run(store.aclose())

    @pytest.fixture
    def lock_elsewhere(self, url: str) -> Callable[[str], bool]:
        return functools.partial(lock_in_subprocess, url)


# -- SQLite edges ---------------------------------------------------------------------------


def test_the_default_file_is_created_under_data_dir_on_first_use_only(tmp_path: Path) -> None:
    data_dir = tmp_path / "deep" / "data"
    store = SqlMetadataStore(data_dir=data_dir)
    assert not data_dir.exists()

    run(store.open())
    run(store.aclose())

    database = data_dir / "biomcp.sqlite3"
    assert store.sqlite_file == database
    assert database.is_file()
    with sqlite3.connect(database) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_sqlite_connections_have_foreign_keys_and_a_busy_timeout(tmp_path: Path) -> None:
    engine = make_engine(sqlite_url(tmp_path / "db.sqlite3"))
    try:
        with engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar_one() >= 1000
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    finally:
        engine.dispose()


def test_the_sqlite_lock_file_lives_next_to_the_database(tmp_path: Path, closing: Closing) -> None:
    database = tmp_path / "biomcp.sqlite3"
    store = closing(SqlMetadataStore(sqlite_url(database)))

    async def scenario() -> None:
        async with store.query_lock("glp1_obesity_v1"):
            assert lock_file(database, "glp1_obesity_v1").is_file()

    run(scenario())
    path = lock_file(database, "glp1_obesity_v1")
    assert path.parent == tmp_path / "biomcp.sqlite3.locks"
    assert len(path.stem) == 32


def test_a_read_only_database_reads_but_refuses_writes_as_unavailable(
    tmp_path: Path, closing: Closing
) -> None:
    database = tmp_path / "biomcp.sqlite3"
    upgrade(sqlite_url(database))
    store = closing(SqlMetadataStore(f"sqlite:///file:{database}?mode=ro&uri=true"))

    assert run(store.get_document("1")) is None
    with pytest.raises(StoreUnavailableError, match="readonly") as caught:
        run(store.upsert_documents([upsert_of(full_record("1"))]))
    assert isinstance(caught.value.__cause__, Exception)


def test_a_read_only_database_refuses_full_text_writes_and_the_full_text_choice(
    tmp_path: Path, closing: Closing
) -> None:
    database = tmp_path / "biomcp.sqlite3"
    writer = closing(SqlMetadataStore(sqlite_url(database)))
    run(writer.upsert_documents([upsert_of(full_record("1"))]))
    run(writer.aclose())
    store = closing(SqlMetadataStore(f"sqlite:///file:{database}?mode=ro&uri=true"))
    write = FullTextWrite(state_of("1", utc(2025, 9, 1)), synthetic_article())

    with pytest.raises(StoreUnavailableError, match="readonly"):
        run(store.record_fulltext([write]))
    with pytest.raises(StoreUnavailableError, match="readonly"):
        run(store.set_fulltext("k", True))
    assert run(store.fulltext_states(["1"])) == {}
    assert not run(store.get_checkpoint("k")).fulltext


def test_a_stored_article_that_cannot_be_read_is_absent_and_its_state_stays(
    tmp_path: Path, closing: Closing
) -> None:
    database = tmp_path / "biomcp.sqlite3"
    store = closing(SqlMetadataStore(sqlite_url(database)))
    run(store.upsert_documents([upsert_of(full_record(p)) for p in ("7", "8")]))
    writes = [FullTextWrite(state_of(p, utc(2025, 9, 1)), synthetic_article()) for p in "78"]
    run(store.record_fulltext(writes))
    engine = create_engine(sqlite_url(database))
    with engine.begin() as connection:
        connection.execute(text("UPDATE fulltext SET article = :bad WHERE pmid = '7'"),
                           {"bad": b"damaged"})  # fmt: skip
    engine.dispose()

    assert list(run(store.fulltext_articles(["7", "8"]))) == ["8"]
    assert sorted(run(store.fulltext_states(["7", "8"]))) == ["7", "8"]


def test_a_file_that_is_not_a_database_makes_the_store_unavailable(
    tmp_path: Path, closing: Closing
) -> None:
    database = tmp_path / "biomcp.sqlite3"
    database.write_bytes(b"this is not an SQLite database at all, just text" * 100)
    store = closing(SqlMetadataStore(sqlite_url(database)))

    with pytest.raises(StoreUnavailableError):
        run(store.open())
    with pytest.raises(StoreUnavailableError):
        run(store.ping())


def test_an_unreadable_stored_record_is_a_store_error(tmp_path: Path, closing: Closing) -> None:
    database = tmp_path / "biomcp.sqlite3"
    store = closing(SqlMetadataStore(sqlite_url(database)))
    run(store.upsert_documents([upsert_of(full_record("7"))]))
    engine = create_engine(sqlite_url(database))
    with engine.begin() as connection:
        connection.execute(text("UPDATE pubmed_docs SET record_json = '{\"f\": 99}'"))
    engine.dispose()

    with pytest.raises(MetadataStoreError, match="record_json") as caught:
        run(store.get_document("7"))
    assert not isinstance(caught.value, StoreUnavailableError)


@pytest.mark.parametrize(
    "url",
    [
        "sqlite://",
        "sqlite:///:memory:",
        "mysql://u@localhost/db",
        "not a url",
        "postgresql://h:x/d",
    ],
)
def test_unusable_urls_are_refused_when_the_store_is_built(url: str) -> None:
    with pytest.raises(StoreUnavailableError):
        SqlMetadataStore(url)


# -- PostgreSQL edges -----------------------------------------------------------------------


def test_a_closed_port_makes_every_call_unavailable(closing: Closing) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    store = closing(SqlMetadataStore(f"postgresql+psycopg://postgres@127.0.0.1:{port}/x"))

    calls: list[Callable[[], Coroutine[Any, Any, object]]] = [
        store.open,
        store.ping,
        lambda: store.get_document("1"),
        lambda: store.upsert_documents([upsert_of(full_record("1"))]),
        lambda: store.advance_checkpoint("k", None, utc(2025, 1, 1), window_start=None, term="q"),
        store.list_projects,
    ]
    for call in calls:
        with pytest.raises(StoreUnavailableError, match=r"refused|connect") as caught:
            run(call())
        assert caught.value.__cause__ is not None

    async def lock() -> None:
        async with store.query_lock("k"):
            pass

    with pytest.raises(StoreUnavailableError):
        run(lock())


def test_an_unmigrated_postgres_schema_is_refused_until_upgraded(closing: Closing) -> None:
    with postgres_schema(postgres_url()) as url:
        store = closing(SqlMetadataStore(url))
        with pytest.raises(StoreUnavailableError, match="biomcp db upgrade"):
            run(store.get_document("1"))

        migrating = closing(SqlMetadataStore(url, auto_migrate=True))
        run(migrating.open())
        assert run(store.get_document("1")) is None
        run(store.aclose())
        run(migrating.aclose())


def test_a_postgres_password_never_shows_in_the_store_url() -> None:
    store = SqlMetadataStore("postgresql://bio:s3cret@db.example/biomcp")
    assert "s3cret" not in store.url
    assert "s3cret" not in repr(store)
    assert store.backend == "postgresql"

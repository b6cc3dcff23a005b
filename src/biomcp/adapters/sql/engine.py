"""Database URLs and engines: the SQLite default file, and the per-backend connection setup.

Only SQLite (the embedded default) and PostgreSQL (psycopg 3) are supported. SQLite runs in WAL
mode with a busy timeout and foreign keys on; SQLAlchemy, not the sqlite3 module, emits BEGIN,
so a writer can take SQLite's write lock up front (`WRITE_OPTIONS`, `BEGIN IMMEDIATE`) and
read-decide-write sequences cannot interleave.

PostgreSQL sessions notice a dead peer within seconds (`pg_keepalives`): a session holding a
process's advisory locks then ends, so other processes see that process's jobs as stopped.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import platformdirs
from sqlalchemy import URL, Connection, Engine, Table, create_engine, event, make_url
from sqlalchemy.dialects import postgresql, sqlite

from biomcp.ports.store_errors import StoreUnavailableError

__all__ = [
    "APP_NAME",
    "DATABASE_URL_ENV",
    "DEFAULT_FILENAME",
    "IN_CHUNK",
    "WRITE_OPTIONS",
    "chunks",
    "default_url",
    "dialect_insert",
    "make_engine",
    "parse_url",
    "pg_keepalives",
    "redact",
    "resolve_url",
    "sqlite_path",
    "writing",
]

APP_NAME = "bio-mcp"
DEFAULT_FILENAME = "biomcp.sqlite3"
DATABASE_URL_ENV = "BIOMCP_DATABASE_URL"
#: Execution options of a connection that will write: SQLite begins with `BEGIN IMMEDIATE`.
WRITE_OPTIONS: dict[str, Any] = {"biomcp_sqlite_begin": "IMMEDIATE"}
BUSY_TIMEOUT_MS = 30_000
PG_CONNECT_TIMEOUT_S = 10
#: TCP keepalives on both ends of a PostgreSQL session: the first probe after this many idle
#: seconds, then one every interval; a peer silent for all of them is dead (about 10 s).
PG_KEEPALIVE_IDLE_S = 4
PG_KEEPALIVE_INTERVAL_S = 2
PG_KEEPALIVE_COUNT = 3
#: How often the server checks, during a long query, that its client is still connected.
PG_CLIENT_CHECK_MS = 2_000
#: Bound parameters per IN list: far below SQLite's and PostgreSQL's limits.
IN_CHUNK = 500


def default_url(data_dir: Path | None = None) -> str:
    """The SQLite file `biomcp.sqlite3` under `data_dir` (default: the user data directory)."""
    directory = data_dir if data_dir is not None else Path(platformdirs.user_data_dir(APP_NAME))
    return URL.create("sqlite", database=str(directory / DEFAULT_FILENAME)).render_as_string()


def resolve_url(url: str | None, data_dir: Path | None = None, *, use_env: bool = False) -> str:
    """`url`; else `$BIOMCP_DATABASE_URL` when `use_env`; else the default SQLite file."""
    if url:
        return url
    if use_env and os.environ.get(DATABASE_URL_ENV):
        return os.environ[DATABASE_URL_ENV]
    return default_url(data_dir)


def parse_url(url: str) -> URL:
    """The parsed URL, `postgresql://` meaning psycopg 3.

    Raises:
        StoreUnavailableError: on a malformed URL or a backend other than SQLite / PostgreSQL.
    """
    try:
        parsed = make_url(url)
    except Exception as exc:  # sqlalchemy raises ArgumentError, or ValueError on a bad port
        raise StoreUnavailableError(f"malformed database URL: {exc}") from exc
    backend = parsed.get_backend_name()
    if backend == "postgresql" and parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    if backend not in ("sqlite", "postgresql"):
        raise StoreUnavailableError(
            f"unsupported database {backend!r}: use sqlite:///path or postgresql+psycopg://"
        )
    return parsed


def redact(url: URL) -> str:
    """The URL as text with its password hidden, for messages."""
    return url.render_as_string(hide_password=True)


def sqlite_path(url: URL) -> Path | None:
    """The database file of a SQLite URL (None for other backends and in-memory databases)."""
    if url.get_backend_name() != "sqlite":
        return None
    database = url.database or ""
    if url.query.get("uri") == "true":
        if url.query.get("mode") == "memory" or database.startswith("file::memory:"):
            return None
        database = database.removeprefix("file:")
    if database in ("", ":memory:"):
        return None
    return Path(database)


def _journal_in_wal(cursor: Any) -> None:
    """`PRAGMA journal_mode = WAL`, retried while another connection holds the lock it needs:
    switching a new file to WAL takes an exclusive lock without waiting on the busy timeout,
    so processes opening one fresh database together could fail with "database is locked"."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def pg_keepalives(query: Mapping[str, Any]) -> dict[str, Any]:
    """libpq connection arguments that make both ends of a session drop a vanished peer
    within seconds: a killed process's connection closes at once, but a host that is gone
    sends nothing and would keep its advisory locks for hours. Arguments in the URL's query
    (`query`) win; its `options` come after ours, so its `-c` settings win too; its
    `keepalives=0` turns all of this off. Needs PostgreSQL 14 or newer."""
    if str(query.get("keepalives", "")) == "0":
        return {}
    server = (
        f"-c tcp_keepalives_idle={PG_KEEPALIVE_IDLE_S}"
        f" -c tcp_keepalives_interval={PG_KEEPALIVE_INTERVAL_S}"
        f" -c tcp_keepalives_count={PG_KEEPALIVE_COUNT}"
        f" -c client_connection_check_interval={PG_CLIENT_CHECK_MS}"
    )
    client: dict[str, Any] = {
        "keepalives": 1,
        "keepalives_idle": PG_KEEPALIVE_IDLE_S,
        "keepalives_interval": PG_KEEPALIVE_INTERVAL_S,
        "keepalives_count": PG_KEEPALIVE_COUNT,
    }
    arguments = {name: value for name, value in client.items() if name not in query}
    given = query.get("options")
    if isinstance(given, tuple):  # a parameter given twice: libpq would take the last
        given = given[-1]
    arguments["options"] = f"{server} {given}" if given else server
    return arguments


def _setup_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy emits BEGIN (see `_on_begin`)
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA foreign_keys = ON")
            _journal_in_wal(cursor)
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        mode = connection.get_execution_options().get("biomcp_sqlite_begin", "DEFERRED")
        connection.exec_driver_sql(f"BEGIN {mode}")


def make_engine(url: str | URL) -> Engine:
    """An engine for `url`, creating the SQLite file's folder. Opens no connection itself.

    Raises:
        StoreUnavailableError: on a bad or unsupported URL, an in-memory SQLite database (each
            pooled connection would see its own empty database), or an uncreatable folder.
    """
    parsed = parse_url(url) if isinstance(url, str) else url
    if parsed.get_backend_name() == "sqlite":
        path = sqlite_path(parsed)
        if path is None:
            raise StoreUnavailableError("in-memory SQLite is not supported: give a file path")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnavailableError(f"cannot create {path.parent}: {exc}") from exc
        engine = create_engine(parsed, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})
        _setup_sqlite(engine)
        return engine
    connect_args = pg_keepalives(parsed.query)
    if "connect_timeout" not in parsed.query:
        connect_args["connect_timeout"] = PG_CONNECT_TIMEOUT_S
    try:
        return create_engine(parsed, pool_pre_ping=True, connect_args=connect_args)
    except Exception as exc:  # a missing driver (NoSuchModuleError, ImportError)
        raise StoreUnavailableError(f"cannot use {redact(parsed)}: {exc}") from exc


@contextmanager
def writing(engine: Engine) -> Iterator[Connection]:
    """A connection in a write transaction, committed when the block ends without error."""
    with engine.connect() as connection:
        connection.execution_options(**WRITE_OPTIONS)
        with connection.begin():
            yield connection


def dialect_insert(connection: Connection, table: Table) -> postgresql.Insert | sqlite.Insert:
    """INSERT with the backend's ON CONFLICT clauses."""
    if connection.dialect.name == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


def replace_row(connection: Connection, table: Table, values: dict[str, Any], key: str) -> None:
    """Insert the row `values`, or update the one whose `key` column holds the same value."""
    statement = dialect_insert(connection, table).values(values)
    connection.execute(
        statement.on_conflict_do_update(
            index_elements=[key], set_={k: v for k, v in values.items() if k != key}
        )
    )


def chunks(items: Sequence[str], size: int = IN_CHUNK) -> Iterator[Sequence[str]]:
    """`items` in slices of at most `size`, for IN lists."""
    for start in range(0, len(items), size):
        yield items[start : start + size]

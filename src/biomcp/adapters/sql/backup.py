"""Consistent copies of the metadata database, and their restoration.

SQLite is copied with the online backup API in one step: the step reads one snapshot, so
writers in other processes go on and the copy is never torn. PostgreSQL is dumped by
`pg_dump` (custom format) inside a snapshot this module exports, so the counts it records are
those of the dump; `pg_restore` loads it back. Both tools must be on PATH. The password goes to
them through the environment, never the command line.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import URL, Connection

from biomcp.adapters.sql.engine import make_engine, parse_url, sqlite_path
from biomcp.adapters.sql.migrate import alembic_config
from biomcp.ports.store_errors import StoreUnavailableError

__all__ = [
    "SqlSnapshot",
    "copy_sqlite",
    "dump_postgres",
    "is_known_revision",
    "metadata_file",
    "read_snapshot",
    "restore_postgres",
    "restore_sqlite",
    "sqlite_snapshot",
]

#: What the manifest counts, by table.
_COUNTED = {
    "documents": "pubmed_docs",
    "saved_queries": "checkpoints",
    "projects": "projects",
    "fulltext_states": "fulltext",
}
_TOOL_TIMEOUT_S = 6 * 3600


@dataclass(frozen=True, slots=True)
class SqlSnapshot:
    """A database's schema revision (None before any migration) and its counts by name."""

    revision: str | None
    counts: dict[str, int]


def metadata_file(url: str) -> Path | None:
    """The SQLite file of `url`; None for PostgreSQL.

    Raises:
        StoreUnavailableError: a malformed URL, another backend, or in-memory SQLite.
    """
    parsed = parse_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    path = sqlite_path(parsed)
    if path is None:
        raise StoreUnavailableError("in-memory SQLite cannot be backed up: give a file path")
    return path


def _snapshot(connection: Connection) -> SqlSnapshot:
    tables = set(connection.dialect.get_table_names(connection))
    revision = None
    if "alembic_version" in tables:
        revision = connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()
    counts = {
        name: int(connection.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar() or 0)  # noqa: S608 - fixed names
        if table in tables
        else 0
        for name, table in _COUNTED.items()
    }
    return SqlSnapshot(revision, counts)


def read_snapshot(url: str) -> SqlSnapshot:
    """The revision and counts of the database at `url` (an absent SQLite file counts 0).

    Raises:
        StoreUnavailableError: the database cannot be read.
    """
    path = metadata_file(url)
    if path is not None:
        return sqlite_snapshot(path)
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return _snapshot(connection)
    except Exception as exc:
        raise StoreUnavailableError(f"reading the metadata database: {exc}") from exc
    finally:
        engine.dispose()


def sqlite_snapshot(path: Path) -> SqlSnapshot:
    """The revision and counts of the SQLite file `path` (absent: none and 0), read with the
    sqlite3 module so its journal mode stays as it is.

    Raises:
        StoreUnavailableError: the file cannot be read.
    """
    if not path.exists():
        return SqlSnapshot(None, dict.fromkeys(_COUNTED, 0))
    try:
        db = sqlite3.connect(path, timeout=30)
        try:
            rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            tables = {row[0] for row in rows}
            revision = None
            if "alembic_version" in tables:
                revision = db.execute("SELECT version_num FROM alembic_version").fetchone()[0]
            counts = {
                name: int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # noqa: S608 - fixed names
                if table in tables
                else 0
                for name, table in _COUNTED.items()
            }
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise StoreUnavailableError(f"reading {path.name}: {exc}") from exc
    return SqlSnapshot(revision, counts)


def is_known_revision(revision: str) -> bool:
    """Whether this bio-mcp ships the migration `revision` (a newer one's it does not)."""
    from alembic.script import ScriptDirectory
    from alembic.util.exc import CommandError

    try:
        return ScriptDirectory.from_config(alembic_config()).get_revision(revision) is not None
    except CommandError:
        return False


# --- SQLite ---------------------------------------------------------------------------------


def copy_sqlite(source: Path, dest: Path) -> None:
    """Copy the live SQLite file `source` to the new file `dest`, in one snapshot, as a single
    file (rollback journal, no `-wal`), and check the copy.

    Raises:
        StoreUnavailableError: the source cannot be read or the copy fails its check.
    """
    try:
        src = sqlite3.connect(f"{source.as_uri()}?mode=rw", uri=True, timeout=30)
        try:
            out = sqlite3.connect(dest)
            try:
                src.backup(out)  # pages=-1: one step, one read snapshot
                out.execute("PRAGMA journal_mode = DELETE")
                problems = [row[0] for row in out.execute("PRAGMA quick_check")]
            finally:
                out.close()
        finally:
            src.close()
    except sqlite3.Error as exc:
        raise StoreUnavailableError(f"copying {source.name}: {exc}") from exc
    if problems != ["ok"]:
        raise StoreUnavailableError(f"the copy of {source.name} is damaged: {problems[:3]}")


def restore_sqlite(copy: Path, target: Path) -> None:
    """Replace the content of `target` (created when absent) by the SQLite file `copy`,
    through the backup API, so a `-wal` beside `target` cannot resurrect old pages.

    Raises:
        StoreUnavailableError: either file cannot be opened or written.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        src = sqlite3.connect(f"{copy.as_uri()}?mode=ro", uri=True)
        try:
            out = sqlite3.connect(target, timeout=30)
            try:
                src.backup(out)
            finally:
                out.close()
        finally:
            src.close()
    except sqlite3.Error as exc:
        raise StoreUnavailableError(f"restoring {target.name}: {exc}") from exc


# --- PostgreSQL -----------------------------------------------------------------------------


def _libpq(url: str) -> tuple[str, dict[str, str]]:
    """`url` as a libpq URI without its password, and the environment that carries it."""
    parsed: URL = parse_url(url)
    env = dict(os.environ)
    if parsed.password is not None:
        env["PGPASSWORD"] = str(parsed.password)
    plain = parsed.set(drivername="postgresql", password=None)
    return plain.render_as_string(hide_password=False), env


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise StoreUnavailableError(
            f"{name} is not on PATH: install the PostgreSQL client tools of the server's "
            "major version (Debian: postgresql-client)"
        )
    return found


def _run(args: list[str], env: dict[str, str], what: str) -> None:
    done = subprocess.run(  # noqa: S603 - the PostgreSQL client tools, fixed arguments
        args,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=_TOOL_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        tail = " ".join(done.stderr.strip().splitlines()[-3:])
        raise StoreUnavailableError(f"{what} failed (exit {done.returncode}): {tail}")


@contextmanager
def _exported_snapshot(url: str) -> Iterator[tuple[str, SqlSnapshot]]:
    """An open repeatable-read transaction: its exported snapshot id and what it sees."""
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            connection = connection.execution_options(isolation_level="REPEATABLE READ")
            with connection.begin():
                exported = connection.exec_driver_sql("SELECT pg_export_snapshot()").scalar()
                snapshot_id = str(exported)
                yield snapshot_id, _snapshot(connection)
    finally:
        engine.dispose()


def dump_postgres(url: str, dest: Path) -> SqlSnapshot:
    """Dump the database at `url` into `dest` (custom format); its revision and counts.

    Raises:
        StoreUnavailableError: pg_dump is missing or fails, or the database is unreachable.
    """
    pg_dump = _tool("pg_dump")
    target, env = _libpq(url)
    try:
        with _exported_snapshot(url) as (snapshot_id, seen):
            args = [pg_dump, "--format=custom", f"--snapshot={snapshot_id}", f"--file={dest}"]
            _run([*args, f"--dbname={target}"], env, "pg_dump")
    except StoreUnavailableError:
        raise
    except Exception as exc:
        raise StoreUnavailableError(f"dumping the metadata database: {exc}") from exc
    return seen


def restore_postgres(url: str, dump: Path) -> None:
    """Load `dump` into the database at `url` in one transaction, replacing the objects it
    holds (owners and grants are left to the target).

    Raises:
        StoreUnavailableError: pg_restore is missing or fails.
    """
    pg_restore = _tool("pg_restore")
    target, env = _libpq(url)
    args = [
        pg_restore,
        "--clean",
        "--if-exists",
        "--no-owner",
        "--no-privileges",
        "--single-transaction",
        "--exit-on-error",
        f"--dbname={target}",
        str(dump),
    ]
    _run(args, env, "pg_restore")

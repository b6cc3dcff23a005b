"""Running the Alembic migrations that ship inside the package.

The configuration is built in code and points at this package's `migrations` folder, so an
installed bio-mcp upgrades its database without the repository's `alembic.ini`. One upgrade
runs at a time per database: SQLite takes its write lock up front (`BEGIN IMMEDIATE`),
PostgreSQL a transaction-scoped advisory lock; a second upgrader waits, then finds the schema
at head and does nothing.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import SQLAlchemyError

from biomcp.adapters.sql.engine import WRITE_OPTIONS, make_engine, resolve_url
from biomcp.adapters.sql.errors import unavailable_on_error
from biomcp.ports.store_errors import StoreUnavailableError

if TYPE_CHECKING:
    from alembic.config import Config

# Alembic is imported where it is used: most commands never migrate, and importing it costs
# a third of a second at every start.

__all__ = [
    "MIGRATIONS_DIR",
    "alembic_config",
    "current_revision",
    "engine_revision",
    "head_revision",
    "lock_for_migration",
    "prepare_schema",
    "upgrade",
    "upgrade_engine",
]

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
# The newest revision in MIGRATIONS_DIR, so that a database already at head is recognised with
# one plain query, without importing Alembic (a test checks it against Alembic's own head).
SCHEMA_HEAD = "0012"
_MIGRATION_LOCK_KEY = int.from_bytes(
    hashlib.sha256(b"biomcp:alembic-upgrade").digest()[:8], "big", signed=True
)


def alembic_config(url: str | None = None, *, connection: Connection | None = None) -> Config:
    """An Alembic configuration for the packaged migrations; `env.py` uses `connection` when
    given, else `url` (see env.py for the fallbacks)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url is not None:
        config.attributes["url"] = url
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest revision the package ships."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise StoreUnavailableError("the package ships no migrations")
    return head


def engine_revision(engine: Engine) -> str | None:
    """The revision `engine`'s database is at (None: never migrated)."""
    with engine.connect() as connection:
        from alembic.runtime.migration import MigrationContext

        return MigrationContext.configure(connection).get_current_revision()


def lock_for_migration(connection: Connection) -> None:
    """Serialize upgraders for the rest of `connection`'s transaction (SQLite: a no-op, the
    transaction began IMMEDIATE)."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK_KEY})


def upgrade_engine(engine: Engine, revision: str = "head") -> None:
    """Migrate `engine`'s database to `revision` in one transaction."""
    with engine.connect() as connection:
        connection.execution_options(**WRITE_OPTIONS)
        with connection.begin():
            lock_for_migration(connection)
            from alembic import command

            command.upgrade(alembic_config(connection=connection), revision)


def stamped_revision(engine: Engine) -> str | None:
    """The one revision in `alembic_version`, read without Alembic; None when there is no such
    table or it does not hold exactly one row (Alembic then decides)."""
    try:
        with engine.connect() as connection:
            rows = connection.execute(text("SELECT version_num FROM alembic_version")).all()
    except SQLAlchemyError:
        return None
    return str(rows[0][0]) if len(rows) == 1 else None


def prepare_schema(engine: Engine, *, migrate: bool) -> None:
    """Make sure the schema is at the packaged head: migrate it when `migrate`, else raise
    StoreUnavailableError. A schema already at head costs one read, no write lock, and no
    import of Alembic."""
    if stamped_revision(engine) == SCHEMA_HEAD:
        return
    current, head = engine_revision(engine), head_revision()
    if current == head:
        return
    if migrate:
        upgrade_engine(engine)
    else:
        raise StoreUnavailableError(
            f"database schema is at {current or 'nothing'}, this bio-mcp needs {head}: "
            "run `biomcp db upgrade`"
        )


def upgrade(url: str | None = None, *, data_dir: Path | None = None) -> str:
    """Migrate the database at `url` (default: the SQLite file under `data_dir`) to head and
    return the head revision.

    Raises:
        StoreUnavailableError: when the database cannot be reached or migrated.
    """
    with unavailable_on_error("migrating the database"):
        engine = make_engine(resolve_url(url, data_dir))
        try:
            upgrade_engine(engine)
            return head_revision()
        finally:
            engine.dispose()


def current_revision(url: str | None = None, *, data_dir: Path | None = None) -> str | None:
    """The revision the database at `url` (default: the SQLite file under `data_dir`) is at;
    None when it was never migrated.

    Raises:
        StoreUnavailableError: when the database cannot be reached.
    """
    with unavailable_on_error("reading the schema revision"):
        engine = make_engine(resolve_url(url, data_dir))
        try:
            return engine_revision(engine)
        finally:
            engine.dispose()

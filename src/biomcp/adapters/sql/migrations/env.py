"""Alembic environment of bio-mcp's metadata store.

The database comes from, in order: a connection handed over by the caller
(`config.attributes["connection"]`, used by `biomcp.adapters.sql.migrate`), the URL in
`config.attributes["url"]`, `-x url=...` on the alembic command line, `$BIOMCP_DATABASE_URL`,
and finally the default SQLite file in the user data directory. SQLite tables are altered in
batch mode (copy and swap), the only way SQLite can change most of a table.
"""

from __future__ import annotations

from logging.config import fileConfig
from typing import Any, Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlalchemy import Connection

from biomcp.adapters.sql.engine import WRITE_OPTIONS, make_engine, resolve_url
from biomcp.adapters.sql.migrate import lock_for_migration
from biomcp.adapters.sql.models import Base, UTCDateTime

config = context.config
target_metadata = Base.metadata
if config.config_file_name is not None:  # run by the alembic command with alembic.ini
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def _render_item(kind: str, item: Any, autogen: AutogenContext) -> str | Literal[False]:
    # Revisions stay free of imports from the models, which keep changing after them.
    if kind == "type" and isinstance(item, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def _url() -> str:
    given = config.attributes.get("url") or context.get_x_argument(as_dictionary=True).get("url")
    return resolve_url(given, use_env=True)


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        render_item=_render_item,
    )


def run_offline() -> None:
    url = _url()
    context.configure(
        url=url,
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=url.startswith("sqlite"),
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    given: Connection | None = config.attributes.get("connection")
    if given is not None:
        _configure(given)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = make_engine(_url())
    try:
        with engine.connect() as connection:
            connection.execution_options(**WRITE_OPTIONS)
            with connection.begin():
                lock_for_migration(connection)
                _configure(connection)
                with context.begin_transaction():
                    context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()

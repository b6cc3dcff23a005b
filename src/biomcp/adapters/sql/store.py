"""`SqlMetadataStore`: every metadata port on SQLAlchemy 2, SQLite (default) or PostgreSQL.

Each role's queries live in a module of their own (`documents`, `saved_queries`, `jobs`,
`projects`), each a store over the shared `SqlDatabase`. This class plays all the roles on
one engine, so a use case needing several gets one object and one connection pool.
"""

from __future__ import annotations

from biomcp.adapters.sql.documents import SqlDocumentStore
from biomcp.adapters.sql.jobs import SqlJobLog
from biomcp.adapters.sql.projects import SqlProjectRegistry
from biomcp.adapters.sql.saved_queries import SqlSavedQueryStore

__all__ = ["SqlMetadataStore"]


class SqlMetadataStore(SqlDocumentStore, SqlSavedQueryStore, SqlJobLog, SqlProjectRegistry):
    """The metadata store on SQLite or PostgreSQL.

    Args:
        url: a SQLAlchemy URL (`sqlite:///path`, `postgresql+psycopg://...`; `postgresql://`
            means psycopg 3). None: the SQLite file `biomcp.sqlite3` under `data_dir`.
        data_dir: the folder of the default SQLite file (default: the user data directory of
            `bio-mcp`); created on first use.
        auto_migrate: migrate the schema to head on first use. Default: on for SQLite (the
            embedded store upgrades itself), off for PostgreSQL, where first use only checks
            that the schema is at head and `biomcp db upgrade` migrates.
        clock: where `last_seen_at` and project creation times come from (default: the system
            clock in UTC).

    Nothing connects until the first call (or `open()`). Use as `async with` or call
    `aclose()`. Every method raises only `MetadataStoreError`s; the constructor raises
    `StoreUnavailableError` on a malformed or unsupported URL (in-memory SQLite included).
    """

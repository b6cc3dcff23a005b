"""`SqlMetadataStore`: every metadata port on SQLAlchemy 2, SQLite (default) or PostgreSQL.

Each role's queries live in a module of their own (`documents`, `fulltext`, `saved_queries`,
`jobs`, `projects`), each a store over the shared `SqlDatabase`. This class plays all the
roles on one engine, so a use case needing several gets one object and one connection pool.
"""

from __future__ import annotations

from biomcp.adapters.sql.documents import SqlDocumentStore
from biomcp.adapters.sql.fulltext import SqlFullTextStore
from biomcp.adapters.sql.jobs import SqlJobLog
from biomcp.adapters.sql.projects import SqlProjectRegistry
from biomcp.adapters.sql.saved_queries import SqlSavedQueryStore

__all__ = ["SqlMetadataStore"]


class SqlMetadataStore(
    SqlDocumentStore, SqlFullTextStore, SqlSavedQueryStore, SqlJobLog, SqlProjectRegistry
):
    """The metadata store on SQLite or PostgreSQL: every role, on one engine.

    It takes `SqlDatabase`'s arguments (`url`, `data_dir`, `auto_migrate`, `clock`). Nothing
    connects until the first call (or `open()`). Every method raises only `MetadataStoreError`s.
    """

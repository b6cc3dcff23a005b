"""The SQL metadata store: SQLite (the embedded default) or PostgreSQL, via SQLAlchemy 2, with
Alembic migrations shipped in the package."""

from biomcp.adapters.sql.engine import default_url
from biomcp.adapters.sql.migrate import current_revision, head_revision, upgrade
from biomcp.adapters.sql.store import SqlMetadataStore

__all__ = ["SqlMetadataStore", "current_revision", "default_url", "head_revision", "upgrade"]

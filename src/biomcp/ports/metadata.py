"""The MetadataStore port: every role the SQL metadata plays, in one store.

Use cases depend on the role they need (`DocumentStore`, `FullTextStore`, `SavedQueryStore`,
`JobLog`, `ProjectRegistry`); the composition root builds one store that plays all of them, and that
store also answers the health checks below.
"""

from __future__ import annotations

from typing import Protocol

from biomcp.ports.documents import DocumentStore
from biomcp.ports.fulltext import FullTextStore
from biomcp.ports.jobs import JobLog
from biomcp.ports.projects import ProjectRegistry
from biomcp.ports.saved_queries import SavedQueryStore

__all__ = ["MetadataStore"]


class MetadataStore(
    DocumentStore, FullTextStore, SavedQueryStore, JobLog, ProjectRegistry, Protocol
):
    """Documents with their full text, saved queries, jobs and projects in one database."""

    async def ping(self) -> None:
        """Raise StoreUnavailableError unless the database answers (for /readyz)."""
        ...

    async def quick_check(self) -> list[str]:
        """What the database's own integrity check finds wrong in its files (SQLite's
        `PRAGMA quick_check`); empty when nothing is, or when a server keeps its own pages."""
        ...

    async def aclose(self) -> None: ...

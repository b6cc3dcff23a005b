"""`MemoryMetadataStore`: every metadata port in memory, as `SqlMetadataStore` is in SQL."""

from __future__ import annotations

from biomcp.testing.memory.documents import MemoryDocumentStore
from biomcp.testing.memory.fulltext import MemoryFullTextStore
from biomcp.testing.memory.jobs import MemoryJobLog
from biomcp.testing.memory.projects import MemoryProjectRegistry
from biomcp.testing.memory.saved_queries import MemorySavedQueryStore

__all__ = ["MemoryMetadataStore"]


class MemoryMetadataStore(
    MemoryDocumentStore,
    MemoryFullTextStore,
    MemorySavedQueryStore,
    MemoryJobLog,
    MemoryProjectRegistry,
):
    """Documents with their full text, saved queries, jobs and projects over one
    `MemoryTables`."""

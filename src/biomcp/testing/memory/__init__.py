"""In-memory stores: each metadata port held in Python dicts, for fast tests of the use cases.

They pass the same contract suites as the SQL adapter (`tests/contract/`). Nothing persists:
one `MemoryTables` is one database, shared by the stores built over it.
"""

from biomcp.testing.memory.documents import MemoryDocumentStore
from biomcp.testing.memory.fulltext import MemoryFullTextStore
from biomcp.testing.memory.jobs import MemoryJobLog
from biomcp.testing.memory.projects import MemoryProjectRegistry
from biomcp.testing.memory.saved_queries import MemorySavedQueryStore
from biomcp.testing.memory.store import MemoryMetadataStore
from biomcp.testing.memory.tables import MemoryTables

__all__ = [
    "MemoryDocumentStore",
    "MemoryFullTextStore",
    "MemoryJobLog",
    "MemoryMetadataStore",
    "MemoryProjectRegistry",
    "MemorySavedQueryStore",
    "MemoryTables",
]

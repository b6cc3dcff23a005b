"""The tables of one in-memory database, and the base every in-memory store builds on."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime

from biomcp.domain.errors import InvalidRecordError
from biomcp.domain.fulltext import FullTextArticle
from biomcp.domain.watermarks import WatermarkAudit
from biomcp.ports.clock import Clock
from biomcp.ports.documents import StoredDocument
from biomcp.ports.fulltext import FullTextState
from biomcp.ports.jobs import SyncJob
from biomcp.ports.projects import ProjectInfo
from biomcp.ports.saved_queries import Checkpoint, PendingPmid
from biomcp.ports.store_errors import MetadataStoreError

__all__ = ["MemoryDatabase", "MemoryTables", "utc"]


def utc(value: datetime) -> datetime:
    """`value` in UTC; a naive one is refused as SQL's timestamp columns refuse it."""
    if value.utcoffset() is None:
        raise MetadataStoreError(f"a naive datetime cannot be stored: {value!r}")
    return value.astimezone(UTC)


@dataclass
class MemoryTables:
    """Every row of one database. `mutex` makes each store call one transaction."""

    documents: dict[str, StoredDocument] = field(default_factory=dict)
    #: PMID -> its full-text state; PMID -> its stored article (references left out)
    fulltext: dict[str, FullTextState] = field(default_factory=dict)
    articles: dict[str, FullTextArticle] = field(default_factory=dict)
    checkpoints: dict[str, Checkpoint] = field(default_factory=dict)
    audit: list[WatermarkAudit] = field(default_factory=list)
    #: query key -> PMID -> its pending entry
    pending: dict[str, dict[str, PendingPmid]] = field(default_factory=dict)
    jobs: dict[str, SyncJob] = field(default_factory=dict)
    #: query key -> PMID -> when a sync of the key first recorded it
    held: dict[str, dict[str, datetime]] = field(default_factory=dict)
    export_marks: dict[str, datetime] = field(default_factory=dict)
    projects: dict[str, ProjectInfo] = field(default_factory=dict)
    #: query key -> the holder of its lock
    locks: dict[str, dict[str, object]] = field(default_factory=dict)
    mutex: threading.RLock = field(default_factory=threading.RLock)

    def is_held(self, pmid: str) -> bool:
        return any(pmid in records for records in self.held.values())

    def delete_unheld(self, pmids: list[str]) -> int:
        doomed = [p for p in pmids if p in self.documents and not self.is_held(p)]
        for pmid in doomed:
            del self.documents[pmid]
            self.fulltext.pop(pmid, None)
            self.articles.pop(pmid, None)
        return len(doomed)


class MemoryDatabase:
    """The base of each in-memory store: its tables (new ones by default) and its clock."""

    def __init__(self, tables: MemoryTables | None = None, *, clock: Clock | None = None) -> None:
        self.tables = tables if tables is not None else MemoryTables()
        self._clock = clock

    def _now(self) -> datetime:
        return self._clock.now() if self._clock is not None else datetime.now(UTC)

    @contextmanager
    def _transaction(self) -> Iterator[MemoryTables]:
        """The tables under the mutex; a domain refusal becomes the port's error."""
        with self.tables.mutex:
            try:
                yield self.tables
            except InvalidRecordError as exc:
                raise MetadataStoreError(str(exc)) from exc

    async def ping(self) -> None:
        """Memory always answers."""

    async def quick_check(self) -> list[str]:
        """Memory has no pages to check."""
        return []

    async def aclose(self) -> None:
        """Nothing to release: the tables stay for another store over them."""

"""Diagnostics: what a health check reads of the stores and of NCBI.

`biomcp doctor` and `GET /readyz` ask the same questions: does the metadata database answer
and pass its own integrity check, what does the vector store hold, does NCBI answer. They ask
them here, so no entry point reads a port.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from biomcp.ports.entrez import EntrezClient
from biomcp.ports.metadata import MetadataStore
from biomcp.ports.vectors import CollectionStats, VectorStore

__all__ = ["Diagnostics", "MetadataHealth"]


@dataclass(frozen=True, slots=True)
class MetadataHealth:
    """The metadata database: what its integrity check found (empty: sound) and, when sound,
    how many records it holds (None otherwise)."""

    problems: list[str]
    records: int | None


class Diagnostics:
    """Health questions over the ports; the vector store and NCBI client are opened on use."""

    def __init__(
        self,
        metadata: MetadataStore,
        vectors: Callable[[], VectorStore],
        entrez: Callable[[], EntrezClient],
        *,
        collection: str,
    ) -> None:
        self._metadata = metadata
        self._vectors = vectors
        self._entrez = entrez
        self.collection = collection

    async def metadata_health(self) -> MetadataHealth:
        """Open the database (SQLite migrates itself then), run its integrity check and count
        its records when it passes.

        Raises:
            MetadataStoreError: the database cannot be opened or read.
        """
        await self._metadata.ping()
        problems = await self._metadata.quick_check()
        if problems:
            return MetadataHealth(problems, None)
        return MetadataHealth([], await self._metadata.count_documents())

    async def corpus_stats(self) -> CollectionStats | None:
        """The corpus collection's statistics; None before anything was indexed.

        Raises:
            VectorStoreError: the vector store cannot be reached.
        """
        vectors = self._vectors()
        if self.collection not in await vectors.collections():
            return None
        return await vectors.stats(self.collection)

    async def ncbi_count(self) -> int:
        """How many records match `pubmed` in an ESearch: NCBI answers, and takes the key.

        Raises:
            EntrezError: NCBI refused or did not answer.
        """
        found = await self._entrez().esearch("pubmed", retmax=0)
        return found.count

    async def readiness(self) -> dict[str, str]:
        """`ok` or the reason, per store: what `/readyz` reports."""
        checks: dict[str, str] = {}
        try:
            await self._metadata.ping()
            checks["metadata"] = "ok"
        except Exception as exc:
            checks["metadata"] = f"{type(exc).__name__}: {exc}"
        try:
            await self._vectors().collections()
            checks["vectors"] = "ok"
        except Exception as exc:
            checks["vectors"] = f"{type(exc).__name__}: {exc}"
        return checks

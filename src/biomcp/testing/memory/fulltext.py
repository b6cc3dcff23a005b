"""`MemoryFullTextStore`: the FullTextStore port in memory."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from biomcp.domain.fulltext import FullTextArticle
from biomcp.domain.fulltext_policy import CORPUS_FULLTEXT_STATUSES
from biomcp.ports.fulltext import FullTextState, FullTextWrite
from biomcp.ports.store_errors import MetadataStoreError
from biomcp.testing.memory.tables import MemoryDatabase, utc

__all__ = ["MemoryFullTextStore"]


class MemoryFullTextStore(MemoryDatabase):
    """Full-text states and articles in dicts; an article is kept without its references,
    as the SQL store keeps it."""

    async def fulltext_states(self, pmids: Sequence[str]) -> dict[str, FullTextState]:
        with self._transaction() as tables:
            return {p: tables.fulltext[p] for p in dict.fromkeys(pmids) if p in tables.fulltext}

    async def fulltext_articles(self, pmids: Sequence[str]) -> dict[str, FullTextArticle]:
        with self._transaction() as tables:
            return {p: tables.articles[p] for p in dict.fromkeys(pmids) if p in tables.articles}

    async def record_fulltext(self, writes: Sequence[FullTextWrite]) -> None:
        for write in writes:
            if write.state.status not in CORPUS_FULLTEXT_STATUSES:
                raise MetadataStoreError(f"unknown full-text status {write.state.status!r}")
            if write.article is not None and write.drop_article:
                raise MetadataStoreError("a full-text write both gives and drops its article")
        states = [replace(w.state, checked_at=utc(w.state.checked_at)) for w in writes]
        with self._transaction() as tables:
            for state, write in zip(states, writes, strict=True):
                pmid = state.pmid
                if pmid not in tables.documents:
                    continue
                tables.fulltext[pmid] = state
                if write.article is not None:
                    tables.articles[pmid] = replace(write.article, references=())
                elif write.drop_article:
                    tables.articles.pop(pmid, None)

    async def fulltext_status_counts(self, pmids: Sequence[str] | None = None) -> dict[str, int]:
        with self._transaction() as tables:
            chosen = tables.fulltext if pmids is None else dict.fromkeys(pmids)
            found = [tables.fulltext[p].status for p in chosen if p in tables.fulltext]
        return dict(Counter(found))

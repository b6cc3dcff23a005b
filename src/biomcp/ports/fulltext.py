"""The FullTextStore port: each corpus record's PMC full-text state, and its stored article.

A state row exists for every record a full-text sync has checked. An `available` record also
has its parsed article stored (references left out), so chunks, outlines and sections can be
rebuilt without asking PMC again. Deleting a document deletes its full-text row in the same
transaction. Every method raises only `MetadataStoreError`s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from biomcp.domain.fulltext import FullTextArticle
from biomcp.domain.fulltext_policy import CorpusFullTextStatus

__all__ = ["FullTextState", "FullTextStore", "FullTextWrite"]


@dataclass(frozen=True, slots=True)
class FullTextState:
    """What the last full-text check of one record found.

    `content_hash` identifies the stored article's chunkable content (None when none is
    stored); `chars` is the size of its text and `chunks` how many chunks it gave. `failures`
    counts the checks in a row that failed (0 after any other outcome).
    """

    pmid: str
    status: CorpusFullTextStatus
    checked_at: datetime
    pmcid: str | None = None
    reason: str | None = None
    content_hash: str | None = None
    chars: int = 0
    chunks: int = 0
    failures: int = 0


@dataclass(frozen=True, slots=True)
class FullTextWrite:
    """One record's new state. `article` replaces the stored article when given;
    `drop_article` deletes it; with neither, a stored article stays as it is."""

    state: FullTextState
    article: FullTextArticle | None = None
    drop_article: bool = False


class FullTextStore(Protocol):
    """Full-text states and articles, by PMID."""

    async def fulltext_states(self, pmids: Sequence[str]) -> dict[str, FullTextState]:
        """The states of those of `pmids` that were ever checked."""
        ...

    async def fulltext_articles(self, pmids: Sequence[str]) -> dict[str, FullTextArticle]:
        """The stored articles of those of `pmids` that have one."""
        ...

    async def record_fulltext(self, writes: Sequence[FullTextWrite]) -> None:
        """Apply `writes` in one transaction (a PMID without a stored document is skipped)."""
        ...

    async def fulltext_status_counts(self, pmids: Sequence[str] | None = None) -> dict[str, int]:
        """How many records have each status, among `pmids` (None: every record checked)."""
        ...

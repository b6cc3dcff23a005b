"""What a corpus keeps of a record's PMC full text, and when it asks PMC again.

Statuses of a corpus record's full text:

* `available`: the article is stored and indexed;
* `not_open_access`: PMC holds the article but does not let it be downloaded, or its licence
  does not allow reuse (an embargo may end: checked again later);
* `not_in_pmc`: the record names no PMC id, or PMC does not know it;
* `withdrawn`: PMC withdrew the article (its chunks are removed);
* `too_large`: the article's text is over the size bound (a setting);
* `failed`: the fetch or the parse failed (`reason` says why); retried at the next sync.

Reuse (`reuse_allowed`): PMC's open-access subset and author manuscripts may be text-mined.
An article PMC lets anyone read without either mark is indexed only under a Creative Commons
licence; its publisher's terms are unknown otherwise.

When to ask again (`is_due`): a record never checked, a failed check, and a record whose PMC id
changed are due at once. Any other outcome is checked again once `recheck` has passed, so an
embargo that ends and a revised article are both seen. A record without a PMC id needs no
request: it is `not_in_pmc` until a new version of it names one.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal, Protocol

from biomcp.domain.fulltext import FullTextArticle

__all__ = [
    "CORPUS_FULLTEXT_STATUSES",
    "CheckedState",
    "CorpusFullTextStatus",
    "classify_article",
    "is_due",
    "reuse_allowed",
]

CorpusFullTextStatus = Literal[
    "available", "not_open_access", "not_in_pmc", "withdrawn", "too_large", "failed"
]
CORPUS_FULLTEXT_STATUSES: tuple[CorpusFullTextStatus, ...] = (
    "available",
    "not_open_access",
    "not_in_pmc",
    "withdrawn",
    "too_large",
    "failed",
)

_CC = ("creativecommons.org", "cc by", "cc-by", "cc0", "creative commons")


class CheckedState(Protocol):
    """What `is_due` reads of a stored state."""

    @property
    def status(self) -> str: ...

    @property
    def pmcid(self) -> str | None: ...

    @property
    def checked_at(self) -> datetime: ...


def reuse_allowed(article: FullTextArticle) -> bool:
    """Whether the article may be indexed (see the module docstring)."""
    if article.access in ("open_access", "author_manuscript"):
        return True
    if article.access != "free_to_read" or article.license is None:
        return False
    words = " ".join(
        part.lower()
        for part in (article.license.url, article.license.type, article.license.text)
        if part
    )
    return any(mark in words for mark in _CC)


def classify_article(
    article: FullTextArticle, *, chars: int, max_chars: int
) -> tuple[CorpusFullTextStatus, str | None]:
    """The status of a fetched article and, unless it is `available`, why."""
    if article.withdrawn:
        return "withdrawn", "PMC withdrew this article"
    if article.access == "restricted" or not article.has_body:
        return "not_open_access", "PMC does not let this article's full text be downloaded"
    if not reuse_allowed(article):
        return "not_open_access", "the article's licence does not allow reuse"
    if chars > max_chars:
        return "too_large", f"its text has {chars} characters; the bound is {max_chars}"
    return "available", None


def is_due(
    state: CheckedState | None, pmcid: str | None, now: datetime, recheck: timedelta
) -> bool:
    """Whether a record's full text should be checked now (see the module docstring)."""
    if state is None or state.status == "failed":
        return True
    if (state.pmcid or None) != (pmcid or None):
        return True
    if pmcid is None:
        return False
    return state.checked_at + recheck <= now

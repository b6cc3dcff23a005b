"""FullTextSync: the PMC full text of a saved query's records, kept in the corpus.

One run, after a sync of a key that keeps full text (`Checkpoint.fulltext`):

1. Read the state of each of the key's records (`FullTextStore`) and pick those due
   (`fulltext_policy.is_due`): never checked and failed first, then the oldest checks, up to
   `per_sync`. The rest stay due for the next sync (`remaining`).
2. A record without a PMC id is `not_in_pmc` at once, with no request.
3. The others are fetched in batches through EFetch `db=pmc`: the same client, cache and rate
   limiter as the live tools. A batch that fails marks its records `failed` with the reason;
   the next sync retries them. Two failed batches in a row end the run (PMC is down).
4. Each article is classified (`fulltext_policy.classify_article`). An available article whose
   content hash is the stored one is unchanged: its check costs the request and nothing else.
   A new or revised one is chunked and indexed with its document; one that is withdrawn, lost
   its licence or grew past the bound has its full-text chunks removed.
5. States (and articles) are recorded only after the index write, so a run that stops half way
   leaves those records due, never marked done without their chunks.

The checkpoint is not involved: the abstract sync has moved it already, and a record's full
text is retried from its own state.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Protocol

from biomcp.domain.fulltext import FullTextArticle, PmcArticleSet
from biomcp.domain.fulltext_chunks import article_content_hash, article_text_chars
from biomcp.domain.fulltext_policy import CorpusFullTextStatus, classify_article, is_due
from biomcp.ports.clock import Clock
from biomcp.ports.documents import DocumentStore, StoredDocument
from biomcp.ports.entrez import EntrezClient, EntrezError
from biomcp.ports.fulltext import FullTextState, FullTextStore, FullTextWrite
from biomcp.ports.jobs import JobLog
from biomcp.usecases.indexing import INDEX_LOCK, ChunkIndexer

__all__ = ["FullTextConfig", "FullTextOutcome", "FullTextSync"]

#: Consecutive failed batches after which a run stops asking PMC.
_MAX_FAILED_BATCHES = 2
_MAX_REASON = 300
#: Documents read at a time while picking the due records.
_READ_SLICE = 500


@dataclass(frozen=True, slots=True)
class FullTextConfig:
    """Bounds of a full-text run: the largest article text indexed (characters), how long an
    outcome holds before the record is checked again, how many records one run checks, and how
    many articles one EFetch asks for."""

    max_chars: int = 400_000
    recheck_days: float = 30.0
    per_sync: int = 500
    batch_size: int = 20
    lock_timeout_s: float = 600.0

    def __post_init__(self) -> None:
        if self.max_chars < 1 or self.per_sync < 1 or self.batch_size < 1:
            raise ValueError("full-text bounds must be >= 1")
        if self.recheck_days < 0:
            raise ValueError("recheck_days must be >= 0")


@dataclass(slots=True)
class FullTextOutcome:
    """What one run did. `statuses` counts this run's outcomes; `remaining` is how many due
    records were left for the next sync; `chars_fetched` is the text size of every article
    read."""

    checked: int = 0
    requests: int = 0
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    remaining: int = 0
    chunks_written: int = 0
    #: the full-text chunks among `chunks_written` (a document's abstract chunks are written
    #: again with its article's)
    fulltext_chunks: int = 0
    texts_embedded: int = 0
    chars_fetched: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def as_payload(self) -> dict[str, object]:
        return {
            "checked": self.checked,
            "indexed": self.indexed,
            "unchanged": self.unchanged,
            "removed": self.removed,
            "remaining": self.remaining,
            "statuses": dict(sorted(self.statuses.items())),
            "chunks_written": self.chunks_written,
            "fulltext_chunks": self.fulltext_chunks,
        }


class FullTextMetadata(DocumentStore, FullTextStore, JobLog, Protocol):
    """The roles a full-text run uses: documents, full-text states and the index lock."""


@dataclass(slots=True)
class _Check:
    """One record's check in progress."""

    doc: StoredDocument
    before: FullTextState | None
    state: FullTextState
    article: FullTextArticle | None = None
    drop: bool = False


class FullTextSync:
    """Keeps the full text of records current (see the module docstring)."""

    def __init__(
        self,
        entrez: EntrezClient,
        metadata: FullTextMetadata,
        indexer: ChunkIndexer,
        *,
        clock: Clock,
        config: FullTextConfig | None = None,
    ) -> None:
        self._entrez = entrez
        self._metadata = metadata
        self._indexer = indexer
        self._clock = clock
        self.config = config or FullTextConfig()

    async def due(
        self, pmids: Sequence[str], *, touched: Collection[str] = ()
    ) -> tuple[list[StoredDocument], int, dict[str, FullTextState]]:
        """The documents of `pmids` to check in this run, in order, how many more may be due,
        and the states read (by PMID). Only records whose state says they may be due, and
        `touched` ones (stored by this sync: a new version may name a PMC id), are read from
        the document store."""
        states = await self._metadata.fulltext_states(list(pmids))
        now = self._clock.now()
        recheck = timedelta(days=self.config.recheck_days)
        touched = frozenset(touched)
        candidates = [p for p in pmids if p in touched or _maybe_due(states.get(p), now, recheck)]
        far_past = datetime.min.replace(tzinfo=now.tzinfo)

        def order(pmid: str) -> tuple[int, datetime, str]:
            state = states.get(pmid)
            if state is None:
                return (0, far_past, pmid)
            return (1 if state.status == "failed" else 2, state.checked_at, pmid)

        candidates.sort(key=order)
        limit = self.config.per_sync
        due: list[StoredDocument] = []
        read = 0
        while read < len(candidates) and len(due) < limit:
            part = candidates[read : read + _READ_SLICE]
            read += len(part)
            docs = await self._metadata.get_documents(part)
            due.extend(
                docs[p]
                for p in part
                if p in docs and is_due(states.get(p), _pmcid(docs[p]), now, recheck)
            )
        remaining = max(0, len(due) - limit) + (len(candidates) - read)
        return due[:limit], remaining, states

    async def run(self, pmids: Sequence[str], *, touched: Collection[str] = ()) -> FullTextOutcome:
        """Check and index the full text of the due records among `pmids` (`touched`: those
        this sync stored, see `due`).

        Raises:
            MetadataStoreError, VectorStoreError, EmbeddingError: a store or the embedder
                failed; the records of the batch being written stay due.
        """
        outcome = FullTextOutcome()
        began = time.perf_counter()
        docs, outcome.remaining, states = await self.due(pmids, touched=touched)
        now = self._clock.now()
        checks = [self._start(doc, states.get(doc.record.pmid), now) for doc in docs]
        outcome.timings["select"] = time.perf_counter() - began
        asking = [c for c in checks if c.state.pmcid is not None]
        await self._finish([c for c in checks if c.state.pmcid is None], outcome)
        failed_in_row = 0
        size = self.config.batch_size
        for offset in range(0, len(asking), size):
            batch = asking[offset : offset + size]
            if failed_in_row >= _MAX_FAILED_BATCHES:
                outcome.remaining += len(asking) - offset
                outcome.warnings.append(
                    f"PMC failed {failed_in_row} times in a row; "
                    f"{len(asking) - offset} records wait for the next sync"
                )
                break
            ok = await self._fetch(batch, outcome)
            failed_in_row = 0 if ok else failed_in_row + 1
            await self._finish(batch, outcome)
        return outcome

    def _start(self, doc: StoredDocument, before: FullTextState | None, now: datetime) -> _Check:
        pmcid = _pmcid(doc)
        if pmcid is None:
            state = FullTextState(
                doc.record.pmid,
                "not_in_pmc",
                now,
                reason="the PubMed record names no PMC article",
            )
            return _Check(doc, before, state, drop=_had_article(before))
        state = FullTextState(doc.record.pmid, "failed", now, pmcid=pmcid)
        return _Check(doc, before, state)

    async def _fetch(self, batch: Sequence[_Check], outcome: FullTextOutcome) -> bool:
        """Fetch one batch's articles and settle each check's state; False when it failed."""
        began = time.perf_counter()
        outcome.requests += 1
        try:
            answer = await self._entrez.efetch_pmc([c.state.pmcid or "" for c in batch])
        except EntrezError as exc:
            for check in batch:
                check.state = _failed(check, f"PMC could not be read: {exc}")
            outcome.timings["fetch"] = outcome.timings.get("fetch", 0.0) + (
                time.perf_counter() - began
            )
            return False
        outcome.timings["fetch"] = outcome.timings.get("fetch", 0.0) + (time.perf_counter() - began)
        for check in batch:
            self._settle(check, answer, outcome)
        return True

    def _settle(self, check: _Check, answer: PmcArticleSet, outcome: FullTextOutcome) -> None:
        pmcid = check.state.pmcid or ""
        article = next((a for a in answer.articles if a.pmcid == pmcid), None)
        if pmcid in answer.problems:
            check.state = _failed(check, f"the article could not be read: {answer.problems[pmcid]}")
            return
        if article is None:
            missing = f"PMC returned no article for {pmcid}"
            check.state = replace(check.state, status="not_in_pmc", reason=missing)
            check.drop = _had_article(check.before)
            return
        chars = article_text_chars(article)
        outcome.chars_fetched += chars
        status, reason = classify_article(article, chars=chars, max_chars=self.config.max_chars)
        if status != "available":
            check.state = replace(check.state, status=status, reason=reason, chars=chars)
            check.drop = _had_article(check.before)
            return
        digest = article_content_hash(article)
        check.state = replace(check.state, status="available", content_hash=digest, chars=chars)
        before = check.before
        if before is not None and before.status == "available" and before.content_hash == digest:
            check.state = replace(check.state, chunks=before.chunks)
            outcome.unchanged += 1
        else:
            check.article = article

    async def _finish(self, checks: Sequence[_Check], outcome: FullTextOutcome) -> None:
        """Index what changed, then record every state of `checks`."""
        if not checks:
            return
        changing = [c for c in checks if c.article is not None or c.drop]
        if changing:
            began = time.perf_counter()
            articles = {c.doc.record.pmid: c.article for c in changing}
            lock = self._metadata.query_lock(INDEX_LOCK, timeout_s=self.config.lock_timeout_s)
            async with lock:
                fresh = await self._metadata.get_documents(list(articles))
                docs = [fresh[p] for p in articles if p in fresh]
                index = await self._indexer.index(docs, articles=articles)
            outcome.chunks_written += index.chunks_written
            outcome.fulltext_chunks += sum(index.fulltext_chunks.values())
            outcome.texts_embedded += index.texts_embedded
            for stage, seconds in index.timings.items():
                outcome.timings[stage] = outcome.timings.get(stage, 0.0) + seconds
            for check in changing:
                pmid = check.doc.record.pmid
                if pmid in index.failed:
                    check.state = _failed(check, "the vector store refused a chunk")
                    check.article, check.drop = None, False
                elif check.article is not None:
                    check.state = replace(check.state, chunks=index.fulltext_chunks.get(pmid, 0))
                    outcome.indexed += 1
                else:
                    outcome.removed += 1
            outcome.timings["index"] = outcome.timings.get("index", 0.0) + (
                time.perf_counter() - began
            )
        await self._metadata.record_fulltext(
            [FullTextWrite(c.state, article=c.article, drop_article=c.drop) for c in checks]
        )
        for check in checks:
            outcome.checked += 1
            status: CorpusFullTextStatus = check.state.status
            outcome.statuses[status] = outcome.statuses.get(status, 0) + 1


def _pmcid(doc: StoredDocument) -> str | None:
    value = (doc.record.pmcid or "").strip().upper()
    if not value:
        return None
    return value if value.startswith("PMC") else f"PMC{value}"


def _maybe_due(state: FullTextState | None, now: datetime, recheck: timedelta) -> bool:
    """`is_due` without the record: what a state alone says (a PMC id change needs the record)."""
    if state is None or state.status == "failed":
        return True
    return state.pmcid is not None and state.checked_at + recheck <= now


def _had_article(state: FullTextState | None) -> bool:
    return state is not None and state.status == "available"


def _failed(check: _Check, reason: str) -> FullTextState:
    """A failed check keeps what was stored (a transient failure removes nothing)."""
    failures = (check.before.failures if check.before is not None else 0) + 1
    before = check.before
    return replace(
        check.state,
        status="failed",
        reason=reason[:_MAX_REASON],
        failures=failures,
        content_hash=before.content_hash if before is not None else None,
        chars=before.chars if before is not None else 0,
        chunks=before.chunks if before is not None else 0,
    )

"""GetDocument: reading one stored document (`rag.get` and the paper resource).

A document whose full text a sync checked also says what became of it (`fulltext`: status,
reason, PMC id, when checked, how many chunks). Asked for its full text, it gives the stored
article's outline (no words asked) or the text of the sections whose title has one of the
words asked, within `MAX_FULLTEXT_CHARS`: the same rendering as `pubmed_fetch_fulltext`, read
from the corpus instead of PMC.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from biomcp.domain.fulltext import render_article
from biomcp.ports.documents import DocumentStore
from biomcp.ports.fulltext import FullTextState, FullTextStore
from biomcp.usecases.errors import InvalidRequestError, NotFoundError
from biomcp.usecases.fulltext_payloads import article_body
from biomcp.usecases.payloads import document_payload, iso_utc, parse_doc_id

__all__ = [
    "MAX_FULLTEXT_CHARS",
    "MAX_SECTION_WORDS",
    "MAX_SECTION_WORD_CHARS",
    "GetDocument",
    "fulltext_state_payload",
]

#: The most characters of full text one `rag.get` answer carries, and of one section.
MAX_FULLTEXT_CHARS = 12_000
MAX_SECTION_CHARS = 6_000
#: The most section words one call may ask for, and their length.
MAX_SECTION_WORDS = 5
MAX_SECTION_WORD_CHARS = 100


class DocumentsWithFullText(DocumentStore, FullTextStore, Protocol):
    """What `GetDocument` reads: documents and their full-text states."""


class GetDocument:
    """`rag.get` and `resource://pubmed/paper/{pmid}`: one payload for both."""

    def __init__(self, metadata: DocumentsWithFullText) -> None:
        self._metadata = metadata

    async def run(self, doc_id: str, *, fulltext: Sequence[str] | None = None) -> dict[str, Any]:
        """The stored document `doc_id` (`pmid:<digits>` or bare digits). `fulltext` None:
        its full-text state only; empty: also its article's outline; words: also the text of
        the sections whose title has one of them (see the module docstring).

        Raises:
            InvalidRequestError: a malformed id, too many or too long section words.
            NotFoundError: the PMID is not in the corpus.
        """
        pmid = parse_doc_id(doc_id)
        words = _check_words(fulltext)
        doc = await self._metadata.get_document(pmid)
        if doc is None:
            raise NotFoundError(
                f"pmid:{pmid} is not in the corpus: sync a query that covers it "
                "(pubmed_sync_delta), or read it live from PubMed",
                details={"doc_id": f"pmid:{pmid}"},
            )
        payload = document_payload(doc)
        state = (await self._metadata.fulltext_states([pmid])).get(pmid)
        shown = fulltext_state_payload(state)
        if shown is not None and words is not None and state is not None:
            shown.update(await self._body(pmid, words))
        payload["fulltext"] = shown
        return payload

    async def _body(self, pmid: str, words: Sequence[str]) -> dict[str, Any]:
        article = (await self._metadata.fulltext_articles([pmid])).get(pmid)
        if article is None:
            return {}
        rendered = render_article(
            article,
            remaining=MAX_FULLTEXT_CHARS,
            max_section_chars=MAX_SECTION_CHARS,
            section_filter=words,
            outline=not words,
            include_captions=True,
        )
        body = article_body(article, rendered)
        body.pop("abstract", None)  # the document's own abstract is in the payload already
        return body


def fulltext_state_payload(state: FullTextState | None) -> dict[str, Any] | None:
    """A record's full-text state as answers show it (None: never checked)."""
    if state is None:
        return None
    return {
        "status": state.status,
        "reason": state.reason,
        "pmcid": state.pmcid,
        "checked_at": iso_utc(state.checked_at),
        "chunks": state.chunks,
    }


def _check_words(words: Sequence[str] | None) -> list[str] | None:
    if words is None:
        return None
    if isinstance(words, str):
        words = [words]
    if len(words) > MAX_SECTION_WORDS:
        raise InvalidRequestError(
            f"fulltext takes at most {MAX_SECTION_WORDS} section words, got {len(words)}",
            details={"field": "fulltext"},
        )
    cleaned = [w.strip() for w in words if w.strip()]
    if any(len(w) > MAX_SECTION_WORD_CHARS for w in cleaned):
        raise InvalidRequestError(
            f"a fulltext section word is at most {MAX_SECTION_WORD_CHARS} characters",
            details={"field": "fulltext"},
        )
    return cleaned

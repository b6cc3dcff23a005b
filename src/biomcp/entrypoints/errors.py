"""Every failure as spec 01's error envelope: `{"error": {"code", "message", "details"}}`.

The message says what went wrong and what to do next, in words a model can act on. Internal
details of unexpected errors stay in the server log; the caller gets `UNKNOWN` and a pointer.
Answers to clients (`public`) are bounded: a message of at most `MAX_MESSAGE_CHARS`, detail
strings of at most `MAX_DETAIL_CHARS`, whatever value an error repeated.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Final

from biomcp.domain.errors import DomainError
from biomcp.ports.embeddings import EmbeddingError
from biomcp.ports.entrez import (
    EntrezApiKeyError,
    EntrezError,
    EntrezRateLimitError,
    EntrezRequestError,
    EntrezTimeoutError,
    EntrezUnavailableError,
)
from biomcp.ports.holders import describe_holder
from biomcp.ports.store_errors import LockTimeoutError, MetadataStoreError
from biomcp.ports.vectors import EmbeddingMismatchError, VectorStoreBusyError, VectorStoreError
from biomcp.usecases.errors import IndexingError, InvalidRequestError, NotFoundError
from biomcp.usecases.indexing import INDEX_LOCK
from biomcp.usecases.projects import ProjectError

__all__ = [
    "MAX_DETAIL_CHARS",
    "MAX_MESSAGE_CHARS",
    "ToolCallError",
    "classify",
    "envelope",
    "truncated",
    "without_paths",
]

#: The longest error message a client gets (longer ones are cut, marked with their length).
MAX_MESSAGE_CHARS: Final = 2000
#: The longest string in an error's details a client gets.
MAX_DETAIL_CHARS: Final = 300

_log = logging.getLogger("biomcp.server")


class ToolCallError(Exception):
    """A failure already expressed as an envelope code (argument validation, unknown tool)."""

    def __init__(self, code: str, message: str, details: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details


def classify(exc: BaseException, *, vector_backend: str = "embedded") -> tuple[str, str, Any]:
    """(code, message, details) for `exc`."""
    vector_code = "WEAVIATE" if vector_backend == "weaviate" else "STORE"
    if isinstance(exc, ToolCallError | ProjectError):
        return exc.code, exc.message, exc.details
    if isinstance(exc, InvalidRequestError):
        return "VALIDATION", exc.message, exc.details
    if isinstance(exc, NotFoundError):
        return "NOT_FOUND", exc.message, exc.details
    if isinstance(exc, IndexingError):
        return vector_code, exc.message, exc.details
    if isinstance(exc, DomainError):
        return "VALIDATION", str(exc), None
    if isinstance(exc, EntrezRateLimitError):
        return (
            "RATE_LIMIT",
            f"NCBI rate limit hit and retries ran out ({exc}); wait a minute and retry, or set "
            "NCBI_API_KEY for 10 requests/s",
            {"retry_after": exc.retry_after},
        )
    if isinstance(exc, EntrezTimeoutError):
        return "TIMEOUT", f"NCBI did not answer in time ({exc}); retry later", None
    if isinstance(exc, EntrezUnavailableError):
        return "UPSTREAM", f"NCBI E-utilities are unavailable ({exc}); retry later", None
    if isinstance(exc, EntrezApiKeyError):
        return (
            "ENTREZ",
            f"NCBI does not accept the configured API key ({exc}): correct NCBI_API_KEY, or "
            "unset it to run without a key at 3 requests/s",
            None,
        )
    if isinstance(exc, EntrezRequestError):
        return "ENTREZ", f"PubMed rejected the request: {exc}; check the query syntax", None
    if isinstance(exc, EntrezError):
        return "ENTREZ", f"PubMed answered something unusable: {exc}", None
    if isinstance(exc, LockTimeoutError):
        return _lock_timeout(exc)
    if isinstance(exc, VectorStoreBusyError):
        return (
            "TIMEOUT",
            f"{exc}; this is temporary: retry in a moment",
            {"retryable": True, "holder": exc.holder},
        )
    if isinstance(exc, EmbeddingMismatchError):
        # Spec 01's code: the corpus tools' errors are within its enum (the project tools
        # report spec 02's EMBEDDING_MISMATCH themselves).
        return (
            "EMBEDDINGS",
            f"the corpus was embedded by another model: {exc}. Re-embed it with the configured "
            "model (`biomcp index rebuild --reset`), or configure the model that filled it (for "
            "the PyTorch int8 model: pip install 'bio-mcp[torch]' and BIOMCP_EMBEDDINGS=hf).",
            {"collection": exc.collection, "stored": exc.stored, "requested": exc.requested},
        )
    if isinstance(exc, MetadataStoreError):
        return "STORE", f"the metadata database failed: {exc}", None
    if isinstance(exc, VectorStoreError):
        return vector_code, f"the vector store failed: {exc}", None
    if isinstance(exc, EmbeddingError):
        return "EMBEDDINGS", f"embedding failed: {exc}", None
    _log.exception("unexpected error", exc_info=exc)
    return (
        "UNKNOWN",
        f"an unexpected {type(exc).__name__} occurred; the server logged it and keeps serving",
        None,
    )


def _lock_timeout(exc: LockTimeoutError) -> tuple[str, str, Any]:
    """A lock wait that ran out: retryable, naming what holds the lock and who."""
    holder = exc.holder
    who = describe_holder(holder)
    waited = f"; waited {exc.waited_s:g} s" if exc.waited_s else ""
    index = exc.query_key == INDEX_LOCK
    what = (
        "another sync is writing the corpus index"
        if index
        else f"a sync of query key {exc.query_key!r} is running"
        if exc.query_key
        else "a sync holds the lock"
    )
    details: dict[str, Any] = {
        "retryable": True,
        "holder": holder,
        "query_key": None if index else exc.query_key,
        "waited_s": exc.waited_s,
    }
    return "TIMEOUT", f"{what} ({who}){waited}: retry when it ends", details


#: An absolute path of two segments or more, not part of a URL or a relative path.
_ABSOLUTE_PATH = re.compile(r"(?<![\w/.:~-])/(?:[^\s'\"/:,;()\[\]<>]+/)+[^\s'\"/:,;()\[\]<>]*")


#: A SQLite URL (its path is a file of this machine).
_SQLITE_URL = re.compile(r"sqlite(?:\+\w+)?:///[^\s'\"]*?(?=:\s|[\s'\"]|$)")


def without_paths(text: str) -> str:
    """`text` with every absolute file path (and SQLite URL) replaced by `<path>`: what a
    remote client may see of this machine's folders is nothing."""
    return _ABSOLUTE_PATH.sub("<path>", _SQLITE_URL.sub("sqlite:///<path>", text))


def truncated(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... (cut: {len(text):,} characters)"


def _public(value: Any) -> Any:
    if isinstance(value, str):
        return without_paths(truncated(value, MAX_DETAIL_CHARS))
    if isinstance(value, dict):
        return {k: _public(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_public(v) for v in value]
    return value


def envelope(
    exc: BaseException, *, vector_backend: str = "embedded", public: bool = False
) -> dict[str, Any]:
    """Spec 01's error envelope for `exc`. `public` (answers to MCP clients): no absolute
    file path in the message or the details (the CLI, run by the machine's user, keeps them)."""
    code, message, details = classify(exc, vector_backend=vector_backend)
    if public:
        message = without_paths(truncated(message, MAX_MESSAGE_CHARS))
        details = _public(details)
    return {"error": {"code": code, "message": message, "details": details}}

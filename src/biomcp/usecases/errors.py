"""Errors the use cases raise themselves (the ports' own error trees pass through unchanged).

Entry points map every error to the spec's envelope codes; these carry the codes the ports do
not: a request that cannot be served as asked (`VALIDATION`), an unknown document
(`NOT_FOUND`), and an invariant the run itself broke (`INVARIANT_FAILURE`).
"""

from __future__ import annotations

__all__ = ["IndexingError", "InvalidRequestError", "NotFoundError", "UseCaseError"]


class UseCaseError(Exception):
    """Base of the use cases' own errors. `details` is shown to the caller (no secrets)."""

    def __init__(self, message: str, details: object = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidRequestError(UseCaseError):
    """The arguments are well-typed but cannot be served (a bad timestamp, an empty query)."""


class NotFoundError(UseCaseError):
    """The document or collection asked for does not exist."""


class IndexingError(UseCaseError):
    """The vector store refused some chunks of a sync; the checkpoint did not move."""

"""The errors every metadata port raises, whichever store answers.

A store raises only `MetadataStoreError`s: `StoreUnavailableError` when it cannot be reached,
`LockTimeoutError` when a saved query's lock stays held past the wait.
"""

from __future__ import annotations

__all__ = ["LockTimeoutError", "MetadataStoreError", "StoreUnavailableError"]


class MetadataStoreError(Exception):
    """Base of every error a MetadataStore raises."""


class StoreUnavailableError(MetadataStoreError):
    """The database cannot be reached, opened or migrated."""


class LockTimeoutError(MetadataStoreError):
    """Another holder kept the lock of this query key for the whole wait (a sync of it runs).

    Retryable: the holder releases it when it ends or dies. `holder` says who it is (pid,
    host, program, since), when known; never a path."""

    def __init__(
        self,
        message: str,
        *,
        query_key: str | None = None,
        holder: dict[str, object] | None = None,
        waited_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.query_key = query_key
        self.holder = holder
        self.waited_s = waited_s

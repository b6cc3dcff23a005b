"""What the library's calls answer that no use case types: frozen dataclasses.

Each `as_payload()` is the dict the call answered before it was typed (the CLI's and the tools'
JSON), for code that wants plain data.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from biomcp.usecases.payloads import iso_utc

__all__ = [
    "CheckpointMove",
    "CheckpointState",
    "CheckpointSummary",
    "ForgetReport",
    "ProjectCreated",
    "PruneReport",
]


@dataclass(frozen=True, slots=True)
class CheckpointState:
    """A saved query's checkpoint: `last_edat` is None before its first sync."""

    query_key: str
    last_edat: datetime | None

    def as_payload(self) -> dict[str, Any]:
        """`{"query_key", "last_edat"}`, the time as ISO 8601 UTC text."""
        return {"query_key": self.query_key, "last_edat": iso_utc(self.last_edat)}


@dataclass(frozen=True, slots=True)
class CheckpointSummary:
    """One saved query in the list of checkpoints: its watermark, when it was last scanned,
    the earliest date its syncs covered (None: the whole history), how many records it holds
    and whether all of them were recorded (`records_tracked`)."""

    query_key: str
    last_edat: datetime | None
    last_scan_at: datetime | None
    covers_from: datetime | None
    records: int
    records_tracked: bool

    def as_payload(self) -> dict[str, Any]:
        """The fields, the times as ISO 8601 UTC text."""
        return {
            "query_key": self.query_key,
            "last_edat": iso_utc(self.last_edat),
            "last_scan_at": iso_utc(self.last_scan_at),
            "covers_from": iso_utc(self.covers_from),
            "records": self.records,
            "records_tracked": self.records_tracked,
        }


@dataclass(frozen=True, slots=True)
class CheckpointMove:
    """A manual move of a checkpoint, from `previous_edat` to `last_edat`."""

    query_key: str
    previous_edat: datetime | None
    last_edat: datetime | None
    moved_backward: bool

    def as_payload(self) -> dict[str, Any]:
        """`{"ok", "query_key", "previous_edat", "last_edat", "moved_backward"}`."""
        return {
            "ok": True,
            "query_key": self.query_key,
            "previous_edat": iso_utc(self.previous_edat),
            "last_edat": iso_utc(self.last_edat),
            "moved_backward": self.moved_backward,
        }


@dataclass(frozen=True, slots=True)
class ForgetReport:
    """What forgetting a saved query removed: whether it had a checkpoint, how many pending
    PMIDs and sync jobs went, how many records it held, how many of them were deleted (with
    how many chunks) and whether its records were all recorded."""

    query_key: str
    checkpoint: bool
    pending: int
    jobs: int
    records: int
    records_deleted: int
    records_tracked: bool
    chunks_deleted: int

    def as_payload(self) -> dict[str, Any]:
        """`{"ok", "query_key", "checkpoint", "pending", "jobs", "records", ...}`."""
        return {"ok": True, **asdict(self)}


@dataclass(frozen=True, slots=True)
class PruneReport:
    """What pruning found: `records` no saved query held, `deleted` of them and
    `chunks_deleted` (both 0 on a dry run)."""

    dry_run: bool
    records: int
    deleted: int
    chunks_deleted: int

    def as_payload(self) -> dict[str, Any]:
        """`{"ok", "dry_run", "records", "deleted", "chunks_deleted"}`."""
        return {"ok": True, **asdict(self)}


@dataclass(frozen=True, slots=True)
class ProjectCreated:
    """A project collection: its id, its collection's name, the embedding model it holds
    vectors of and whether it keeps a keyword index (`hybrid_enabled`)."""

    id: str
    collection: str
    embed_model: str
    hybrid_enabled: bool

    def as_payload(self) -> dict[str, Any]:
        """`{"id", "collection", "embed_model", "hybrid_enabled"}`."""
        return asdict(self)

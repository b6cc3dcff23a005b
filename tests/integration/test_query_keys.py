"""The query-key rule in the use cases, on the SQLite metadata store: new keys must be short
and printable (for the CLI and the library too, not only MCP); keys stored before the rule
are still read."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from biomcp.adapters.clock import SystemClock
from biomcp.adapters.sql import SqlMetadataStore
from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.saved_queries import SavedQueries, SyncRequest

pytestmark = pytest.mark.integration

LEGACY = "legacy\u200bkey\x00with-NUL"
WHEN = datetime(2024, 1, 2, tzinfo=UTC)


def test_new_keys_are_checked_and_legacy_keys_are_read(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = SqlMetadataStore(f"sqlite:///{tmp_path / 'meta.sqlite3'}")
        try:
            # A key written before the rule (straight to the store, as an old version did).
            await store.set_checkpoint(LEGACY, WHEN, actor="old", reason="before", at=WHEN)
            checkpoints = SavedQueries(store, clock=SystemClock())

            read = await checkpoints.get_payload(LEGACY)
            assert read["query_key"] == LEGACY
            assert read["last_edat"].startswith("2024-01-02")
            assert [entry.query_key for entry in await checkpoints.audit(LEGACY)] == [LEGACY]

            with pytest.raises(InvalidRequestError) as caught:
                await checkpoints.set(LEGACY, WHEN)
            assert "U+200B" in caught.value.message
            with pytest.raises(InvalidRequestError):
                await checkpoints.set("k" * 201, WHEN)
            audit = await checkpoints.set("  glp1 v1  ", WHEN)
            assert audit.query_key == "glp1 v1"
        finally:
            await store.aclose()

    asyncio.run(scenario())


@pytest.mark.parametrize("key", ["a\u202eb", "x" * 201, "\t"])
def test_a_sync_refuses_a_bad_key_before_any_work(key: str) -> None:
    with pytest.raises(InvalidRequestError):
        SyncRequest.check(key, "humans[mh]", 5)

"""The in-memory stores pass the same contract suites as the SQL adapter.

Each role's fake runs its own suite alone (`MemoryDocumentStore` the documents checks, and so
on); `MemoryMetadataStore` runs every suite, as `SqlMetadataStore` does. Another holder of a
query lock is a store over the same tables, in another thread with its own event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from biomcp.ports.store_errors import LockTimeoutError
from biomcp.testing.memory import (
    MemoryDocumentStore,
    MemoryJobLog,
    MemoryMetadataStore,
    MemoryProjectRegistry,
    MemoryTables,
)
from tests.contract.metadata_contract import (
    DocumentStoreContract,
    JobLogContract,
    MetadataStoreContract,
    ProjectRegistryContract,
)
from tests.support.sql_records import FakeClock

pytestmark = pytest.mark.contract


def lock_from_another_holder(tables: MemoryTables) -> Callable[[str], bool]:
    """Try a key's lock through a new store over `tables`, on this thread's own event loop."""

    def attempt(query_key: str) -> bool:
        async def probe() -> bool:
            try:
                async with MemoryJobLog(tables).query_lock(query_key, timeout_s=0):
                    return True
            except LockTimeoutError:
                return False

        return asyncio.run(probe())

    return attempt


class TestMemoryDocumentStore(DocumentStoreContract):
    @pytest.fixture
    def store(self, clock: FakeClock) -> MemoryDocumentStore:
        return MemoryDocumentStore(clock=clock)


class TestMemoryJobLog(JobLogContract):
    @pytest.fixture
    def store(self, clock: FakeClock) -> MemoryJobLog:
        return MemoryJobLog(clock=clock)

    @pytest.fixture
    def lock_elsewhere(self, store: MemoryJobLog) -> Callable[[str], bool]:
        return lock_from_another_holder(store.tables)


class TestMemoryProjectRegistry(ProjectRegistryContract):
    @pytest.fixture
    def store(self, clock: FakeClock) -> MemoryProjectRegistry:
        return MemoryProjectRegistry(clock=clock)


class TestMemoryMetadataStore(MetadataStoreContract):
    @pytest.fixture
    def store(self, clock: FakeClock) -> MemoryMetadataStore:
        return MemoryMetadataStore(clock=clock)

    @pytest.fixture
    def lock_elsewhere(self, store: MemoryMetadataStore) -> Callable[[str], bool]:
        return lock_from_another_holder(store.tables)


def test_stores_over_one_tables_object_see_one_database() -> None:
    tables = MemoryTables()
    jobs, everything = MemoryJobLog(tables), MemoryMetadataStore(tables)

    async def scenario() -> list[str]:
        async with jobs.query_lock("shared_key"):
            with pytest.raises(LockTimeoutError):
                async with everything.query_lock("shared_key", timeout_s=0):
                    pytest.fail("two stores over one database both held a key's lock")
        async with everything.query_lock("shared_key"):
            pass
        return list(tables.locks)

    assert asyncio.run(scenario()) == []

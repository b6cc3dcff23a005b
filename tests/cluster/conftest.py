"""The cluster suite's one fixture: the whole stack, started once for the package."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from tests.cluster.calls import start_sync, until_ended
from tests.cluster.stack import BASE, Stack, running_stack
from tests.support.servers import mcp_http
from tests.support.services import postgres_url

#: Bound of the first sync (40 records, the collections created on three nodes).
SEED_WITHIN_S = 180.0


@pytest.fixture(scope="package")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """PostgreSQL (a database of its own), three Weaviate nodes, the fake E-utilities, two
    replicas and a balancer. Skipped without PostgreSQL or the Weaviate binary; under CI,
    failed instead."""
    with running_stack(tmp_path_factory.mktemp("cluster"), postgres_url()) as running:
        asyncio.run(_seed(running))
        yield running


async def _seed(stack: Stack) -> None:
    """The base corpus, synced through the balancer: what the searches read."""
    job_id = await start_sync(stack.url, "base", BASE.term)
    async with mcp_http(stack.url) as client:
        status = await until_ended(client, job_id, SEED_WITHIN_S)
    assert status["status"] == "succeeded", f"the seed sync did not succeed: {status}"
    assert status["report"]["inserted"] == BASE.count, status

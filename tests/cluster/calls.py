"""MCP calls of the cluster suite: syncs and their jobs, and searches under a bounded retry
policy, over the SDK's Streamable HTTP client."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from mcp import Client

from tests.support.servers import mcp_http

__all__ = [
    "ATTEMPTS",
    "ATTEMPT_TIMEOUT_S",
    "RETRY_PAUSE_S",
    "Query",
    "Tally",
    "job_status",
    "search_many",
    "start_sync",
    "until_ended",
    "until_progress",
]

#: The client's retry policy: each search is tried at most ATTEMPTS times, RETRY_PAUSE_S
#: apart, each attempt bounded by ATTEMPT_TIMEOUT_S; still an error after that, it failed.
ATTEMPTS = 3
RETRY_PAUSE_S = 0.5
ATTEMPT_TIMEOUT_S = 30.0
POLL_S = 0.1


async def _tool(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, f"{name} failed: {result.content}"
    answer: dict[str, Any] = result.structured_content
    return answer


async def start_sync(url: str, key: str, term: str) -> str:
    """Start a sync of `key` through `url` (the server answers at once); its job id."""
    async with mcp_http(url) as client:
        answer = await _tool(client, "pubmed_sync_delta", {"query_key": key, "term": term})
    job_id: str = answer["job_id"]
    return job_id


async def job_status(client: Client, job_id: str) -> dict[str, Any]:
    return await _tool(client, "corpus_sync_status", {"job_id": job_id})


async def until_progress(client: Client, job_id: str, within_s: float) -> dict[str, Any]:
    """The job's status once it is running with records processed (fails after `within_s`)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        status = await job_status(client, job_id)
        progress = status["progress"]
        if status["status"] == "running" and progress and progress["processed"] > 0:
            return status
        assert status["status"] in ("queued", "running"), status
        await asyncio.sleep(POLL_S)
    raise AssertionError(f"job {job_id} showed no progress within {within_s:g}s")


async def until_ended(client: Client, job_id: str, within_s: float) -> dict[str, Any]:
    """The job's status once it is no longer queued or running, or at `within_s` (the caller
    asserts on the status it gets)."""
    deadline = time.monotonic() + within_s
    while True:
        status = await job_status(client, job_id)
        if status["status"] not in ("queued", "running") or time.monotonic() > deadline:
            return status
        await asyncio.sleep(POLL_S)


@dataclass(frozen=True)
class Query:
    """One `rag_search` call's arguments."""

    arguments: dict[str, Any]


@dataclass
class Tally:
    """What the searches saw: answers equal to the reference, partial ones, failures."""

    whole: int = 0
    retried: int = 0
    partial: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    @property
    def done(self) -> int:
        return self.whole + len(self.partial) + len(self.failed)


def chunk_ids(answer: dict[str, Any]) -> frozenset[str]:
    return frozenset(f"{hit['doc_id']}#{hit['chunk_id']}" for hit in answer["results"])


class _Retrying:
    """One MCP client that reopens itself after a transport error."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._exits: AsyncExitStack | None = None
        self._client: Client | None = None

    async def client(self) -> Client:
        if self._client is None:
            self._exits = AsyncExitStack()
            self._client = await self._exits.enter_async_context(mcp_http(self.url))
        return self._client

    async def reset(self) -> None:
        exits, self._exits, self._client = self._exits, None, None
        if exits is not None:
            with contextlib.suppress(Exception):  # a broken client is dropped either way
                await exits.aclose()

    async def search(self, arguments: dict[str, Any]) -> tuple[dict[str, Any] | None, int, str]:
        """(the answer or None, attempts used, the last error)."""
        error = ""
        for attempt in range(1, ATTEMPTS + 1):
            if attempt > 1:
                await asyncio.sleep(RETRY_PAUSE_S)
            try:
                client = await self.client()
                result = await asyncio.wait_for(
                    client.call_tool("rag_search", arguments), ATTEMPT_TIMEOUT_S
                )
            except Exception as exc:  # every failure counts against the policy
                error = f"{type(exc).__name__}: {exc}"
                await self.reset()
                continue
            if not result.is_error:
                return result.structured_content, attempt, ""
            error = str(result.content)[:300]
        return None, ATTEMPTS, error


@asynccontextmanager
async def _clients(url: str, count: int) -> AsyncIterator[list[_Retrying]]:
    clients = [_Retrying(url) for _ in range(count)]
    try:
        yield clients
    finally:
        for client in clients:
            await client.reset()


async def search_many(
    url: str,
    queries: list[Query],
    references: list[frozenset[str]],
    *,
    total: int,
    clients: int,
    beside: Callable[[Tally], Coroutine[Any, Any, None]] | None = None,
) -> Tally:
    """`total` searches by `clients` concurrent clients through `url`, cycling `queries`;
    each answer compared with the query's reference. `beside` runs alongside, with the
    tally as it grows (to kill a node part way)."""
    tally = Tally()
    turns = iter(range(total))

    async def worker(client: _Retrying) -> None:
        for turn in turns:
            index = turn % len(queries)
            answer, attempts, error = await client.search(queries[index].arguments)
            tally.retried += attempts > 1
            if answer is None:
                tally.failed.append(f"search {turn}: {error}")
            elif chunk_ids(answer) == references[index]:
                tally.whole += 1
            else:
                got = len(chunk_ids(answer))
                tally.partial.append(f"search {turn}: {got} of {len(references[index])}")

    async with _clients(url, clients) as pool:
        tasks = [asyncio.create_task(worker(client)) for client in pool]
        if beside is not None:
            tasks.append(asyncio.create_task(beside(tally)))
        await asyncio.gather(*tasks)
    return tally


async def references(url: str, queries: list[Query]) -> list[frozenset[str]]:
    """Each query's answer with the whole cluster up (a failed call fails the test)."""
    async with mcp_http(url) as client:
        return [chunk_ids(await _tool(client, "rag_search", q.arguments)) for q in queries]

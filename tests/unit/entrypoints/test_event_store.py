"""The resumable-stream event store: replay order, its bounds, and session scopes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import pytest
from mcp.server.streamable_http import EventMessage
from mcp_types import JSONRPCNotification, JSONRPCResponse
from starlette.types import Message, Receive, Scope, Send

from biomcp.entrypoints.http.events import BoundedEventStore, StreamLimits, StreamScopes

pytestmark = pytest.mark.unit

T = TypeVar("T")


def note(n: int, pad: int = 0) -> JSONRPCNotification:
    return JSONRPCNotification(
        jsonrpc="2.0", method="notifications/message", params={"n": n, "pad": "x" * pad}
    )


def answer(request_id: int) -> JSONRPCResponse:
    return JSONRPCResponse(jsonrpc="2.0", id=request_id, result={"ok": True})


async def replay(store: BoundedEventStore, last: str) -> tuple[str | None, list[EventMessage]]:
    sent: list[EventMessage] = []

    async def collect(event: EventMessage) -> None:
        sent.append(event)

    return await store.replay_events_after(last, collect), sent


def run(body: Callable[[], Coroutine[Any, Any, T]]) -> T:
    return asyncio.run(body())


def test_a_stream_replays_what_followed_the_event_in_order() -> None:
    async def body() -> None:
        store = BoundedEventStore()
        priming = await store.store_event("7", None)
        ids = [await store.store_event("7", note(n)) for n in range(3)]
        await store.store_event("8", note(99))  # another stream is not replayed
        ids.append(await store.store_event("7", answer(7)))
        stream, sent = await replay(store, priming)
        assert stream == "7"
        assert [e.event_id for e in sent] == ids
        assert [e.message for e in sent] == [note(0), note(1), note(2), answer(7)]
        stream, sent = await replay(store, ids[1])
        assert [e.event_id for e in sent] == ids[2:]
        assert await replay(store, "no-such-event") == (None, [])

    run(body)


def test_event_ids_are_unique_and_unguessable() -> None:
    async def body() -> None:
        store = BoundedEventStore()
        ids = [await store.store_event("1", note(n)) for n in range(200)]
        assert len(set(ids)) == 200
        assert all(len(i) >= 16 for i in ids)

    run(body)


def test_a_stream_keeps_its_newest_events_within_its_count() -> None:
    async def body() -> None:
        limits = StreamLimits(max_events_per_stream=4, max_events=100)
        store = BoundedEventStore(limits)
        ids = [await store.store_event("1", note(n)) for n in range(10)]
        assert store.event_count == 4
        assert await replay(store, ids[5]) == (None, [])  # evicted: unknown
        _, sent = await replay(store, ids[6])
        assert [e.event_id for e in sent] == ids[7:]

    run(body)


def test_a_stream_keeps_its_newest_events_within_its_bytes() -> None:
    async def body() -> None:
        limits = StreamLimits(max_bytes_per_stream=10_000, max_bytes=1_000_000)
        store = BoundedEventStore(limits)
        for n in range(20):
            await store.store_event("1", note(n, pad=2_000))
        assert store.size <= 10_000
        assert store.event_count == 4  # each event is a little over 2,000 bytes

    run(body)


def test_the_totals_evict_the_oldest_events_of_any_stream() -> None:
    async def body() -> None:
        limits = StreamLimits(
            max_events_per_stream=5, max_bytes_per_stream=100_000, max_events=6, max_bytes=200_000
        )
        store = BoundedEventStore(limits)
        first = [await store.store_event("a", note(n)) for n in range(4)]
        second = [await store.store_event("b", note(n)) for n in range(4)]
        assert store.event_count == 6
        assert store.stream_count == 2
        assert await replay(store, first[1]) == (None, [])
        _, sent = await replay(store, first[2])
        assert [e.event_id for e in sent] == first[3:]
        for stream_id in ("c", "d"):
            for _ in range(3):
                await store.store_event(stream_id, note(0, pad=30_000))  # ~90 KB per stream
        assert store.size <= 200_000
        assert store.event_count <= 6
        assert await replay(store, second[-1]) == (None, [])  # pushed out by the big ones
        assert store.stream_count == 2

    run(body)


def test_an_event_too_big_for_a_stream_drops_the_streams_history() -> None:
    async def body() -> None:
        store = BoundedEventStore(StreamLimits(max_bytes_per_stream=5_000, max_bytes=50_000))
        priming = await store.store_event("1", None)
        await store.store_event("1", note(1))
        other = await store.store_event("2", None)
        await store.store_event("1", note(2, pad=10_000))  # not kept, and neither is the rest
        assert await replay(store, priming) == (None, [])
        assert (await replay(store, other))[0] == "2"
        assert store.stream_count == 1

    run(body)


def test_the_limits_must_make_sense() -> None:
    with pytest.raises(ValueError, match="positive"):
        StreamLimits(max_events_per_stream=0)
    with pytest.raises(ValueError, match="total"):
        StreamLimits(max_bytes_per_stream=10, max_bytes=5)


# --- scopes ----------------------------------------------------------------------------------


class FakeMcp:
    """Stands in for the SDK endpoint: stores one event per request in the current scope and
    answers a new session with its id; `replays` records what a Last-Event-ID replay sent."""

    def __init__(self, store: BoundedEventStore) -> None:
        self.store = store
        self.stored: list[str] = []
        self.replays: list[tuple[str | None, list[EventMessage]]] = []
        self.sessions = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope["headers"])
        last = headers.get(b"last-event-id")
        if last is not None:
            self.replays.append(await replay(self.store, last.decode()))
        else:
            self.stored.append(await self.store.store_event("1", None))
            await self.store.store_event("1", answer(1))
        response: list[tuple[bytes, bytes]] = []
        if b"mcp-session-id" not in headers:
            self.sessions += 1
            response.append((b"mcp-session-id", f"session-{self.sessions}".encode()))
        await send({"type": "http.response.start", "status": 200, "headers": response})
        await send({"type": "http.response.body", "body": b""})


async def request(app: StreamScopes, method: str = "POST", **headers: str) -> None:
    scope = {
        "type": "http",
        "method": method,
        "path": "/mcp",
        "headers": [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()],
    }

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        return None

    await app(scope, receive, send)


def test_sessions_replay_only_their_own_streams() -> None:
    async def body() -> None:
        store = BoundedEventStore()
        mcp = FakeMcp(store)
        app = StreamScopes(mcp, store)
        await request(app)  # opens session-1; its stream "1"
        await request(app)  # opens session-2; also a stream "1"
        one, two = mcp.stored
        assert store.stream_count == 2  # the same request id, two sessions: two streams
        await request(app, mcp_session_id="session-1", last_event_id=one)
        await request(app, mcp_session_id="session-2", last_event_id=one)  # not its event
        await request(app, mcp_session_id="session-2", last_event_id=two)
        mine, theirs, again = mcp.replays
        assert mine[0] == "1"
        assert [e.message for e in mine[1]] == [answer(1)]
        assert theirs == (None, [])
        assert again[0] == "1"
        await request(app, "DELETE", mcp_session_id="session-1")
        assert store.stream_count == 1  # the ended session's events are gone

    run(body)


def test_the_remembered_sessions_are_bounded() -> None:
    async def body() -> None:
        store = BoundedEventStore()
        mcp = FakeMcp(store)
        app = StreamScopes(mcp, store, max_sessions=3)
        for _ in range(5):
            await request(app)
        assert store.stream_count == 3  # the two oldest sessions were forgotten with their events

    run(body)

"""Resumable Streamable HTTP streams: a bounded in-memory event store, scoped per session.

With an event store the SDK's transport starts every SSE answer with a priming event (an id and
empty data, plus the `retry` field), gives each message an event id, and answers a `GET` with
`Last-Event-ID` by replaying what the stream sent after that id (the MCP spec's resumability):
a client that loses its stream mid-call reconnects and still receives the answer.

`BoundedEventStore` keeps the events in memory within `StreamLimits`: per stream and in total,
by count and by bytes (of the JSON as sent). The oldest events go first; a stream that lost an
event this way can only be resumed from a later one. A message bigger than a stream's byte
budget is not kept, and its stream's earlier events are dropped with it, so a resume never
replays a stream with a hole in it (the client gets an empty stream and must ask again).

The SDK keys streams by JSON-RPC request id, which every session numbers from 0: one shared
store would mix the streams of two sessions (and replay one client's answers to another).
`StreamScopes` wraps the `/mcp` endpoint and gives each session its own scope (a context
variable the session's tasks inherit); the store keys streams by scope and refuses to replay an
event of another scope.

The store lives in one process's memory: a stream resumes only on the replica that served it
(behind a balancer, sticky on `Mcp-Session-Id`). With `MCP_HTTP_STATELESS` the app keeps no
store: a stream ends with its request, and `NoStreams` answers a `GET` (a standalone stream or a
resume) with 405, as the spec allows, instead of the SDK's empty 500 or a stream that never ends.
"""

from __future__ import annotations

import logging
import secrets
from collections import OrderedDict, deque
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Final

from mcp.server.streamable_http import (
    MCP_SESSION_ID_HEADER,
    EventCallback,
    EventId,
    EventMessage,
    EventStore,
    StreamId,
)
from mcp_types import INVALID_REQUEST, JSONRPCMessage, jsonrpc_message_adapter
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["RETRY_INTERVAL_MS", "BoundedEventStore", "NoStreams", "StreamLimits", "StreamScopes"]

_log = logging.getLogger("biomcp.http")

#: The `retry` (ms) the priming event suggests: how soon a client reconnects a lost stream.
RETRY_INTERVAL_MS: Final = 1000
#: What one stored event costs beyond its JSON (the id, the bookkeeping), in bytes.
_EVENT_OVERHEAD: Final = 128
_SESSION_HEADER: Final = MCP_SESSION_ID_HEADER.lower().encode("latin-1")


@dataclass(frozen=True, slots=True)
class StreamLimits:
    """How much the store keeps: per stream and in total, events and bytes."""

    max_events_per_stream: int = 1_000
    max_bytes_per_stream: int = 16 * 1024 * 1024
    max_events: int = 10_000
    max_bytes: int = 64 * 1024 * 1024

    def __post_init__(self) -> None:
        if min(self.max_events_per_stream, self.max_bytes_per_stream) < 1:
            raise ValueError("stream limits must be positive")
        too_small = self.max_events < self.max_events_per_stream
        if too_small or self.max_bytes < self.max_bytes_per_stream:
            raise ValueError("the total limits must hold at least one full stream")


class _Scope:
    """One session's identity in the store (compared by identity, never shown)."""

    __slots__ = ()


#: The scope of the session the current task serves (set by `StreamScopes`); None outside one.
_CURRENT: ContextVar[_Scope | None] = ContextVar("biomcp_stream_scope", default=None)


@dataclass(slots=True)
class _Event:
    event_id: EventId
    stream: _Stream
    data: bytes | None  # the message's JSON; None for a priming event
    size: int


@dataclass(slots=True)
class _Stream:
    scope: _Scope | None
    stream_id: StreamId
    events: deque[_Event] = field(default_factory=deque)
    size: int = 0


class BoundedEventStore(EventStore):
    """The SDK's `EventStore` in memory, within `limits` (see the module docstring)."""

    def __init__(self, limits: StreamLimits | None = None) -> None:
        self.limits = limits or StreamLimits()
        self._events: OrderedDict[EventId, _Event] = OrderedDict()  # oldest first
        self._streams: dict[tuple[_Scope | None, StreamId], _Stream] = {}
        self._size = 0

    @property
    def event_count(self) -> int:
        return len(self._events)

    @property
    def size(self) -> int:
        """The bytes held, as the limits count them."""
        return self._size

    @property
    def stream_count(self) -> int:
        return len(self._streams)

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = secrets.token_urlsafe(12)
        data = None
        if message is not None:
            data = message.model_dump_json(by_alias=True, exclude_unset=True).encode()
        size = _EVENT_OVERHEAD + (len(data) if data is not None else 0)
        key = (_CURRENT.get(), stream_id)
        stream = self._streams.get(key)
        if size > self.limits.max_bytes_per_stream:
            # Too big to keep: drop the stream's history too, so that no resume replays it
            # without this event.
            if stream is not None:
                self._drop_stream(stream)
            _log.info("an SSE event of %d bytes is too big to keep for resumption", size)
            return event_id
        if stream is None:
            stream = self._streams[key] = _Stream(key[0], stream_id)
        event = _Event(event_id, stream, data, size)
        stream.events.append(event)
        stream.size += size
        self._events[event_id] = event
        self._size += size
        limits = self.limits
        while (
            len(stream.events) > limits.max_events_per_stream
            or stream.size > limits.max_bytes_per_stream
        ):
            self._evict(stream.events[0])
        while len(self._events) > limits.max_events or self._size > limits.max_bytes:
            self._evict(next(iter(self._events.values())))
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        event = self._events.get(last_event_id)
        if event is None or event.stream.scope is not _CURRENT.get():
            return None  # unknown, evicted, or another session's
        stream = event.stream
        events = list(stream.events)  # a snapshot: new events may arrive while we send
        start = next(i for i, e in enumerate(events) if e is event) + 1
        for later in events[start:]:
            if later.data is not None:
                message = jsonrpc_message_adapter.validate_json(later.data)
                await send_callback(EventMessage(message, later.event_id))
        return stream.stream_id

    def forget(self, scope: _Scope) -> None:
        """Drop every stream of `scope` (its session ended)."""
        for stream in [s for s in self._streams.values() if s.scope is scope]:
            self._drop_stream(stream)

    def _evict(self, event: _Event) -> None:
        """Drop `event`, the oldest of its stream."""
        stream = event.stream
        stream.events.popleft()
        stream.size -= event.size
        del self._events[event.event_id]
        self._size -= event.size
        if not stream.events:
            self._streams.pop((stream.scope, stream.stream_id), None)

    def _drop_stream(self, stream: _Stream) -> None:
        while stream.events:
            self._evict(stream.events[0])
        self._streams.pop((stream.scope, stream.stream_id), None)


class StreamScopes:
    """ASGI wrapper of the `/mcp` endpoint: each MCP session gets its own store scope.

    A request that opens a session (no `Mcp-Session-Id`) runs under a new scope, which the
    session's own tasks inherit; the session id the answer carries is remembered, and later
    requests of that session run under the same scope. A `DELETE` (the client ends the session)
    forgets it and its events. At most `max_sessions` ids are remembered (the oldest forgotten).
    """

    def __init__(self, app: ASGIApp, store: BoundedEventStore, *, max_sessions: int = 10_000):
        self.app = app
        self.store = store
        self.max_sessions = max_sessions
        self._scopes: OrderedDict[str, _Scope] = OrderedDict()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session_id = _header(scope, _SESSION_HEADER)
        if session_id is None:
            await self._open(scope, receive, send)
            return
        known = self._scopes.get(session_id)
        token = _CURRENT.set(known if known is not None else _Scope())
        try:
            await self.app(scope, receive, send)
        finally:
            _CURRENT.reset(token)
        if known is not None and scope.get("method") == "DELETE":
            del self._scopes[session_id]
            self.store.forget(known)

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        new = _Scope()

        async def remember(message: Message) -> None:
            if message["type"] == "http.response.start":
                for name, value in message.get("headers", ()):
                    if name.lower() == _SESSION_HEADER:
                        self._remember(value.decode("latin-1"), new)
            await send(message)

        token = _CURRENT.set(new)
        try:
            await self.app(scope, receive, remember)
        finally:
            _CURRENT.reset(token)

    def _remember(self, session_id: str, scope: _Scope) -> None:
        self._scopes[session_id] = scope
        self._scopes.move_to_end(session_id)
        while len(self._scopes) > self.max_sessions:
            _, old = self._scopes.popitem(last=False)
            self.store.forget(old)


class NoStreams:
    """ASGI wrapper of the stateless `/mcp` endpoint: a `GET` answers 405 (`Allow: POST`).

    Without a session nothing can reach a standalone stream, and without a store nothing can
    be resumed. The body is a JSON-RPC error, like the SDK's own 405 to a `DELETE`.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        error = {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": INVALID_REQUEST,
                "message": "Method Not Allowed: this server is stateless; it opens no SSE "
                "stream for GET and resumes none (MCP_HTTP_STATELESS)",
            },
        }
        await JSONResponse(error, status_code=405, headers={"Allow": "POST"})(scope, receive, send)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None

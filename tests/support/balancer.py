"""A round-robin HTTP balancer of the tests' own: each request goes to the next upstream.

`round_robin` listens on a free loopback port. For each request it reads the head (and the body,
when a `Content-Length` gives its size), picks the next upstream in turn and sends the request
there with `Connection: close`. The upstream closes the connection after its answer, which is
relayed byte for byte, so the client opens a new connection for its next request: consecutive
requests alternate between upstreams even when the client keeps connections alive.

Every request is recorded in `routes` (the upstream, the request line, the body), so a test can
tell which replica served which JSON-RPC message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["Balancer", "Route", "round_robin"]

#: The most bytes a request head may take here.
_MAX_HEAD: Final = 64 * 1024
_HOP_BY_HOP: Final = frozenset({b"connection", b"keep-alive", b"proxy-connection"})


@dataclass(frozen=True, slots=True)
class Route:
    """One request as the balancer sent it on."""

    upstream: int  # the index in `Balancer.upstreams`
    method: str  # the HTTP method
    body: bytes  # empty when the request had none or its length was not given

    @property
    def rpc_method(self) -> str | None:
        """The JSON-RPC method of the body, or None (an answer, a batch, no JSON)."""
        try:
            message: Any = json.loads(self.body)
        except ValueError:
            return None
        return message.get("method") if isinstance(message, dict) else None


@dataclass(slots=True)
class Balancer:
    """The running balancer: its URL and what it routed."""

    upstreams: tuple[tuple[str, int], ...]
    port: int = 0
    routes: list[Route] = field(default_factory=list)
    _turn: int = 0
    _relays: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def served(self, upstream: int, rpc_method: str) -> int:
        """How many `rpc_method` requests went to `upstream`."""
        return sum(1 for r in self.routes if r.upstream == upstream and r.rpc_method == rpc_method)

    def _next(self) -> int:
        turn = self._turn
        self._turn = (turn + 1) % len(self.upstreams)
        return turn

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # The relay is a task of its own: `aclose` cancels it, and this handler still ends
        # normally (asyncio reports a cancelled handler as an error).
        relay = asyncio.create_task(self._relay(reader, writer))
        self._relays.add(relay)
        try:
            await relay
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # a client or upstream gone mid-request: nothing to relay
        except asyncio.CancelledError:
            if not relay.cancelled():
                raise  # this handler itself was cancelled
        finally:
            self._relays.discard(relay)
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        request_line, *lines = head[:-4].split(b"\r\n")
        kept = [line for line in lines if _name(line) not in _HOP_BY_HOP]
        sizes = [int(line.split(b":", 1)[1]) for line in kept if _name(line) == b"content-length"]
        body = await reader.readexactly(sizes[0]) if sizes else b""
        upstream = self._next()
        self.routes.append(Route(upstream, request_line.split(b" ", 1)[0].decode(), body))
        host, port = self.upstreams[upstream]
        up_reader, up_writer = await asyncio.open_connection(host, port)
        try:
            up_writer.write(b"\r\n".join([request_line, *kept, b"Connection: close"]))
            up_writer.write(b"\r\n\r\n" + body)
            await up_writer.drain()
            # The answer flows back until the upstream closes; a chunked request body flows
            # on meanwhile. A client that hangs up ends the relay too (an open SSE stream).
            pipes = {
                asyncio.create_task(_pipe(up_reader, writer)),
                asyncio.create_task(_pipe(reader, up_writer)),
            }
            try:
                await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for pipe in pipes:
                    pipe.cancel()
                await asyncio.gather(*pipes, return_exceptions=True)
        finally:
            up_writer.close()
            with contextlib.suppress(ConnectionError):
                await up_writer.wait_closed()

    async def aclose(self) -> None:
        """End the relays still running (open streams)."""
        for task in list(self._relays):
            task.cancel()
        await asyncio.gather(*self._relays, return_exceptions=True)


def _name(header_line: bytes) -> bytes:
    return header_line.split(b":", 1)[0].strip().lower()


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    while chunk := await source.read(65536):
        sink.write(chunk)
        await sink.drain()


@asynccontextmanager
async def round_robin(upstreams: Sequence[tuple[str, int]]) -> AsyncIterator[Balancer]:
    """A balancer on a free loopback port over `upstreams` ((host, port) pairs), in turn."""
    if not upstreams:
        raise ValueError("a balancer needs at least one upstream")
    balancer = Balancer(tuple(upstreams))
    server = await asyncio.start_server(balancer.handle, "127.0.0.1", 0, limit=_MAX_HEAD)
    balancer.port = int(server.sockets[0].getsockname()[1])
    try:
        yield balancer
    finally:
        server.close()
        await balancer.aclose()
        await server.wait_closed()

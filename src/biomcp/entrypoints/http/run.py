"""Running the HTTP app: uvicorn until SIGINT or SIGTERM, then a graceful shutdown.

A request's head (request line and headers) is bounded before the app sees it
(`BoundedHttpToolsProtocol`, on uvicorn's httptools parser):

* at most `MAX_HEADER_BYTES` (64 KiB) of request line and headers, else `431 Request Header
  Fields Too Large` and the connection closes; a head still incomplete is refused as soon as
  the bytes received for it pass the bound, so nothing more is buffered;
* the head complete within `HEADER_TIMEOUT_S` (10 s) of the connection opening (or of the
  request's first byte on a kept-alive connection), else `408 Request Timeout` and the
  connection closes: a slowloris client cannot hold connections open.
"""

from __future__ import annotations

import asyncio
import copy
import gc
import logging
import signal
import threading
from collections.abc import Callable
from typing import Any, ClassVar, Final

import uvicorn
from starlette.applications import Starlette
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from biomcp.entrypoints.http.app import MCP_PATH

__all__ = [
    "GRACEFUL_SHUTDOWN_S",
    "HEADER_TIMEOUT_S",
    "MAX_HEADER_BYTES",
    "BoundedHttpToolsProtocol",
    "build_uvicorn",
    "run_http",
]

#: Open streams (an idle client's SSE GET) may delay a shutdown by at most this long.
GRACEFUL_SHUTDOWN_S: Final = 5
#: The most bytes a request head may take (a bearer JWT is 1-2 KiB).
MAX_HEADER_BYTES: Final = 64 * 1024
#: The most seconds a client may take to send a request head.
HEADER_TIMEOUT_S: Final = 10.0

_log = logging.getLogger("biomcp.http")


def _plain_response(status: int, reason: str) -> bytes:
    return (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(reason)}\r\nconnection: close\r\n\r\n{reason}"
    ).encode("ascii")


class _HeadTooLargeError(Exception):
    """Raised in a parser callback to stop parsing a refused request."""


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a size bound and a time bound on each request head
    (module docstring). Subclass it with other class attributes to change the bounds."""

    max_header_bytes: ClassVar[int] = MAX_HEADER_BYTES
    header_timeout_s: ClassVar[float] = HEADER_TIMEOUT_S

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_bytes = 0  # received while the head is incomplete
        self._head_size = 0  # request line and headers parsed so far
        self._in_head = True  # a new connection owes a request head
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if not self._in_head or self.transport.is_closing():
            return
        self._head_bytes += len(data)
        if self._head_bytes > self.max_header_bytes:
            self._refuse_oversized()

    def _refuse_oversized(self) -> None:
        _log.warning(
            "refused a request head over %d bytes from %s", self.max_header_bytes, self._peer()
        )
        self._refuse(431, "Request Header Fields Too Large")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head, self._head_bytes, self._head_size = True, 0, 0
        self._arm_head_timer()

    def on_url(self, url: bytes) -> None:
        self._head_size += len(url)
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._head_size += len(name) + len(value) + 4
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._disarm_head_timer()
        if self._head_size > self.max_header_bytes:
            # A head that arrived whole in one read: refused before the app sees it. The
            # exception stops the parser (uvicorn's 400 for it is skipped: see below).
            self._refuse_oversized()
            raise _HeadTooLargeError
        super().on_headers_complete()

    def send_400_response(self, msg: str) -> None:
        if not self.transport.is_closing():  # not after our own 431 or 408
            super().send_400_response(msg)

    def _arm_head_timer(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.header_timeout_s, self._head_timed_out)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self._in_head and not self.transport.is_closing():
            _log.info(
                "closed a connection from %s: no complete request head within %g s",
                self._peer(),
                self.header_timeout_s,
            )
            self._refuse(408, "Request Timeout")

    def _refuse(self, status: int, reason: str) -> None:
        self._in_head = False
        self._disarm_head_timer()
        self.transport.write(_plain_response(status, reason))
        self.transport.close()

    def _peer(self) -> str:
        return f"{self.client[0]}:{self.client[1]}" if self.client else "an unknown client"


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{MCP_PATH}"


class _Uvicorn(uvicorn.Server):
    """uvicorn's server, reporting the bound URL once it accepts connections.

    With `freeze_heap`, everything alive once the server has started (the imported modules,
    the app, its schemas) moves out of the garbage collector's sight (`gc.freeze`). Otherwise
    every full collection walks those objects again: long pauses, which were most of the tail
    latency of `rag_get` under load (benchmarks/mcp_http.py's `no_gc_freeze` variant; figures:
    benchmarks/README.md, "Decisions and their figures")."""

    def __init__(
        self,
        config: uvicorn.Config,
        on_started: Callable[[str], None],
        *,
        freeze_heap: bool = False,
    ) -> None:
        super().__init__(config)
        self._on_started = on_started
        self._freeze_heap = freeze_heap

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and self._freeze_heap:
            gc.collect()
            gc.freeze()
        if self.started and self.servers:
            bound = self.servers[0].sockets
            port = int(bound[0].getsockname()[1]) if bound else self.config.port
            self._on_started(_url(self.config.host, port))


def _log_config() -> dict[str, Any]:
    """uvicorn's logging, all of it on stderr (stdout carries the served URL only), one line
    per record (`logs.SingleLineFormatter`)."""
    config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    for handler in config["handlers"].values():
        handler["stream"] = "ext://sys.stderr"
    for name in config["formatters"]:
        config["formatters"][name] = {"()": "biomcp.entrypoints.logs.SingleLineFormatter"}
    return config


def build_uvicorn(
    app: Starlette,
    *,
    host: str,
    port: int,
    log_level: str = "info",
    on_started: Callable[[str], None] = lambda url: None,
    max_header_bytes: int = MAX_HEADER_BYTES,
    header_timeout_s: float = HEADER_TIMEOUT_S,
    freeze_heap: bool = False,
) -> uvicorn.Server:
    """The uvicorn server of `run_http`, not started (`server.run()`; stop it by setting
    `server.should_exit`). The request-head bounds are parameters for tests."""
    protocol = type(
        "BoundedHttpTools",
        (BoundedHttpToolsProtocol,),
        {"max_header_bytes": max_header_bytes, "header_timeout_s": header_timeout_s},
    )
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        lifespan="on",
        log_config=_log_config(),
        log_level=log_level,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        http=protocol,
        h11_max_incomplete_event_size=max_header_bytes,
        ws="none",
        server_header=False,
    )
    return _Uvicorn(config, on_started, freeze_heap=freeze_heap)


def run_http(
    app: Starlette,
    *,
    host: str,
    port: int,
    log_level: str = "info",
    on_started: Callable[[str], None] = lambda url: None,
) -> None:
    """Serve `app` until SIGINT or SIGTERM, then shut down gracefully and return.

    `on_started` gets the MCP URL (with the real port when `port` is 0) once the socket
    accepts connections and the app's lifespan has started.
    """
    # In the main thread this process is the server (`biomcp serve-http`): freeze its heap
    # once started. A server run in another thread (tests) leaves its host's heap alone.
    in_main = threading.current_thread() is threading.main_thread()
    server = build_uvicorn(
        app,
        host=host,
        port=port,
        log_level=log_level,
        on_started=on_started,
        freeze_heap=in_main,
    )
    if not in_main:
        server.run()
        return
    # uvicorn catches SIGINT/SIGTERM while it serves, then re-raises the signal to the handler
    # that was in place before it started. Make that handler uvicorn's own: a signal during
    # start-up then stops the server too, and the re-raise after a graceful shutdown does not
    # kill the process (exit status 0, not death by signal or KeyboardInterrupt).
    handled = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, server.handle_exit) for sig in handled}
    try:
        server.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

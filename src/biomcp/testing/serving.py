"""One way to serve an ASGI app on loopback from a background thread (the fake servers).

The socket is bound here (port 0 picks a free one, known before serving starts) with
TCP_NODELAY, which accepted sockets inherit on Linux: without it a 40 ms Nagle / delayed-ACK
stall sits between a response's head and body.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from types import TracebackType
from typing import Any, Self

import uvicorn

__all__ = ["BackgroundServer", "ServerLifecycle"]

_START_TIMEOUT_S = 15.0


class BackgroundServer:
    """uvicorn serving `app` on `host`:`port` in a daemon thread named `name`."""

    def __init__(self, app: Any, *, host: str, port: int, name: str, log_level: str) -> None:
        self.app, self.host, self.name, self.log_level = app, host, name, log_level
        self._requested_port = port
        self._socket: socket.socket | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    @property
    def port(self) -> int:
        """The bound port (the requested one until started)."""
        if self._socket is None:
            return self._requested_port
        return int(self._socket.getsockname()[1])

    @property
    def base_url(self) -> str:
        host = f"[{self.host.strip('[]')}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> None:
        """Bind, serve, and return once connections are accepted.

        Raises:
            RuntimeError: when already running or not up in time.
            OSError: when the address cannot be bound.
        """
        if self._thread is not None:
            raise RuntimeError(f"the {self.name} server is already running")
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.bind((self.host.strip("[]"), self._requested_port))
            sock.listen(128)
        except OSError:
            sock.close()
            raise
        config = uvicorn.Config(
            self.app,
            log_config=None,
            log_level=self.log_level,
            access_log=False,
            lifespan="off",
            loop="asyncio",
            http="h11",
            timeout_graceful_shutdown=2,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name=self.name, daemon=True
        )
        self._socket, self._server, self._thread = sock, server, thread
        thread.start()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the {self.name} server did not start")
            time.sleep(0.005)

    def stop(self) -> None:
        """Stop serving and release the thread and the socket (idempotent)."""
        server, thread, sock = self._server, self._thread, self._socket
        self._server = self._thread = self._socket = None
        if server is not None:
            server.should_exit = True
        if thread is not None:
            thread.join(timeout=10)
        if sock is not None:
            sock.close()


class ServerLifecycle:
    """`with` and `async with` for a fake server: entering starts it (in a worker thread under
    `async with`), leaving stops it. Subclasses define `start` and `stop`."""

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.stop)

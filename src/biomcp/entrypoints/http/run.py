"""Running the HTTP app: uvicorn until SIGINT or SIGTERM, then a graceful shutdown."""

from __future__ import annotations

import copy
import gc
import signal
import threading
from collections.abc import Callable
from typing import Any, Final

import uvicorn
from starlette.applications import Starlette

from biomcp.entrypoints.http.app import MCP_PATH

__all__ = ["GRACEFUL_SHUTDOWN_S", "run_http"]

#: Open streams (an idle client's SSE GET) may delay a shutdown by at most this long.
GRACEFUL_SHUTDOWN_S: Final = 5


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
    """uvicorn's logging, all of it on stderr (stdout carries the served URL only)."""
    config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    for handler in config["handlers"].values():
        handler["stream"] = "ext://sys.stderr"
    return config


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
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        lifespan="on",
        log_config=_log_config(),
        log_level=log_level,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        ws="none",
        server_header=False,
    )
    # In the main thread this process is the server (`biomcp serve-http`): freeze its heap
    # once started. A server run in another thread (tests) leaves its host's heap alone.
    in_main = threading.current_thread() is threading.main_thread()
    server = _Uvicorn(config, on_started, freeze_heap=in_main)
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

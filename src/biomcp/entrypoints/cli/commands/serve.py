"""`biomcp serve` (MCP over stdio; `biomcp mcp` is its alias) and `biomcp serve-http`
(Streamable HTTP).

`biomcp serve` started on a terminal says on stderr that it waits for an MCP client
(`TERMINAL_NOTICE`); stdout stays the protocol's. With no client on stdin, it prints
`STDIN_GUIDANCE` and exits 0, as a stdio server does when its input ends. It does so at once
when stdin is closed, /dev/null or an empty file, and as soon as stdin ends before any MCP
message (`true | biomcp serve`, `echo | biomcp serve`)."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import typer

from biomcp.entrypoints.cli.common import stop_on_sigterm
from biomcp.entrypoints.logs import configure_logging
from biomcp.entrypoints.runtime import load_or_exit

if TYPE_CHECKING:
    from biomcp.entrypoints.mcp.prelude import StdioPrelude
    from biomcp.entrypoints.mcp.server import BioMcpServer
    from biomcp.entrypoints.services import Services
    from biomcp.entrypoints.settings import Settings

__all__ = [
    "STDIN_GUIDANCE",
    "TERMINAL_NOTICE",
    "mcp",
    "run_stdio",
    "serve",
    "serve_http",
    "start_prelude",
    "stdin_is_closed",
]

_log = logging.getLogger("biomcp.server")

STDIN_GUIDANCE = (
    "biomcp serve speaks MCP over stdio: an MCP client (Claude Desktop, Cursor, the MCP "
    "Inspector...) must start it and send the initialize handshake on stdin, but stdin is "
    "closed here (or ended before any MCP message). To try the server by hand, run "
    "`biomcp serve-http` and point a client at http://127.0.0.1:8000/mcp, or run "
    "`npx @modelcontextprotocol/inspector biomcp serve`."
)
#: One line for a person who started the server on a terminal, where it would look hung.
TERMINAL_NOTICE = (
    "biomcp serve: waiting for an MCP client on stdin (Ctrl+C stops). To try it by hand, run "
    "`npx @modelcontextprotocol/inspector biomcp serve`, or `biomcp serve-http` for a URL."
)


def stdin_is_closed() -> bool:
    """True when stdin cannot carry a single message: closed, /dev/null, or an empty file."""
    if sys.stdin is None or sys.stdin.closed:
        return True
    try:
        info = os.fstat(sys.stdin.fileno())
    except (OSError, ValueError):
        return True
    if stat.S_ISREG(info.st_mode):
        return info.st_size == 0
    if stat.S_ISCHR(info.st_mode):
        try:
            null = os.stat(os.devnull)
        except OSError:
            return False
        return info.st_rdev == null.st_rdev
    return False


def _quiet_libraries(level: str) -> None:
    # One line per record, session ids below INFO (replaces the SDK's wrapping Rich handler).
    configure_logging(level)
    # Request lines of the HTTP clients are noise on stderr (and may carry hostnames), and so
    # is faiss announcing which build it loads.
    for name in ("httpx", "httpcore", "alembic", "weaviate", "faiss"):
        logging.getLogger(name).setLevel(max(logging.WARNING, logging.getLevelName(level.upper())))


class _ClientWatch:
    """The stdio read stream of the server, noting whether a client ever sent a message.

    `on_first` runs when the first one arrives (in the event loop): the server starts its
    warm-up there, so stdin at EOF before any message (`true | biomcp serve`, a terminal's
    Ctrl+D) leaves nothing loading and the command exits at once with the guidance. A line
    that is not JSON-RPC (`echo | biomcp serve` sends an empty one) is not a client."""

    def __init__(self, stream: Any, on_first: Callable[[], None], message: type) -> None:
        self._stream = stream
        self._message = message  # the SDK's SessionMessage (imported with the server)
        self._on_first = on_first
        self.heard = False

    @property
    def last_context(self) -> Any:
        return getattr(self._stream, "last_context", None)

    async def receive(self) -> Any:
        item = await self._stream.receive()
        if not self.heard and isinstance(item, self._message):
            self.heard = True
            self._on_first()
        return item

    async def aclose(self) -> None:
        await self._stream.aclose()

    def __aiter__(self) -> _ClientWatch:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _ClientWatch:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class _PreludeLines:
    """The SDK's stdin: the lines the prelude passes on, read in a worker thread."""

    def __init__(self, prelude: StdioPrelude) -> None:
        self._prelude = prelude

    def __aiter__(self) -> _PreludeLines:
        return self

    async def __anext__(self) -> str:
        import anyio.to_thread

        line = await anyio.to_thread.run_sync(self._prelude.next_line, abandon_on_cancel=True)
        if line is None:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


def _private_stdin() -> Any:
    """A reader of its own over standard input's descriptor, for the prelude's thread. A
    daemon thread blocked reading `sys.stdin` at exit (a SIGTERM while the client stays)
    would hold the lock the interpreter takes to close `sys.stdin`, and abort it."""
    return os.fdopen(os.dup(sys.stdin.fileno()), "rb")


def start_prelude(settings: Settings) -> StdioPrelude:
    """Start reading stdin now, answering the handshake from the recorded answers (prelude.py)
    while the SDK loads; with `BIOMCP_STDIO_PRELUDE=false`, only reading stdin."""
    from biomcp.entrypoints.mcp.prelude import (
        AnswerBook,
        StdioPrelude,
        fingerprint,
        handshake_versions,
    )

    path = settings.biomcp_data_dir / "cache" / "mcp-stdio-answers.json"
    # The switch itself is left out of the key: turned off and on, the same record serves.
    settings_json = settings.model_dump_json(exclude={"biomcp_stdio_prelude"})

    def open_book() -> AnswerBook:
        return AnswerBook(path, fingerprint(settings_json)).load()

    enabled = settings.biomcp_stdio_prelude
    return StdioPrelude(
        open_book if enabled else None,
        handshake_versions() if enabled else None,
        stdin=_private_stdin(),
    ).start()


async def run_stdio(
    server: BioMcpServer, services: Services, prelude: StdioPrelude | None = None
) -> bool:
    """Serve MCP on stdin / stdout until stdin ends; True when a client spoke at all. The
    warm-up starts with the first message and is awaited on the way out. With a `prelude`,
    stdin is the prelude's (it may have answered the handshake already)."""
    from mcp.server import NotificationOptions
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    from biomcp.entrypoints.mcp import sdk
    from biomcp.entrypoints.mcp.prelude import DroppingWriter

    stop_on_sigterm()  # a shutdown: its syncs record themselves interrupted
    stdin: Any = None
    if prelude is not None:
        prelude.go_live()
        stdin = _PreludeLines(prelude)
        if prelude.early_answers:
            _log.info(
                "answered %d handshake requests from the recorded answers while loading",
                prelude.early_answers,
            )
    try:
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            watch = _ClientWatch(read_stream, services.start_warm_up, SessionMessage)
            writer = write_stream if prelude is None else DroppingWriter(write_stream, prelude)
            lowlevel = sdk.lowlevel(server)  # run_stdio_async, with the watched read stream
            # A replayed list found stale is announced as changed (prelude.DroppingWriter).
            changes = NotificationOptions(prompts_changed=True, tools_changed=True)
            options = lowlevel.create_initialization_options(
                changes if prelude is not None else None
            )
            await lowlevel.run(watch, writer, options)
    finally:
        if prelude is not None:
            prelude.end()  # frees the thread waiting for stdin's next line
        await services.aclose()
    return watch.heard


def _serve() -> None:
    if stdin_is_closed():
        typer.echo(STDIN_GUIDANCE, err=True)
        return  # nothing to serve: a clean end, as when a client closes stdin
    settings = load_or_exit()
    if sys.stdin.isatty():
        typer.echo(TERMINAL_NOTICE, err=True)
    _quiet_libraries(settings.mcp_log_level)  # the prelude may warn before the server is built
    prelude = start_prelude(settings)

    from biomcp.entrypoints.services import build_services

    services = build_services(settings)
    prelude.when_heard(services.begin_warm_up)  # before the SDK import, which takes long

    from biomcp.entrypoints.mcp.server import build_server

    server = build_server(services)
    _quiet_libraries(settings.mcp_log_level)
    import anyio

    try:
        heard = anyio.run(run_stdio, server, services, prelude)
    except (KeyboardInterrupt, asyncio.CancelledError):
        return  # SIGTERM or SIGINT: stopped, its syncs recorded as interrupted
    if not heard:
        typer.echo(STDIN_GUIDANCE, err=True)


def serve() -> None:
    """Run the MCP server over stdio on the configured stores (default: embedded SQLite +
    local vector index + the local all-MiniLM-L6-v2 embedder, in the user data folder).
    An MCP client starts this command; configuration comes from the environment. On a
    terminal it says so on stderr. When stdin ends before a client sent anything, it prints
    guidance and exits 0."""
    _serve()


def mcp() -> None:
    """Alias of `biomcp serve`: the MCP server over stdio."""
    _serve()


def serve_http(
    host: str | None = typer.Option(
        None, help="Address to bind (default: MCP_HTTP_HOST, 127.0.0.1)."
    ),
    port: int | None = typer.Option(
        None,
        min=0,
        max=65535,
        help="Port to bind (default: MCP_HTTP_PORT, 8000); 0 picks a free one.",
    ),
    insecure: bool = typer.Option(
        False,
        "--insecure",
        help="Allow a non-loopback --host without MCP_AUTH_SECRET_KEY (no authentication).",
    ),
) -> None:
    """Run the MCP server over Streamable HTTP at /mcp, with /health, /readyz and / probes.
    Prints the URL it serves once it accepts connections; stops cleanly on Ctrl+C or
    SIGTERM. With MCP_AUTH_SECRET_KEY set, clients send an HS256 bearer JWT with an `exp` (the
    writing tools need the `biomcp:write` scope); with MCP_AUTH_ISSUER, MCP_AUTH_AUDIENCE
    and MCP_AUTH_RESOURCE_URL, the issuer's OAuth access tokens (`biomcp:read`,
    `biomcp:write`). A non-loopback --host needs one of them or --insecure."""
    overrides: dict[str, object] = {}
    if host is not None:
        overrides["mcp_http_host"] = host
    if port is not None:
        overrides["mcp_http_port"] = port
    settings = load_or_exit(**overrides)

    from biomcp.entrypoints.http.app import build_http_app
    from biomcp.entrypoints.http.gate import InsecureBindError, bind_refusal
    from biomcp.entrypoints.http.run import run_http

    refusal = bind_refusal(settings, insecure=insecure)
    if refusal is not None:
        typer.echo(refusal, err=True)
        raise typer.Exit(code=2)
    _announce_auth(settings)

    from biomcp.entrypoints.services import build_services

    services = build_services(settings)
    try:
        http_app = build_http_app(services, settings, insecure=insecure)
    except InsecureBindError as exc:  # pragma: no cover - bind_refusal said the same above
        typer.echo(str(exc), err=True)
        raise typer.Exit(code=2) from exc
    _quiet_libraries(settings.mcp_log_level)

    def announce(url: str) -> None:
        typer.echo(f"bio-mcp serving MCP at {url}")
        sys.stdout.flush()

    run_http(
        http_app,
        host=settings.mcp_http_host,
        port=settings.mcp_http_port,
        log_level=settings.mcp_log_level,
        on_started=announce,
    )


def _announce_auth(settings: Settings) -> None:
    """Say on stderr how `serve-http` authenticates clients, or warn that it does not."""
    from biomcp.entrypoints.http.gate import is_loopback_host

    if settings.auth_mode == "hs256":
        typer.echo(
            "auth on: /mcp needs `Authorization: Bearer <HS256 JWT>` signed with "
            "MCP_AUTH_SECRET_KEY, with an `exp`; the writing tools need the "
            "'biomcp:write' scope.",
            err=True,
        )
    elif settings.auth_mode == "oauth":
        typer.echo(
            f"auth on (OAuth): /mcp needs an access token from {settings.mcp_auth_issuer} "
            f"for {settings.mcp_auth_audience}; reading needs 'biomcp:read', writing "
            "'biomcp:write' too.",
            err=True,
        )
    elif not is_loopback_host(settings.mcp_http_host):
        typer.echo(
            f"warning: serving on {settings.mcp_http_host} without authentication "
            "(--insecure): anyone who can reach the port can call every tool.",
            err=True,
        )

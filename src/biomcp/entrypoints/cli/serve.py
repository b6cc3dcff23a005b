"""`biomcp serve` (MCP over stdio) and `biomcp serve-http` (Streamable HTTP)."""

from __future__ import annotations

import logging
import os
import stat
import sys

import typer

from biomcp.entrypoints.runtime import load_or_exit

__all__ = ["register", "stdin_is_closed"]

STDIN_GUIDANCE = (
    "biomcp serve speaks MCP over stdio: an MCP client (Claude Desktop, Cursor, the MCP "
    "Inspector...) must start it and send the initialize handshake on stdin, but stdin is "
    "closed here. To try the server by hand, run `biomcp serve-http` and point a client at "
    "http://127.0.0.1:8000/mcp, or run `npx @modelcontextprotocol/inspector biomcp serve`."
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
    # Request lines of the HTTP clients are noise on stderr (and may carry hostnames), and so
    # is faiss announcing which build it loads.
    for name in ("httpx", "httpcore", "alembic", "weaviate", "faiss"):
        logging.getLogger(name).setLevel(max(logging.WARNING, logging.getLevelName(level.upper())))


def register(app: typer.Typer) -> None:
    @app.command()
    def serve() -> None:
        """Run the MCP server over stdio on the configured stores (default: embedded SQLite +
        local vector index + the local all-MiniLM-L6-v2 embedder, in the user data folder).
        An MCP client starts this command; configuration comes from the environment."""
        if stdin_is_closed():
            typer.echo(STDIN_GUIDANCE, err=True)
            raise typer.Exit(code=2)
        settings = load_or_exit()
        import anyio

        from biomcp.entrypoints.container import build_services
        from biomcp.entrypoints.mcp.server import build_server

        services = build_services(settings)
        server = build_server(services)
        _quiet_libraries(settings.mcp_log_level)

        async def run() -> None:
            try:
                services.start_warm_up()  # the model loads while we answer
                await server.run_stdio_async()
            finally:
                await services.aclose()

        anyio.run(run)

    @app.command("serve-http")
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
        SIGTERM. With MCP_AUTH_SECRET_KEY set, clients send an HS256 bearer JWT (the writing
        tools need the `write` scope); a non-loopback --host needs that key or --insecure."""
        overrides: dict[str, object] = {}
        if host is not None:
            overrides["mcp_http_host"] = host
        if port is not None:
            overrides["mcp_http_port"] = port
        settings = load_or_exit(**overrides)

        from biomcp.entrypoints.http.app import build_http_app
        from biomcp.entrypoints.http.gate import InsecureBindError, bind_refusal, is_loopback_host
        from biomcp.entrypoints.http.run import run_http

        refusal = bind_refusal(settings, insecure=insecure)
        if refusal is not None:
            typer.echo(refusal, err=True)
            raise typer.Exit(code=2)
        if settings.mcp_auth_secret_key is not None:
            typer.echo(
                "auth on: /mcp needs `Authorization: Bearer <HS256 JWT>` signed with "
                "MCP_AUTH_SECRET_KEY; the writing tools need the 'write' scope.",
                err=True,
            )
        elif not is_loopback_host(settings.mcp_http_host):
            typer.echo(
                f"warning: serving on {settings.mcp_http_host} without authentication "
                "(--insecure): anyone who can reach the port can call every tool.",
                err=True,
            )

        from biomcp.entrypoints.container import build_services

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

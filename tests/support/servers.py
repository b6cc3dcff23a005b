"""bio-mcp server processes for the end-to-end tests: `biomcp serve-http` and `biomcp serve`.

Each server runs in a child process with an isolated environment (no inherited `MCP_*`,
`BIOMCP_*`, `NCBI_*`, `WEAVIATE_*` or `OPENAI_*` variables, a `.env`-free working folder, the
deterministic embedder, a private data folder) and is always stopped by the context managers
here, whatever the test does. Readiness is the URL the server prints once it accepts
connections, confirmed by `GET /health`; never a sleep.
"""

from __future__ import annotations

import asyncio
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager, suppress
from datetime import date, timedelta
from pathlib import Path
from typing import IO, Any, TextIO

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles

__all__ = [
    "DEFAULT_TOOLS",
    "START_TIMEOUT_S",
    "HttpServer",
    "biomcp_command",
    "exercise_over_http",
    "exercise_over_stdio",
    "http_client",
    "mcp_http",
    "mcp_stdio",
    "niced",
    "run_biomcp",
    "serve_http",
    "server_env",
]

#: The tools a default server lists (portable names).
DEFAULT_TOOLS = frozenset(
    {
        # spec 01 and the sync jobs
        "pubmed_sync_delta",
        "rag_search",
        "rag_get",
        "corpus_checkpoint_get",
        "corpus_checkpoint_set",
        "corpus_sync_status",
        "corpus_overview",
        # the live PubMed tools (spec 04, then the later lookups)
        "pubmed_search_articles",
        "pubmed_fetch_article_details",
        "pubmed_article_relationships",
        "pubmed_fetch_fulltext",
        "pubmed_convert_ids",
        "pubmed_lookup_citation",
        "pubmed_lookup_mesh",
        "pubmed_format_citations",
        # the project tools (spec 02)
        "store_chunks",
        "find_chunks",
        "query_hybrid",
        "inspect_collection",
        "list_projects",
        # the search / fetch pair (ChatGPT-style clients)
        "search",
        "fetch",
    }
)

#: Start-up includes importing the stack (numpy, faiss, tantivy...) on a loaded CI machine.
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 30.0
URL_LINE = re.compile(r"bio-mcp serving MCP at (?P<url>http://\S+/mcp)\s*$")
_ISOLATED = ("MCP_", "BIOMCP_", "NCBI_", "WEAVIATE_", "OPENAI_")


def niced(niceness: int) -> list[str]:
    """The `nice -n NICENESS` prefix of a command (none for 0, or without `nice`). `nice`
    execs the command, so the child's pid is the command's."""
    nice = shutil.which("nice")
    return [nice, "-n", str(niceness)] if niceness and nice else []


def biomcp_command() -> list[str]:
    """The `biomcp` entry point of the running interpreter's environment."""
    script = Path(sys.executable).with_name("biomcp")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from biomcp.entrypoints.cli.main import main; main()"]


def server_env(data_dir: Path, eutils_url: str, **extra: str) -> dict[str, str]:
    """The child's environment: this one minus bio-mcp's variables, plus the test's."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(_ISOLATED)}
    env.update(
        BIOMCP_DATA_DIR=str(data_dir),
        BIOMCP_EMBEDDINGS="deterministic",
        NCBI_EUTILS_BASE_URL=eutils_url,
        NCBI_MAX_RETRIES="0",
        MCP_LOG_LEVEL="info",
        PYTHONUNBUFFERED="1",
        BIOMCP_TOOLSETS="all",  # the tests reach every tool; the default set is tested apart
    )
    env.update(extra)
    return env


def run_biomcp(
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout: float = START_TIMEOUT_S,
    stdin: int | IO[Any] | None = subprocess.DEVNULL,
) -> subprocess.CompletedProcess[str]:
    """Run `biomcp ARGS` to completion (killed and failed after `timeout`)."""
    return subprocess.run(  # noqa: S603 - our own entry point, fixed arguments
        [*biomcp_command(), *args],
        env=dict(env),
        cwd=cwd,
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


class HttpServer:
    """One `biomcp serve-http` child process (use `serve_http`, which always stops it)."""

    def __init__(
        self, args: Sequence[str], *, env: Mapping[str, str], cwd: Path, niceness: int = 0
    ) -> None:
        self.args = list(args)

        self._stderr_path = cwd / f"serve-http-{time.monotonic_ns()}.stderr"
        self._stderr = self._stderr_path.open("w", encoding="utf-8")
        self.process = subprocess.Popen(  # noqa: S603 - our own entry point
            [*niced(niceness), *biomcp_command(), "serve-http", *self.args],
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            start_new_session=True,  # a Ctrl+C in the test's terminal is not the server's
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.stdout_lines: list[str] = []
        self._reader = threading.Thread(target=self._read_stdout, daemon=True)
        self._reader.start()
        self.url = ""

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    @property
    def base_url(self) -> str:
        return self.url.removesuffix("/mcp")

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].split("/", 1)[0])

    def stderr_text(self) -> str:
        self._stderr.flush()
        return self._stderr_path.read_text(encoding="utf-8", errors="replace")

    def wait_started(self, timeout: float = START_TIMEOUT_S) -> str:
        """The URL the server printed; fails with its stderr if it exits or stays silent."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(
                    f"serve-http printed no URL within {timeout:g}s; stderr:\n{self.stderr_text()}"
                )
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                code = self.process.wait(timeout=STOP_TIMEOUT_S)
                raise AssertionError(
                    f"serve-http exited with {code} before serving; stderr:\n{self.stderr_text()}"
                )
            self.stdout_lines.append(line)
            match = URL_LINE.search(line)
            if match:
                self.url = match.group("url")
                return self.url

    def wait_exit(self, timeout: float = START_TIMEOUT_S) -> int:
        return self.process.wait(timeout=timeout)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = STOP_TIMEOUT_S) -> int:
        """Signal the server and wait for it; kill it (and fail) if it does not stop in time."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                raise AssertionError(
                    f"serve-http ignored signal {sig} for {timeout:g}s; stderr:\n"
                    f"{self.stderr_text()}"
                ) from None
        return self.process.returncode

    def kill(self) -> None:
        if self.process.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=STOP_TIMEOUT_S)

    def close(self) -> None:
        """Stop the server (SIGTERM; a server that ignores it is killed and fails the test)."""
        try:
            self.stop()
        finally:
            self.kill()
            self._reader.join(timeout=STOP_TIMEOUT_S)
            if self.process.stdout is not None:
                self.process.stdout.close()
            self._stderr.close()


@pytest.fixture(autouse=True)
def clean_fake(fake: FakeEutilsServer) -> Iterator[None]:
    """For a module whose tests share one `fake` E-utilities server: imported there, it
    starts and ends each test with no faults armed and an empty request log."""
    fake.faults.clear()
    fake.clear_log()
    yield
    fake.faults.clear()


@contextmanager
def recent_fake(count: int, *, seed: int, **options: Any) -> Iterator[FakeEutilsServer]:
    """A fake E-utilities server holding `count` synthetic articles of the last 30 days
    (`options` go to `FakeEutilsServer`, e.g. `warm=True`)."""
    today = date.today()
    xml = generate_articles(count, start=today - timedelta(days=30), end=today, seed=seed)
    with FakeEutilsServer(FakeCorpus.from_xml_bytes(xml), **options) as server:
        yield server


@contextmanager
def serve_http(
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    wait: bool = True,
    niceness: int = 0,
) -> Iterator[HttpServer]:
    """A running `biomcp serve-http ARGS` (ready: URL printed and /health answering), at
    `niceness` (`nice -n`) when given."""
    server = HttpServer(args, env=env, cwd=cwd, niceness=niceness)
    try:
        if wait:
            server.wait_started()
            response = httpx.get(f"{server.base_url}/health", timeout=30)
            assert response.status_code == 200, response.text
        yield server
    finally:
        server.close()


def http_client(server: HttpServer, **headers: str) -> httpx.Client:
    """A plain HTTP client on the server's base URL."""
    return httpx.Client(base_url=server.base_url, headers=headers, timeout=60)


@asynccontextmanager
async def mcp_http(url: str, headers: Mapping[str, str] | None = None) -> AsyncIterator[Client]:
    """An `mcp` Streamable HTTP client session on `url`, sending `headers` with each request."""
    timeout = httpx2.Timeout(60.0, read=300.0)
    async with (
        httpx2.AsyncClient(headers=dict(headers or {}), timeout=timeout) as http,
        Client(streamable_http_client(url, http_client=http), read_timeout_seconds=120) as client,
    ):
        yield client


@asynccontextmanager
async def mcp_stdio(
    env: Mapping[str, str], cwd: Path, errlog: TextIO, args: Sequence[str] = ("serve",)
) -> AsyncIterator[Client]:
    """An `mcp` stdio client session on a `biomcp serve` child process."""
    command = biomcp_command()
    params = StdioServerParameters(
        command=command[0], args=[*command[1:], *args], env=dict(env), cwd=cwd
    )
    async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
        yield client


Exercise = Callable[[Client], Awaitable[None]]


def exercise_over_stdio(env: Mapping[str, str], cwd: Path, exercise: Exercise) -> None:
    """Run `exercise` with an `mcp` client on a `biomcp serve` child process (its stderr in
    `cwd/server.log`)."""

    async def scenario() -> None:
        with (cwd / "server.log").open("w", encoding="utf-8") as errlog:
            async with mcp_stdio(env, cwd, errlog) as client:
                await exercise(client)

    asyncio.run(scenario())


def exercise_over_http(env: Mapping[str, str], cwd: Path, exercise: Exercise) -> None:
    """Run `exercise` with an `mcp` client over Streamable HTTP on a `biomcp serve-http`
    child process (loopback, a free port)."""
    with serve_http(["--port", "0"], env=env, cwd=cwd) as server:

        async def scenario() -> None:
            async with mcp_http(server.url) as client:
                await exercise(client)

        asyncio.run(scenario())

"""`biomcp` commands in forked children of one process that has already imported bio-mcp.

Starting the console script imports the whole stack (numpy, faiss, tantivy, ONNX Runtime,
SQLAlchemy, the MCP SDK) before any work. The CLI end-to-end tests run hundreds of short
commands, so `run_cli` forks each one from a server process that paid for those imports once.

Each command still runs in a process of its own. It gets its own environment, working folder,
standard streams and exit code, and nothing is left over from the command before. The answer
is a `subprocess.CompletedProcess`, as `servers.run_biomcp` gives for the real console script.
One difference stays: standard output and error are files here, not pipes.

Tests about start-up, signals, stdin, pipes or many processes at once use `servers.run_biomcp`.
Setting `BIOMCP_TEST_CLI=process` in the test run sends every `run_cli` call there too.

The standard library's forkserver would re-import pytest's main script in every child, so the
small server here forks by itself. It reads one JSON request a line on stdin and answers the
child's pid, then its exit status, one JSON line each on stdout.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import locale
import os
import pkgutil
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# Imported here so the server imports it once, before it forks any command.
from biomcp.entrypoints.cli.main import main as _biomcp_main

__all__ = ["run_cli"]

#: Modules that commands import on first use, beyond bio-mcp's own.
_LAZY = ("sqlalchemy.dialects.sqlite", "alembic.command", "alembic.config", "alembic.script")

#: As long as `servers.START_TIMEOUT_S`: a command may wait on a loaded machine.
TIMEOUT_S = 120.0
_ROOT = Path(__file__).resolve().parents[2]
_LOCK = threading.Lock()  # one command at a time: the server answers in order
_server: subprocess.Popen[bytes] | None = None
_pending = bytearray()  # what the server wrote beyond the last answer line read


def run_cli(
    args: Sequence[str], *, env: Mapping[str, str], cwd: Path, timeout: float = TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    """Run `biomcp ARGS` in a forked child, its stdin empty; killed and failed after `timeout`."""
    if os.environ.get("BIOMCP_TEST_CLI") == "process":
        from tests.support.servers import run_biomcp

        return run_biomcp(args, env=env, cwd=cwd, timeout=timeout)
    argv = [_script(), *args]
    with tempfile.TemporaryDirectory(prefix="biomcp-cli-") as streams, _LOCK:
        out, err = Path(streams, "stdout"), Path(streams, "stderr")
        server = _running_server()
        assert server.stdin is not None
        assert server.stdout is not None
        request = {"args": list(args), "env": dict(env), "cwd": str(cwd)}
        line = json.dumps({**request, "out": str(out), "err": str(err)}) + "\n"
        server.stdin.write(line.encode())
        server.stdin.flush()
        pid = _reply(server.stdout.fileno(), TIMEOUT_S)["pid"]
        try:
            code = _reply(server.stdout.fileno(), timeout)["code"]
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)
            _reply(server.stdout.fileno(), TIMEOUT_S)  # the server reaps it
            raise subprocess.TimeoutExpired(argv, timeout, _read(out), _read(err)) from None
        return subprocess.CompletedProcess(argv, code, _read(out), _read(err))


def _script() -> str:
    """The path the real console script would have in `sys.argv[0]`."""
    return str(Path(sys.executable).with_name("biomcp"))


def _running_server() -> subprocess.Popen[bytes]:
    """The fork server, started at the first command and stopped when this process exits."""
    global _server
    if _server is None or _server.poll() is not None:
        code = f"import sys; sys.path.insert(0, {str(_ROOT)!r}); import {__name__} as m; m.serve()"
        _server = subprocess.Popen(  # noqa: S603 - this interpreter, fixed arguments
            [sys.executable, "-P", "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
            cwd=_ROOT,
        )
        _pending.clear()
        atexit.register(_stop, _server)
    return _server


def _stop(server: subprocess.Popen[bytes]) -> None:
    if server.stdin is not None:
        server.stdin.close()  # the server exits at the end of its input
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def _reply(fd: int, timeout: float) -> dict[str, Any]:
    """The server's next answer line, or TimeoutError after `timeout` seconds without one."""
    deadline = time.monotonic() + timeout
    while b"\n" not in _pending:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise TimeoutError
        chunk = os.read(fd, 65536)
        if not chunk:
            raise RuntimeError("the CLI fork server exited")
        _pending.extend(chunk)
    end = _pending.index(b"\n")
    answer: dict[str, Any] = json.loads(bytes(_pending[:end]))
    del _pending[: end + 1]
    if "error" in answer:
        raise RuntimeError(f"the CLI fork server failed:\n{answer['error']}")
    return answer


def _read(path: Path) -> str:
    """A stream's text as `subprocess.run(text=True)` decodes it (locale, universal newlines)."""
    if not path.exists():
        return ""
    return path.read_text(encoding=locale.getpreferredencoding(False))


# --- the server side -------------------------------------------------------------------------


def serve() -> None:
    """Fork one command per request line until stdin ends."""
    sys.path.remove(str(_ROOT))  # a command sees the path the console script would see
    _preload()
    replies = sys.stdout
    for line in sys.stdin:
        try:
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                _child(**request)
            replies.write(json.dumps({"pid": pid}) + "\n")
            replies.flush()
            _, status = os.waitpid(pid, 0)
            replies.write(json.dumps({"code": os.waitstatus_to_exitcode(status)}) + "\n")
        except Exception:
            replies.write(json.dumps({"error": traceback.format_exc()}) + "\n")
        replies.flush()


def _preload() -> None:
    """Import what commands import on first use, so that every fork starts with it in memory.

    The Weaviate adapter stays out: its gRPC client must not be loaded in a process that forks.
    """
    for package in ("biomcp.adapters", "biomcp.usecases", "biomcp.entrypoints", "biomcp.eval"):
        root = importlib.import_module(package)
        for module in pkgutil.walk_packages(root.__path__, f"{package}."):
            if "weaviate" not in module.name:
                with contextlib.suppress(ImportError):  # an extra that is not installed
                    importlib.import_module(module.name)
    for name in _LAZY:
        importlib.import_module(name)


def _child(args: list[str], env: dict[str, str], cwd: str, out: str, err: str) -> None:
    """The forked command: the console script's run and exit, as in a fresh process."""
    code = 1
    try:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        _redirect(0, os.devnull, os.O_RDONLY)
        _redirect(1, out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        _redirect(2, err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        sys.argv = [_script(), *args]
        code = 0
        _biomcp_main()
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:
        traceback.print_exc()  # what the interpreter prints for an uncaught exception
        code = 1
    try:
        atexit._run_exitfuncs()  # os._exit below skips them; a real interpreter runs them
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    finally:
        os._exit(code)


def _exit_code(exc: SystemExit) -> int:
    """The interpreter's exit status for `exc`: a message goes to stderr and exits 1."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    print(exc.code, file=sys.stderr)
    return 1


def _redirect(fd: int, path: str, flags: int) -> None:
    opened = os.open(path, flags, 0o600)
    os.dup2(opened, fd)
    os.close(opened)

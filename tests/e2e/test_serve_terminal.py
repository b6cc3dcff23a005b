"""`biomcp serve` started by a person rather than by an MCP client.

* On a terminal (stdin is a TTY), it says on stderr, in one line, that it waits for a client
  and how to try it by hand; stdout stays empty. Ctrl+D ends it cleanly, with the guidance.
* From a pipe (an MCP client), it prints no such line.
* `make serve` with stdin closed ends without make's "Error" line.
"""

from __future__ import annotations

import os
import pty
import queue
import shutil
import subprocess
import threading
from pathlib import Path
from typing import IO

import pytest

from biomcp.entrypoints.cli.commands.serve import STDIN_GUIDANCE, TERMINAL_NOTICE
from tests.support.servers import START_TIMEOUT_S, biomcp_command, server_env

pytestmark = pytest.mark.e2e

NO_NCBI = "http://127.0.0.1:9/"  # never called here
REPO = Path(__file__).resolve().parents[2]


def _lines(stream: IO[str]) -> queue.Queue[str | None]:
    """The lines of `stream` as they arrive, then None at its end (read in a thread)."""
    found: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        for line in stream:
            found.put(line)
        found.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return found


def test_serve_on_a_terminal_says_it_waits_for_a_client_on_stderr_only(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", NO_NCBI)
    controller, terminal = pty.openpty()
    try:
        with subprocess.Popen(  # noqa: S603 - our own entry point, fixed arguments
            [*biomcp_command(), "serve"],
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=tmp_path,
            text=True,
        ) as child:
            assert child.stdout is not None
            assert child.stderr is not None
            stderr = _lines(child.stderr)
            first = stderr.get(timeout=START_TIMEOUT_S)  # the notice comes before any input
            assert first is not None
            assert first.strip() == TERMINAL_NOTICE
            assert "\n" not in TERMINAL_NOTICE
            assert "inspector" in first
            assert "serve-http" in first
            os.write(controller, b"\x04")  # Ctrl+D at the start of a line: end of input
            returncode = child.wait(timeout=START_TIMEOUT_S)
            rest = []
            while (line := stderr.get(timeout=START_TIMEOUT_S)) is not None:
                rest.append(line)
            stdout = child.stdout.read()
    finally:
        os.close(controller)
        os.close(terminal)
    assert returncode == 0, rest
    assert stdout == ""  # stdout is the protocol's channel, even on a terminal
    assert STDIN_GUIDANCE in "".join(rest)
    assert "Traceback" not in "".join(rest)


def test_serve_from_a_pipe_prints_no_terminal_notice(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", NO_NCBI)
    result = subprocess.run(  # noqa: S603 - our own entry point, fixed arguments
        [*biomcp_command(), "serve"],
        input="\n",  # a client's pipe that ends before any message
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, result
    assert TERMINAL_NOTICE not in result.stderr
    assert STDIN_GUIDANCE in result.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_serve_with_stdin_closed_ends_without_a_make_error(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", NO_NCBI)
    command = biomcp_command()
    if len(command) != 1:
        pytest.skip("needs the installed biomcp script")
    # BIN: this environment's scripts; RUN_STAMP emptied: no install step, only the target.
    script = 'exec make -C "$1" serve BIN="$2" RUN_STAMP= <&-'
    result = subprocess.run(  # noqa: S603 - fixed arguments
        ["/bin/sh", "-c", script, "sh", str(REPO), str(Path(command[0]).parent)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, result
    assert "Error" not in result.stderr
    assert STDIN_GUIDANCE in result.stderr

"""Child processes that start their work together: each runs a Python snippet, says `ready`
once it is up, waits for `go`, and prints its answer last. The fake's log is cleared in
between, so it holds the work only, never a process's start-up."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

from biomcp.testing.eutils import FakeEutilsServer

__all__ = ["run_in_step"]


def run_in_step(
    fake: FakeEutilsServer, snippet: str, argvs: Sequence[Sequence[str]], *, timeout_s: float
) -> list[tuple[str, str]]:
    """Run `snippet` once per argument list, all released at once; each child's (last line
    of stdout, stderr). Fails the test when a child exits non-zero."""
    children = [
        subprocess.Popen(  # noqa: S603 - this interpreter, the test's own snippet
            [sys.executable, "-c", snippet, *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for argv in argvs
    ]
    try:
        # Processes that run already: a cold start's first request can arrive late under load.
        for child in children:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready"
        fake.clear_log()
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        answers: list[tuple[str, str]] = []
        for child in children:
            out, err = child.communicate(timeout=timeout_s)
            assert child.returncode == 0, err[-2000:]
            answers.append((out.strip().splitlines()[-1], err))
        return answers
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()

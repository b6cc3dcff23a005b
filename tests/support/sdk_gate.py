"""Run `biomcp` with the MCP SDK's import held until a file appears.

A test of the stdio prelude needs the prelude's early answers to come before the SDK serves.
Holding the SDK's first import until the test has read those answers makes that order the
test's choice, not the machine's speed.

Usage: `python sdk_gate.py RELEASE_FILE biomcp-args...`.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
import time
from pathlib import Path

#: How long the SDK's import waits for the release before it goes on anyway.
HOLD_LIMIT_S = 120.0
_POLL_S = 0.01


class _HoldTheSdk(importlib.abc.MetaPathFinder):
    """Holds the main thread's first import of the `mcp` package until `release` exists. The
    prelude's own thread only looks the package up (to digest its files): it is not held."""

    def __init__(self, release: Path) -> None:
        self._release = release
        self._held = False

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        main = threading.current_thread() is threading.main_thread()
        if fullname == "mcp" and main and not self._held:
            self._held = True
            deadline = time.monotonic() + HOLD_LIMIT_S
            while not self._release.exists() and time.monotonic() < deadline:
                time.sleep(_POLL_S)
        return None  # the usual finders load it


def main() -> None:
    release, args = Path(sys.argv[1]), sys.argv[2:]
    sys.meta_path.insert(0, _HoldTheSdk(release))
    sys.argv = ["biomcp", *args]
    from biomcp.entrypoints.cli.main import main as biomcp_main

    biomcp_main()


if __name__ == "__main__":
    main()

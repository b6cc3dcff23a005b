"""Run `biomcp` with the MCP SDK's loading held until a file appears.

A test of the stdio prelude needs the prelude's early answers to come before the SDK serves.
Holding the server's loading until the test has read those answers makes that order the
test's choice, not the machine's speed.

The hold is a wait right after the prelude starts, in the main thread, outside any import:
a wait inside an import hook would hold Python's import lock, which the prelude's thread needs.

Usage: `python sdk_gate.py RELEASE_FILE biomcp-args...`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

#: How long the server's loading waits for the release before it goes on anyway.
HOLD_LIMIT_S = 120.0
_POLL_S = 0.01


def main() -> None:
    release, args = Path(sys.argv[1]), sys.argv[2:]
    from biomcp.entrypoints.cli.commands import serve

    started = serve.start_prelude

    def start_then_hold(settings: Any) -> Any:
        prelude = started(settings)
        deadline = time.monotonic() + HOLD_LIMIT_S
        while not release.exists() and time.monotonic() < deadline:
            time.sleep(_POLL_S)
        return prelude

    serve.start_prelude = start_then_hold
    sys.argv = ["biomcp", *args]
    from biomcp.entrypoints.cli.main import main as biomcp_main

    biomcp_main()


if __name__ == "__main__":
    main()

"""`biomcp` with `--json` on a synced corpus, for the tests that damage its files.

`JsonCli` runs each command as a child process and answers (exit code, the parsed JSON,
stderr); `searches` is the fixed set of `QUERIES` whose hits must survive a repair. A command
is forked from a process that imported bio-mcp already (`forked.run_cli`). `JsonCli.real`, or
`forked=False`, starts the installed console script instead.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.support.forked import run_cli
from tests.support.servers import run_biomcp

__all__ = ["KEY", "QUERIES", "TERM", "JsonCli"]

KEY, TERM = "humans_v1", "humans[mh]"
QUERIES = ("randomized trial of aspirin", "asthma inhaler children", "insulin glucose")


class JsonCli:
    def __init__(self, env: dict[str, str], cwd: Path, *, forked: bool = True) -> None:
        self.env, self.cwd, self.forked = env, cwd, forked

    def __call__(self, *args: str) -> tuple[int, Any, str]:
        if not self.forked:
            return self.real(*args)
        return self._answer(run_cli([*args, "--json"], env=self.env, cwd=self.cwd))

    def real(self, *args: str) -> tuple[int, Any, str]:
        """The command in a new process of the installed console script."""
        return self._answer(run_biomcp([*args, "--json"], env=self.env, cwd=self.cwd))

    @staticmethod
    def _answer(done: subprocess.CompletedProcess[str]) -> tuple[int, Any, str]:
        return (
            done.returncode,
            json.loads(done.stdout) if done.stdout.strip() else None,
            done.stderr,
        )

    def searches(self) -> list[list[tuple[str, str]]]:
        out = []
        for query in QUERIES:
            code, hits, err = self("search", query, "--top-k", "8")
            assert code == 0, err
            out.append([(h["doc_id"], h["chunk_id"]) for h in hits["results"]])
        return out

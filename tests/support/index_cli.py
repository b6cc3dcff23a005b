"""`biomcp` with `--json` on a synced corpus, for the tests that damage its files.

`JsonCli` runs each command as a child process and answers (exit code, the parsed JSON,
stderr); `searches` is the fixed set of `QUERIES` whose hits must survive a repair.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.servers import run_biomcp

__all__ = ["KEY", "QUERIES", "TERM", "JsonCli"]

KEY, TERM = "humans_v1", "humans[mh]"
QUERIES = ("randomized trial of aspirin", "asthma inhaler children", "insulin glucose")


class JsonCli:
    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.env, self.cwd = env, cwd

    def __call__(self, *args: str) -> tuple[int, Any, str]:
        done = run_biomcp([*args, "--json"], env=self.env, cwd=self.cwd)
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

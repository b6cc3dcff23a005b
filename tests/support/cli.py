"""The `biomcp` console script in child processes, over a fake E-utilities server.

`make_cli` gives a `Cli` with an isolated environment (no inherited `BIOMCP_*`, `NCBI_*`,
`WEAVIATE_*`, `OPENAI_*` or `MCP_*` variables), a private data folder, the model-free embedder
and a working folder without a `.env` file. The module fixtures `fake` and `expected` are a
fake whose corpus holds records for `TERM`, and what the fake holds for it.

A call forks the command from a process that has imported bio-mcp already (`forked.run_cli`).
`Cli.real` starts the installed console script instead, for tests about the real process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from tests.support.forked import run_cli
from tests.support.servers import run_biomcp

__all__ = ["DEAD", "KEY", "TERM", "Cli", "Expected", "expected", "fake", "iso", "make_cli"]

TERM = "asthma[mh]"
KEY = "asthma_v1"
_ISOLATED = ("BIOMCP_", "NCBI_", "WEAVIATE_", "OPENAI_", "MCP_")
#: An E-utilities URL nothing answers (the discard port).
DEAD = "http://127.0.0.1:9"


@dataclass(frozen=True)
class Expected:
    """What the fake holds for TERM: PMIDs, titles and the largest Entrez date."""

    pmids: frozenset[str]
    titles: dict[str, str]
    journals: dict[str, str]
    max_edat: str


@dataclass(frozen=True)
class Cli:
    """Runs `biomcp` with an isolated environment, in a folder without a `.env` file.

    A call is forked from a process that imported bio-mcp already, unless `forked` is false.
    """

    env: dict[str, str]
    cwd: Path
    forked: bool = True

    def __call__(self, *args: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
        if not self.forked:
            return self.real(*args, **extra_env)
        return run_cli(args, env={**self.env, **extra_env}, cwd=self.cwd)

    def real(self, *args: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
        """The installed console script in a new process, started from nothing."""
        executable = Path(sys.executable).with_name("biomcp")
        assert executable.exists(), f"the console script is not installed: {executable}"
        return run_biomcp(args, env={**self.env, **extra_env}, cwd=self.cwd)

    def json(self, *args: str, **extra_env: str) -> Any:
        done = self(*args, "--json", **extra_env)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)


def iso(value: datetime) -> str:
    return value.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(150, start=date(2020, 1, 1), end=date(2021, 12, 31), seed=11)
    )
    with FakeEutilsServer(corpus) as server:
        yield server


@pytest.fixture(scope="module")
def expected(fake: FakeEutilsServer) -> Expected:
    records = [entry.record for entry in fake.corpus]
    matching = [
        r for r in records if r is not None and any(h.descriptor == "Asthma" for h in r.mesh)
    ]
    assert 5 <= len(matching) < len(records), "the seed should give some asthma records"
    edats = [r.edat for r in matching if r.edat is not None]
    return Expected(
        pmids=frozenset(r.pmid for r in matching),
        titles={r.pmid: r.title or "" for r in matching},
        journals={r.pmid: r.journal.title or "" for r in matching},
        max_edat=iso(max(edats)),
    )


def make_cli(fake: FakeEutilsServer, root: Path, *, forked: bool = True) -> Cli:
    (root / "work").mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(_ISOLATED)}
    env.update(
        BIOMCP_DATA_DIR=str(root / "data"),
        BIOMCP_EMBEDDINGS="deterministic",
        NCBI_EUTILS_BASE_URL=fake.base_url,
        NCBI_MAX_RETRIES="0",
        COLUMNS="160",
        PYTHONUNBUFFERED="1",
    )
    return Cli(env, root / "work", forked)

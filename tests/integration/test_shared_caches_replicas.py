"""Replicas over one PostgreSQL share their caches: two processes with data folders of their own
(as on two machines), built from the settings as `serve-http` builds them, fetch one record
through A, B, A, B and NCBI (the fake E-utilities) is asked once; a query embedded by one is not
embedded again by the other. With `BIOMCP_SHARED_CACHES=false` each keeps its own files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from tests.support.services import postgres_url
from tests.support.sql_databases import migrated_postgres_schema

pytestmark = pytest.mark.integration

# One replica: reads `fetch PMID` or `embed TEXT` lines, answers each with one JSON line.
_CHILD = """
import asyncio, json, sys
from biomcp.adapters.embeddings import HashingEmbedder
from biomcp.entrypoints import backends
from biomcp.entrypoints.settings import Settings

class Counting(HashingEmbedder):
    texts = 0
    async def embed(self, texts):
        Counting.texts += len(texts)
        return await super().embed(texts)

async def main() -> None:
    settings = Settings()
    ncbi = backends.build_ncbi(settings)
    cache = backends.build_entrez_cache(settings, ncbi)
    embedder = backends.build_embedding_cache(settings, Counting())
    print(json.dumps({"ready": type(cache.store).__name__}), flush=True)
    try:
        while line := await asyncio.to_thread(sys.stdin.readline):
            verb, _, arg = line.strip().partition(" ")
            if verb == "fetch":
                records = (await cache.efetch([arg])).records
                answer = {"pmids": [r.pmid for r in records]}
            else:
                vector = (await embedder.embed([arg]))[0]
                answer = {"embedded": Counting.texts, "head": vector[:3]}
            print(json.dumps(answer), flush=True)
    finally:
        embedder.close()
        await cache.aclose()

asyncio.run(main())
"""


class Replica:
    """One child process with its own data folder, driven one line at a time."""

    def __init__(self, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(  # noqa: S603 - this interpreter, the test's own snippet
            [sys.executable, "-c", _CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.store = self._answer()["ready"]

    def ask(self, line: str) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        return self._answer()

    def stop(self) -> str:
        """Close stdin, wait for the end; stderr."""
        _, err = self.process.communicate(timeout=120)
        assert self.process.returncode == 0, err[-2000:]
        return err

    def _answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            self.process.wait(timeout=60)
            raise AssertionError(self.process.stderr.read()[-2000:] if self.process.stderr else "")
        answer: dict[str, Any] = json.loads(line)
        return answer


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(5, start=date(2021, 1, 1), end=date(2021, 6, 30), seed=7)
    )
    with FakeEutilsServer(corpus) as server:
        yield server


@pytest.fixture
def database() -> Iterator[str]:
    """A migrated, empty schema of the test PostgreSQL."""
    with migrated_postgres_schema(postgres_url()) as url:
        yield url


def _replicas(fake: FakeEutilsServer, database: str, tmp_path: Path, shared: bool) -> list[Replica]:
    replicas = []
    for name in ("a", "b"):
        env = {
            **os.environ,
            "BIOMCP_DATA_DIR": str(tmp_path / name),
            "BIOMCP_DATABASE_URL": database,
            "BIOMCP_SHARED_CACHES": str(shared).lower(),
            "NCBI_EUTILS_BASE_URL": fake.base_url,
        }
        replicas.append(Replica(env))
    return replicas


@pytest.mark.slow
@pytest.mark.parametrize(("shared", "arrivals"), [(True, 1), (False, 2)])
def test_a_record_fetched_through_a_b_a_b_reaches_ncbi_once_when_the_caches_are_shared(
    fake: FakeEutilsServer, database: str, tmp_path: Path, shared: bool, arrivals: int
) -> None:
    pmid = sorted(fake.corpus.pmids())[0]
    a, b = _replicas(fake, database, tmp_path, shared)
    try:
        assert {a.store, b.store} == {"PgEntrezCache" if shared else "SqliteEntrezCache"}
        fake.clear_log()
        answers = [replica.ask(f"fetch {pmid}") for replica in (a, b, a, b)]
    finally:
        errors = [a.stop(), b.stop()]
    assert answers == [{"pmids": [pmid]}] * 4
    assert sum(entry["endpoint"] == "efetch" for entry in fake.log) == arrivals
    assert not any("cannot be used" in err for err in errors)  # the database served them
    assert bool(list(tmp_path.glob("*/ncbi-cache.sqlite3"))) is not shared


@pytest.mark.slow
def test_a_query_embedded_by_one_replica_is_not_embedded_again_by_the_other(
    fake: FakeEutilsServer, database: str, tmp_path: Path
) -> None:
    a, b = _replicas(fake, database, tmp_path, shared=True)
    try:
        first = a.ask("embed asthma in children")
        second = b.ask("embed asthma in children")
        again = a.ask("embed asthma in children")
    finally:
        a.stop()
        b.stop()
    assert (first["embedded"], second["embedded"], again["embedded"]) == (1, 0, 1)
    assert first["head"] == second["head"]
    assert not list(tmp_path.glob("*/embeddings.sqlite3"))

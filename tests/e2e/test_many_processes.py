"""One data folder, many processes: the embedded store behaves like SQLite.

Real processes throughout: `biomcp serve` children driven by the SDK's stdio client, `biomcp
sync` children, and the library in this process. Nothing here waits on the clock: every
assertion is on what the processes answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
from collections.abc import Iterator
from contextlib import AsyncExitStack
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

import biomcp
from biomcp.adapters.sql import SqlMetadataStore
from biomcp.adapters.vectors import EmbeddedVectorStore
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, FaultInjector, generate_articles
from tests.support.servers import biomcp_command, mcp_stdio, run_biomcp, server_env
from tests.support.sync_harness import matching, record_of

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

COLLECTION = "PubMedChunk"
BASE = ("humans_v1", "humans[mh]", "Humans")
LATER = ("animals_v1", "animals[mh]", "Animals")
SHARED = ("asthma_v1", "asthma[mh]", "Asthma")  # shares records with both


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    today = date.today()
    xml = generate_articles(400, start=today - timedelta(days=60), end=today, seed=17)
    with FakeEutilsServer(FakeCorpus.from_xml_bytes(xml), warm=True) as server:
        yield server


def _sync_args(key: str, term: str) -> list[str]:
    return ["sync", "--query-key", key, "--term", term, "--json"]


def _sync(key: str, term: str) -> list[str]:
    return [*biomcp_command(), *_sync_args(key, term)]


async def _counts(data: Path) -> tuple[int, int]:
    """(documents in SQL, chunks in the vector rows), read straight from the files."""
    metadata = SqlMetadataStore(f"sqlite:///{data / 'biomcp.sqlite3'}")
    vectors = EmbeddedVectorStore(data / "vectors")
    try:
        return await metadata.count_documents(), await vectors.count(COLLECTION)
    finally:
        await metadata.aclose()
        await vectors.aclose()


async def _search(client: Client, query: str) -> list[str]:
    result = await client.call_tool("rag_search", {"query": query, "top_k": 5})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return [hit["doc_id"] for hit in result.structured_content["results"]]


async def _info(client: Client) -> dict[str, Any]:
    read = await client.read_resource("pubmed-connect://info")
    corpus: dict[str, Any] = json.loads(read.contents[0].text)["corpus"]  # type: ignore[union-attr]
    return corpus


def test_three_servers_a_cli_sync_and_a_notebook_share_one_folder(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    env = server_env(data, fake.base_url)
    first = run_biomcp(["sync", "--query-key", BASE[0], "--term", BASE[1]], env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    later = matching(fake.corpus, LATER[2])
    probes = [(f"pmid:{p}", record_of(fake.corpus, p).title) for p in later[:3]]

    async def scenario() -> None:
        async with AsyncExitStack() as stack:
            errlog = stack.enter_context((tmp_path / "servers.log").open("w"))
            servers = [await stack.enter_async_context(mcp_stdio(env, tmp_path, errlog))]
            servers += [
                await stack.enter_async_context(mcp_stdio(env, tmp_path, errlog)) for _ in (1, 2)
            ]
            notebook = biomcp.open_corpus(
                biomcp_data_dir=data,
                biomcp_embeddings="deterministic",
                ncbi_eutils_base_url=fake.base_url,
            )
            stack.push_async_callback(notebook.aio.close)
            before = [await _info(server) for server in servers]
            assert len({(b["records"], b["chunks"]) for b in before}) == 1

            # A CLI sync in another process while every reader keeps searching.
            sync = await asyncio.create_subprocess_exec(
                *_sync(LATER[0], LATER[1]),
                env=env,
                cwd=tmp_path,
                stdin=subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            rounds = 0
            while sync.returncode is None:
                for server in servers:
                    await _search(server, "randomized trial outcomes")
                assert await notebook.aio.search("randomized trial outcomes", top_k=5)
                rounds += 1
                try:
                    await asyncio.wait_for(asyncio.shield(sync.wait()), 0.05)
                except TimeoutError:
                    continue
            out, err = await sync.communicate()
            assert sync.returncode == 0, err.decode()
            report = json.loads(out)
            assert report["inserted"] == len(later)
            assert rounds >= 1

            # Each process sees the new documents on its next query.
            for doc_id, title in probes:
                assert title is not None  # the fake's articles all have one
                for server in servers:
                    assert doc_id in await _search(server, title)
                hits = await notebook.aio.search(title, top_k=5)
                assert doc_id in [h.doc_id for h in hits]
            records, chunks = await _counts(data)
            assert records == len(matching(fake.corpus, BASE[2])) + len(later)
            for server in servers:
                info = await _info(server)
                assert (info["records"], info["chunks"]) == (records, chunks)

    asyncio.run(scenario())


def test_two_cli_syncs_of_keys_sharing_records_run_at_once(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    together, apart = tmp_path / "together", tmp_path / "apart"

    def start(data: Path, key: str, term: str) -> subprocess.Popen[str]:
        return subprocess.Popen(  # noqa: S603 - our own entry point, fixed arguments
            _sync(key, term),
            env=server_env(data, fake.base_url),
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    running = [start(together, *BASE[:2]), start(together, *SHARED[:2])]
    for process in running:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, (out, err)
        assert json.loads(out)["warnings"] == []
    for key, term, _ in (BASE, SHARED):
        done = start(apart, key, term)
        _, err = done.communicate(timeout=300)
        assert done.returncode == 0, err

    expected = set(matching(fake.corpus, BASE[2])) | set(matching(fake.corpus, SHARED[2]))
    shared = set(matching(fake.corpus, BASE[2])) & set(matching(fake.corpus, SHARED[2]))
    assert shared  # the two keys really share records
    counts = asyncio.run(_counts(together))
    assert counts[0] == len(expected)
    assert counts == asyncio.run(_counts(apart))  # nothing duplicated, nothing missing


KILL_XML = generate_articles(
    120, start=date.today() - timedelta(days=30), end=date.today(), seed=23
)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, int, str | None]:
    """(documents, chunks, checkpoint) of an uninterrupted sync of the same corpus."""
    data = tmp_path_factory.mktemp("reference") / "data"
    with FakeEutilsServer(FakeCorpus.from_xml_bytes(KILL_XML)) as fake:
        env = server_env(data, fake.base_url, BIOMCP_SYNC_BATCH_SIZE="20")
        done = run_biomcp(_sync_args(*BASE[:2]), env=env, cwd=data.parent)
        assert done.returncode == 0, done.stderr
    records, chunks = asyncio.run(_counts(data))
    return records, chunks, json.loads(done.stdout)["max_edat_seen"]


@pytest.mark.parametrize("kill_after", [0, 1, 25, 50, 75])  # of the 99 matching records
def test_a_sync_killed_at_any_point_is_interrupted_and_the_next_one_is_exact(
    tmp_path: Path, kill_after: int, reference: tuple[int, int, str | None]
) -> None:
    """kill -9 once the job is recorded and `kill_after` documents are stored (EFetch answers
    slowly, so the sync is caught mid-way); a sync in a new process then completes it."""
    faults = FaultInjector(delay=0.4)
    faults.sequence(["slow"] * 50, endpoint="efetch")
    data = tmp_path / "data"
    with FakeEutilsServer(FakeCorpus.from_xml_bytes(KILL_XML), faults=faults) as fake:
        env = server_env(data, fake.base_url, BIOMCP_SYNC_BATCH_SIZE="20")
        child = subprocess.Popen(  # noqa: S603 - our own entry point, fixed arguments
            _sync(*BASE[:2]), env=env, cwd=tmp_path, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            # Wait on state, not on time: the job row and the documents stored so far.
            running = asyncio.run(_wait_for_progress(data, BASE[0], child, kill_after))
        finally:
            child.kill()
            child.wait()
        faults.clear()
        done = run_biomcp(_sync_args(*BASE[:2]), env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr

    jobs = asyncio.run(_jobs(data, BASE[0]))
    by_id = {job.job_id: job for job in jobs}
    assert running is not None, "the sync ended before the kill"
    assert by_id[running.job_id].status == "interrupted"
    assert by_id[running.job_id].finished_at is not None
    assert sorted(job.status for job in jobs) == ["interrupted", "succeeded"]
    records, chunks = asyncio.run(_counts(data))
    assert (records, chunks) == reference[:2]  # nothing lost, nothing duplicated
    assert json.loads(done.stdout)["max_edat_seen"] == reference[2]


async def _jobs(data: Path, key: str) -> list[Any]:
    metadata = SqlMetadataStore(f"sqlite:///{data / 'biomcp.sqlite3'}")
    try:
        return await metadata.list_jobs(key)
    finally:
        await metadata.aclose()


async def _wait_for_progress(
    data: Path, key: str, child: subprocess.Popen[bytes], documents: int
) -> Any:
    """The running job once at least `documents` are stored (None if the sync finished)."""
    for _ in range(6000):  # bounded: the sync starts within seconds and stores in batches
        if child.poll() is not None:
            return None
        if (data / "biomcp.sqlite3").exists():
            with contextlib.suppress(Exception):  # the schema may be mid-migration
                jobs = await _jobs(data, key)
                if jobs and (await _counts(data))[0] >= documents:
                    return jobs[0]
        await asyncio.sleep(0.02)
    raise AssertionError(f"the sync never stored {documents} documents")

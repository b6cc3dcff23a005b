"""A data folder that cannot be written (a full disk, a read-only folder) still serves reads.

The corpus is real: synced from the fake E-utilities, and a second sync in a process that dies
without closing leaves its commits in the SQLite `-wal` with a `-shm` index, as a crash does.
The full disk is a small tmpfs filled to the last byte, the read-only folder a read-only bind
mount (or `chmod a-w` when not root, where permissions do stop writes).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from biomcp.entrypoints.library import open_corpus
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.services import Services
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from tests.support.mcp_inprocess import call_json, serve, test_settings

pytestmark = pytest.mark.integration

TERM = "hypertension[mh]"
SECOND_TERM = "humans[mh] OR animals[mh]"
DATABASE = "biomcp.sqlite3"

# Syncs a second query key, then dies without closing anything.
_CRASHING_SYNC = textwrap.dedent(
    """
    import os, sys
    from biomcp.entrypoints.library import open_corpus
    corpus = open_corpus(
        biomcp_data_dir=sys.argv[1], biomcp_embeddings="deterministic",
        ncbi_eutils_base_url=sys.argv[2], ncbi_max_retries=0, biomcp_sync_initial_days=0,
    )
    report = corpus.sync("second", sys.argv[3])
    print(report.inserted, flush=True)
    os._exit(0)
    """
)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(60, start=date(2021, 1, 1), end=date(2022, 6, 30), seed=5)
    )
    with FakeEutilsServer(corpus) as server:
        yield server


@pytest.fixture(scope="module")
def only_second(fake: FakeEutilsServer) -> list[str]:
    """PMIDs the second query holds and the first does not."""
    first = {
        entry.record.pmid
        for entry in fake.corpus
        if entry.record is not None
        and any(h.descriptor == "Hypertension" for h in entry.record.mesh)
    }
    others = {e.record.pmid for e in fake.corpus if e.record is not None} - first
    assert first
    assert others
    return sorted(others)


@pytest.fixture(scope="module")
def clean(fake: FakeEutilsServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder synced and closed: every commit is in `biomcp.sqlite3`."""
    data = tmp_path_factory.mktemp("clean")
    with open_corpus(
        biomcp_data_dir=data,
        biomcp_embeddings="deterministic",
        ncbi_eutils_base_url=fake.base_url,
        ncbi_max_retries=0,
        biomcp_sync_initial_days=0,
    ) as corpus:
        assert corpus.sync("htn", TERM).inserted > 0
    assert not (data / f"{DATABASE}-wal").exists()
    return data


@pytest.fixture(scope="module")
def crashed(clean: Path, fake: FakeEutilsServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The clean folder after a second sync whose process died: its commits are in the -wal."""
    data = tmp_path_factory.mktemp("crashed") / "data"
    shutil.copytree(clean, data)
    done = subprocess.run(  # noqa: S603 - our own interpreter and snippet
        [sys.executable, "-c", _CRASHING_SYNC, str(data), fake.base_url, SECOND_TERM],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) > 0
    assert (data / f"{DATABASE}-wal").stat().st_size > 0
    return data


@pytest.fixture(scope="module")
def older_analyzer(clean: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The clean folder as an earlier bio-mcp left it: its lexical index names an older
    analyzer, so a writer would rebuild it at the first open."""
    data = tmp_path_factory.mktemp("older") / "data"
    shutil.copytree(clean, data)
    (marker,) = data.rglob("lexical.json")
    recorded = json.loads(marker.read_text())
    marker.write_text(json.dumps({**recorded, "analyzer": "word+en_stem.v1"}))
    return data


@pytest.fixture(scope="module")
def without_snapshot(clean: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The clean folder without its vector snapshot (a writer killed before its first one):
    a writer would rebuild the vector index from the rows and save it at the first open."""
    data = tmp_path_factory.mktemp("without_snapshot") / "data"
    shutil.copytree(clean, data)
    snapshot = list(data.rglob("vectors-*.faiss")) + list(data.rglob("vectors-*.npy"))
    assert snapshot
    for path in snapshot:
        path.unlink()
    return data


def _mount(*args: str) -> subprocess.CompletedProcess[str]:
    """`mount` (or `umount` when the first argument is "-u") with `args`."""
    program = "umount" if args[0] == "-u" else "mount"
    path = shutil.which(program) or f"/bin/{program}"
    arguments = ["-l", *args[1:]] if program == "umount" else list(args)
    return subprocess.run(  # noqa: S603 - a fixed program, our own paths
        [path, *arguments], capture_output=True, text=True, check=False
    )


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


@contextmanager
def small_disk(mountpoint: Path, size_bytes: int) -> Iterator[Path]:
    """A tmpfs of `size_bytes` at `mountpoint` (root only: skips elsewhere)."""
    if os.geteuid() != 0:
        pytest.skip("a full disk is a small tmpfs here, and mounting one needs root")
    mountpoint.mkdir()
    mounted = _mount("-t", "tmpfs", "-o", f"size={size_bytes}", "tmpfs", str(mountpoint))
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mountpoint
    finally:
        _mount("-u", str(mountpoint))


def _wrote(out: Any, size: int) -> bool:
    """Whether `size` more bytes fit on the disk (False once it is full)."""
    try:
        out.write(b"\0" * size)
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
        return False
    return True


def fill(folder: Path) -> Path:
    """Fill the disk holding `folder` to its last byte; the filler file."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as out:
        for block in (1 << 20, 1 << 12, 1):
            while _wrote(out, block):
                pass
    assert os.statvfs(folder).f_bavail == 0
    return filler


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` read-only for this process: a read-only bind mount as root (permissions do
    not stop root), `chmod -R a-w` otherwise."""
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")]}
        for path in modes:
            path.chmod(modes[path] & ~0o222)
        try:
            yield
        finally:
            for path, mode in modes.items():
                path.chmod(mode)
        return
    mounted = _mount("--bind", "-o", "ro", str(folder), str(folder))
    if mounted.returncode != 0:
        pytest.skip(f"cannot bind-mount a folder read-only here: {mounted.stderr.strip()}")
    try:
        with pytest.raises(OSError, match="Read-only file system") as refused:
            (folder / "probe").touch()
        assert refused.value.errno == errno.EROFS
        yield
    finally:
        _mount("-u", str(folder))


def _serve(data: Path, fake: FakeEutilsServer, body: Any) -> None:
    serve(test_settings(data, fake.base_url, biomcp_ncbi_cache_ttl_s=3600), body)


async def _read(client: Client, pmids: list[str]) -> dict[str, Any]:
    """The search hits, and the title of each of `pmids`."""
    error, found = await call_json(client, "rag_search", {"query": "hypertension", "top_k": 10})
    assert not error, found
    seen: dict[str, Any] = {"hits": [r["doc_id"] for r in found["results"]]}
    for pmid in pmids:
        error, document = await call_json(client, "rag_get", {"doc_id": f"pmid:{pmid}"})
        assert not error, document
        seen[pmid] = document["title"]
    return seen


def _answers(source: Path, fake: FakeEutilsServer, pmids: list[str], scratch: Path) -> Any:
    """What a server answers on a writable copy of `source` (made in `scratch`)."""
    shutil.copytree(source, scratch)
    seen: dict[str, Any] = {}

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        seen.update(await _read(client, pmids))

    _serve(scratch, fake, body)
    assert seen["hits"]
    return seen


async def _refused_sync(client: Client) -> str:
    """The message of a sync that must fail with STORE."""
    error, answer = await call_json(
        client, "pubmed_sync_delta", {"query_key": "refused", "term": TERM}
    )
    assert error, answer
    assert answer["error"]["code"] == "STORE", answer
    message: str = answer["error"]["message"]
    assert "read-only" in message
    return message


def test_search_answers_when_the_shm_index_is_three_bytes(
    crashed: Path, fake: FakeEutilsServer, only_second: list[str], tmp_path: Path
) -> None:
    expected = _answers(crashed, fake, only_second[:3], tmp_path / "reference")
    data = tmp_path / "data"
    shutil.copytree(crashed, data)
    os.truncate(data / f"{DATABASE}-shm", 3)
    seen: dict[str, Any] = {}

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        seen.update(await _read(client, only_second[:3]))

    _serve(data, fake, body)
    assert seen == expected


def test_a_full_disk_serves_searches_and_refuses_syncs_losing_nothing(
    crashed: Path, fake: FakeEutilsServer, only_second: list[str], tmp_path: Path
) -> None:
    expected = _answers(crashed, fake, only_second[:3], tmp_path / "reference")
    with small_disk(tmp_path / "disk", _size(crashed) + 8 * (1 << 20)) as disk:
        data = disk / "data"
        shutil.copytree(crashed, data)
        os.truncate(data / f"{DATABASE}-shm", 3)  # as a failed sync on the full disk left it
        filler = fill(disk)
        seen: dict[str, Any] = {}

        async def on_full_disk(client: Client, server: BioMcpServer, services: Services) -> None:
            seen.update(await _read(client, only_second[:3]))  # some only in the -wal
            seen["message"] = await _refused_sync(client)

        _serve(data, fake, on_full_disk)
        message = seen.pop("message")
        assert seen == expected
        assert "the disk holding <path> is full" in message  # the envelope hides paths
        assert "free some space" in message
        filler.unlink()
        after: dict[str, Any] = {}

        async def with_space(client: Client, server: BioMcpServer, services: Services) -> None:
            after.update(await _read(client, only_second[:3]))
            error, answer = await call_json(
                client, "pubmed_sync_delta", {"query_key": "later", "term": TERM}
            )
            assert not error, answer
            after["inserted"] = answer["inserted"]

        _serve(data, fake, with_space)
        assert after.pop("inserted") == 0  # every record of TERM was still there
        assert after == expected


@pytest.mark.parametrize("state", ["clean", "crashed", "older_analyzer", "without_snapshot"])
def test_a_read_only_data_folder_serves_searches_and_refuses_syncs(
    state: str,
    request: pytest.FixtureRequest,
    fake: FakeEutilsServer,
    only_second: list[str],
    tmp_path: Path,
) -> None:
    source: Path = request.getfixturevalue(state)
    pmids = only_second[:2] if state == "crashed" else []
    expected = _answers(source, fake, pmids, tmp_path / "reference")
    data = tmp_path / "data"
    shutil.copytree(source, data)
    seen: dict[str, Any] = {}

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        seen.update(await _read(client, pmids))
        seen["message"] = await _refused_sync(client)

    with read_only(data):
        _serve(data, fake, body)
    message = seen.pop("message")
    assert seen == expected
    assert "writable" in message or "mounted read-only" in message

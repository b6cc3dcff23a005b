"""`biomcp index verify` and `biomcp doctor` on damaged files: the console script, real files
damaged on disk. Commands are forked from a process that imported bio-mcp already
(`tests/support/forked`).

Damage that `verify` repairs still fails it once (exit 1, `repaired` naming the collection and
the file); the next `verify` passes. A damaged metadata database fails both commands.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from biomcp.testing.eutils import FakeEutilsServer
from tests.support.index_cli import KEY, TERM, JsonCli
from tests.support.servers import recent_fake, server_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

#: Enough records for the documents table to span many pages of the SQLite file.
RECORDS = 300


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    with recent_fake(RECORDS, seed=31, warm=True) as server:
        yield server


@pytest.fixture(scope="module")
def synced(fake: FakeEutilsServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder holding a synced corpus (no process has it open)."""
    root = tmp_path_factory.mktemp("synced")
    cli = JsonCli(server_env(root / "data", fake.base_url), root)
    code, report, err = cli("sync", "--query-key", KEY, "--term", TERM)
    assert code == 0, err
    assert report["inserted"] > 200  # those that match the term
    return root / "data"


@pytest.fixture
def cli(fake: FakeEutilsServer, synced: Path, tmp_path: Path) -> JsonCli:
    """The CLI on a copy of the synced data folder, for this test to damage."""
    shutil.copytree(synced, tmp_path / "data")
    return JsonCli(server_env(tmp_path / "data", fake.base_url), tmp_path)


def _flip(path: Path, at: int, size: int = 64) -> None:
    data = bytearray(path.read_bytes())
    data[at : at + size] = bytes(b ^ 0x5A for b in data[at : at + size])
    path.write_bytes(bytes(data))


def _collection(tmp_path: Path) -> Path:
    return tmp_path / "data" / "vectors" / "PubMedChunk"


def test_a_snapshot_failing_its_checksum_is_rebuilt_and_verify_says_so_once(
    cli: JsonCli, tmp_path: Path
) -> None:
    before = cli.searches()
    collection = _collection(tmp_path)
    manifest = json.loads((collection / "vectors.json").read_text())
    snapshot = collection / manifest["index"]
    _flip(snapshot, snapshot.stat().st_size - 4096)

    code, check, err = cli("index", "verify")
    assert code == 1
    assert check["ok"] is False
    assert (check["store_problems"], check["chunks_missing"]) == ([], 0)
    [repair] = check["repaired"]
    assert "'PubMedChunk'" in repair
    assert f"generation {manifest['generation']}" in repair
    assert "rebuilt the vector index from the rows" in repair
    assert repair in err  # logged as a warning too

    code, check, _ = cli("index", "verify")
    assert (code, check["ok"], check["repaired"]) == (0, True, [])
    assert cli.searches() == before


def test_a_search_that_rebuilds_a_damaged_snapshot_warns_on_stderr(
    cli: JsonCli, tmp_path: Path
) -> None:
    collection = _collection(tmp_path)
    snapshot = collection / json.loads((collection / "vectors.json").read_text())["index"]
    _flip(snapshot, snapshot.stat().st_size - 4096)
    code, _, err = cli("search", "insulin glucose")
    assert code == 0, err
    assert "collection 'PubMedChunk': the vector snapshot of generation" in err
    assert "rebuilt the vector index from the rows" in err


def test_a_lexical_segment_failing_its_checksum_is_rebuilt_and_verify_says_so_once(
    cli: JsonCli, tmp_path: Path
) -> None:
    before = cli.searches()
    lexical = _collection(tmp_path) / "lexical"
    segment = max(lexical.glob("*.idx"), key=lambda p: p.stat().st_size)
    _flip(segment, segment.stat().st_size // 2, size=16)

    code, check, err = cli("index", "verify")
    assert code == 1
    assert check["ok"] is False
    [repair] = check["repaired"]
    assert "'PubMedChunk'" in repair
    assert f"{segment.name}: does not match its checksum" in repair
    assert "rebuilt the lexical index from the rows" in repair
    assert repair in err

    code, check, _ = cli("index", "verify")
    assert (code, check["ok"], check["repaired"]) == (0, True, [])
    assert cli.searches() == before


def _zero_a_leaf_page(database: Path, table: str) -> int:
    """Zero one leaf page of `table`'s b-tree in `database` (no process has it open); its
    page number."""
    with sqlite3.connect(database) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = int(connection.execute("PRAGMA page_size").fetchone()[0])
        leaves = [
            row[0]
            for row in connection.execute(
                "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno",
                (table,),
            )
        ]
    connection.close()
    assert len(leaves) > 2, leaves  # the corpus spans pages
    page = int(leaves[len(leaves) // 2])
    with database.open("r+b") as handle:
        handle.seek((page - 1) * page_size)
        handle.write(bytes(page_size))
    return page


def test_a_zeroed_page_of_the_metadata_database_fails_verify_and_doctor(
    cli: JsonCli, tmp_path: Path
) -> None:
    code, check, _ = cli("index", "verify")
    assert (code, check["ok"], check["metadata_problems"]) == (0, True, [])
    database = tmp_path / "data" / "biomcp.sqlite3"
    _zero_a_leaf_page(database, "pubmed_docs")

    code, check, err = cli("index", "verify")
    assert code == 1, err
    assert check["ok"] is False
    first = check["metadata_problems"][0]  # "Tree 4 page 9 ..." or "... malformed"
    assert first

    code, report, _ = cli("index", "verify")  # damage that stays fails every time
    assert (code, report["metadata_problems"][0]) == (1, first)

    code, report, _ = cli("doctor", "--offline")
    assert code == 1
    assert report["ok"] is False
    [metadata] = [c for c in report["checks"] if c["name"] == "metadata"]
    assert metadata["status"] == "fail"
    assert f"its integrity check failed: {first}" in metadata["detail"]
    assert "backup" in metadata["hint"]

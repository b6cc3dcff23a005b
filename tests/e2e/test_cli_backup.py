"""`biomcp backup` / `restore` on the embedded pair: the console script, real files, the
fake E-utilities over HTTP and the model-free embedder.

Commands are forked from a process that imported bio-mcp already (`tests/support/forked`);
`cli.real` starts the installed console script instead.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from biomcp.testing.eutils import FakeEutilsServer
from tests.support.index_cli import KEY, TERM, JsonCli
from tests.support.servers import biomcp_command, recent_fake, server_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ITEMS = [
    {"id": "a", "text": "Aspirin lowers the risk of stroke.", "metadata": {"tags": ["x"]}},
    {"id": "b", "text": "Insulin pumps in type 1 diabetes.", "metadata": {"tags": ["y"]}},
]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    with recent_fake(150, seed=29, warm=True) as server:
        yield server


@pytest.fixture(scope="module")
def seeded(fake: FakeEutilsServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder with a synced saved query and a project of two items, made once."""
    work = tmp_path_factory.mktemp("seeded")
    cli = JsonCli(server_env(work / "data", fake.base_url), work)
    code, report, err = cli("sync", "--query-key", KEY, "--term", TERM)
    assert code == 0, err
    assert report["inserted"] > 0
    items = work / "items.jsonl"
    items.write_text("\n".join(json.dumps(item) for item in ITEMS))
    assert cli("project", "create", "lab/notes")[0] == 0
    assert cli("project", "store", "lab/notes", str(items))[1]["chunks_written"] == 2
    return work / "data"


@pytest.fixture
def cli(fake: FakeEutilsServer, seeded: Path, tmp_path: Path) -> JsonCli:
    """A copy of the seeded data folder (no process uses it) for one test to change."""
    shutil.copytree(seeded, tmp_path / "data")
    return JsonCli(server_env(tmp_path / "data", fake.base_url), tmp_path)


def _state(cli: JsonCli) -> dict[str, object]:
    """What a user sees of the corpus: searches, saved queries, a project's hits."""
    code, checkpoints, err = cli("checkpoint", "list")
    assert code == 0, err
    code, found, err = cli("project", "find", "lab/notes", "stroke aspirin")
    assert code == 0, err
    return {
        "searches": cli.searches(),
        "checkpoints": checkpoints,
        "project": [item["id"] for item in found["items"]],
    }


def test_a_backup_restored_into_a_wiped_data_folder_gives_the_same_corpus(
    cli: JsonCli, tmp_path: Path
) -> None:
    before = _state(cli)
    code, manifest, err = cli.real("backup", str(tmp_path / "backup"))
    assert code == 0, err
    assert manifest["counts"]["documents"] > 0
    assert manifest["counts"]["saved_queries"] == 1
    assert manifest["counts"]["projects"] == 1
    assert manifest["collections"]["PubMedChunk"] > 0
    assert sum(manifest["collections"].values()) == manifest["collections"]["PubMedChunk"] + 2

    shutil.rmtree(tmp_path / "data")
    code, report, err = cli.real("restore", str(tmp_path / "backup"))
    assert code == 0, err
    assert report["ok"] is True
    assert report["collections"] == manifest["collections"]
    assert _state(cli) == before
    code, check, _ = cli("index", "verify")
    assert (code, check["ok"], check["chunks_missing"]) == (0, True, 0)


def test_restore_refuses_a_target_that_holds_data_unless_forced(
    cli: JsonCli, tmp_path: Path
) -> None:
    assert cli("backup", str(tmp_path / "backup"))[0] == 0
    code, envelope, err = cli("restore", str(tmp_path / "backup"))
    assert code == 2
    assert envelope["error"]["code"] == "VALIDATION"
    assert "--force" in err
    assert "not empty" in envelope["error"]["message"]

    before = _state(cli)
    code, report, err = cli("restore", str(tmp_path / "backup"), "--force")
    assert (code, report["ok"]) == (0, True), err
    assert _state(cli) == before


def test_backup_refuses_a_folder_that_is_not_empty(cli: JsonCli, tmp_path: Path) -> None:
    dest = tmp_path / "backup"
    dest.mkdir()
    (dest / "keep.txt").write_text("mine")
    code, envelope, _ = cli("backup", str(dest))
    assert code == 2
    assert "not empty" in envelope["error"]["message"]
    assert [p.name for p in dest.iterdir()] == ["keep.txt"]
    assert not [p for p in tmp_path.iterdir() if ".partial" in p.name]


def _edit_manifest(folder: Path, **changes: object) -> None:
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest.update(changes)
    path.write_text(json.dumps(manifest))


def test_restore_refuses_a_newer_schema_or_format_and_a_damaged_copy(
    cli: JsonCli, tmp_path: Path
) -> None:
    assert cli("backup", str(tmp_path / "good"))[0] == 0
    cases: dict[str, tuple[dict[str, object], str]] = {
        "newer schema": ({"schema_revision": "9999_from_the_future"}, "newer than this"),
        "newer format": ({"format": 99}, "upgrade bio-mcp"),
    }
    for name, (changes, said) in cases.items():
        folder = tmp_path / name.replace(" ", "_")
        shutil.copytree(tmp_path / "good", folder)
        _edit_manifest(folder, **changes)
        code, envelope, _ = cli("restore", str(folder), "--force")
        assert code == 2, name
        assert said in envelope["error"]["message"], name

    damaged = tmp_path / "damaged"
    shutil.copytree(tmp_path / "good", damaged)
    rows = damaged / "vectors" / "PubMedChunk" / "rows.sqlite"
    data = bytearray(rows.read_bytes())
    data[-100] ^= 0xFF
    rows.write_bytes(bytes(data))
    code, envelope, _ = cli("restore", str(damaged), "--force")
    assert code == 2
    assert "damaged" in envelope["error"]["message"]
    assert cli.searches()  # the refused restores left the corpus alone


# --- a backup taken while another process writes ---------------------------------------------


def _consistent(folder: Path) -> tuple[int, int]:
    """Check that the backup's metadata and rows are one point in time: every chunk belongs
    to a stored document, and every document recorded as indexed has its chunks. Returns
    (documents, documents indexed)."""
    meta = sqlite3.connect(folder / "metadata.sqlite3")
    rows = sqlite3.connect(folder / "vectors" / "PubMedChunk" / "rows.sqlite")
    try:
        docs = dict(meta.execute("SELECT pmid, indexed_version FROM pubmed_docs").fetchall())
        chunked = {row[0] for row in rows.execute("SELECT DISTINCT doc_id FROM chunks")}
    finally:
        meta.close()
        rows.close()
    chunked_pmids = {doc_id.removeprefix("pmid:") for doc_id in chunked}
    indexed = {pmid for pmid, version in docs.items() if version}
    assert chunked_pmids <= set(docs), "chunks of documents the metadata does not hold"
    assert indexed <= chunked_pmids, "documents recorded as indexed without their chunks"
    return len(docs), len(indexed)


def _chunks(data: Path) -> int:
    path = data / "vectors" / "PubMedChunk" / "rows.sqlite"
    if not path.exists():
        return 0
    db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        return int(db.execute("SELECT count(*) FROM chunks").fetchone()[0])
    except sqlite3.OperationalError:  # the writer has not created the table yet
        return 0
    finally:
        db.close()


def test_a_backup_taken_while_a_sync_writes_is_one_point_in_time(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    env = server_env(tmp_path / "data", fake.base_url, BIOMCP_SYNC_BATCH_SIZE="10")
    cli = JsonCli(env, tmp_path)
    # Each EFetch answers late, so the sync writes batch after batch for a while.
    fake.faults.sequence([{"kind": "slow", "delay": 0.4}] * 40, endpoint="efetch")
    writer = subprocess.Popen(  # noqa: S603 - our own entry point
        [*biomcp_command(), "sync", "--query-key", KEY, "--term", TERM, "--json"],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while _chunks(tmp_path / "data") == 0 and writer.poll() is None:
            assert time.monotonic() < deadline, "the sync wrote no chunk in 120 s"
            time.sleep(0.05)
        code, manifest, err = cli("backup", str(tmp_path / "backup"))
        assert code == 0, err
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
        fake.faults.sequence([])
    final = json.loads(out)
    documents, _ = _consistent(tmp_path / "backup")
    assert documents == manifest["counts"]["documents"]

    # The copy restores like a crash at that instant: the next sync completes it.
    shutil.rmtree(tmp_path / "data")
    code, report, err = cli("restore", str(tmp_path / "backup"))
    assert (code, report["ok"]) == (0, True), err
    code, _, err = cli("sync", "--query-key", KEY, "--term", TERM)
    assert code == 0, err
    code, check, _ = cli("index", "verify")
    assert (code, check["ok"]) == (0, True)
    assert check["documents"] == final["pmids_found"]

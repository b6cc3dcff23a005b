"""`biomcp index verify|rebuild` on a damaged corpus: the console script, real files.

Commands are forked from a process that imported bio-mcp already (`tests/support/forked`);
`cli.real` starts the installed console script instead.

Each damage is done to the files of a synced corpus; afterwards `verify` says what it finds,
`rebuild` (or the next open) repairs it, and the same searches give the same results as
before the damage.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from biomcp.testing.eutils import FakeEutilsServer
from tests.support.index_cli import KEY, TERM, JsonCli
from tests.support.servers import recent_fake, run_biomcp, server_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    with recent_fake(150, seed=29, warm=True) as server:
        yield server


@pytest.fixture
def cli(fake: FakeEutilsServer, tmp_path: Path) -> JsonCli:
    cli = JsonCli(server_env(tmp_path / "data", fake.base_url), tmp_path)
    code, report, err = cli("sync", "--query-key", KEY, "--term", TERM)
    assert code == 0, err
    assert report["inserted"] > 0
    return cli


@pytest.mark.parametrize("lost", ["the vectors folder", "the row file"])
def test_lost_vector_files_are_reported_and_rebuilt_from_sql(
    cli: JsonCli, tmp_path: Path, lost: str
) -> None:
    before = cli.searches()
    code, check, _ = cli("index", "verify")
    assert code == 0
    assert check["ok"] is True
    assert check["chunks_missing"] == 0
    documents = check["documents"]

    if lost == "the vectors folder":
        shutil.rmtree(tmp_path / "data" / "vectors")
    else:
        for path in (tmp_path / "data" / "vectors" / "PubMedChunk").glob("rows.sqlite*"):
            path.unlink()
    code, check, _ = cli("index", "verify")
    assert code == 1
    assert check["ok"] is False
    assert check["collection_exists"] is False
    assert check["documents_incomplete"] == documents

    code, rebuilt, err = cli.real("index", "rebuild")
    assert code == 0, err
    assert rebuilt["documents"] == documents
    code, check, _ = cli.real("index", "verify")
    assert (code, check["ok"]) == (0, True)
    assert cli.searches() == before


def test_a_corrupted_vector_snapshot_is_never_used(cli: JsonCli, tmp_path: Path) -> None:
    before = cli.searches()
    collection = tmp_path / "data" / "vectors" / "PubMedChunk"
    snapshot = collection / json.loads((collection / "vectors.json").read_text())["index"]
    data = bytearray(snapshot.read_bytes())
    at = len(data) - 4096  # in the stored vectors; the header stays intact
    data[at : at + 256] = bytes(b ^ 0x5A for b in data[at : at + 256])
    snapshot.write_bytes(bytes(data))

    assert cli.searches() == before  # the next open rebuilt the vectors from the rows
    code, check, _ = cli("index", "verify")
    assert (code, check["ok"], check["store_problems"]) == (0, True, [])


def test_missing_lexical_files_are_repaired_at_the_next_open(cli: JsonCli, tmp_path: Path) -> None:
    before = cli.searches()
    shutil.rmtree(tmp_path / "data" / "vectors" / "PubMedChunk" / "lexical")
    assert cli.searches() == before
    code, check, _ = cli("index", "verify")
    assert (code, check["ok"]) == (0, True)


def test_a_truncated_row_file_is_reported_and_the_rebuild_starts_over_from_sql(
    cli: JsonCli, tmp_path: Path
) -> None:
    before = cli.searches()
    rows = tmp_path / "data" / "vectors" / "PubMedChunk" / "rows.sqlite"
    rows.write_bytes(rows.read_bytes()[:1000])  # the file cut short: not a database any more
    code, check, _ = cli("index", "verify")
    assert code == 1
    assert check["store_problems"]
    code, rebuilt, err = cli("index", "rebuild")
    assert code == 0, err
    assert rebuilt["reset"] is True
    assert rebuilt["documents"] == check["documents"]
    code, check, _ = cli("index", "verify")
    assert (code, check["ok"]) == (0, True)
    assert cli.searches() == before


def test_sync_status_lists_the_jobs_and_shows_one(cli: JsonCli) -> None:
    code, jobs, err = cli.real("sync", "status")
    assert code == 0, err
    assert [job["status"] for job in jobs] == ["succeeded"]
    assert jobs[0]["query_key"] == KEY
    code, job, err = cli("sync", "status", jobs[0]["job_id"])
    assert code == 0, err
    assert job == jobs[0]
    assert job["report"]["inserted"] > 0
    code, missing, _ = cli("sync", "status", "sync_nope")
    assert code == 1
    assert missing["error"]["code"] == "NOT_FOUND"
    done = run_biomcp(["sync"], env=cli.env, cwd=cli.cwd)
    assert done.returncode == 2
    assert "--query-key" in done.stderr


def test_a_corpus_synced_without_sentence_vectors_is_told_to_rebuild(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    env = server_env(tmp_path / "data", fake.base_url)
    old = JsonCli({**env, "BIOMCP_SENTENCE_VECTORS": "false"}, tmp_path)
    code, report, err = old("sync", "--query-key", KEY, "--term", TERM)
    assert code == 0, err
    assert report["inserted"] > 0
    cli = JsonCli(env, tmp_path)
    code, check, _ = cli("index", "verify")
    assert (code, check["ok"]) == (0, True)  # not damage: search still finds every chunk
    lacking = check["chunks_without_sentences"]
    assert lacking > 0
    assert 0 < check["documents_without_sentences"] <= check["documents"]
    done = run_biomcp(["index", "verify", "--quiet"], env=env, cwd=tmp_path)
    assert done.returncode == 0
    assert f"{lacking} chunks have no sentence vectors" in done.stderr
    assert "biomcp index rebuild" in done.stderr

    code, rebuilt, err = cli("index", "rebuild")
    assert code == 0, err
    assert rebuilt["documents"] == check["documents"]
    code, check, _ = cli("index", "verify")
    assert (code, check["chunks_without_sentences"]) == (0, 0)
    done = run_biomcp(["index", "verify", "--quiet"], env=env, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")

"""`biomcp doctor`: the console script in child processes, against the fake E-utilities over
real HTTP (which, like NCBI, refuses an API key it does not know) and the embedded stores in a
temporary folder. The first test starts the installed script; the others fork their commands
from a process that imported bio-mcp already (`tests/support/forked`)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from biomcp.adapters.sql import SqlMetadataStore
from biomcp.ports.jobs import SyncJob
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from tests.support.cli import DEAD, Cli, make_cli

pytestmark = pytest.mark.e2e

KNOWN_KEY = "known-key-0123"
SECRET = "s3cr3t-wrong-key-98765"  # noqa: S105 - a test value
RECORDS = 40


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(RECORDS, start=date(2021, 1, 1), end=date(2021, 6, 30), seed=5)
    )
    with FakeEutilsServer(corpus, api_keys={KNOWN_KEY}) as server:
        yield server


def doctor(cli: Cli, *args: str, **env: str) -> tuple[int, dict[str, Any]]:
    """Exit status and the JSON report, by check name."""
    done = cli("doctor", "--json", *args, **env)
    report = json.loads(done.stdout)
    assert report["ok"] is (done.returncode == 0), done.stdout
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, {check["name"]: check for check in report["checks"]}


def test_a_fresh_install_passes_and_nothing_is_stored(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    cli = make_cli(fake, tmp_path, forked=False)  # the installed console script, from nothing
    status, checks = doctor(cli)
    assert status == 0
    assert checks["platform"]["status"] == "ok"
    assert "does not exist yet" in checks["data folder"]["detail"]
    for name in ("metadata", "vector store", "corpus"):
        assert checks[name]["status"] == "skip", checks[name]
    # the hashing embedder runs, but is no semantic search: a warning that says so
    assert checks["embedder"]["status"] == "warn"
    assert "deterministic-v1 (384-d)" in checks["embedder"]["detail"]
    assert "BIOMCP_EMBEDDINGS" in checks["embedder"]["hint"]
    assert checks["ncbi settings"]["status"] == "warn"
    assert "NCBI_API_KEY and NCBI_ADMIN_EMAIL" in checks["ncbi settings"]["hint"]
    assert checks["ncbi"]["status"] == "ok"
    data = tmp_path / "data"
    assert not (data / "biomcp.sqlite3").exists()
    assert not (data / "vectors").exists()


def test_after_a_sync_it_reports_the_corpus_and_a_model_change_fails(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    cli = make_cli(fake, tmp_path)
    synced = cli.json("sync", "-k", "all_v1", "-t", "Journal Article[pt]")
    assert synced["inserted"] == RECORDS
    status, checks = doctor(cli, NCBI_API_KEY=KNOWN_KEY)
    assert status == 0
    assert checks["metadata"]["status"] == "ok"
    assert f"{RECORDS} records" in checks["metadata"]["detail"]
    assert "(head)" in checks["metadata"]["detail"]
    chunks = synced["chunks_written"]
    assert checks["vector store"]["detail"].endswith(f"{chunks:,} chunks")
    assert checks["corpus"]["detail"].startswith(f"{RECORDS} records, {chunks:,} chunks, 1 saved")
    assert checks["corpus model"] == {
        "name": "corpus model",
        "status": "ok",
        "detail": "the corpus was embedded by deterministic-v1",
        "hint": None,
    }
    assert "score recency" not in checks  # scored this year
    assert checks["derived data"]["status"] == "ok"
    assert checks["derived data"]["detail"] == (
        f"tiers, designs and scores of the {RECORDS} records follow this version's rules"
    )
    assert "API key set" in checks["ncbi settings"]["detail"]
    assert checks["ncbi"]["status"] == "ok"

    # The same corpus under the default model: the check says how to re-embed it.
    status, checks = doctor(cli, "--offline", BIOMCP_EMBEDDINGS="onnx")
    assert status == 1
    assert checks["embedder"]["status"] == "ok"
    assert (
        "sentence-transformers/all-MiniLM-L6-v2 (384-d), ONNX Runtime"
        in (checks["embedder"]["detail"])
    )
    assert checks["corpus model"]["status"] == "fail"
    assert "deterministic-v1" in checks["corpus model"]["detail"]
    assert "biomcp index rebuild --reset" in checks["corpus model"]["detail"]
    assert checks["ncbi"]["status"] == "skip"


def test_scores_stored_before_their_year_was_kept_are_reported_until_the_next_sync(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    cli = make_cli(fake, tmp_path)
    cli.json("sync", "-k", "old_v1", "-t", "Journal Article[pt]")
    # A corpus stored by the version before: its scores do not say which year they count from.
    with sqlite3.connect(tmp_path / "data" / "biomcp.sqlite3") as connection:
        connection.execute(
            "UPDATE pubmed_docs SET quality_json = json_remove(quality_json, '$.scored_in')"
        )
    connection.close()

    status, checks = doctor(cli, "--offline")
    assert status == 0  # a warning, not a failure
    recency = checks["score recency"]
    assert recency["status"] == "warn"
    assert recency["detail"].startswith(f"{RECORDS} stored quality scores were counted")
    assert "biomcp sync --all" in recency["hint"]
    assert checks["derived data"]["status"] == "ok"  # the rules did not change

    again = cli.json("sync", "-k", "old_v1")
    assert again["rescored"] == 0  # the same year: no total moved, every year recorded
    _, checks = doctor(cli, "--offline")
    assert "score recency" not in checks


def test_a_saved_query_whose_latest_sync_failed_is_reported_until_it_syncs(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    cli = make_cli(fake, tmp_path)
    cli.json("sync", "-k", "fine_v1", "-t", "Journal Article[pt]")
    failed = cli("sync", "-k", "cron_v1", "-t", "Journal Article[pt]", NCBI_EUTILS_BASE_URL=DEAD)
    assert failed.returncode == 1

    status, checks = doctor(cli, "--offline")
    assert status == 0  # a warning, not a failure
    saved = checks["saved queries"]
    assert saved["status"] == "warn"
    assert saved["detail"].startswith(
        "the latest sync of 1 saved query did not complete: cron_v1 (failed "
    )
    assert "NCBI esearch unreachable" in saved["detail"]  # why
    assert "fine_v1" not in saved["detail"]
    assert "biomcp sync --all" in saved["hint"]

    assert cli.json("sync", "-k", "cron_v1")["inserted"] == 0  # fine_v1 stored them
    _, checks = doctor(cli, "--offline")
    assert "saved queries" not in checks

    # A sync whose process was killed: its job still reads "running", and no process holds
    # the key's lock. While one does (a sync running now), it is not reported.
    started = datetime.now(UTC).replace(microsecond=0)  # after fine_v1's own syncs
    killed = SyncJob("sync_killed", "fine_v1", "Journal Article[pt]", started, None, "running")

    async def record_then_doctor_while_locked() -> dict[str, Any]:
        store = SqlMetadataStore(data_dir=Path(cli.env["BIOMCP_DATA_DIR"]))
        try:
            await store.record_job(killed)
            async with store.query_lock("fine_v1"):
                return (await asyncio.to_thread(doctor, cli, "--offline"))[1]
        finally:
            await store.aclose()

    assert "saved queries" not in asyncio.run(record_then_doctor_while_locked())
    _, checks = doctor(cli, "--offline")
    assert checks["saved queries"]["detail"] == (
        "the latest sync of 1 saved query did not complete: fine_v1 (stopped "
        f"{started.isoformat().replace('+00:00', 'Z')})"
    )


def test_a_query_synced_before_its_records_were_recorded_is_reported_until_a_rescan(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    cli = make_cli(fake, tmp_path)
    synced = cli.json("sync", "-k", "old_v1", "-t", "Journal Article[pt]")
    cli.json("sync", "-k", "new_v1", "-t", "Journal Article[pt]")
    # What migration 0005 makes of a key synced by an earlier version.
    database = Path(cli.env["BIOMCP_DATA_DIR"]) / "biomcp.sqlite3"
    with sqlite3.connect(database) as connection:
        connection.execute("UPDATE checkpoints SET records_tracked = 0 WHERE query_key = 'old_v1'")
        connection.execute("DELETE FROM query_records WHERE query_key = 'old_v1'")

    status, checks = doctor(cli, "--offline")
    assert status == 0  # a warning, not a failure
    found = checks["query records"]
    assert found["status"] == "warn"
    assert found["detail"].startswith("1 saved query was synced before bio-mcp recorded")
    assert "old_v1" in found["detail"]
    assert "new_v1" not in found["detail"]
    assert "--rescan" in found["hint"]
    listed = cli("checkpoint", "list").stdout
    assert "0+" in listed

    rescan = cli.json("sync", "-k", "old_v1", "--rescan")
    assert (rescan["window_basis"], rescan["pmids_found"]) == ("rescan", synced["pmids_found"])
    _, checks = doctor(cli, "--offline")
    assert "query records" not in checks
    got = cli.json("checkpoint", "get", "old_v1")
    assert (got["records"], got["records_tracked"]) == (synced["pmids_found"], True)


def test_a_refused_key_and_an_unreachable_ncbi_fail_with_what_to_do(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    cli = make_cli(fake, tmp_path)
    done = cli("doctor", NCBI_API_KEY=SECRET, NCBI_ADMIN_EMAIL="ops@example.org")
    assert done.returncode == 1
    assert SECRET not in done.stdout + done.stderr
    lines = done.stdout.splitlines()
    failed = [line for line in lines if line.lstrip().startswith("fail")]
    assert len(failed) == 1, done.stdout
    assert " ncbi " in failed[0]
    assert "NCBI_API_KEY" in failed[0]
    hint = lines[lines.index(failed[0]) + 1]
    assert hint.strip().startswith("-> copy the key again")
    assert lines[-1] == "1 check failed (1 warning)"  # the hashing embedder
    assert [e["status"] for e in fake.log[-1:]] == [400]

    status, checks = doctor(cli, NCBI_EUTILS_BASE_URL=DEAD)
    assert status == 1
    assert checks["ncbi"]["status"] == "fail"
    assert "[UPSTREAM]" in checks["ncbi"]["detail"]
    assert "--offline" in checks["ncbi"]["hint"]
    assert "127.0.0.1:9 (NCBI_EUTILS_BASE_URL)" in checks["ncbi settings"]["detail"]

    status, checks = doctor(cli, "--offline", NCBI_EUTILS_BASE_URL=DEAD)
    assert status == 0
    assert checks["ncbi"]["status"] == "skip"


def test_a_database_that_does_not_answer_fails_once_and_keeps_its_password(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    cli = make_cli(fake, tmp_path)
    synced = cli.json("sync", "-k", "db_v1", "-t", "Journal Article[pt]")
    url = "postgresql+psycopg://bio:pa55word-xyz@127.0.0.1:9/biomcp"
    done = cli("doctor", "--offline", "--json", BIOMCP_DATABASE_URL=url)
    assert done.returncode == 1
    assert "pa55word-xyz" not in done.stdout + done.stderr
    checks = {check["name"]: check for check in json.loads(done.stdout)["checks"]}
    assert checks["metadata"]["status"] == "fail"
    assert "BIOMCP_DATABASE_URL" in checks["metadata"]["hint"]
    # the embedded index still answers; what compares it with SQL is not run
    assert checks["vector store"] == {
        "name": "vector store",
        "status": "ok",
        "detail": f"embedded index: {synced['chunks_written']:,} chunks",
        "hint": None,
    }
    assert "derived data" not in checks
    assert "corpus" not in checks
    assert [name for name, check in checks.items() if check["status"] == "fail"] == ["metadata"]

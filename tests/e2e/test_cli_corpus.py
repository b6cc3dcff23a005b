"""`biomcp sync|search|get|checkpoint`: the console script's commands in child processes.

Most commands are forked from a process that imported bio-mcp already (`tests/support/forked`);
`cli.real` runs the installed console script from nothing, once or more for each command.

Each command runs against the fake E-utilities server started here (real HTTP on 127.0.0.1),
the embedded stores in a temporary folder and the deterministic embedder. The expected numbers
come from the fake's corpus itself, parsed by the production parser, not from the CLI.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from biomcp.adapters.sql import SqlMetadataStore
from biomcp.domain.design import StudyDesign
from biomcp.testing.eutils import FakeEutilsServer
from tests.support.cli import DEAD, KEY, TERM, Cli, Expected, make_cli
from tests.support.cli import expected as expected
from tests.support.cli import fake as fake

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def cli(fake: FakeEutilsServer, tmp_path_factory: pytest.TempPathFactory) -> Cli:
    return make_cli(fake, tmp_path_factory.mktemp("cli"))


@pytest.fixture(scope="module")
def first_sync(cli: Cli) -> subprocess.CompletedProcess[str]:
    """The first sync of KEY (readable output); the other tests read the corpus it built."""
    return cli.real("sync", "--query-key", KEY, "--term", TERM)


def field(output: str, name: str) -> str:
    match = re.search(rf"^\s+{re.escape(name)}\s+(.+)$", output, re.MULTILINE)
    assert match is not None, f"no {name!r} line in:\n{output}"
    return match.group(1).strip()


# --- sync ------------------------------------------------------------------------------------


def test_first_sync_inserts_every_matching_record(
    first_sync: subprocess.CompletedProcess[str], expected: Expected
) -> None:
    assert first_sync.returncode == 0, first_sync.stderr
    out = first_sync.stdout
    n = len(expected.pmids)
    assert field(out, "inserted") == str(n)
    assert field(out, "updated") == "0"
    assert field(out, "skipped") == "0"
    assert field(out, "processed") == str(n)
    assert field(out, "new here") == f"{n} records this query did not hold before"
    assert field(out, "found") == f"{n} PMIDs"
    assert field(out, "max EDAT") == expected.max_edat
    assert field(out, "checkpoint") == f"{expected.max_edat} (advanced)"
    assert field(out, "window") == "whole history (no checkpoint yet)"
    chunks = field(out, "chunks")
    written = int(chunks.split()[0])
    assert written >= n, chunks  # every record has a title and an abstract
    assert chunks.endswith(f"{written} texts embedded")
    for stage in ("search", "fetch", "store", "embed"):
        assert f"{stage} " in field(out, "timings")
    assert "warnings: none" in out
    # Progress went to stderr (plain lines: stderr is not a terminal here), ending complete.
    assert f"{n}/{n} records fetched" in first_sync.stderr
    assert "chunks embedded" in first_sync.stderr
    assert "records/s" in first_sync.stderr
    assert "Traceback" not in first_sync.stderr


def test_replay_inserts_and_embeds_nothing(
    cli: Cli, first_sync: subprocess.CompletedProcess[str], expected: Expected
) -> None:
    assert first_sync.returncode == 0
    report = cli.json("sync", "--query-key", KEY, "--term", TERM, "--quiet")
    assert report["inserted"] == 0
    assert report["updated"] == 0
    assert report["skipped"] == report["pmids_processed"] >= 1  # the overlap window
    assert report["texts_embedded"] == 0
    assert report["chunks_written"] == 0
    assert report["new_to_query"] == 0
    assert report["max_edat_seen"] == expected.max_edat
    assert report["checkpoint"] == expected.max_edat
    assert report["checkpoint_advanced"] is False
    assert report["warnings"] == []
    assert report["job_id"].startswith("sync_")


def test_backfill_after_moving_a_checkpoint_back(
    cli: Cli, first_sync: subprocess.CompletedProcess[str], expected: Expected
) -> None:
    assert first_sync.returncode == 0
    key = "asthma_backfill"
    n = len(expected.pmids)
    # A second key over the same records: they are all stored and indexed already.
    report = cli.json("sync", "-k", key, "-t", TERM, "-q")
    assert (report["inserted"], report["skipped"], report["texts_embedded"]) == (0, n, 0)
    assert report["checkpoint"] == expected.max_edat

    moved = cli("checkpoint", "set", key, "2020-01-01", "--reason", "re-read 2020")
    assert moved.returncode == 0, moved.stderr
    assert f"{key}: {expected.max_edat} -> 2020-01-01T00:00:00Z" in moved.stdout
    assert "moved backward" in moved.stderr
    moved_back = cli.json("checkpoint", "get", key)
    assert moved_back["last_edat"] == "2020-01-01T00:00:00Z"
    assert moved_back["covers_from"] is None  # first synced over the whole history

    again = cli.json("sync", "-k", key, "-t", TERM, "--overlap-days", "0", "-q")
    assert again["window_start"] == "2020-01-01T00:00:00Z"
    assert (again["pmids_processed"], again["skipped"], again["inserted"]) == (n, n, 0)
    assert again["texts_embedded"] == 0
    assert again["checkpoint"] == expected.max_edat
    assert again["checkpoint_advanced"] is True

    history = cli.json("checkpoint", "history", key)
    assert [(a["previous_edat"], a["last_edat"], a["reason"]) for a in history["audit"]] == [
        (expected.max_edat, "2020-01-01T00:00:00Z", "re-read 2020")
    ]
    assert history["audit"][0]["actor"].startswith("cli")


def test_later_syncs_reuse_the_term_and_all_syncs_every_saved_query(
    fake: FakeEutilsServer, expected: Expected, tmp_path: Path
) -> None:
    cli = make_cli(fake, tmp_path)
    every_term = "Journal Article[pt]"

    never = cli("sync", "--query-key", KEY, "--json", "-q")  # no term, never synced
    assert never.returncode == 2
    assert json.loads(never.stdout)["error"]["code"] == "VALIDATION"
    assert "give its PubMed term" in never.stderr
    assert cli.json("sync", "status") == []  # nothing was recorded

    assert cli.json("sync", "-k", KEY, "-t", TERM, "-q")["term"] == TERM
    assert cli.json("sync", "-k", "everything", "-t", every_term, "-q")["term"] == every_term
    for key in (KEY, "everything"):
        cli.json("checkpoint", "set", key, "2019-01-01T00:00:00Z", "--reason", "re-read")
    # the key's own term, not the last one synced
    again = cli.json("sync", "-k", KEY, "-q")
    assert again["term"] == TERM
    assert (again["pmids_found"], again["skipped"]) == (len(expected.pmids), len(expected.pmids))
    shown = cli("sync", "-k", KEY, "-q")
    assert shown.returncode == 0, shown.stderr
    assert field(shown.stdout, "term") == TERM

    # --all: every saved query, with its own term; one that cannot sync (a checkpoint set by
    # hand, never synced) is reported and the others still sync; one whose first sync failed
    # (NCBI unreachable: a job, no checkpoint) is synced again
    cli.json("checkpoint", "set", "by_hand", "2019-01-01T00:00:00Z", "--reason", "planned")
    offline = cli("sync", "-k", "was_offline", "-t", TERM, "-q", NCBI_EUTILS_BASE_URL=DEAD)
    assert offline.returncode == 1, offline.stderr
    cli.json("checkpoint", "set", "everything", "2019-01-01T00:00:00Z", "--reason", "again")
    listed = cli.json("checkpoint", "list")["checkpoints"]
    assert [
        (c["query_key"], c["term"], c["last_edat"] is None, c["last_sync"], c["records"])
        for c in listed
    ] == [
        (KEY, TERM, False, "succeeded", len(expected.pmids)),
        ("by_hand", None, False, None, 0),
        ("everything", every_term, False, "succeeded", len(fake.corpus)),
        ("was_offline", TERM, True, "failed", 0),
    ]
    assert all(c["records_tracked"] for c in listed)
    table = cli.real("checkpoint", "list").stdout.splitlines()
    assert table[0].split() == [
        "query_key", "last_edat", "last_scan_at", "last_sync", "records", "term",
    ]  # fmt: skip
    assert table[4].split()[:5] == ["was_offline", "-", "-", "failed", "0"]
    assert table[1].split()[4] == str(len(expected.pmids))
    assert table[2].split()[0] == "by_hand"
    assert table[2].endswith("- (never synced)")
    done = cli("sync", "--all", "--json", "-q")
    assert done.returncode == 1, done.stderr
    syncs = json.loads(done.stdout)["syncs"]
    assert [s["query_key"] for s in syncs] == [KEY, "by_hand", "everything", "was_offline"]
    assert syncs[0]["term"] == TERM
    assert syncs[1]["error"]["code"] == "VALIDATION"
    assert syncs[2]["term"] == every_term
    assert syncs[2]["pmids_found"] == len(fake.corpus)
    assert (syncs[3]["term"], syncs[3]["inserted"]) == (TERM, 0)  # KEY stored them already
    assert syncs[3]["new_to_query"] == len(expected.pmids)  # and still new to this query
    assert syncs[3]["pmids_found"] == len(expected.pmids)
    assert "sync by_hand: error [VALIDATION]" in done.stderr

    mixed = cli("sync", "--all", "-k", KEY)
    assert mixed.returncode == 2
    assert "give no --query-key" in mixed.stderr


# --- search ----------------------------------------------------------------------------------


def test_search_prints_a_ranked_table(
    cli: Cli, first_sync: subprocess.CompletedProcess[str], expected: Expected
) -> None:
    assert first_sync.returncode == 0
    done = cli.real("search", "inhaled corticosteroids in asthma", "--top-k", "5")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "5 results for 'inhaled corticosteroids in asthma' (quality-biased)"
    headers = ["#", "score", "doc_id", "evidence", "quality", "year", "section", "text"]
    assert lines[1].split() == headers
    rows: list[list[str]] = []
    for line in lines[2:]:
        if line.startswith(" "):  # the text column goes on, wrapped under its header
            rows[-1][7] += " " + line.strip()
        else:
            rows.append(line.split(None, 7))
    assert [row[0] for row in rows] == ["1", "2", "3", "4", "5"]
    scores = [float(row[1]) for row in rows]
    assert scores == sorted(scores, reverse=True)
    assert all(row[2].removeprefix("pmid:") in expected.pmids for row in rows)
    tiers = [row[3].split("/") for row in rows]  # evidence type / study design
    assert all(tier in {"clinical", "preclinical", "basic", "other"} for tier, _ in tiers)
    assert all(design in {d.value for d in StudyDesign} for _, design in tiers)
    assert all(0 <= float(row[4]) <= 10 for row in rows)
    assert all(len(row) == 8 and row[7].strip() for row in rows)  # a snippet of every chunk
    assert "inhaled corticosteroids" in rows[0][7].lower()
    # the text column shows what the chunk says: not the title line every chunk starts with,
    # nor the section label the section column shows
    found = cli.json("search", "inhaled corticosteroids in asthma", "--top-k", "5")["results"]
    for row, hit in zip(rows, found, strict=True):
        assert row[5] == str(hit["year"])  # the paper's publication year
        title, _, body = hit["text"].partition("\n")
        assert title, hit
        assert body, hit
        shown = row[7]  # whole: wrapped, never cut
        assert " ".join(body.removeprefix(f"{hit['section']}: ").split()) == shown
        assert not " ".join(title.split()).startswith(shown[:20])


def test_search_json_with_filters(
    cli: Cli, first_sync: subprocess.CompletedProcess[str], expected: Expected
) -> None:
    assert first_sync.returncode == 0
    plain = cli.json("search", "asthma", "--top-k", "50")["results"]
    assert plain, "the corpus holds asthma records"
    assert {r["doc_id"].removeprefix("pmid:") for r in plain} <= expected.pmids
    assert [r["score"] for r in plain] == sorted((r["score"] for r in plain), reverse=True)
    assert set(plain[0]) >= {"doc_id", "uuid", "sim", "bm25", "quality", "score", "text"}

    clinical = cli.json("search", "asthma", "-n", "50", "--evidence-type", "clinical")["results"]
    assert clinical
    assert {r["evidence_type"] for r in clinical} == {"clinical"}
    assert len(clinical) < len(plain)

    designs = {r["study_design"] for r in plain}
    assert len(designs) > 1, designs
    wanted = sorted(designs)[0]
    narrowed = cli.json("search", "asthma", "-n", "50", "--design", wanted)["results"]
    assert narrowed
    assert {r["study_design"] for r in narrowed} == {wanted}
    assert len(narrowed) < len(plain)

    good = cli.json("search", "asthma", "-n", "50", "--min-quality", "8")["results"]
    assert good
    assert all(r["quality"] >= 8 for r in good)
    assert len(good) < len(plain)

    unbiased = cli.json("search", "asthma", "-n", "50", "--no-quality-bias")["results"]
    # Without the rerank the score is the fused score, at most 1.
    assert unbiased
    assert all(r["score"] <= 1.0 + 1e-9 for r in unbiased)
    assert any(r["score"] > 1.0 for r in plain)

    done = cli("search", "asthma", "--year-min", "2030")
    assert done.returncode == 0
    assert done.stdout.startswith("no results for 'asthma'")


def test_search_rejects_an_unknown_evidence_type(cli: Cli) -> None:
    done = cli("search", "asthma", "--evidence-type", "anecdotal")
    assert done.returncode == 2
    assert done.stderr.startswith("error [VALIDATION]: unknown evidence type anecdotal")
    assert "Traceback" not in done.stderr


def test_search_of_an_empty_corpus_is_not_found(fake: FakeEutilsServer, tmp_path: Path) -> None:
    empty = make_cli(fake, tmp_path)
    done = empty("search", "asthma")
    assert done.returncode == 1
    assert done.stderr.startswith("error [NOT_FOUND]: the corpus is empty")
    assert done.stdout == ""


# --- get -------------------------------------------------------------------------------------


def test_get_shows_a_readable_document(
    cli: Cli, first_sync: subprocess.CompletedProcess[str], expected: Expected
) -> None:
    assert first_sync.returncode == 0
    pmid = min(expected.pmids)
    done = cli.real("get", pmid)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith(f"pmid:{pmid}  (version 1)\n")
    assert " ".join(expected.titles[pmid].split()) in " ".join(out.split())
    assert re.search(rf"^Journal:\s+{re.escape(expected.journals[pmid])}$", out, re.MULTILINE)
    assert re.search(r"^Quality:\s+\d+/10  \(design \d", out, re.MULTILINE)
    assert re.search(r"^Evidence:\s+(clinical|preclinical|basic|other)", out, re.MULTILINE)
    assert re.search(r"^Entrez date:\s+20(20|21)-\d\d-\d\dT", out, re.MULTILINE)
    queries = re.search(r"^Queries:\s+(.+)$", out, re.MULTILINE)
    assert queries is not None
    assert KEY in queries.group(1).split(", ")  # the saved queries that brought it
    assert "\nAbstract\n  " in out
    assert "asthma" in out.split("\nAbstract\n", 1)[1].lower()


def test_get_json_is_the_rag_get_payload(
    cli: Cli, first_sync: subprocess.CompletedProcess[str], expected: Expected
) -> None:
    assert first_sync.returncode == 0
    pmid = max(expected.pmids)
    doc = cli.json("get", f"pmid:{pmid}")
    assert doc["doc_id"] == f"pmid:{pmid}"
    assert doc["title"] == expected.titles[pmid]
    assert doc["version"] == 1
    assert set(doc["quality"]) == {"design", "recency", "journal", "human", "total"}
    assert 0 <= doc["quality"]["total"] <= 10


def test_get_of_an_unknown_pmid_is_not_found(
    cli: Cli, first_sync: subprocess.CompletedProcess[str]
) -> None:
    assert first_sync.returncode == 0
    done = cli("get", "99999999")
    assert done.returncode == 1
    assert done.stderr.startswith("error [NOT_FOUND]: pmid:99999999 is not in the corpus")
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stdout == ""

    as_json = cli("get", "pmid:99999999", "--json")
    assert as_json.returncode == 1
    body = json.loads(as_json.stdout)
    assert body["error"]["code"] == "NOT_FOUND"
    assert body["error"]["details"] == {"doc_id": "pmid:99999999"}


def test_get_of_a_malformed_id_is_a_validation_error(cli: Cli) -> None:
    done = cli("get", "PMC123")
    assert done.returncode == 2
    assert done.stderr.startswith("error [VALIDATION]: 'PMC123' is not a document id")


# --- checkpoints -----------------------------------------------------------------------------


def test_checkpoint_get_after_sync(
    cli: Cli, first_sync: subprocess.CompletedProcess[str], expected: Expected
) -> None:
    assert first_sync.returncode == 0
    got = cli.json("checkpoint", "get", KEY)
    assert got["last_scan_at"].endswith("Z")
    assert got == {
        "query_key": KEY,
        "last_edat": expected.max_edat,
        "last_scan_at": got["last_scan_at"],
        "covers_from": None,
        "records": len(expected.pmids),
        "records_tracked": True,
        "export_mark": None,
        "pending": [],
    }
    done = cli.real("checkpoint", "get", KEY)
    assert done.returncode == 0
    assert done.stdout.startswith(f"{KEY}: {expected.max_edat} (last scan {got['last_scan_at']})")
    assert "covers the whole history" in done.stdout
    listed = cli.json("checkpoint", "list")["checkpoints"]
    assert {"query_key": KEY, "last_edat": expected.max_edat}.items() <= next(
        c for c in listed if c["query_key"] == KEY
    ).items()


def test_a_key_first_synced_initial_days_back_shows_the_history_it_covers(cli: Cli) -> None:
    key = "asthma_recent"
    report = cli.json("sync", "-k", key, "-t", TERM, "-q", BIOMCP_SYNC_INITIAL_DAYS="36500")
    assert report["window_start"] is not None
    assert cli.json("checkpoint", "get", key)["covers_from"] == report["window_start"]
    shown = cli("checkpoint", "get", key)
    assert f"covers Entrez dates from {report['window_start']}" in shown.stdout
    [listed] = [c for c in cli.json("checkpoint", "list")["checkpoints"] if c["query_key"] == key]
    assert listed["covers_from"] == report["window_start"]
    assert report["window_basis"] == "initial_days"

    # Another term for the same key: its history is read again for the new term.
    changed = cli("sync", "-k", key, "-t", "humans[mh]")
    assert changed.returncode == 0, changed.stderr
    assert field(changed.stdout, "window") == (
        f"from {report['window_start']} (the term changed: the key's history again)"
    )
    assert f"last synced with another term ({TERM!r})" in changed.stdout
    again = cli.json("sync", "-k", key, "-t", "humans[mh]", "-q")
    assert (again["window_basis"], again["previous_term"]) == ("checkpoint", None)


def test_a_pmid_efetch_does_not_return_is_shown_pending_until_it_arrives(
    cli: Cli, fake: FakeEutilsServer, expected: Expected
) -> None:
    key = "asthma_pending"
    lost = sorted(expected.pmids)[len(expected.pmids) // 2]
    fake.withhold([lost])
    try:
        report = cli.json("sync", "-k", key, "-t", TERM, "-q")
        shown = cli("checkpoint", "get", key)
        listed = cli.json("checkpoint", "get", key)
    finally:
        fake.withhold([])
    assert (report["pending"], report["pending_arrived"]) == ([lost], [])
    assert any(lost in w and "kept pending" in w for w in report["warnings"])
    assert report["checkpoint"] == expected.max_edat  # the checkpoint moved on
    assert [(p["pmid"], p["misses"]) for p in listed["pending"]] == [(lost, 1)]
    assert listed["pending"][0]["first_missed_at"].endswith("Z")
    assert shown.returncode == 0
    assert "1 PMIDs pending" in shown.stdout
    assert f"  {lost}  since " in shown.stdout

    arrived = cli("sync", "-k", key, "-t", TERM)
    assert arrived.returncode == 0, arrived.stderr
    assert "pending    0 PMIDs not returned by EFetch yet; 1 arrived" in arrived.stdout
    assert cli.json("checkpoint", "get", key)["pending"] == []


def test_checkpoint_set_forward_then_backward(cli: Cli) -> None:
    key = "manual_moves"
    first = cli.real("checkpoint", "set", key, "2021-03-01T12:00:00Z")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith(f"{key}: none -> 2021-03-01T12:00:00Z (audited")
    assert first.stderr == ""

    forward = cli.json("checkpoint", "set", key, "2021-06-01T00:00:00+02:00")
    assert forward == {
        "ok": True,
        "query_key": key,
        "previous_edat": "2021-03-01T12:00:00Z",
        "last_edat": "2021-05-31T22:00:00Z",
        "moved_backward": False,
    }

    back = cli("checkpoint", "set", key, "2021-05-01", "--reason", "backfill May")
    assert back.returncode == 0
    assert "2021-05-31T22:00:00Z -> 2021-05-01T00:00:00Z" in back.stdout
    assert back.stderr.startswith(f"warning: the checkpoint of {key} moved backward by 30.9 days")
    assert cli.json("checkpoint", "get", key)["last_edat"] == "2021-05-01T00:00:00Z"


def test_checkpoint_delete_forgets_a_saved_query_and_keeps_its_records(
    cli: Cli, expected: Expected
) -> None:
    key = "asthma_typo"
    synced = cli.json("sync", "-k", key, "-t", TERM, "-q")
    assert synced["pmids_processed"] == len(expected.pmids)
    listed = [c["query_key"] for c in cli.json("checkpoint", "list")["checkpoints"]]
    assert key in listed

    # While a sync of the key runs (another process holds its lock), it is not forgotten.
    async def while_locked() -> subprocess.CompletedProcess[str]:
        store = SqlMetadataStore(data_dir=Path(cli.env["BIOMCP_DATA_DIR"]))
        try:
            async with store.query_lock(key):
                return await asyncio.to_thread(cli, "checkpoint", "delete", key, "--yes")
        finally:
            await store.aclose()

    busy = asyncio.run(while_locked())
    assert busy.returncode == 1
    assert "error [TIMEOUT]" in busy.stderr
    assert f"a sync of query key {key!r} is running (pid {os.getpid()}" in busy.stderr
    assert cli.json("checkpoint", "get", key)["last_edat"] == expected.max_edat

    refused = cli("checkpoint", "delete", key)  # asks for --yes
    assert refused.returncode == 2
    assert "--yes" in refused.stderr
    assert cli.json("checkpoint", "get", key)["last_edat"] == expected.max_edat

    done = cli.real("checkpoint", "delete", key, "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        f"{key}: forgotten (its checkpoint, 0 pending PMIDs, 1 sync jobs)"
    )
    assert f"its {len(expected.pmids)} records stay in the corpus" in done.stdout
    assert key not in [c["query_key"] for c in cli.json("checkpoint", "list")["checkpoints"]]
    assert cli.json("checkpoint", "get", key)["last_edat"] is None
    pmid = sorted(expected.pmids)[0]
    assert cli.json("get", f"pmid:{pmid}")["doc_id"] == f"pmid:{pmid}"

    unknown = cli.json("checkpoint", "delete", "never_synced", "--yes")
    assert unknown == {
        "ok": True, "query_key": "never_synced", "checkpoint": False, "pending": 0, "jobs": 0,
        "records": 0, "records_deleted": 0, "chunks_deleted": 0, "records_tracked": True,
    }  # fmt: skip


def test_checkpoint_delete_records_deletes_what_no_other_query_holds(
    fake: FakeEutilsServer, expected: Expected, tmp_path: Path
) -> None:
    """A saved query made by mistake: forgotten with `--records`, its records no other query
    holds leave the corpus (SQL and search), the others stay; a rescan reads a key's history
    again."""
    cli = make_cli(fake, tmp_path)
    first_two = sorted(expected.pmids)[:2]
    narrow = " OR ".join(f"{p}[uid]" for p in first_two)
    assert cli.json("sync", "-k", "narrow", "-t", f"({TERM}) AND ({narrow})", "-q")[
        "inserted"
    ] == len(first_two)
    assert cli.json("sync", "-k", "typo", "-t", TERM, "-q")["pmids_found"] == len(expected.pmids)
    got = cli.json("checkpoint", "get", "typo")
    assert (got["records"], got["records_tracked"]) == (len(expected.pmids), True)
    assert f"holds {len(expected.pmids)} records" in cli("checkpoint", "get", "typo").stdout

    # A search within one saved query: only its records.
    within = cli.json("search", "asthma", "--query-key", "narrow", "--top-k", "50")["results"]
    assert {h["doc_id"] for h in within} == {f"pmid:{p}" for p in first_two}
    unknown = cli("search", "asthma", "-k", "narow")
    assert unknown.returncode == 1
    assert unknown.stderr.startswith("error [NOT_FOUND]: no saved query 'narow' holds records")

    refused = cli("checkpoint", "delete", "typo", "--records")  # asks for --yes
    assert refused.returncode == 2
    assert "records no other saved query holds" in refused.stderr

    done = cli.json("checkpoint", "delete", "typo", "--records", "--yes")
    only_typo = sorted(expected.pmids - set(first_two))
    assert (done["records"], done["records_deleted"]) == (len(expected.pmids), len(only_typo))
    assert done["chunks_deleted"] >= len(only_typo)
    gone = cli("get", f"pmid:{only_typo[0]}", "--json")
    assert gone.returncode == 1
    assert json.loads(gone.stdout)["error"]["code"] == "NOT_FOUND"
    assert cli.json("get", f"pmid:{first_two[0]}")["doc_id"] == f"pmid:{first_two[0]}"
    hits = cli.json("search", expected.titles[first_two[0]], "--top-k", "50")["results"]
    assert {h["doc_id"] for h in hits} <= {f"pmid:{p}" for p in first_two}
    assert f"pmid:{first_two[0]}" in {h["doc_id"] for h in hits}

    rescan = cli("sync", "-k", "narrow", "--rescan", "-q")
    assert rescan.returncode == 0, rescan.stderr
    assert "a rescan: the key's history again" in rescan.stdout
    assert cli.json("sync", "-k", "narrow", "--rescan", "-q")["window_basis"] == "rescan"


def test_checkpoint_prune_deletes_the_records_of_queries_forgotten_without_them(
    fake: FakeEutilsServer, expected: Expected, tmp_path: Path
) -> None:
    """Forgotten without `--records`, a query's records stay held by none: `checkpoint list`
    says so, `checkpoint prune` counts them, and with --yes deletes them."""
    cli = make_cli(fake, tmp_path)
    first = min(expected.pmids)
    assert cli.json("sync", "-k", "one", "-t", f"({TERM}) AND {first}[uid]", "-q")["inserted"] == 1
    assert cli.json("sync", "-k", "scratch", "-t", TERM, "-q")["pmids_found"] == len(expected.pmids)
    assert cli("checkpoint", "delete", "scratch", "--yes").returncode == 0
    orphans = len(expected.pmids) - 1

    listed = cli("checkpoint", "list")
    assert listed.returncode == 0, listed.stderr
    assert f"{orphans} stored records are held by no saved query" in listed.stdout
    assert cli.json("checkpoint", "list")["records_held_by_none"] == orphans

    counted = cli.real("checkpoint", "prune")
    assert counted.returncode == 0, counted.stderr
    assert counted.stdout.strip() == (
        f"{orphans} stored records are held by no saved query: pass --yes to delete them"
    )
    assert cli.json("checkpoint", "list")["records_held_by_none"] == orphans  # untouched
    orphan = max(expected.pmids - {first})
    assert "Queries:     none recorded" in cli("get", orphan).stdout
    assert "Queries:     one" in cli("get", first).stdout

    pruned = cli.json("checkpoint", "prune", "--yes")
    assert (pruned["dry_run"], pruned["records"], pruned["deleted"]) == (False, orphans, orphans)
    assert pruned["chunks_deleted"] >= orphans
    assert cli.json("get", f"pmid:{first}")["doc_id"] == f"pmid:{first}"
    hits = cli.json("search", "asthma", "--top-k", "50")["results"]
    assert {h["doc_id"] for h in hits} == {f"pmid:{first}"}
    assert "nothing to prune" in cli("checkpoint", "prune", "--yes").stdout
    assert "held by no saved query" not in cli("checkpoint", "list").stdout


def test_checkpoint_set_rejects_a_future_timestamp(cli: Cli) -> None:
    done = cli("checkpoint", "set", "rejects", "2999-01-01")
    assert done.returncode == 2
    assert done.stderr.startswith(
        "error [VALIDATION]: last_edat 2999-01-01T00:00:00Z is in the future"
    )
    assert "Traceback" not in done.stderr
    unchanged = cli("checkpoint", "get", "rejects")
    assert unchanged.returncode == 0
    assert unchanged.stdout.startswith("rejects: no checkpoint yet")


# --- configuration ---------------------------------------------------------------------------


def test_a_bad_setting_exits_2_naming_the_variable(cli: Cli) -> None:
    done = cli("search", "asthma", BIOMCP_VECTOR_BACKEND="nope")
    assert done.returncode == 2
    assert "BIOMCP_VECTOR_BACKEND" in done.stderr
    assert "'embedded' or 'weaviate'" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""

    as_json = cli("sync", "-k", "x", "-t", "y", "--json", BIOMCP_SYNC_BATCH_SIZE="0")
    assert as_json.returncode == 2
    body = json.loads(as_json.stdout)
    assert body["error"]["code"] == "VALIDATION"
    assert [d["variable"] for d in body["error"]["details"]] == ["BIOMCP_SYNC_BATCH_SIZE"]


def test_a_misspelt_variable_is_named_on_stderr_and_the_command_still_runs(
    cli: Cli, tmp_path: Path
) -> None:
    done = cli("checkpoint", "get", KEY, BIOMCP_EMBEDDER="onnx")
    assert done.returncode == 0
    assert done.stdout.startswith(f"{KEY}: ")
    assert done.stderr == (
        "warning: BIOMCP_EMBEDDER is not a bio-mcp setting and is ignored; did you mean "
        "BIOMCP_EMBEDDINGS?\n"
    )

    # In a .env file too; with --json, stdout stays the JSON answer alone.
    folder = tmp_path / "with-dotenv"
    folder.mkdir()
    (folder / ".env").write_text("NCBI_APIKEY=abc\n", encoding="utf-8")
    in_folder = Cli(cli.env, folder)
    as_json = in_folder("checkpoint", "get", KEY, "--json")
    assert as_json.returncode == 0
    assert json.loads(as_json.stdout)["query_key"] == KEY
    assert "NCBI_APIKEY is not a bio-mcp setting" in as_json.stderr
    assert "did you mean NCBI_API_KEY?" in as_json.stderr


def test_an_unreachable_ncbi_fails_the_sync_with_a_code(cli: Cli, tmp_path: Path) -> None:
    done = cli(
        "sync",
        "-k",
        "offline",
        "-t",
        TERM,
        "-q",
        NCBI_EUTILS_BASE_URL="http://127.0.0.1:9",
        BIOMCP_DATA_DIR=str(tmp_path / "data"),
    )
    assert done.returncode == 1
    assert re.match(r"error \[(UPSTREAM|TIMEOUT|ENTREZ)\]: ", done.stderr), done.stderr
    assert "Traceback" not in done.stderr

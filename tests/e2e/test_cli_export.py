"""`biomcp export`: the console script in child processes, on a corpus synced from the fake
E-utilities server (real HTTP on 127.0.0.1). Most are forked from a process that imported
bio-mcp already (`tests/support/forked`); `cli.real` starts the installed script. What each
export should hold comes from the fake's corpus, parsed by the production parser; the RIS is
read back by rispy."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
import rispy

from biomcp.testing.eutils import FakeEutilsServer
from tests.support.cli import KEY, TERM, Cli, Expected, make_cli
from tests.support.cli import expected as expected
from tests.support.cli import fake as fake

pytestmark = pytest.mark.e2e

#: A second saved query holding KEY's records and more.
BROAD = "asthma_or_humans"


@pytest.fixture(scope="module")
def cli(fake: FakeEutilsServer, tmp_path_factory: pytest.TempPathFactory) -> Cli:
    cli = make_cli(fake, tmp_path_factory.mktemp("export"))
    for key, term in ((KEY, TERM), (BROAD, f"{TERM} OR humans[mh]")):
        done = cli("sync", "-k", key, "-t", term, "-q", "--json")
        assert done.returncode == 0, done.stderr
    return cli


def test_a_saved_querys_records_as_ris_in_a_file(
    cli: Cli,
    expected: Expected,
) -> None:
    done = cli.real("export", "-k", KEY, "-o", "asthma.ris")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    n = len(expected.pmids)
    summary, next_line = done.stderr.strip().splitlines()
    assert summary == f"exported {n} of the {n} records of saved query {KEY} (ris) to asthma.ris"
    assert next_line.startswith("next export of what is new: --added-since ")
    entries = rispy.loads((cli.cwd / "asthma.ris").read_text(encoding="utf-8"))
    assert [e["accession_number"] for e in entries] == sorted(expected.pmids, key=int)
    assert all("Asthma" in " ".join(e.get("keywords", [])) for e in entries)
    assert all(e["notes"][0].startswith("bio-mcp: evidence ") for e in entries)


def test_csv_on_stdout_with_a_filter(cli: Cli, expected: Expected) -> None:
    done = cli("export", "-k", KEY, "-f", "csv", "--year-min", "2021")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert rows, "the seed should give asthma records of 2021"
    assert {r["pmid"] for r in rows} < expected.pmids
    assert all(int(r["year"]) >= 2021 for r in rows)
    assert all(r["title"] == expected.titles[r["pmid"]] for r in rows)
    left = len(expected.pmids) - len(rows)
    assert f"; {left} left out by the filters" in done.stderr


def test_the_whole_corpus_holds_every_query(cli: Cli, expected: Expected) -> None:
    done = cli("export", "-f", "pmids")
    assert done.returncode == 0, done.stderr
    pmids = done.stdout.split()
    assert pmids == sorted(set(pmids), key=int)
    assert expected.pmids < set(pmids)  # the broad query's records too
    assert "records of the corpus (pmids)" in done.stderr


def test_a_failed_export_leaves_the_file_it_would_replace_whole(cli: Cli) -> None:
    target = cli.cwd / "kept.ris"
    target.write_text("an earlier export\n", encoding="utf-8")
    done = cli("export", "-k", "asthma_v2", "-o", str(target))
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"error [NOT_FOUND]: no saved query 'asthma_v2' holds records; "
        f"saved queries holding records: {BROAD}, {KEY}"
    )
    assert target.read_text(encoding="utf-8") == "an earlier export\n"
    assert sorted(p.name for p in cli.cwd.iterdir() if p.name.startswith(".kept")) == []

    nowhere = cli("export", "-o", "missing/folder/out.ris")
    assert nowhere.returncode == 2
    assert nowhere.stderr.strip() == (
        "error [VALIDATION]: cannot write missing/folder/out.ris: No such file or directory"
    )

    bad = cli("export", "-f", "endnote", "-o", str(target))
    assert bad.returncode == 2
    assert "use ris, bibtex, csv, jsonl, pmids" in bad.stderr
    assert target.read_text(encoding="utf-8") == "an earlier export\n"


def test_a_reader_that_stops_early_is_not_an_error(cli: Cli) -> None:
    """`biomcp export | head`: the reader is gone before the export writes (the read end of
    its pipe is closed), so the first write fails with EPIPE."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        done = subprocess.run(  # noqa: S603 - our own entry point, fixed arguments
            [str(Path(sys.executable).with_name("biomcp")), "export", "-f", "jsonl"],
            env=cli.env,
            cwd=cli.cwd,
            stdin=subprocess.DEVNULL,
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(writer)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_added_since_keeps_what_the_query_brought_since(cli: Cli, expected: Expected) -> None:
    done = cli("export", "-k", KEY, "-f", "pmids", "--added-since", "2000-01-01")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == sorted(expected.pmids, key=int)
    n = len(expected.pmids)
    assert done.stderr.strip().splitlines()[0] == (
        f"exported {n} of the {n} records of saved query {KEY} added since "
        "2000-01-01T00:00:00Z (pmids)"
    )
    later = cli("export", "-k", KEY, "--added-since", "2999-01-01T00:00:00Z")
    assert (later.returncode, later.stdout) == (0, "")
    assert "exported 0 of the 0 records" in later.stderr

    unkeyed = cli("export", "--added-since", "2000-01-01")
    assert unkeyed.returncode == 2
    assert "added_since needs a query_key" in unkeyed.stderr
    malformed = cli("export", "-k", KEY, "--added-since", "last week")
    assert malformed.returncode == 2
    assert "added_since 'last week' is not an ISO 8601 timestamp" in malformed.stderr


def test_each_export_of_a_query_says_where_the_next_one_starts(cli: Cli) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    done = cli("export", "-k", BROAD, "-f", "pmids")
    after = datetime.now(UTC)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()
    prefix = "next export of what is new: --added-since "
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith(prefix), done.stderr
    since = line.removeprefix(prefix)
    assert before <= datetime.fromisoformat(since) <= after  # when it read the query's records
    # Nothing was synced since: the next export has nothing new, and says where to go on.
    again = cli("export", "-k", BROAD, "-f", "pmids", "--added-since", since)
    assert (again.returncode, again.stdout) == (0, "")
    first, last = again.stderr.strip().splitlines()
    assert (
        first == f"exported 0 of the 0 records of saved query {BROAD} added since {since} (pmids)"
    )
    assert last.startswith(prefix)
    assert last.removeprefix(prefix) >= since
    corpus = cli("export", "-f", "pmids")  # the whole corpus: no query, no "what is new"
    assert "next export" not in corpus.stderr


def test_new_exports_what_came_since_the_last_complete_one(cli: Cli, expected: Expected) -> None:
    failed = cli("export", "-k", KEY, "--new", "-o", "missing/folder/new.ris")
    assert failed.returncode == 2, failed.stderr
    first = cli("export", "-k", KEY, "--new", "-f", "pmids")  # the failed one marked nothing
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == sorted(expected.pmids, key=int)
    n = len(expected.pmids)
    summary, marked = first.stderr.strip().splitlines()
    assert summary == (
        f"exported {n} of the {n} records of saved query {KEY} "
        "(its first --new export: every record) (pmids)"
    )
    prefix = "marked: the next --new export starts at "
    assert marked.startswith(prefix), first.stderr
    since = marked.removeprefix(prefix)
    assert cli.json("checkpoint", "get", KEY)["export_mark"] == since
    shown = cli("checkpoint", "get", KEY)
    assert f"the next `biomcp export --new` of it starts at {since}" in shown.stdout

    second = cli("export", "-k", KEY, "--new", "-f", "pmids")
    assert (second.returncode, second.stdout) == (0, "")
    assert second.stderr.startswith(
        f"exported 0 of the 0 records of saved query {KEY} new since its last --new export "
        f"({since}) (pmids)\n{prefix}"
    )
    both = cli("export", "-k", KEY, "--new", "--added-since", "2000-01-01")
    assert both.returncode == 2
    assert "new needs a query_key and no added_since" in both.stderr


def test_json_summary_for_a_script_and_dash_for_standard_output(
    cli: Cli, expected: Expected
) -> None:
    n = len(expected.pmids)
    done = cli("export", "-k", KEY, "-f", "csv", "-o", "scripted.csv", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert {k: summary[k] for k in ("format", "query_key", "considered", "exported", "new")} == {
        "format": "csv", "query_key": KEY, "considered": n, "exported": n, "new": False,
    }  # fmt: skip
    assert summary["next_added_since"].endswith("Z")
    rows = list(csv.DictReader(io.StringIO((cli.cwd / "scripted.csv").read_text("utf-8"))))
    assert len(rows) == n

    on_stdout = cli("export", "-k", KEY, "--json")  # the export itself would go to stdout
    assert on_stdout.returncode == 2
    envelope = json.loads(on_stdout.stdout)
    assert envelope["error"]["code"] == "VALIDATION"
    assert "--json needs -o FILE" in envelope["error"]["message"]

    dash = cli("export", "-k", KEY, "-f", "pmids", "-o", "-")
    assert dash.returncode == 0, dash.stderr
    assert dash.stdout.split() == sorted(expected.pmids, key=int)
    assert not (cli.cwd / "-").exists()

"""`biomcp pubmed search|fetch|related|cite`: the real console script in child processes.

Each command runs against the fake E-utilities started here (real HTTP on 127.0.0.1) serving
synthetic records; expected values come from the fake's corpus, parsed by the production
parser, not from the CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from biomcp.domain.records import PubMedRecord
from biomcp.entrypoints.mcp.live_schemas import LIVE_OUTPUTS
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles

pytestmark = pytest.mark.e2e

_ISOLATED = ("BIOMCP_", "NCBI_", "WEAVIATE_", "OPENAI_", "MCP_")


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(30, start=date(2022, 1, 1), end=date(2023, 12, 31), seed=5)
    )
    pmids = corpus.pmids()
    relations = {"pubmed_pubmed_citedin": {pmids[0]: pmids[1:4]}}
    with FakeEutilsServer(corpus, relations=relations) as server:
        yield server


@pytest.fixture(scope="module")
def env(fake: FakeEutilsServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("cli-pubmed")
    clean = {k: v for k, v in os.environ.items() if not k.upper().startswith(_ISOLATED)}
    clean.update(
        BIOMCP_DATA_DIR=str(root / "data"),
        BIOMCP_EMBEDDINGS="deterministic",
        NCBI_EUTILS_BASE_URL=fake.base_url,
        NCBI_MAX_RETRIES="0",
        COLUMNS="120",
        PYTHONUNBUFFERED="1",
    )
    return clean


def biomcp(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    executable = Path(sys.executable).with_name("biomcp")
    assert executable.exists(), f"the console script is not installed: {executable}"
    return subprocess.run(  # noqa: S603 - our own entry point, fixed arguments
        [str(executable), "pubmed", *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def record(fake: FakeEutilsServer, pmid: str) -> PubMedRecord:
    found = fake.corpus.record(pmid)
    assert found is not None
    return found


def test_search_then_fetch_read_like_the_tools(
    fake: FakeEutilsServer, env: dict[str, str], tmp_path: Path
) -> None:
    humans = [r for r in (e.record for e in fake.corpus) if r and r.mesh_descriptors & {"humans"}]
    assert humans, "the seed should give some human studies"
    done = biomcp(env, tmp_path, "search", "humans[mh]", "--max-results", "50", "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    Draft202012Validator(LIVE_OUTPUTS["searchPubMedArticles"]).validate(answer)
    assert set(answer["pmids"]) == {r.pmid for r in humans}
    assert len(answer["briefSummaries"]) == 10  # the command's default

    first = humans[0]
    shown = biomcp(env, tmp_path, "fetch", first.pmid, "1")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"PMID {first.pmid}\n")
    assert (first.title or "")[:40] in " ".join(shown.stdout.split())
    assert "Abstract" in shown.stdout
    assert "not in PubMed: 1" in shown.stderr


def test_related_and_cite_print_for_people_and_fail_with_codes(
    fake: FakeEutilsServer, env: dict[str, str], tmp_path: Path
) -> None:
    pmids = fake.corpus.pmids()
    related = biomcp(env, tmp_path, "related", pmids[0], "--type", "citedin")
    assert related.returncode == 0, related.stderr
    lines = related.stdout.splitlines()
    assert lines[0] == f"PMID {pmids[0]}: 3 of 3 (citedin)"
    assert [line.split(". ", 1)[1] for line in lines if line[:4].strip().endswith(".")] == (
        pmids[1:4]
    )

    bibtex = biomcp(env, tmp_path, "cite", pmids[1], "--style", "bibtex")
    assert bibtex.returncode == 0, bibtex.stderr
    assert bibtex.stdout.startswith("@article{")
    assert f"pmid = {{{pmids[1]}}}" in bibtex.stdout
    doi = record(fake, pmids[1]).doi
    assert doi is not None
    assert f"doi = {{{doi}}}" in bibtex.stdout

    bad = biomcp(env, tmp_path, "cite", "12x")
    assert bad.returncode == 2
    assert bad.stderr.startswith("error [VALIDATION]: ")
    unknown = biomcp(env, tmp_path, "related", "99999999", "--json")
    assert unknown.returncode == 1
    assert json.loads(unknown.stdout)["error"]["code"] == "NOT_FOUND"

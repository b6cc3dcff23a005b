"""`biomcp pubmed search|fetch|related|cite`: the console script's commands in child processes.

The first test starts the installed console script; the others fork their commands from a
process that imported bio-mcp already (`tests/support/forked`).

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
from biomcp.entrypoints.mcp.tools.fulltext import FULLTEXT_OUTPUT
from biomcp.entrypoints.mcp.tools.live.schemas import LIVE_OUTPUTS
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from biomcp.testing.eutils.pmc import pmc_store
from tests.support.forked import run_cli
from tests.support.servers import run_biomcp

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
        # SYNTHETIC PMC articles (testing/eutils/pmc.py) for two of the records
        pmc_store(server.state).add_synthetic(pmids[0], "PMC8200001", paragraph_chars=1_500)
        pmc_store(server.state).add_synthetic(pmids[1], "PMC8200002", kind="restricted")
        yield server


@pytest.fixture(scope="module")
def env(fake: FakeEutilsServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("cli-pubmed")
    clean = {k: v for k, v in os.environ.items() if not k.upper().startswith(_ISOLATED)}
    clean.update(
        BIOMCP_DATA_DIR=str(root / "data"),
        BIOMCP_EMBEDDINGS="deterministic",
        NCBI_EUTILS_BASE_URL=fake.base_url,
        NCBI_IDCONV_BASE_URL=f"{fake.base_url}/tools/idconv/api/v1/articles/",
        NCBI_MAX_RETRIES="0",
        COLUMNS="120",
        PYTHONUNBUFFERED="1",
    )
    return clean


def biomcp(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`biomcp pubmed ARGS`, forked from a process that imported bio-mcp already."""
    return run_cli(["pubmed", *args], env=env, cwd=cwd)


def real_biomcp(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`biomcp pubmed ARGS` in a new process of the installed console script."""
    executable = Path(sys.executable).with_name("biomcp")
    assert executable.exists(), f"the console script is not installed: {executable}"
    return run_biomcp(["pubmed", *args], env=env, cwd=cwd)


def record(fake: FakeEutilsServer, pmid: str) -> PubMedRecord:
    found = fake.corpus.record(pmid)
    assert found is not None
    return found


def test_search_then_fetch_read_like_the_tools(
    fake: FakeEutilsServer, env: dict[str, str], tmp_path: Path
) -> None:
    humans = [r for r in (e.record for e in fake.corpus) if r and r.mesh_descriptors & {"humans"}]
    assert humans, "the seed should give some human studies"
    done = real_biomcp(env, tmp_path, "search", "humans[mh]", "--max-results", "50", "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    Draft202012Validator(LIVE_OUTPUTS["searchPubMedArticles"]).validate(answer)
    assert set(answer["pmids"]) == {r.pmid for r in humans}
    assert len(answer["briefSummaries"]) == 10  # the command's default

    first = humans[0]
    shown = real_biomcp(env, tmp_path, "fetch", first.pmid, "1")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"PMID {first.pmid}\n")
    assert (first.title or "")[:40] in " ".join(shown.stdout.split())
    assert "Abstract" in shown.stdout
    assert "not in PubMed: 1" in shown.stderr


def test_related_and_cite_print_for_people_and_fail_with_codes(
    fake: FakeEutilsServer, env: dict[str, str], tmp_path: Path
) -> None:
    pmids = fake.corpus.pmids()
    related = real_biomcp(env, tmp_path, "related", pmids[0], "--type", "citedin")
    assert related.returncode == 0, related.stderr
    lines = related.stdout.splitlines()
    assert lines[0] == f"PMID {pmids[0]}: 3 of 3 (citedin)"
    assert [line.split(". ", 1)[1] for line in lines if line[:4].strip().endswith(".")] == (
        pmids[1:4]
    )

    bibtex = real_biomcp(env, tmp_path, "cite", pmids[1], "--style", "bibtex")
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


def test_fulltext_ids_mesh_and_match_read_like_the_tools(
    fake: FakeEutilsServer, env: dict[str, str], tmp_path: Path
) -> None:
    pmids = fake.corpus.pmids()
    opened = biomcp(env, tmp_path, "fulltext", pmids[0], "PMC8200002", "31999999", "--json")
    assert opened.returncode == 0, opened.stderr
    answer = json.loads(opened.stdout)
    Draft202012Validator(FULLTEXT_OUTPUT).validate(answer)
    assert [a["status"] for a in answer["articles"]] == [
        "available",
        "not_open_access",
        "not_in_pmc",
    ]
    outline = biomcp(env, tmp_path, "fulltext", "PMC8200001", "--outline")
    assert outline.returncode == 0, outline.stderr
    assert outline.stdout.startswith("PMC8200001: available (PMC8200001, open_access)\n")
    assert "outline (requested)" in outline.stdout
    assert "chars]" in outline.stdout

    # The generated records carry no PMCID: the converter (which knows PMC only) says so.
    converted = biomcp(env, tmp_path, "ids", pmids[0], "10.5555/nothing.here")
    assert converted.returncode == 0, converted.stderr
    assert converted.stdout.splitlines() == [
        f"{pmids[0]}: not_found: Identifier not found in PMC",
        "10.5555/nothing.here: not_found: Identifier not found in PMC",
    ]
    invalid = biomcp(env, tmp_path, "ids", "not-an-id")
    assert invalid.returncode != 0
    assert "not-an-id" in invalid.stderr

    described = biomcp(env, tmp_path, "mesh", "antiobesity agents", "-n", "1")
    assert described.returncode == 0, described.stderr
    assert described.stdout.startswith("Anti-Obesity Agents (D019440, descriptor)\n")
    assert "query: " in described.stdout
    assert "[mh]" in described.stdout

    target = record(fake, pmids[2])
    assert target.authors
    assert target.year
    author = f"{target.authors[0].last_name} {target.authors[0].initials or ''}".strip()
    matched = biomcp(
        env, tmp_path, "match", "--title", target.title or "", "--author", author, "--json"
    )
    assert matched.returncode == 0, matched.stderr
    [result] = json.loads(matched.stdout)["results"]
    assert (result["status"], result["pmid"]) == ("matched", target.pmid)
    refused = biomcp(env, tmp_path, "match", "--year", "2020")
    assert refused.returncode != 0
    assert "VALIDATION" in refused.stderr or "at least two" in refused.stderr

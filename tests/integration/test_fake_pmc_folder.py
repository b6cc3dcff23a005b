"""A folder of PMC JATS served by the fake E-utilities (`pmc.load_pmc_directory`), read back by
the production client over real HTTP: each article under its PMC id, each with a PubMed record
a saved-query sync finds. Folders written here hold SYNTHETIC JATS; one test reads the 8 real
articles of ../shared/data/ncbi_files/pmc (skipped when absent)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from biomcp import open_corpus
from biomcp.adapters.entrez.client import EntrezSettings, HttpEntrezClient
from biomcp.domain.fulltext import FullTextArticle
from biomcp.domain.records import PubMedRecord
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from biomcp.testing.eutils.pmc import PMC_DIR_ENV, TWIN_TERM, load_pmc_directory, pmc_store
from biomcp.testing.eutils.pmc_synthetic import synthetic_jats
from biomcp.testing.eutils.state import ServerState
from tests.conftest import shared_data_path

pytestmark = pytest.mark.integration

TWINS = {"39000011": "9100011", "39000012": "9100012", "39000013": "9100013"}


def _folder(tmp_path: Path) -> Path:
    """Three SYNTHETIC JATS files, one per PMID of `TWINS`, with a stray text file beside."""
    folder = tmp_path / "pmc"
    folder.mkdir()
    for pmid, pmc in TWINS.items():
        jats = synthetic_jats(
            pmid,
            pmc,
            kind="open_access",
            title=f"Synthetic folder article {pmid}",
            abstract=f"Synthetic abstract {pmid}.",
            chars=300,
        )
        (folder / f"a{pmid}.nxml").write_bytes(jats)
    (folder / "README.txt").write_text("not JATS, not read")
    return folder


async def _sync_like_read(
    server: FakeEutilsServer, term: str
) -> tuple[list[PubMedRecord], list[FullTextArticle]]:
    """ESearch over an EDAT window, EFetch the records, EFetch their PMC articles."""
    client = HttpEntrezClient(EntrezSettings(base_url=server.base_url, max_retries=0))
    try:
        window = await client.esearch_delta(term, date(1990, 1, 1), date(2030, 1, 1))
        fetched = await client.efetch(list(window.pmids))
        pmcids = [r.pmcid for r in fetched.records if r.pmcid]
        articles = await client.efetch_pmc(pmcids)
    finally:
        await client.aclose()
    return list(fetched.records), list(articles.articles)


def test_a_folder_is_served_by_pmc_id_and_its_articles_found_through_pubmed(
    tmp_path: Path,
) -> None:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(5, start=date(2024, 1, 1), end=date(2024, 2, 1))
    )
    with FakeEutilsServer(corpus, pmc_dir=_folder(tmp_path)) as server:
        records, articles = asyncio.run(_sync_like_read(server, TWIN_TERM))

    assert len(corpus) == 8
    assert sorted(r.pmid for r in records) == sorted(TWINS)
    assert {r.pmid: r.pmcid for r in records} == {p: f"PMC{c}" for p, c in TWINS.items()}
    assert {r.pmid: r.title for r in records} == {p: f"Synthetic folder article {p}" for p in TWINS}
    assert all(r.edat is not None and r.journal.title for r in records)
    assert sorted(a.pmid or "" for a in articles) == sorted(TWINS)
    assert all(a.has_body and a.tables for a in articles)


def test_a_record_the_corpus_already_has_is_kept_and_its_article_still_served(
    tmp_path: Path,
) -> None:
    folder = _folder(tmp_path)
    state = ServerState(FakeCorpus())
    load_pmc_directory(state, folder)
    before = state.corpus.raw("39000011")
    (folder / "a39000011.nxml").write_bytes(
        synthetic_jats(
            "39000011", "9100011", kind="open_access", title="Renamed", abstract=None, chars=50
        )
    )

    assert load_pmc_directory(state, folder) == [f"PMC{c}" for c in TWINS.values()]

    assert state.corpus.raw("39000011") == before
    assert len(state.corpus) == 3
    assert b"Renamed" in (pmc_store(state).get("PMC9100011").jats)  # type: ignore[union-attr]


def test_the_environment_variable_names_the_folder_for_an_in_process_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PMC_DIR_ENV, str(_folder(tmp_path)))
    server = FakeEutilsServer(FakeCorpus())

    assert sorted(server.corpus.pmids()) == sorted(TWINS)
    assert pmc_store(server.state).pmc_for("39000012") == "9100012"


def test_a_folder_that_cannot_be_served_is_refused_with_its_reason(tmp_path: Path) -> None:
    state = ServerState(FakeCorpus())
    empty = tmp_path / "empty"
    empty.mkdir()
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "cut.nxml").write_text("<article><front>")

    with pytest.raises(FileNotFoundError, match="no such folder"):
        load_pmc_directory(state, tmp_path / "missing")
    with pytest.raises(ValueError, match="no JATS file"):
        load_pmc_directory(state, empty)
    with pytest.raises(ValueError, match=r"cut\.nxml: not well-formed"):
        load_pmc_directory(state, broken)
    assert len(state.corpus) == 0


def test_the_command_serves_a_pmc_folder_and_refuses_a_missing_one(tmp_path: Path) -> None:
    base = [sys.executable, "-c", "from biomcp.entrypoints.cli.main import main; main()"]
    missing = subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [*base, "fake-eutils", "--pmc-dir", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert missing.returncode == 2
    assert "no such folder" in missing.stderr
    assert str(tmp_path) not in missing.stderr

    command = [*base, "fake-eutils", "--pmc-dir", str(_folder(tmp_path)), "--port", "0"]
    with subprocess.Popen(  # noqa: S603
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert "serving 3 records" in line, line
        finally:
            process.terminate()
            returncode = process.wait(timeout=30)
    assert returncode == 0


def test_the_real_pmc_articles_are_served_with_pubmed_records_pointing_at_them() -> None:
    folder = shared_data_path("ncbi_files", "pmc")
    with FakeEutilsServer(FakeCorpus(), pmc_dir=folder) as server:
        records, articles = asyncio.run(_sync_like_read(server, TWIN_TERM))

    assert len(records) == 8
    by_pmcid = {a.pmcid: a for a in articles}
    assert sorted(by_pmcid) == sorted(r.pmcid or "" for r in records)
    for record in records:
        article = by_pmcid[record.pmcid or ""]
        assert article.pmid == record.pmid
        assert " ".join((record.title or "").split()) == " ".join((article.title or "").split())
        assert record.abstract
        assert article.has_body
        assert article.access == "open_access"


def test_a_saved_query_synced_through_the_fake_keeps_the_real_articles_pmc_ids(
    tmp_path: Path,
) -> None:
    folder = shared_data_path("ncbi_files", "pmc")
    with (
        FakeEutilsServer(FakeCorpus(), pmc_dir=folder) as server,
        open_corpus(
            biomcp_data_dir=tmp_path / "data",
            biomcp_embeddings="deterministic",
            ncbi_eutils_base_url=server.base_url,
            ncbi_max_retries=0,
        ) as corpus,
    ):
        report = corpus.sync("real_pmc", TWIN_TERM)
        stored = {pmid: corpus.get(pmid)["pmcid"] for pmid in server.corpus.pmids()}
        store = pmc_store(server.state)
        served = {pmid: store.get(pmcid) for pmid, pmcid in stored.items()}

    assert (report.inserted, report.pmids_processed) == (8, 8)
    assert all(a is not None and a.origin == "file" and a.pmid == p for p, a in served.items())

"""The fake's PMC (testing/eutils/pmc.py): what it serves is what the production readers read.
Its articles are SYNTHETIC, except the real JATS file loaded through `BIOMCP_FAKE_PMC_JATS`."""

from __future__ import annotations

from pathlib import Path

import pytest

from biomcp.adapters.entrez.eutils_xml import parse_elink
from biomcp.adapters.entrez.jats import parse_pmc_articles
from biomcp.testing.eutils import FakeCorpus
from biomcp.testing.eutils.pmc import JATS_ENV, pmc_reply, pmc_store
from biomcp.testing.eutils.state import ServerState
from tests.conftest import shared_data_path

FIXTURE = Path(__file__).parents[2] / "fixtures" / "eutils" / "synthetic_mixed_set.xml"


def _state() -> ServerState:
    return ServerState(FakeCorpus.from_paths([FIXTURE]))


def test_a_corpus_record_naming_a_pmcid_gets_a_synthetic_article_on_demand() -> None:
    state = _state()
    links = parse_elink(pmc_reply(state, "elink", ["20000002", "20000001"]))
    assert [s.source_pmids for s in links] == [("20000002",), ("20000001",)]
    assert [link.pmid for link in links[0].links["pubmed_pmc"]] == ["123456"]
    assert links[1].links == {}  # no PMCID in its record: not in PMC
    answer = parse_pmc_articles(pmc_reply(state, "efetch", ["PMC123456,999"]))
    [article] = answer.articles
    assert (article.pmcid, article.pmid, article.access) == ("PMC123456", "20000002", "open_access")
    assert "synthetic" in article.sections[0].text


def test_synthetic_kinds_and_an_empty_id_list() -> None:
    state = _state()
    store = pmc_store(state)
    assert pmc_store(state) is store
    store.add_synthetic("1", "PMC11", kind="restricted")
    store.add_synthetic("2", "PMC12", kind="withdrawn")
    answer = parse_pmc_articles(pmc_reply(state, "efetch", ["11", "12"]))
    assert [(a.pmcid, a.has_body, a.withdrawn) for a in answer.articles] == [
        ("PMC11", False, False),
        ("PMC12", True, True),
    ]
    assert b"<ERROR>Empty id list" in pmc_reply(state, "efetch", [" , "])


def test_jats_files_named_in_the_environment_are_served_as_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = shared_data_path("eutils", "biopython", "efetch_pmc.xml")
    monkeypatch.setenv(JATS_ENV, str(real))
    state = _state()
    body = pmc_reply(state, "efetch", ["PMC8435807"])
    [article] = parse_pmc_articles(body).articles
    assert (article.pmcid, article.pmid) == ("PMC8435807", "34527728")
    assert b"<?properties open_access?>" in body
    [links] = parse_elink(pmc_reply(state, "elink", ["34527728"]))
    assert [link.pmid for link in links.links["pubmed_pmc"]] == ["8435807"]


def test_a_jats_article_without_a_pmc_id_is_refused() -> None:
    with pytest.raises(ValueError, match="PMC id"):
        pmc_store(_state()).add_jats(b"<article><front><article-meta/></front></article>")

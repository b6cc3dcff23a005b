"""The fake's SYNTHETIC PMC full text (testing/eutils/pmc.py, pmc_synthetic.py): which records
get which kind of article, a real table, and a revision that changes the chunkable text."""

from __future__ import annotations

import asyncio
from datetime import date

import httpx
import pytest
from lxml import etree

from biomcp.adapters.entrez.jats import parse_pmc_articles
from biomcp.domain.fulltext import FullTextArticle, article_status, flatten
from biomcp.testing.eutils import FakeCorpus, create_app, generate_articles
from biomcp.testing.eutils.pmc import pmc_reply, pmc_store
from biomcp.testing.eutils.state import ServerState

pytestmark = pytest.mark.unit

START, END = date(2024, 1, 1), date(2024, 3, 31)


def _state(n: int = 20, share: float = 1.0) -> ServerState:
    articles = generate_articles(n, start=START, end=END, pmc_share=share)
    return ServerState(FakeCorpus.from_xml_bytes(articles))


def _fetch(state: ServerState, *ids: str) -> list[FullTextArticle]:
    return list(parse_pmc_articles(pmc_reply(state, "efetch", [",".join(ids)])).articles)


def _text(article: FullTextArticle, title: str) -> str:
    return next(s.text for _, _, s in flatten(article.sections) if s.title == title)


def test_generated_records_name_a_pmc_id_only_when_asked_and_stay_otherwise_the_same() -> None:
    plain = FakeCorpus.from_xml_bytes(generate_articles(40, start=START, end=END))
    half = FakeCorpus.from_xml_bytes(generate_articles(40, start=START, end=END, pmc_share=0.5))

    with_pmc = {p for p in half.pmids() if (r := half.record(p)) is not None and r.pmcid}
    assert all(plain.record(p).pmcid is None for p in plain.pmids())  # type: ignore[union-attr]
    assert 8 <= len(with_pmc) <= 32
    for pmid in half.pmids():
        before, after = plain.record(pmid), half.record(pmid)
        assert before is not None
        assert after is not None
        assert (after.title, after.abstract, after.edat) == (
            before.title,
            before.abstract,
            before.edat,
        )
        if pmid in with_pmc:
            assert after.pmcid == f"PMC{int(pmid) + 100_000_000}"
    with pytest.raises(ValueError, match="pmc_share"):
        generate_articles(1, start=START, end=END, pmc_share=1.5)


def test_on_demand_articles_are_restricted_on_1_withdrawn_on_7_and_open_otherwise() -> None:
    state = _state()
    records = {p: r for p in state.corpus.pmids() if (r := state.corpus.record(p))}
    pmcids = [r.pmcid or "" for r in records.values()]

    statuses = {a.pmid or "": article_status(a) for a in _fetch(state, *pmcids)}

    assert len(statuses) == 20
    for pmid, status in statuses.items():
        expected = {"1": "not_open_access", "7": "withdrawn"}.get(pmid[-1], "available")
        assert status == expected, pmid
    assert sorted(statuses.values()).count("withdrawn") == 2


def test_the_synthetic_table_has_a_header_row_and_rows_of_numbers() -> None:
    state = _state(3)
    pmcid = state.corpus.record(state.corpus.pmids()[0]).pmcid  # type: ignore[union-attr]
    body = pmc_reply(state, "efetch", [pmcid or ""])
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    table = etree.fromstring(body, parser).find(".//table-wrap/table")
    assert table is not None

    header = [th.text for th in table.iterfind("thead/tr/th")]
    rows = [[td.text or "" for td in tr.iterfind("td")] for tr in table.iterfind("tbody/tr")]

    assert header == ["Group", "n", "Mean (SD)", "P value"]
    assert len(rows) == 3
    assert all(row[1].isdigit() and row[0].startswith("Synthetic") for row in rows)
    [article] = _fetch(state, pmcid or "")
    assert [t.caption for t in article.tables] == ["Synthetic baseline table."]


def test_a_revision_changes_the_results_and_a_table_value_and_nothing_else() -> None:
    state = _state(3)
    pmcid = state.corpus.record(state.corpus.pmids()[0]).pmcid or ""  # type: ignore[union-attr]
    store = pmc_store(state)
    first_xml = pmc_reply(state, "efetch", [pmcid])
    [first] = _fetch(state, pmcid)

    assert store.revise(pmcid) == 2
    second_xml = pmc_reply(state, "efetch", [pmcid])
    [second] = _fetch(state, pmcid)

    assert f'<article-id pub-id-type="pmcid-ver">{pmcid}.1<'.encode() in first_xml
    assert f'<article-id pub-id-type="pmcid-ver">{pmcid}.2<'.encode() in second_xml
    assert _text(first, "Results") != _text(second, "Results")
    assert "synthetic" in _text(second, "Results")
    for title in ("Introduction", "Methods", "Outcomes", "Discussion"):
        assert _text(first, title) == _text(second, title)
    assert b"<td>12.4 (2.3)</td>" in first_xml
    assert b"<td>12.9 (2.3)</td>" in second_xml
    assert (second.pmcid, second.pmid, second.title) == (first.pmcid, first.pmid, first.title)
    assert store.revise(pmcid) == 3


def test_only_a_known_synthetic_article_can_be_revised() -> None:
    state = _state(1)
    store = pmc_store(state)
    store.add_jats(
        b'<article><front><article-meta><article-id pub-id-type="pmc">42</article-id>'
        b"</article-meta></front></article>"
    )
    with pytest.raises(KeyError, match="PMC999"):
        store.revise("PMC999")
    with pytest.raises(ValueError, match="file"):
        store.revise("PMC42")


def test_the_revise_control_endpoint_serves_the_next_version() -> None:
    state = _state(2)
    pmcid = state.corpus.record(state.corpus.pmids()[0]).pmcid or ""  # type: ignore[union-attr]
    app = create_app(state.corpus, state=state)

    async def scenario() -> list[tuple[int, object]]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://fake") as client:
            answers = []
            for body in ({"pmcid": pmcid}, {"pmcid": "PMC1"}, {"pmid": "1"}):
                response = await client.post("/_fake/pmc/revise", json=body)
                answers.append((response.status_code, response.json()))
            return answers

    answers = asyncio.run(scenario())

    assert answers[0] == (200, {"pmcid": pmcid, "version": 2})
    assert [status for status, _ in answers[1:]] == [404, 400]
    assert pmc_store(state).get(pmcid).version == 2  # type: ignore[union-attr]

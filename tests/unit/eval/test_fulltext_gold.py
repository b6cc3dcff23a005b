"""The gold full-text questions (tests/fixtures/gold/fulltext.jsonl) and their loader
(`biomcp.eval.fulltext_gold`). The questions are checked against the 8 real PMC articles of
../shared/data/ncbi_files/pmc (skipped when absent): each answer is in one piece of the
article's full text, and no answer term is in its title or abstract."""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from biomcp.adapters.entrez.jats import parse_pmc_articles
from biomcp.domain.fulltext import FullTextArticle, flatten
from biomcp.eval.data import EvaluationDataError
from biomcp.eval.fulltext_gold import (
    FullTextQuestion,
    answer_found,
    load_fulltext_gold,
    normalize,
)
from tests.conftest import shared_data_path

pytestmark = pytest.mark.unit

GOLD = Path(__file__).resolve().parents[2] / "fixtures" / "gold" / "fulltext.jsonl"
_SAFE = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)


@cache
def _questions() -> tuple[FullTextQuestion, ...]:
    return tuple(load_fulltext_gold(GOLD))


@cache
def _articles() -> dict[str, tuple[FullTextArticle, tuple[str, ...]]]:
    """Each real article by PMCID, with the pieces of its full text: every section's text,
    every figure and table caption with its footnotes, and every table row's raw cells."""
    found = {}
    for path in sorted(shared_data_path("ncbi_files", "pmc").glob("*.nxml")):
        raw = path.read_bytes()
        [article] = parse_pmc_articles(
            b"<pmc-articleset>" + _article_xml(raw) + b"</pmc-articleset>"
        ).articles
        sections = [s.text for _, _, s in flatten(article.sections)]
        captions = [
            " ".join([c.label or "", c.caption, *c.footnotes])
            for c in (*article.tables, *article.figures)
        ]
        rows = [
            " | ".join(" ".join(str(cell.xpath("string()")).split()) for cell in row)
            for row in etree.fromstring(raw, _SAFE).iter("tr")
        ]
        found[article.pmcid] = (article, (*sections, *captions, *rows))
    return found


def _article_xml(raw: bytes) -> bytes:
    root = etree.fromstring(raw, _SAFE)
    return etree.tostring(root, encoding="UTF-8")


def test_the_set_covers_every_article_with_table_and_methods_questions() -> None:
    questions = _questions()
    articles = Counter(q.pmcid for q in questions)
    places = Counter(q.where for q in questions)

    assert len(questions) >= 16
    assert len(articles) == 8
    assert places["table"] >= 4
    assert places["methods"] >= 4
    assert len({normalize(q.question) for q in questions}) == len(questions)


def test_every_answer_is_in_one_piece_of_its_articles_full_text_and_not_in_the_abstract() -> None:
    articles = _articles()
    for question in _questions():
        assert question.pmcid in articles, question.qid
        article, pieces = articles[question.pmcid]
        assert article.pmid == question.pmid, question.qid
        assert answer_found(pieces, question), question.qid
        front = normalize(f"{article.title} {article.abstract}")
        for term in question.answer_terms:
            assert normalize(term) not in front, (question.qid, term)


def test_an_answer_needs_every_term_in_the_same_text() -> None:
    item = FullTextQuestion("q", "?", "1", "PMC1", ("Hazard  Ratio", "1.19"), "results")

    assert answer_found(["the hazard\nratio was 1.19 (0.96-1.48)"], item)
    assert not answer_found(["the hazard ratio was", "1.19"], item)
    assert not answer_found([], item)


def _write(tmp_path: Path, **changes: Any) -> Path:
    item = {
        "id": "q1",
        "question": "What dose was given?",
        "pmid": "123",
        "pmcid": "PMC456",
        "answer_terms": ["12 mg"],
        "where": "methods",
    }
    item.update(changes)
    path = tmp_path / "gold.jsonl"
    path.write_text(json.dumps({k: v for k, v in item.items() if v is not None}) + "\n")
    return path


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"where": "abstract"}, "where 'abstract' is not one of"),
        ({"answer_terms": []}, "answer_terms must be a list of 1 to 3"),
        ({"answer_terms": ["a", "b", "c", "d"]}, "answer_terms must be a list of 1 to 3"),
        ({"answer_terms": [" "]}, "every answer term must be a non-empty string"),
        ({"answer_terms": ["x" * 61]}, r"answer term 'x+'\.\.\. is over 60 characters"),
        ({"pmcid": "456"}, r"pmcid '456' is not PMC \+ digits"),
        ({"pmid": "0123"}, "pmid '0123' is not a PMID"),
        ({"question": None}, "missing fields question"),
        ({"source": "x"}, "unknown fields source"),
    ],
)
def test_a_malformed_line_is_refused_with_its_line_number(
    tmp_path: Path, changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(EvaluationDataError, match=rf"gold\.jsonl:1: {message}"):
        load_fulltext_gold(_write(tmp_path, **changes))


def test_a_repeated_id_and_a_missing_file_are_refused(tmp_path: Path) -> None:
    path = _write(tmp_path)
    path.write_text(path.read_text() * 2)

    with pytest.raises(EvaluationDataError, match=r"gold\.jsonl:2: id 'q1' is repeated"):
        load_fulltext_gold(path)
    with pytest.raises(EvaluationDataError, match=r"nothing\.jsonl not found"):
        load_fulltext_gold(tmp_path / "nothing.jsonl")

"""The shipped gold set (tests/fixtures/gold) checked against its records, without a corpus.

Spec 03 section 12 asks for 10-20 gold questions per kind (mechanism, efficacy, safety). These
checks keep the set honest as it grows: every expected paper is one of the fixture records and
is reached by its topic's sync term, every expected chunk is a chunk the product really makes,
a question that asks for numbers points at text that has them, and mechanism questions point
at mechanism papers, not at trials. `tests/integration/test_eval.py` asks the questions.
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from biomcp.domain import PubMedRecord, chunk_record, chunking_for_window
from biomcp.domain.numeric import has_numeric_result
from biomcp.eval.gold import GoldQuestion, GoldReport, GoldResult, load_gold
from biomcp.testing.eutils import FakeCorpus

pytestmark = pytest.mark.unit

GOLD = Path(__file__).resolve().parents[2] / "fixtures" / "gold"
# The term each topic is synced with in tests/integration/test_eval.py.
SYNC_TERMS = {"glp1_obesity": "obesity", "kras_nsclc": "nsclc"}
TRIAL_TYPES = {"Randomized Controlled Trial", "Clinical Trial", "Clinical Trial, Phase II"}


@cache
def _questions() -> tuple[GoldQuestion, ...]:
    return tuple(load_gold(GOLD / "questions.jsonl"))


@cache
def _records() -> dict[str, PubMedRecord]:
    corpus = FakeCorpus.from_paths([GOLD / "records.xml"])
    return {pmid: record for pmid in corpus.pmids() if (record := corpus.record(pmid))}


def _pmids(question: GoldQuestion) -> set[str]:
    return set(question.expected_pmids) | {c.split(":")[0] for c in question.expected_chunks}


def test_each_kind_has_12_to_20_questions_and_ids_are_unique() -> None:
    questions = _questions()
    kinds = Counter(q.intent for q in questions)
    assert {k: kinds[k] for k in ("mechanism", "efficacy", "safety")} == {
        "mechanism": 12,
        "efficacy": 12,
        "safety": 12,
    }
    assert all(12 <= n <= 20 for n in Counter(q.topic for q in questions).values())
    assert len({q.qid for q in questions}) == len(questions)
    assert len({q.question for q in questions}) == len(questions)


def test_every_expected_paper_is_a_fixture_record_its_topic_syncs() -> None:
    records = _records()
    for q in _questions():
        for pmid in _pmids(q):
            assert pmid in records, (q.qid, pmid)
            record = records[pmid]
            text = f"{record.title} {record.abstract_text}".lower()
            assert SYNC_TERMS[q.topic] in text, (q.qid, pmid)


def test_every_expected_chunk_is_one_the_product_makes() -> None:
    config = chunking_for_window(256)  # the default embedder's budget; the test's is wider
    records = _records()
    for q in _questions():
        for key in q.expected_chunks:
            pmid, chunk_id = key.split(":")
            chunks = {c.chunk_id: c for c in chunk_record(records[pmid], config)}
            assert chunk_id in chunks, (q.qid, key)
            if q.must_have_numeric:
                assert has_numeric_result(chunks[chunk_id].text), (q.qid, key)


def test_questions_asking_for_numbers_point_at_records_with_numbers() -> None:
    records = _records()
    for q in _questions():
        if q.intent in ("efficacy", "safety"):
            assert q.must_have_numeric, q.qid
        if q.must_have_numeric:
            for pmid in _pmids(q):
                assert has_numeric_result(records[pmid].abstract_text), (q.qid, pmid)


def test_mechanism_questions_point_at_mechanism_papers_not_trials() -> None:
    records = _records()
    for q in _questions():
        trials = [bool(TRIAL_TYPES & set(records[p].publication_types)) for p in _pmids(q)]
        if q.intent == "mechanism":
            assert not any(trials), q.qid
        elif q.intent == "efficacy":
            assert all(trials), q.qid  # safety questions may rest on cohorts or trials


def _result(qid: str, topic: str, intent: str, recall: float, share: float) -> GoldResult:
    question = GoldQuestion(qid, topic, "?", intent, expected_pmids=("1",))
    evidence = {"clinical": 1} if intent == "efficacy" else {"preclinical": 1}
    return GoldResult(question, recall, (), (), share, None, evidence)


def test_the_report_summarises_by_question_kind() -> None:
    results = (
        _result("a", "t1", "efficacy", 1.0, 0.8),
        _result("b", "t2", "efficacy", 0.5, 0.4),
        _result("c", "t1", "mechanism", 0.0, 0.1),
    )
    report = GoldReport(10, True, results, 0.0).as_dict()
    assert list(report["intents"]) == ["efficacy", "mechanism"]  # INTENTS order, empty left out
    efficacy, mechanism = report["intents"]["efficacy"], report["intents"]["mechanism"]
    assert (efficacy["questions"], efficacy["recall"]) == (2, 0.75)
    assert efficacy["numeric_share_efficacy"] == pytest.approx(0.6)
    assert (efficacy["clinical_share"], efficacy["basic_share"]) == (1.0, 0.0)
    assert (mechanism["recall"], mechanism["numeric_share_efficacy"]) == (0.0, None)
    assert mechanism["basic_share"] == 1.0

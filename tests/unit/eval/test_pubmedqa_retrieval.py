"""PubMedQA as retrieval: the corpus and judgements built from PQA-L and a distractor corpus.

Synthetic twins (`tests.support.pubmedqa_twins`) in the real file formats, plus one check of the
real files in ../shared/data (skipped when absent).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from biomcp.eval.beir import beir_pmids
from biomcp.eval.data import EvaluationDataError
from biomcp.eval.pubmedqa import DISTRACTOR_PREFIX, load_pubmedqa_retrieval
from biomcp.usecases.errors import InvalidRequestError
from tests.conftest import shared_data_path
from tests.support.pubmedqa_twins import (
    CLASHING_ID,
    PQAL,
    write_distractors,
    write_pubmedqa,
)

pytestmark = pytest.mark.unit


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    return write_pubmedqa(tmp_path / "pubmedqa"), write_distractors(tmp_path / "scifact")


def test_each_question_judges_its_own_abstract_and_nothing_else(
    folders: tuple[Path, Path],
) -> None:
    data = load_pubmedqa_retrieval(*folders)

    assert (data.name, data.split) == ("pubmedqa", "pqa-l")
    assert list(data.queries) == list(PQAL)
    assert data.queries["39000001"] == PQAL["39000001"]["QUESTION"]
    assert data.qrels == {pmid: {pmid: 1} for pmid in PQAL}
    assert len(data.documents) == len(PQAL) + 6
    assert data.warnings == ()


def test_an_abstract_is_its_contexts_in_order_without_the_question_or_long_answer(
    folders: tuple[Path, Path],
) -> None:
    documents = {d.doc_id: d for d in load_pubmedqa_retrieval(*folders).documents}

    first = documents["39000001"]
    assert first.text == " ".join(PQAL["39000001"]["CONTEXTS"])
    assert first.title == ""  # PQA-L has no titles, and the question is never one
    for pmid, record in PQAL.items():
        assert record["QUESTION"] not in documents[pmid].title
        assert "long answer" not in documents[pmid].text
    assert documents["39000005"].title == PQAL["39000005"]["TITLE"]


def test_distractor_ids_never_collide_with_a_pubmedqa_pmid(folders: tuple[Path, Path]) -> None:
    data = load_pubmedqa_retrieval(*folders)
    ids = [d.doc_id for d in data.documents]

    assert len(set(ids)) == len(ids)
    assert f"{DISTRACTOR_PREFIX}{CLASHING_ID}" in ids
    clash = next(d for d in data.documents if d.doc_id == CLASHING_ID)
    assert clash.text.startswith("Rotating shifts")  # the PQA-L abstract, not the distractor
    pmids = beir_pmids(ids)
    assert len(set(pmids.values())) == len(ids)
    assert all(pmids[pmid] == pmid for pmid in PQAL)  # a PQA-L document keeps its PMID


def test_limit_asks_the_first_questions_of_the_file_against_every_abstract(
    folders: tuple[Path, Path],
) -> None:
    data = load_pubmedqa_retrieval(*folders, limit=2)

    assert list(data.queries) == list(PQAL)[:2]
    assert set(data.qrels) == set(list(PQAL)[:2])
    assert {d.doc_id for d in data.documents} >= set(PQAL)


def test_max_distractors_keeps_the_first_distractors_of_the_corpus(
    folders: tuple[Path, Path],
) -> None:
    data = load_pubmedqa_retrieval(*folders, max_distractors=2)
    distractors = [d.doc_id for d in data.documents if d.doc_id.startswith(DISTRACTOR_PREFIX)]

    assert distractors == [f"{DISTRACTOR_PREFIX}5101", f"{DISTRACTOR_PREFIX}5102"]
    assert len(load_pubmedqa_retrieval(*folders, max_distractors=0).documents) == len(PQAL)


def test_the_files_themselves_may_be_given_instead_of_their_folders(
    folders: tuple[Path, Path],
) -> None:
    pubmedqa, scifact = folders
    by_file = load_pubmedqa_retrieval(pubmedqa / "ori_pqal.json", scifact / "corpus.jsonl")

    assert by_file == load_pubmedqa_retrieval(pubmedqa, scifact)


def test_a_question_without_text_is_skipped_with_a_warning(tmp_path: Path) -> None:
    records = {**PQAL, "39000002": {**PQAL["39000002"], "QUESTION": "  "}}
    pubmedqa = write_pubmedqa(tmp_path / "pubmedqa", records)
    data = load_pubmedqa_retrieval(pubmedqa, write_distractors(tmp_path / "scifact"))

    assert "39000002" not in data.queries
    assert "39000002" in {d.doc_id for d in data.documents}  # still a document
    assert data.warnings == ("1 questions have no text and were skipped",)


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ({"PMC123": PQAL["39000001"]}, "record 'PMC123': the key is not a PMID"),
        ({"1": {**PQAL["39000001"], "CONTEXTS": "text"}}, "CONTEXTS must be a list of strings"),
        ({"1": {k: v for k, v in PQAL["39000001"].items() if k != "QUESTION"}}, "QUESTION must"),
        ({"1": ["not", "an", "object"]}, "record '1': expected a JSON object"),
        ([PQAL["39000001"]], "expected a JSON object of records keyed by PMID"),
    ],
)
def test_a_malformed_pqal_file_names_what_is_wrong(
    tmp_path: Path, records: object, message: str
) -> None:
    folder = tmp_path / "pubmedqa"
    folder.mkdir()
    (folder / "ori_pqal.json").write_text(json.dumps(records), encoding="utf-8")

    with pytest.raises(EvaluationDataError, match=re.escape(message)):
        load_pubmedqa_retrieval(folder, write_distractors(tmp_path / "scifact"))


def test_missing_files_and_bad_limits_are_refused(
    tmp_path: Path, folders: tuple[Path, Path]
) -> None:
    pubmedqa, scifact = folders
    with pytest.raises(EvaluationDataError, match=r"ori_pqal\.json not found"):
        load_pubmedqa_retrieval(tmp_path / "nowhere", scifact)
    with pytest.raises(EvaluationDataError, match=r"corpus\.jsonl not found"):
        load_pubmedqa_retrieval(pubmedqa, tmp_path / "nowhere")
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    with pytest.raises(EvaluationDataError, match="not JSON"):
        load_pubmedqa_retrieval(tmp_path / "broken.json", scifact)
    with pytest.raises(InvalidRequestError, match="limit must be >= 1"):
        load_pubmedqa_retrieval(pubmedqa, scifact, limit=0)
    with pytest.raises(InvalidRequestError, match="max_distractors must be >= 0"):
        load_pubmedqa_retrieval(pubmedqa, scifact, max_distractors=-1)


def test_real_pqal_puts_a_thousand_questions_against_their_abstracts_and_scifact() -> None:
    data = load_pubmedqa_retrieval(
        shared_data_path("pubmedqa"), shared_data_path("scifact"), limit=50
    )

    assert len(data.queries) == 50
    assert len(data.documents) == 1000 + 5183
    assert data.warnings == ()
    documents = {d.doc_id: d for d in data.documents}
    for pmid, question in data.queries.items():
        assert data.qrels[pmid] == {pmid: 1}
        assert len(documents[pmid].text.split()) >= 50  # a whole abstract, not one context
        assert question not in documents[pmid].text

"""The SciFact lexical experiment harness: its BM25, query handling, feedback and fusion.

Synthetic documents only; the harness must agree with the formula and with the product's rule.
"""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np
import pytest
from benchmarks.scifact_lexical import (
    Analyzer,
    Bm25,
    Feedback,
    Fields,
    Params,
    Vocabulary,
    query_weights,
    rm3,
    top,
)
from benchmarks.scifact_lexical.variants import Config, Harness, Lexical
from benchmarks.scifact_rankers import Candidates, Corpus, chunk_rule

from biomcp.domain.chunking import chunk_record, chunking_for_window
from biomcp.eval.beir import BeirDataset, BeirDocument, beir_pmids, beir_record

pytestmark = pytest.mark.unit


def _index(titles: list[str], bodies: list[str]) -> Bm25:
    fields = Fields(titles, bodies, [f"d{i}" for i in range(len(bodies))])
    return Bm25(fields, Analyzer(), Vocabulary())


def test_bm25_scores_follow_the_formula_the_store_uses() -> None:
    index = _index(["", "", ""], ["kinase kinase inhibitor", "inhibitor trial", "mouse model"])
    scores = index.scores({"kinas": 1.0}, Params())
    idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    mean_length = 7 / 3
    expected = idf * 2 * 2.2 / (2 + 1.2 * (1 - 0.75 + 0.75 * 3 / mean_length))
    assert scores[0] == pytest.approx(expected)
    assert scores[1] == scores[2] == 0.0


def test_a_title_weight_ranks_a_title_match_above_a_body_match() -> None:
    index = _index(["statins", "trial"], ["trial of cholesterol", "statins and cholesterol"])
    heavy = index.scores({"statin": 1.0}, Params(title_weight=3.0))
    none = index.scores({"statin": 1.0}, Params(title_weight=0.0))
    assert heavy[0] > heavy[1]
    assert none[0] == 0.0 < none[1]


def test_the_query_drops_stopwords_and_stems_what_remains() -> None:
    assert Analyzer().query("The studies of the treated mice") == Counter(
        {"studi": 1, "treat": 1, "mice": 1}
    )


def test_query_weights_drop_common_terms_and_can_count_each_term_once() -> None:
    terms = Counter({"cell": 2, "apoptosi": 1})
    share = {"cell": 0.3, "apoptosi": 0.01}
    assert query_weights(terms, {}, max_df_share=0.1, df_share=share) == {"apoptosi": 1.0}
    assert query_weights(terms, {}, binary=True) == {"cell": 1.0, "apoptosi": 1.0}
    only_common = query_weights(Counter({"cell": 1}), {}, max_df_share=0.1, df_share=share)
    assert only_common == {"cell": 1.0}


def test_rm3_adds_the_feedback_papers_terms_and_keeps_the_query() -> None:
    papers = _index(["", "", ""], ["vitamin rickets rickets", "vitamin rickets", "tumour growth"])
    idf = np.ones(len(papers.counts[0]) + 4)
    names = [""] * len(idf)
    for term, col in papers._vocab.ids.items():
        names[col] = term
    query = {"vitamin": 1.0}
    first = top(papers.scores(query, Params()), 2)
    expanded = rm3(query, first, papers, idf, names, Feedback(docs=2, terms=2, weight=0.4))
    assert set(expanded) == {"vitamin", "ricket"}
    assert sum(expanded.values()) == pytest.approx(1.0)
    assert "tumour" not in expanded


def _dataset() -> BeirDataset:
    rng = random.Random(7)
    words = [
        "kinase",
        "tumour",
        "trial",
        "mouse",
        "insulin",
        "vitamin",
        "cohort",
        "risk",
        "dose",
        "gene",
    ]
    docs = tuple(
        BeirDocument(
            str(1000 + i), " ".join(rng.sample(words, 3)), " ".join(rng.choices(words, k=250))
        )
        for i in range(12)
    )
    return BeirDataset("synthetic", "train", docs, {"q": "kinase tumour dose"}, {"q": {"1000": 1}})


def _corpus(data: BeirDataset) -> Corpus:
    pmids = beir_pmids(d.doc_id for d in data.documents)
    chunks = [
        c
        for d in data.documents
        for c in chunk_record(beir_record(pmids[d.doc_id], d), chunking_for_window(256))
    ]
    rng = np.random.default_rng(3)
    return Corpus(
        uuids=[c.uuid for c in chunks],
        doc_ids=[f"pmid:{c.pmid}" for c in chunks],
        quality=[float(i % 5) for i in range(len(chunks))],
        section=[None] * len(chunks),
        evidence_type=[("clinical", "basic", "other")[i % 3] for i in range(len(chunks))],
        vectors=rng.normal(size=(len(chunks), 4)).astype(np.float32),
    )


@pytest.mark.parametrize("bias", [False, True])
def test_the_numpy_fusion_ranks_papers_as_the_products_rule(bias: bool) -> None:
    data = _dataset()
    corpus = _corpus(data)
    harness = Harness(data, corpus)
    rng = np.random.default_rng(11)
    dense = sorted(
        ((i, float(s)) for i, s in enumerate(rng.random(len(corpus.uuids)))), key=lambda x: -x[1]
    )
    cands = Candidates("kinase tumour dose", np.zeros(4, np.float32), [], dense)
    keyword = harness.keyword(cands, Lexical())
    pairs = [(int(p), float(s)) for p, s in zip(*keyword, strict=True)]
    cands = Candidates(cands.text, cands.vector, pairs, dense)
    arms = Config().arms(harness, cands, 0.6)
    assert harness.rank(cands, arms, bias) == chunk_rule(corpus, cands, rerank=bias)


def test_titled_sentences_carry_the_title_and_keep_the_title_line_alone() -> None:
    from benchmarks.scifact_lexical.sentences import chunk_sentences

    doc = BeirDocument(
        "7", "Statins and stroke", "Statins lowered stroke risk. The effect was 20% in women."
    )
    data = BeirDataset("synthetic", "train", (doc,), {}, {})
    uuids = [c.uuid for c in chunk_record(beir_record("7", doc), chunking_for_window(256))]
    plain, owner = chunk_sentences(data, uuids)
    titled, titled_owner = chunk_sentences(data, uuids, titled=True)
    assert plain == [
        "Statins and stroke",
        "Statins lowered stroke risk.",
        "The effect was 20% in women.",
    ]
    assert titled == [
        "Statins and stroke",
        "Statins and stroke. Statins lowered stroke risk.",
        "Statins and stroke. The effect was 20% in women.",
    ]
    assert owner.tolist() == titled_owner.tolist() == [0, 0, 0]

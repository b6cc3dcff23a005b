"""The tier / design / sample-size figures of `python -m biomcp.eval.distribution`."""

from __future__ import annotations

import pytest

from biomcp.eval.distribution import distribution, load_pubmedqa, without_mesh
from tests.conftest import shared_data_path
from tests.support.builders import make_record

pytestmark = pytest.mark.unit


def test_distribution_counts_tiers_designs_and_what_was_read() -> None:
    records = [
        make_record(pmid="1", publication_types=("Randomized Controlled Trial",)),
        make_record(pmid="2", text="One hundred and forty-one patients were followed."),
        make_record(pmid="3", text="Rats were fed. A total of 232,878 samples were sequenced."),
    ]
    figures = distribution(records, sample=2, seed=17)
    assert figures["tiers"] == {"clinical": 2, "preclinical": 1}
    assert figures["designs"] == {"rct": 1, "observational": 1, "animal": 1}
    assert figures["sample_size"]["read_from_words"] == 1
    assert figures["sample_size"]["refused_counts"] == 1
    drawn = figures["sample"]["records"]
    assert len(drawn) == 2
    assert drawn == distribution(records, sample=2, seed=17)["sample"]["records"]


def test_pubmedqa_distribution_is_mostly_clinical() -> None:
    records = load_pubmedqa(shared_data_path("pubmedqa", "ori_pqal.json"))
    figures = distribution(records, sample=20, seed=17)
    assert figures["records"] == 1000
    assert figures["tiers"]["clinical"] > 800
    assert figures["sample_size"]["read_from_words"] > 100
    assert len(figures["sample"]["records"]) == 20


def test_without_mesh_says_where_the_text_alone_agrees_with_mesh() -> None:
    neutral = "We describe what we found in this work."
    records = [
        make_record(pmid="1", text=neutral, mesh_terms=("Animals",)),
        make_record(pmid="2", text="Forty rats were fed a high-fat diet.",
                    mesh_terms=("Animals", "Rats")),
    ]  # fmt: skip
    figures = without_mesh(records)
    assert figures["design_agreement"] == 0.5
    (change,) = figures["design_changes"]
    assert change.startswith("animal -> ")
    assert figures["design_changes"][change] == 1


def test_pubmedqa_text_alone_agrees_with_mesh_on_most_records() -> None:
    records = load_pubmedqa(shared_data_path("pubmedqa", "ori_pqal.json"))
    figures = without_mesh(records)
    assert figures["design_agreement"] >= 0.9
    assert figures["tier_agreement"] >= 0.9

"""The lexical_parity benchmark runs against a real Weaviate: both BM25 arms find the same.

Both stores turn text into the same terms (stems, British spellings made American). So a
claim worded "tumours ... randomised" finds a paper that says "tumor ... randomized" in each.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from benchmarks import lexical_parity

from tests.support.services import weaviate_url

pytestmark = pytest.mark.integration


def _beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    docs = [
        {"_id": "1", "title": "Tumor growth", "text": "A randomized trial of tumor growth."},
        {"_id": "2", "title": "Exercise", "text": "Walking lowered blood pressure in adults."},
        {"_id": "3", "title": "Sleep", "text": "Short sleep impaired memory in students."},
        {"_id": "4", "title": "Zinc", "text": "Zinc lozenges shortened common colds."},
    ]
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    queries = [{"_id": "british", "text": "tumours randomised"}, {"_id": "plain", "text": "growth"}]
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n")
    rows = ["query-id\tcorpus-id\tscore", "british\t1\t1", "plain\t1\t1"]
    (folder / "qrels" / "test.tsv").write_text("\n".join(rows) + "\n")
    return folder


def test_both_stores_meet_a_british_spelling_and_a_plain_word(tmp_path: Path) -> None:
    grpc = os.environ.get("BIOMCP_TEST_WEAVIATE_GRPC_PORT", "50051")
    data = _beir(tmp_path / "beir")
    argv = ["--data", str(data), "--weaviate", weaviate_url(), "--grpc-port", grpc]
    out = lexical_parity.run(False, argv)
    assert (out["documents"], out["queries"]) == (4, 2)
    assert out["embedded"]["ndcg@10"] == pytest.approx(1.0)
    assert out["weaviate"]["ndcg@10"] == pytest.approx(1.0)
    assert out["per_query"] == {"embedded_better": 0, "embedded_worse": 0, "equal": 2}

"""The sentence_vectors benchmark runs end to end on a small BEIR folder and reports its costs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmarks import sentence_vectors

pytestmark = pytest.mark.unit


def _beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    docs = [
        {
            "_id": str(1000 + i),
            "title": f"Trial {i} of aspirin",
            "text": f"We enrolled {40 + i} patients. Bleeding fell by {i} percent. It was safe.",
        }
        for i in range(12)
    ]
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    queries = [{"_id": str(q), "text": f"aspirin bleeding {q}"} for q in range(4)]
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n")
    rows = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{1000 + q}\t1" for q in range(4)]
    (folder / "qrels" / "test.tsv").write_text("\n".join(rows) + "\n")
    return folder


def test_it_reports_embedding_disk_and_search_costs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIOMCP_EMBEDDINGS", "hashing")
    data = _beir(tmp_path / "beir")
    out = sentence_vectors.run(True, ["--data", str(data), "--docs", "10", "--queries", "3"])
    assert out["documents"] == 10
    assert out["chunks"] == out["chunks_with_sentence_vectors"] == 10
    assert out["sentences_per_chunk"] == 4  # the title and three sentences
    assert out["distinct_texts"]["sentences"] == 10 * 3 + 1  # "It was safe." is shared
    dim = out["bytes_per_chunk"]["vector_float32"] // 4
    assert out["bytes_per_chunk"]["sentence_vectors_float16"] == 4 * dim * 2
    assert out["search_limit20"]["queries"] == 3
    assert set(out["search_limit20"]["with_sentence_arm"]) == {"p50_ms", "p95_ms"}


def test_it_skips_without_data(tmp_path: Path) -> None:
    out = sentence_vectors.run(True, ["--data", str(tmp_path)])
    assert out["skipped"] == "no SciFact data at --data"

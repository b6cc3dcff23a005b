"""The project_search benchmark stores a small BEIR folder as project items twice (with and
without sentence vectors) and scores both tools on both projects."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmarks import project_search

from tests.unit.test_sentence_vectors_benchmark import _beir

pytestmark = pytest.mark.unit


def test_it_scores_both_tools_with_and_without_sentence_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIOMCP_EMBEDDINGS", "hashing")
    data = _beir(tmp_path / "beir")
    out = project_search.run(True, ["--data", str(data), "--alphas", "0.7"])
    assert (out["items"], out["queries"]) == (12, 4)
    for arm in ("chunks alone", "with sentence vectors"):
        for tool in ("find_chunks", "query_hybrid"):
            figures = out[arm][tool]
            assert 0.0 < figures["ndcg@10"] <= 1.0
            assert figures["recall@10"] == 1.0  # 12 items, 10 shown: each query's is found
    assert "query_hybrid alpha 0.7" in out["with sentence vectors"]
    assert "query_hybrid alpha 0.7" not in out["chunks alone"]
    assert project_search.run(True, ["--data", str(tmp_path / "none")])["skipped"]

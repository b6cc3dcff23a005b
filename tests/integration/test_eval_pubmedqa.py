"""`biomcp eval pubmedqa`: PubMedQA as retrieval through the real command, in-process.

The synthetic twins of `tests.support.pubmedqa_twins` (5 questions, 6 distractors) with the
hashing embedder; then the real PQA-L and SciFact files, shortened, when ../shared/data is here.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from biomcp.entrypoints.cli.main import app
from tests.support.pubmedqa_twins import (
    FIRST_SENTENCE,
    PQAL,
    write_distractors,
    write_pubmedqa,
)

pytestmark = pytest.mark.integration

_ISOLATED = ("BIOMCP_", "NCBI_", "WEAVIATE_", "OPENAI_", "MCP_")
METRICS = {"recall@1", "recall@10", "recall@100", "ndcg@10", "mrr@10"}


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No inherited settings, data under `tmp_path`, the ONNX default left in place (so that
    `--embeddings` is what picks the hashing embedder), a working folder without `.env`."""
    for name in list(os.environ):
        if name.upper().startswith(_ISOLATED):
            monkeypatch.delenv(name)
    monkeypatch.setenv("BIOMCP_DATA_DIR", str(tmp_path / "data"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return tmp_path


def invoke(*args: str) -> Any:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, (result.output, result.stderr)
    return json.loads(result.stdout)


def test_eval_pubmedqa_scores_every_mode_and_a_question_finds_its_abstract_first(
    isolated: Path,
) -> None:
    pubmedqa = write_pubmedqa(isolated / "pubmedqa")
    scifact = write_distractors(isolated / "scifact")
    out = isolated / "reports"
    report = invoke(
        "eval", "pubmedqa", "--data", str(pubmedqa), "--distractors", str(scifact),
        "--embeddings", "hashing", "--out", str(out), "--plot", "--per-query", "--json",
    )  # fmt: skip

    assert (report["kind"], report["dataset"], report["split"]) == ("pubmedqa", "pubmedqa", "pqa-l")
    assert report["embedder"] == "deterministic-v1"
    assert report["corpus"] == {"abstracts": 5, "distractors": 6, "questions": 5}
    assert report["index"]["documents"] == 11
    assert report["warnings"] == []
    modes = {m["mode"]: m for m in report["modes"]}
    assert list(modes) == ["bm25", "vector", "hybrid", "hybrid+rerank"]
    assert [m["quality_bias"] for m in modes.values()] == [False, False, False, True]
    for mode in modes.values():
        assert mode["queries"] == 5
        assert set(mode["metrics"]) == METRICS
        assert all(0.0 <= v <= 1.0 for v in mode["metrics"].values())
        assert set(mode["per_query"]) == set(PQAL)
        # One relevant document: Recall@1 is a hit at rank 1, so MRR@10 is 1 exactly then.
        for scores in mode["per_query"].values():
            assert scores["recall@1"] == (1.0 if scores["mrr@10"] == 1.0 else 0.0)
    assert modes["bm25"]["per_query"][FIRST_SENTENCE]["recall@1"] == 1.0
    # Each twin question shares its rare words with its own abstract only.
    assert modes["bm25"]["metrics"]["recall@1"] == 1.0

    names = sorted(p.name for p in out.iterdir())
    assert names == [f"eval-pubmedqa.{ext}" for ext in ("json", "md", "svg")]
    assert json.loads((out / names[0]).read_text())["corpus"]["distractors"] == 6
    table = (out / names[1]).read_text()
    assert "| mode | alpha | fusion | Recall@1 | Recall@10 | nDCG@10 |" in table
    assert "| bm25 | 0 | relative_score | 1.000 | 1.000 | 1.000 | 1.000 | 1.000 |" in table
    svg = ET.fromstring((out / names[2]).read_text())  # noqa: S314 - our own output
    assert len(svg.findall("{http://www.w3.org/2000/svg}rect")) >= 1 + 3 * 4


def test_eval_pubmedqa_without_its_data_file_is_a_validation_error(isolated: Path) -> None:
    scifact = write_distractors(isolated / "scifact")
    result = CliRunner().invoke(
        app, ["eval", "pubmedqa", "--data", str(isolated), "--distractors", str(scifact)]
    )

    assert result.exit_code == 2
    assert "error [VALIDATION]:" in result.stderr
    assert "ori_pqal.json not found" in result.stderr


def test_an_unknown_embedder_is_a_validation_error(isolated: Path) -> None:
    pubmedqa = write_pubmedqa(isolated / "pubmedqa")
    scifact = write_distractors(isolated / "scifact")
    result = CliRunner().invoke(
        app,
        ["eval", "pubmedqa", "--data", str(pubmedqa), "--distractors", str(scifact),
         "--embeddings", "word2vec"],
    )  # fmt: skip

    assert result.exit_code == 2
    assert "unknown --embeddings 'word2vec'" in result.stderr

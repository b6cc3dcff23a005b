"""`biomcp eval floor` through the real command, in-process, with the deterministic embedder:
the gold corpus and its questions, the shipped off-topic questions and `beir_tiny` (12
documents; 10 scorable queries, 9 of them with their relevant document in the corpus)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from biomcp.entrypoints.cli.main import app
from biomcp.eval.floor import pass_rate

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
GOLD = FIXTURES / "gold"
_ISOLATED = ("BIOMCP_", "NCBI_", "WEAVIATE_", "OPENAI_", "MCP_")


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    import os

    for name in list(os.environ):
        if name.upper().startswith(_ISOLATED):
            monkeypatch.delenv(name)
    monkeypatch.setenv("BIOMCP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("BIOMCP_EMBEDDINGS", "deterministic")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _floor(*args: str) -> Any:
    result = CliRunner().invoke(app, ["eval", "floor", *args])
    assert result.exit_code == 0, (result.output, result.stderr)
    return json.loads(result.stdout)


def test_eval_floor_fits_a_floor_that_keeps_the_gold_questions_and_reports_every_set(
    isolated: Path,
) -> None:
    out = isolated / "report"
    report = _floor(
        "--gold", str(GOLD / "questions.jsonl"),
        "--records", str(GOLD / "records.xml"),
        "--offtopic", str(GOLD / "offtopic.jsonl"),
        "--data", str(FIXTURES / "beir_tiny"), "--split", "test",
        "--min-keep", "0.9", "--per-query", "--out", str(out), "--json", "-q",
    )  # fmt: skip

    assert report["kind"] == "floor"
    assert (report["top_k"], report["min_keep"]) == (10, 0.9)
    sets = {s["name"]: s for s in report["sets"]}
    assert list(sets) == [
        "gold",
        "offtopic",
        "offtopic/biomedical",
        "offtopic/general",
        "offtopic/gibberish",
        "beir_tiny-test/with",
        "beir_tiny-test/without",
    ]
    roles = {name: s["role"] for name, s in sets.items()}
    assert (roles["gold"], roles["offtopic"], roles["beir_tiny-test/with"]) == (
        "keep",
        "reject",
        "keep",
    )
    assert sets["gold"]["questions"] == 36
    assert sets["offtopic"]["questions"] >= 60
    assert (
        sets["beir_tiny-test/with"]["questions"],
        sets["beir_tiny-test/without"]["questions"],
    ) == (10, 9)
    floor = report["floor"]
    keep = {
        n: [q["sim"] for q in sets[n]["per_query"].values()]
        for n in ("gold", "beir_tiny-test/with")
    }
    for name, sims in keep.items():
        assert sets[name]["pass_rate"] >= 0.9
        assert sets[name]["pass_rate"] == round(pass_rate(sims, floor), 4)
    # The highest such floor: one step up, some keep set falls below its share.
    assert min(pass_rate(sims, floor + 0.01) for sims in keep.values()) < 0.9
    off = sets["offtopic"]
    assert off["pass_rate"] + off["nothing_relevant_rate"] == pytest.approx(1.0)
    assert sorted(p.name for p in out.iterdir()) == ["eval-floor.json", "eval-floor.md"]
    table = (out / "eval-floor.md").read_text()
    assert f"{floor:.2f}" in table.splitlines()[0]
    assert "| offtopic | reject |" in table


def test_eval_floor_names_a_missing_off_topic_file(isolated: Path) -> None:
    result = CliRunner().invoke(
        app, ["eval", "floor", "--gold", str(GOLD / "questions.jsonl"), "--offtopic", "nope.jsonl"]
    )
    assert result.exit_code == 2
    assert "nope.jsonl not found" in result.stderr

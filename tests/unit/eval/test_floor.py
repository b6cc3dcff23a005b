"""The relevance floor's fit and report, on synthetic scores; the off-topic fixture's shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from biomcp.eval.data import EvaluationDataError
from biomcp.eval.floor import (
    FloorReport,
    FloorSet,
    QueryScore,
    fit_floor,
    floor_markdown,
    load_offtopic,
    pass_rate,
    quantiles,
)
from biomcp.eval.gold import load_gold
from biomcp.usecases.errors import InvalidRequestError

pytestmark = pytest.mark.unit

GOLD = Path(__file__).resolve().parents[2] / "fixtures" / "gold"


def test_the_floor_is_the_highest_grid_value_that_keeps_the_share_asked() -> None:
    keep = [0.10, *(0.50 + i / 100 for i in range(19))]  # 20 scores: one low outlier
    assert fit_floor({"gold": keep}, min_keep=0.95) == 0.50
    assert fit_floor({"gold": keep}, min_keep=1.0) == 0.10


def test_the_floor_is_rounded_down_so_the_kept_share_still_holds() -> None:
    floor = fit_floor({"gold": [0.437, 0.8, 0.9]}, min_keep=1.0, step=0.01)
    assert floor == 0.43
    assert pass_rate([0.437, 0.8, 0.9], floor) == 1.0


def test_the_strictest_keep_set_decides_the_floor() -> None:
    easy = [0.7, 0.8, 0.9, 0.95]
    hard = [0.35, 0.6, 0.7, 0.8]
    assert fit_floor({"easy": easy, "hard": hard}, min_keep=1.0) == 0.35


def test_a_question_without_a_similarity_counts_as_turned_away() -> None:
    scores = [None, 0.6, 0.7, 0.8]
    assert fit_floor({"s": scores}, min_keep=0.75) == 0.6
    with pytest.raises(InvalidRequestError, match="no similarity"):
        fit_floor({"s": scores}, min_keep=1.0)
    assert pass_rate(scores, 0.0) == 0.75


def test_the_fitted_floor_turns_away_the_most_off_topic_questions_of_any_that_keeps_the_share() -> (
    None
):
    keep = [0.42, 0.55, 0.61, 0.7, 0.72, 0.8, 0.81, 0.9, 0.91, 0.95]
    reject = [0.1, 0.2, 0.3, 0.41, 0.45, 0.5]
    floor = fit_floor({"keep": keep}, min_keep=0.9)
    grid = [i / 100 for i in range(101)]
    feasible = [f for f in grid if pass_rate(keep, f) >= 0.9]
    assert max(1 - pass_rate(reject, f) for f in feasible) == 1 - pass_rate(reject, floor)
    assert floor == 0.55


@pytest.mark.parametrize(
    ("keep", "kwargs"),
    [({}, {}), ({"empty": []}, {}), ({"s": [0.5]}, {"min_keep": 0.0}), ({"s": [0.5]}, {"step": 0})],
)
def test_a_fit_without_questions_or_with_a_bad_share_is_refused(
    keep: dict[str, list[float]], kwargs: dict[str, float]
) -> None:
    with pytest.raises(InvalidRequestError):
        fit_floor(keep, **kwargs)


def test_quantiles_interpolate_and_ignore_missing_scores() -> None:
    q = quantiles([0.0, None, 1.0, 0.5], at=(0.0, 0.25, 0.5, 1.0))
    assert q == {"p00": 0.0, "p25": 0.25, "p50": 0.5, "p100": 1.0}
    assert quantiles([None], at=(0.5,)) == {"p50": None}


def _set(name: str, role: str, sims: list[float]) -> FloorSet:
    scores = tuple(QueryScore(f"{name}{i}", s, 1.0) for i, s in enumerate(sims))
    return FloorSet(name, role, "corpus", scores)  # type: ignore[arg-type]


def test_the_report_gives_each_set_its_rates_at_the_fitted_floor() -> None:
    report = FloorReport(
        "model",
        10,
        1.0,
        (
            _set("gold", "keep", [0.6, 0.7, 0.8]),
            _set("off", "reject", [0.1, 0.2, 0.65]),
            _set("without", "measure", [0.3, 0.9]),
        ),
    ).as_dict()
    assert report["floor"] == 0.6
    rates = {s["name"]: (s["pass_rate"], s["nothing_relevant_rate"]) for s in report["sets"]}
    assert rates == {"gold": (1.0, 0.0), "off": (0.3333, 0.6667), "without": (0.5, 0.5)}
    table = floor_markdown(report)
    assert "| off | reject | corpus | 3 | 33.3% | 66.7% |" in table
    assert table.startswith("# Relevance floor for `model`: 0.60")


def test_the_shipped_off_topic_set_has_sixty_questions_or_more_of_each_kind() -> None:
    questions = load_offtopic(GOLD / "offtopic.jsonl")
    kinds = [q.kind for q in questions]
    assert len(questions) >= 60
    assert kinds.count("biomedical") >= 60
    assert {"general", "gibberish"} <= set(kinds)
    assert len({q.qid for q in questions}) == len(questions)
    assert any(q.question == "zzzzqqq nonexistent gibberish" for q in questions)
    gold = {q.question for q in load_gold(GOLD / "questions.jsonl")}
    assert not gold & {q.question for q in questions}


def test_an_off_topic_line_of_an_unknown_kind_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "off.jsonl"
    path.write_text('{"question": "malaria?"}\n{"question": "x", "kind": "sports"}\n')
    with pytest.raises(EvaluationDataError, match=r"off\.jsonl:2: kind 'sports'"):
        load_offtopic(path)

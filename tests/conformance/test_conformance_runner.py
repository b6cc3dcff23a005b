"""The conformance runner's verdict (scripts/conformance.py): what fails CI, what does not, and
the committed expected-failures list it reads. The suite itself runs in CI (`.ci/run`)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.unit

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "conformance.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("conformance_runner", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


runner = load()


def results(tmp_path: Path, checks: dict[str, list[tuple[str, str]]]) -> Path:
    """A results folder as the suite writes it: server-<scenario>-<timestamp>/checks.json."""
    for scenario, statuses in checks.items():
        folder = tmp_path / f"server-{scenario}-2026-01-02T03-04-05-678Z"
        folder.mkdir()
        body = [{"id": check, "status": status} for check, status in statuses]
        (folder / "checks.json").write_text(json.dumps(body), encoding="utf-8")
    return tmp_path


def test_outcomes_are_read_per_scenario(tmp_path: Path) -> None:
    folder = results(
        tmp_path,
        {
            "ping": [("ping", "SUCCESS"), ("note", "INFO")],
            "server-sse-polling": [("server-sse-retry-field", "WARNING"), ("x", "SUCCESS")],
            "tools-call-image": [("tools-call-image", "FAILURE")],
        },
    )
    outcomes = runner.read_outcomes(folder)
    assert set(outcomes) == {"ping", "server-sse-polling", "tools-call-image"}
    assert outcomes["ping"].clean
    assert outcomes["server-sse-polling"].warnings == ("server-sse-retry-field",)
    assert not outcomes["server-sse-polling"].clean
    assert outcomes["tools-call-image"].failures == ("tools-call-image",)


def test_new_failures_new_warnings_and_stale_entries_fail_the_run(tmp_path: Path) -> None:
    folder = results(
        tmp_path,
        {
            "ping": [("ping", "FAILURE")],
            "tools-list": [("tools-list", "WARNING")],
            "tools-call-image": [("tools-call-image", "FAILURE")],
            "prompts-get-simple": [("prompts-get-simple", "SUCCESS")],
            "resources-list": [("resources-list", "SUCCESS")],
        },
    )
    expected = {
        "tools-call-image": "fixture tool",
        "prompts-get-simple": "fixture prompt",
        "gone-scenario": "renamed upstream",
    }
    problems = runner.compare(runner.read_outcomes(folder), expected)
    assert len(problems) == 4
    assert any(p.startswith("ping: FAILURE ping") for p in problems)
    assert any(p.startswith("tools-list: WARNING tools-list") for p in problems)
    assert any(p.startswith("prompts-get-simple: expected to fail") and "passed" in p
               for p in problems)  # fmt: skip
    assert any(p.startswith("gone-scenario:") and "did not run" in p for p in problems)


def test_a_run_that_matches_the_list_passes(tmp_path: Path) -> None:
    folder = results(
        tmp_path,
        {"ping": [("ping", "SUCCESS")], "tools-call-image": [("tools-call-image", "FAILURE")]},
    )
    assert runner.compare(runner.read_outcomes(folder), {"tools-call-image": "fixture"}) == []


def test_the_committed_list_gives_a_reason_for_each_scenario() -> None:
    expected = runner.read_expected()
    assert expected
    assert all(len(reason) > 10 for reason in expected.values())
    # Only fixture-dependent scenarios are excused, never the ones every server must pass.
    required = {"server-initialize", "ping", "tools-list", "resources-list", "prompts-list"}
    required |= {"dns-rebinding-protection", "server-sse-multiple-streams"}
    assert not required & set(expected)


def test_a_line_without_a_reason_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "expected.txt"
    path.write_text("# comment\n\nping\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="needs a one-line reason"):
        runner.read_expected(path)

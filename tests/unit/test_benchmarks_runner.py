"""The benchmark runner lists every benchmark and answers --help (nothing is timed here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmarks import __main__ as runner

pytestmark = pytest.mark.unit

HELPERS = {"__init__", "__main__", "machine", "comparators", "scifact_rankers"}  # used by others


def test_every_benchmark_module_is_registered() -> None:
    folder = Path(runner.__file__).parent
    modules = {p.stem for p in folder.glob("*.py")} - HELPERS
    assert set(runner.BENCHMARKS) == modules
    for module in runner.BENCHMARKS.values():
        assert callable(module.run)


def test_help_lists_every_benchmark_and_all(capsys: pytest.CaptureFixture[str]) -> None:
    assert runner.main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in [*runner.BENCHMARKS, "all"]:
        assert name in out


@pytest.mark.parametrize("name", sorted(runner.BENCHMARKS))
def test_each_benchmark_has_its_own_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        runner.main([name, "--help"])
    assert exit_info.value.code == 0
    assert f"python -m benchmarks {name}" in capsys.readouterr().out


def test_unknown_names_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        runner.main(["nonesuch"])
    with pytest.raises(SystemExit):
        runner.main(["all", "--only", "nonesuch"])

"""Forked commands answer as the installed console script does.

The CLI tests fork most commands from a process that imported bio-mcp already
(`tests/support/forked.run_cli`). Here each command runs both ways, with the same environment
and folder, and what a test can see must be the same: exit code, stdout and stderr.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.cli import DEAD
from tests.support.forked import run_cli
from tests.support.servers import run_biomcp, server_env

pytestmark = pytest.mark.e2e

CASES = {
    "version": ["--version"],
    "unknown command": ["no-such-command"],
    "bad id": ["get", "PMC123", "--json"],
    "empty corpus": ["search", "asthma", "--json"],
    "empty listing": ["checkpoint", "list"],
    "help": ["checkpoint", "--help"],
}


@pytest.mark.parametrize("args", CASES.values(), ids=CASES.keys())
def test_a_forked_command_answers_as_the_installed_script(args: list[str], tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", DEAD, COLUMNS="100")
    forked = run_cli(args, env=env, cwd=tmp_path)
    real = run_biomcp(args, env=env, cwd=tmp_path)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        real.returncode,
        real.stdout,
        real.stderr,
    )
    assert forked.stdout or forked.stderr  # each case prints something to compare


def test_nothing_carries_over_from_one_forked_command_to_the_next(tmp_path: Path) -> None:
    """A variable and a folder given to one command are gone for the next one."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    misspelt = server_env(first / "data", DEAD, BIOMCP_EMBEDDER="onnx")
    warned = run_cli(["checkpoint", "list", "--json"], env=misspelt, cwd=first)
    assert warned.returncode == 0, warned.stderr
    assert "BIOMCP_EMBEDDER" in warned.stderr

    plain = run_cli(
        ["checkpoint", "list", "--json"], env=server_env(second / "data", DEAD), cwd=second
    )
    assert plain.returncode == 0, plain.stderr
    assert "BIOMCP_EMBEDDER" not in plain.stderr
    assert plain.stdout == warned.stdout  # two empty corpora


def test_a_command_past_its_timeout_is_killed_and_the_next_one_runs(tmp_path: Path) -> None:
    """`fake-eutils` serves until interrupted, so it always outlives a short timeout."""
    env = server_env(tmp_path / "data", DEAD)
    with pytest.raises(subprocess.TimeoutExpired):
        run_cli(["fake-eutils", "--port", "0"], env=env, cwd=tmp_path, timeout=2)
    after = run_cli(["--version"], env=env, cwd=tmp_path)
    assert (after.returncode, after.stdout.startswith("bio-mcp ")) == (0, True)

"""`biomcp project store` of a file larger than one call's limit (500 items): sent in batches,
every item stored, the total reported; a bad item names its place in the file. The commands
that succeed are forked from a process that imported bio-mcp already (`tests/support/forked`);
the refused one runs the installed console script."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.forked import run_cli
from tests.support.servers import run_biomcp, server_env

pytestmark = [pytest.mark.e2e]

PROJECT = "review/batches"
TOTAL = 1_201


def item(n: int) -> dict[str, Any]:
    return {"id": f"note-{n}", "text": f"Reading note {n} on a trial of drug {n % 37}."}


def test_a_file_above_the_per_call_limit_is_stored_in_batches(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", "http://127.0.0.1:9")

    def biomcp(*args: str) -> Any:
        done = run_cli([*args], env=env, cwd=tmp_path, timeout=300)
        assert done.returncode == 0, (done.stdout, done.stderr)
        return done

    biomcp("project", "create", PROJECT)
    lines = tmp_path / "notes.jsonl"
    lines.write_text("\n".join(json.dumps(item(n)) for n in range(TOTAL)), encoding="utf-8")
    stored = json.loads(biomcp("project", "store", PROJECT, str(lines), "--json").stdout)
    assert (stored["chunks_written"], stored["batches"], stored["project"]) == (TOTAL, 3, PROJECT)
    assert stored["warnings"] == []
    shown = json.loads(biomcp("project", "inspect", PROJECT, "--json").stdout)
    assert shown["size"] == TOTAL

    again = biomcp("project", "store", PROJECT, str(lines))  # the same ids overwrite
    assert again.stdout.strip() == f"{TOTAL} chunks written to {PROJECT} in 3 batches"
    assert json.loads(biomcp("project", "inspect", PROJECT, "--json").stdout)["size"] == TOTAL

    bad = [item(n) for n in range(TOTAL, TOTAL + 600)]
    bad[550]["text"] = ""
    array = tmp_path / "bad.json"
    array.write_text(json.dumps(bad), encoding="utf-8")
    refused = run_biomcp(["project", "store", PROJECT, str(array)], env=env, cwd=tmp_path)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.startswith("error [VALIDATION]: items 501 to 600 of 600: items[50]")
    assert "(500 chunks of the items before them were written; storing the file again is safe)" in (
        refused.stderr
    )
    shown = json.loads(biomcp("project", "inspect", PROJECT, "--json").stdout)
    assert shown["size"] == TOTAL + 500

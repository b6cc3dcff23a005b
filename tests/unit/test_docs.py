"""The docs for people: a short README, prose within the style's limit, generated pages whole.

The site itself is built by `scripts/docs.sh` (`mkdocs build --strict`); these tests check the
parts that need no MkDocs: the README's size and tool table, the prose figures, the absence of
references to an outside tracker or folder, and the page generators' coverage.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from biomcp.entrypoints.settings import TOOLSETS, Settings

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"


def _load(name: str, path: Path) -> ModuleType:
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


prose = _load("prose_check", SCRIPTS / "prose_check.py")
table = _load("benchmark_table", SCRIPTS / "benchmark_table.py")
settings_page = _load("docsgen.settings_page", SCRIPTS / "docsgen" / "settings_page.py")
cli_page = _load("docsgen.cli_page", SCRIPTS / "docsgen" / "cli_page.py")


def test_the_readme_is_a_front_page_of_at_most_170_lines() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 170


def test_the_readme_keeps_the_offline_block_between_its_markers() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(
        r"<!-- try-offline:start -->\n```sh\n(.+?)```\n<!-- try-offline:end -->", text, re.S
    )
    assert block is not None
    assert "biomcp fake-eutils" in block.group(1)


def test_the_readme_tool_table_names_each_toolset_the_settings_know() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\w+) \| `", text, re.M)
    assert set(rows) == set(TOOLSETS)


#: Folders of a checkout that are not the repository's own text: tools, caches, builds.
_NOT_OURS = frozenset(
    {
        ".git",
        ".venv",
        ".services",
        ".tools",
        ".demo-data",
        "site",
        "dist",
        "node_modules",
        ".hypothesis",
        "__pycache__",
    }
)


def _repository_texts() -> list[Path]:
    """Every text file of the checkout, outside tool, cache and build folders."""
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [
            d
            for d in dirs
            if d not in _NOT_OURS and d != "__pycache__" and not d.endswith("_cache")
        ]
        found += [Path(folder, name) for name in files if not name.endswith(_BINARY)]
    return sorted(found)


_BINARY = (".pyc", ".onnx", ".gz", ".zip", ".mcpb")


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def test_no_file_points_at_an_outside_tracker() -> None:
    pattern = re.compile(r"\b(?:[Ss]tops?|[Ii]ssues?) #?\d+")
    hits = [str(p.relative_to(ROOT)) for p in _repository_texts() if pattern.search(_text(p))]
    assert hits == []


def test_no_file_outside_tests_and_benchmarks_points_at_a_folder_outside_the_repository() -> None:
    outside = ("tests", "benchmarks")
    hits = [
        str(p.relative_to(ROOT))
        for p in _repository_texts()
        if p.relative_to(ROOT).parts[0] not in outside and "../shared" in _text(p)
    ]
    assert hits == []


def test_the_rules_read_the_pages_and_the_code() -> None:
    read = {p.relative_to(ROOT).as_posix() for p in _repository_texts()}
    assert {"README.md", "benchmarks/HISTORY.md", "src/biomcp/__init__.py", ".ci/run"} <= read


def test_the_prose_keeps_about_twenty_words_a_sentence() -> None:
    assert prose.main([]) == 0


def test_the_prose_check_counts_sentences_and_skips_code_and_tables() -> None:
    text = (
        "# A heading is no sentence\n\n"
        "One two three four. Five six seven eight nine ten.\n\n"
        "```sh\nnot prose at all . here\n```\n\n"
        "| a | table |\n|---|---|\n| is | skipped |\n\n"
        "- a list item without a stop\n"
        "- `inline code counts as one` word\n"
    )
    figures = prose.measure(text)
    assert figures.sentences == 4
    assert figures.words == 4 + 6 + 6 + 2


def test_the_prose_check_fails_a_file_of_long_sentences(tmp_path: Path) -> None:
    page = tmp_path / "long.md"
    page.write_text(" ".join(["word"] * 40) + ".\n", encoding="utf-8")
    assert prose.main([str(page)]) == 1


def test_the_settings_page_lists_every_setting_by_its_variable() -> None:
    page = settings_page.settings_page()
    for name in Settings.model_fields:
        assert f"`{name.upper()}`" in page


def test_a_setting_without_words_fails_the_settings_page(monkeypatch: pytest.MonkeyPatch) -> None:
    notes = dict(settings_page.NOTES)
    notes.pop(next(iter(notes)))
    monkeypatch.setattr(settings_page, "NOTES", notes)
    with pytest.raises(settings_page.SettingsDocError):
        settings_page.settings_page()


def test_the_cli_page_lists_every_command() -> None:
    page = cli_page.cli_page()
    names = [name for name, _ in cli_page.commands()]
    for name in names[1:]:
        assert f"`{name}`" in page
    for top in ("serve", "sync", "export", "pubmed", "project", "index"):
        assert f"biomcp {top}" in names
    assert {"biomcp sync status", "biomcp checkpoint get", "biomcp pubmed search"} <= set(names)


def test_the_benchmark_table_is_current() -> None:
    assert table.main(["--check"]) == 0


def test_recording_a_run_keeps_what_it_did_not_measure() -> None:
    figures = {
        "goals": {
            "parse.a": {
                "goal": "x",
                "measured": 1,
                "met": True,
                "date": "d0",
                "machine": "m",
                "load": "0.1",
                "source": "s",
            }
        }
    }
    run = {
        "benchmark": "parse",
        "machine": {"cpus": 2, "memory_gib": 23.5, "loadavg_1_5_15": [0.5, 0.5, 0.5]},
        "goals": {
            "a": {"goal": "x", "measured": None, "met": None},
            "b": {"goal": "y", "measured": 3.0, "met": False},
        },
    }
    assert table.record(figures, run, "d1", 1.5) == ["parse.b"]
    assert figures["goals"]["parse.a"]["date"] == "d0"
    assert figures["goals"]["parse.b"]["load"] == "0.5"
    assert "| `parse` | b: y | 3 | **no** | d1 |" in table.render(figures)


def test_a_run_on_a_busy_machine_is_not_recorded() -> None:
    run = {"benchmark": "parse", "machine": {"loadavg_1_5_15": [4.0, 3.0, 2.0]}, "goals": {}}
    with pytest.raises(SystemExit):
        table.record({"goals": {}}, run, "d1", 1.5)

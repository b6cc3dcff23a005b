"""The projects file: TOML declarations read into (id, hybrid) pairs, every mistake named."""

from __future__ import annotations

from pathlib import Path

import pytest

from biomcp.entrypoints.projects_file import ProjectsFileError, read_projects_file

pytestmark = pytest.mark.unit


def test_an_absent_file_declares_nothing(tmp_path: Path) -> None:
    assert read_projects_file(tmp_path / "projects.toml") == []


def test_projects_are_read_in_file_order_with_their_hybrid_flag(tmp_path: Path) -> None:
    path = tmp_path / "projects.toml"
    path.write_text(
        '[projects."citeloom/clean-arch"]\n\n[projects."citeloom/ddd"]\nhybrid = false\n'
        '[projects."x y/ü"]\nhybrid = true\n'
    )
    assert read_projects_file(path) == [
        ("citeloom/clean-arch", True),
        ("citeloom/ddd", False),
        ("x y/ü", True),
    ]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[projects.a]\nhybrid = 'no'\n", "hybrid must be a bool"),
        ("[projects.a]\nmodel = 'x'\n", "takes only"),
        ("[project.a]\n", "unknown top-level keys"),
        ("projects = 3\n", "table of tables"),
        ('[projects." a"]\n', "whitespace"),
        ("[projects.a\n", "cannot be read"),
    ],
)
def test_mistakes_are_named(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "projects.toml"
    path.write_text(text)
    with pytest.raises(ProjectsFileError, match=problem) as caught:
        read_projects_file(path)
    assert str(tmp_path) not in str(caught.value)  # the file's name only, never its path

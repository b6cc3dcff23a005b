"""The projects file: projects declared in TOML, registered on first use (spec 02: projects
are configured).

    [projects."citeloom/clean-arch"]
    [projects."citeloom/ddd"]
    hybrid = false

An absent file declares nothing. A file that cannot be read or holds anything else is an
error naming the file and the problem (a typo must not silently drop a project).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from biomcp.domain.projects import check_project_id

__all__ = ["ProjectsFileError", "read_projects_file"]

_MAX_BYTES = 1_000_000


class ProjectsFileError(ValueError):
    """The projects file is unreadable or malformed."""


def read_projects_file(path: Path) -> list[tuple[str, bool]]:
    """(project id, hybrid) of every project `path` declares, in file order."""
    try:
        if path.stat().st_size > _MAX_BYTES:
            raise ProjectsFileError(f"{path.name} is larger than {_MAX_BYTES} bytes")
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ProjectsFileError(f"{path.name} cannot be read: {exc}") from None
    unknown = sorted(set(document) - {"projects"})
    if unknown:
        raise ProjectsFileError(f"{path.name}: unknown top-level keys {unknown}")
    projects = document.get("projects", {})
    if not isinstance(projects, dict):
        raise ProjectsFileError(f'{path.name}: "projects" must be a table of tables')
    declared: list[tuple[str, bool]] = []
    for project_id, options in projects.items():
        try:
            check_project_id(project_id)
        except ValueError as exc:
            raise ProjectsFileError(f"{path.name}: {exc}") from None
        if not isinstance(options, dict) or set(options) - {"hybrid"}:
            raise ProjectsFileError(
                f"{path.name}: project {project_id!r} takes only `hybrid = true|false`"
            )
        hybrid = options.get("hybrid", True)
        if not isinstance(hybrid, bool):
            raise ProjectsFileError(f"{path.name}: project {project_id!r}: hybrid must be a bool")
        declared.append((project_id, hybrid))
    return declared

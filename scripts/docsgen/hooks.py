"""MkDocs hook: adds the generated reference pages and the benchmark pages to the site.

`mkdocs.yml` names this file under `hooks:`. At each build it renders the tools, resources and
prompts from the live server, the settings from `Settings`, the CLI from the Typer app and the
design notes from the module docstrings. It also copies `benchmarks/README.md` and
`benchmarks/HISTORY.md` in, so the site shows them and the docs can link them.
A page of the nav that another part of the project has not written yet is stubbed with a
warning, so `mkdocs build --strict` fails until it exists.
"""

from __future__ import annotations

import logging
import posixpath
import re
import sys
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from biomcp.entrypoints import settings as settings_module  # noqa: E402
from docsgen import catalogue, cli_page, notes_page, settings_page  # noqa: E402

log = logging.getLogger("mkdocs.plugins.biomcp")

TOOLS_INTRO = """\
This page is generated at build time from the server's `tools/list`, with every toolset on.
It shows each tool's description and arguments exactly as a client receives them.
`BIOMCP_TOOL_NAMES=spec` renames the tools to the specs' names (`rag.search`).
`BIOMCP_READ_ONLY=true` hides the tools that write.
Every failure comes back as `{"error": {"code", "message", "details"}}`.
"""


def _nav_pages(nav: Any) -> list[str]:
    """Every page path the nav names."""
    if isinstance(nav, str):
        return [nav] if nav.endswith(".md") else []
    if isinstance(nav, list):
        return [page for item in nav for page in _nav_pages(item)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return []


#: Site pages copied from elsewhere in the repository, with the file each one comes from.
COPIED = {
    "benchmarks/README.md": "benchmarks/README.md",
    "benchmarks/HISTORY.md": "benchmarks/HISTORY.md",
}
_LINK = re.compile(r"\]\((?!https?:|mailto:|#)([^)\s]+)\)")


def site_link(repository_page: str, site_page: str, link: str) -> str:
    """A relative link written for the repository, pointed at the same file on the site.

    Pages link as the files lie in the repository, so the links work when the markdown is read
    there. On the site, `docs/X` is `X` and `benchmarks/X` is `benchmarks/X`.
    """
    path, _, anchor = link.partition("#")
    if not path:
        return link
    target = posixpath.normpath(posixpath.join(posixpath.dirname(repository_page), path))
    if target.startswith("docs/"):
        target = target.removeprefix("docs/")
    elif not target.startswith("benchmarks/"):
        return link
    moved = posixpath.relpath(target, posixpath.dirname(site_page) or ".")
    return moved + (f"#{anchor}" if anchor else "")


def on_page_markdown(markdown: str, page: Any, config: MkDocsConfig, files: Files) -> str:
    """Point links written for the repository at the site's copies."""
    site_page = page.file.src_uri
    repository_page = COPIED.get(site_page, f"docs/{site_page}")
    return _LINK.sub(lambda m: f"]({site_link(repository_page, site_page, m.group(1))})", markdown)


def _toolsets_intro(names: tuple[str, ...], default: tuple[str, ...]) -> str:
    return (
        f"`BIOMCP_TOOLSETS` chooses the families a client is offered: {', '.join(names)}.\n"
        f"With it unset, the server offers {', '.join(default)}.\n"
        "`BIOMCP_TOOLSETS=all` offers every tool; `default,projects` adds one family.\n"
    )


def read_tools() -> tuple[catalogue.Catalogue, dict[str, str] | None, str]:
    """Every tool, the toolset of each (None without toolsets), and the page's introduction."""
    names = getattr(settings_module, "TOOLSETS", None)
    if names is None or "biomcp_toolsets" not in settings_module.Settings.model_fields:
        return catalogue.read_catalogue(), None, TOOLS_INTRO
    default = tuple(getattr(settings_module, "DEFAULT_TOOLSETS", ()))
    found = catalogue.read_catalogues(
        {"biomcp_toolsets": "all"}, *({"biomcp_toolsets": name} for name in names)
    )
    owner = {t["name"]: name for name, one in zip(names, found[1:], strict=True) for t in one.tools}
    marked = {
        tool: name + (" (default)" if name in default else "") for tool, name in owner.items()
    }
    return found[0], marked, TOOLS_INTRO + _toolsets_intro(tuple(names), default)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated pages (a failure to render one stops the build)."""
    tools, toolsets, intro = read_tools()
    pages = {
        "reference/tools.md": catalogue.tools_page(
            tools, title="Tools", intro=intro, toolsets=toolsets
        ),
        "reference/resources.md": catalogue.resources_page(tools),
        "reference/settings.md": settings_page.settings_page(),
        "reference/cli.md": cli_page.cli_page(),
        "design-notes.md": notes_page.notes_page(ROOT / "src" / "biomcp"),
    }
    for site_path, repository_path in COPIED.items():
        pages[site_path] = (ROOT / repository_path).read_text(encoding="utf-8")
    for path, content in pages.items():
        files.append(File.generated(config, path, content=content))
    for path in _nav_pages(config.nav):
        if files.get_file_from_path(path) is None:
            log.warning("the nav names %s, which does not exist yet: a stub stands in", path)
            stub = f"# {Path(path).stem}\n\nThis page is not written yet.\n"
            files.append(File.generated(config, path, content=stub))
    return files

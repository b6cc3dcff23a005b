"""The MCP package's import contracts (pyproject's "MCP..." contracts) refuse an import between
tool families, a family imported by the guide, and a module placed in no layer, including
modules that do not exist yet."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import grimp
import pytest
from importlinter.contracts.independence import IndependenceContract
from importlinter.contracts.layers import LayersContract
from importlinter.domain.contract import Contract

pytestmark = pytest.mark.unit

PYPROJECT = Path(__file__).resolve().parents[3] / "pyproject.toml"
MCP = "biomcp.entrypoints.mcp"
Add = Callable[[str, str], None]
_TYPES: dict[str, type[Contract]] = {"layers": LayersContract, "independence": IndependenceContract}


def _contracts() -> dict[str, Contract]:
    """The MCP contracts of pyproject.toml, by type."""
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]
    contracts = {}
    for options in config["contracts"]:
        if not options["name"].startswith("MCP"):
            continue
        # import-linter reads its options as strings
        fields = {
            key: str(value).lower() if isinstance(value, bool) else value
            for key, value in options.items()
            if key not in {"id", "name", "type"}
        }
        kind = _TYPES[options["type"]]
        contracts[options["type"]] = kind(options["name"], {"root_packages": ["biomcp"]}, fields)
    return contracts


def _broken(graph: grimp.ImportGraph) -> list[str]:
    """The types of the MCP contracts `graph` breaks."""
    return [kind for kind, c in _contracts().items() if not c.check(graph, verbose=False).kept]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("biomcp", cache_dir=None)


@pytest.fixture
def added(graph: grimp.ImportGraph) -> Iterator[Add]:
    """Add imports (and the modules they name) to the real graph, removed afterwards."""
    imports: list[tuple[str, str]] = []
    modules: list[str] = []

    def add(importer: str, imported: str) -> None:
        if importer not in graph.modules:
            modules.append(importer)
        graph.add_import(importer=importer, imported=imported)
        imports.append((importer, imported))

    yield add
    for importer, imported in imports:
        graph.remove_import(importer=importer, imported=imported)
    for module in modules:
        graph.remove_module(module)


def test_the_mcp_contracts_hold_over_the_code_as_it_is(graph: grimp.ImportGraph) -> None:
    assert sorted(_contracts()) == ["independence", "layers"]
    assert _broken(graph) == []


def test_the_guide_importing_a_tool_family_breaks_the_layers(
    graph: grimp.ImportGraph, added: Add
) -> None:
    added(f"{MCP}.guide", f"{MCP}.tools.mesh")
    assert _broken(graph) == ["layers"]


def test_a_family_added_tomorrow_may_not_import_another_family(
    graph: grimp.ImportGraph, added: Add
) -> None:
    added(f"{MCP}.tools.trials", f"{MCP}.tools.mesh")
    assert _broken(graph) == ["independence"]


def test_a_module_added_tomorrow_outside_every_layer_breaks_the_layers(
    graph: grimp.ImportGraph, added: Add
) -> None:
    added(f"{MCP}.newthing", f"{MCP}.contract")
    assert _broken(graph) == ["layers"]

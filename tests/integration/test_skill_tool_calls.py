"""The skills, as each mode serves them, against that mode's tool catalogue (`tools/list`):

* every JSON example is a call the tool it follows accepts (its input schema, validated);
* every backticked name is a tool, argument, answer field or enum value of the mode's
  catalogue, a prompt or prompt argument, or an example query key (`glp1_obesity_v2`);
* no skill names a tool the mode hides (read-only mode hides the writing tools);
* together the skills name every tool the mode exposes, so every tool family.

A skill's JSON example belongs to the tool named (in backticks) last before it. A fenced
```json block is a whole call; an inline one may be a fragment (no required arguments).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from biomcp.entrypoints.mcp.server import FAMILIES, BioMcpServer
from biomcp.entrypoints.services import Services
from tests.support.mcp_inprocess import serve, test_settings

pytestmark = pytest.mark.integration

NO_NCBI = "http://127.0.0.1:9/"  # never called: these tests read words and schemas only
MODES: dict[str, dict[str, Any]] = {
    "portable": {"biomcp_toolsets": "default"},
    "spec names": {"biomcp_toolsets": "default", "biomcp_tool_names": "spec"},
    "read-only": {"biomcp_toolsets": "default", "biomcp_read_only": True},
    "spec names, read-only": {
        "biomcp_toolsets": "default",
        "biomcp_tool_names": "spec",
        "biomcp_read_only": True,
    },
    "contract 1.0": {"biomcp_toolsets": "default", "biomcp_contract": "1.0"},
    "all toolsets": {"biomcp_toolsets": "all"},
    "all toolsets, read-only": {"biomcp_toolsets": "all", "biomcp_read_only": True},
    "corpus and live only": {"biomcp_toolsets": "corpus,live"},
}
#: Under contract 1.0 the answers lack v1.1's fields, which the skills describe: there only the
#: calls and the tool names are checked.
_CALLS_ONLY = {"contract 1.0"}
_FENCED = re.compile(r"```json\n(?P<body>.*?)```", re.DOTALL)
_SPAN = re.compile(r"```.*?```|`(?P<span>[^`]+)`", re.DOTALL)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
#: Example values the skills make up: versioned query keys (`glp1_obesity_v2`, `_v1`).
_EXAMPLE = re.compile(r"\w*_v\d+")
_PUBMED_OPERATORS = {"AND", "OR", "NOT"}


def _tokens(text: str) -> Iterator[tuple[str, str]]:
    """The skill's backticked spans and JSON examples, in order: ("span", text) or
    ("call", json) for a fenced block."""
    for match in _SPAN.finditer(text):
        fenced = _FENCED.fullmatch(match[0])
        if fenced:
            yield "call", fenced["body"]
        elif match["span"] is not None:
            yield "span", match["span"]


def _fragment(span: str) -> dict[str, Any] | None:
    """An inline span read as JSON arguments (`{...}` or `"key": value`), else None."""
    if '":' not in span and not span.strip().startswith("{"):
        return None
    for candidate in (span, "{" + span + "}"):
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        return value if isinstance(value, dict) else None
    raise AssertionError(f"not JSON: {span!r}")


def _names(schema: Any) -> set[str]:
    """Every property name and string enum value in a JSON Schema, nested ones included."""
    found: set[str] = set()
    if isinstance(schema, dict):
        found |= set(schema.get("properties") or {})
        found |= {v for v in schema.get("enum") or () if isinstance(v, str)}
        for value in schema.values():
            found |= _names(value)
    elif isinstance(schema, list):
        for item in schema:
            found |= _names(item)
    return found


def _without_required(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _without_required(v) for k, v in schema.items() if k != "required"}
    if isinstance(schema, list):
        return [_without_required(item) for item in schema]
    return schema


class Catalogue:
    """One mode's tools (input schemas), every name its catalogue and prompts use, and its
    served skills."""

    def __init__(self) -> None:
        self.inputs: dict[str, dict[str, Any]] = {}
        self.vocabulary: set[str] = set()
        self.skills: dict[str, str] = {}
        self.every_tool: set[str] = set()  # every mode's names, portable and spec
        self.families: dict[str, set[str]] = {}  # family module -> public tool names


def _catalogue(tmp_path: Path, overrides: dict[str, Any]) -> Catalogue:
    catalogue = Catalogue()

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        for tool in (await client.list_tools()).tools:
            catalogue.inputs[tool.name] = tool.input_schema
            catalogue.vocabulary |= _names(tool.input_schema) | _names(tool.output_schema or {})
        for prompt in (await client.list_prompts()).prompts:
            catalogue.vocabulary |= {prompt.name, *(a.name for a in prompt.arguments or ())}
        for resource in (await client.list_resources()).resources:
            if str(resource.uri).startswith("biomcp://skill/"):
                read = await client.read_resource(str(resource.uri))
                catalogue.skills[str(resource.uri)] = read.contents[0].text  # type: ignore[union-attr]
        public = {spec.portable_name: name for name, spec in server.tool_specs.items()}
        public |= {spec.spec_name: name for name, spec in server.tool_specs.items()}
        for family in FAMILIES:
            for spec in family.specs(services):
                catalogue.every_tool |= {spec.portable_name, spec.spec_name}
                if spec.portable_name in public:
                    tools = catalogue.families.setdefault(family.__name__, set())
                    tools.add(public[spec.portable_name])

    serve(test_settings(tmp_path, NO_NCBI, **overrides), body)
    return catalogue


def _check_skill(uri: str, text: str, catalogue: Catalogue, *, fields: bool = True) -> set[str]:
    """Check one skill's calls and names (with `fields`, every backticked name too) against
    `catalogue`; the tools it names."""
    named: set[str] = set()
    last_tool: str | None = None
    for kind, content in _tokens(text):
        arguments = json.loads(content) if kind == "call" else _fragment(content)
        if arguments is None:
            word = content.strip()
            if word in catalogue.every_tool:
                assert word in catalogue.inputs, f"{uri} names {word}, a tool this mode hides"
                named.add(word)
                last_tool = word
            elif fields and _NAME.fullmatch(word) and word not in _PUBMED_OPERATORS:
                known = word in catalogue.vocabulary or _EXAMPLE.fullmatch(word)
                assert known, f"{uri}: `{word}` is no tool, argument or field of this mode"
            continue
        assert last_tool is not None, f"{uri}: {content!r} follows no tool"
        schema = catalogue.inputs[last_tool]
        validator = Draft202012Validator(schema if kind == "call" else _without_required(schema))
        errors = [e.message for e in validator.iter_errors(arguments)]
        assert not errors, f"{uri}: {last_tool} would refuse {content!r}: {errors}"
    return named


@pytest.mark.parametrize("mode", list(MODES))
def test_every_call_and_name_in_a_skill_is_one_the_modes_catalogue_accepts(
    tmp_path: Path, mode: str
) -> None:
    catalogue = _catalogue(tmp_path / "data", MODES[mode])
    assert len(catalogue.skills) >= 6
    named: set[str] = set()
    for uri, text in catalogue.skills.items():
        named |= _check_skill(uri, text, catalogue, fields=mode not in _CALLS_ONLY)
    missing = sorted(set(catalogue.inputs) - named)
    assert not missing, f"no skill uses {missing} in mode {mode!r}"


def test_together_the_skills_use_every_tool_family_with_every_toolset_on(tmp_path: Path) -> None:
    catalogue = _catalogue(tmp_path / "data", {"biomcp_toolsets": "all"})
    named = set().union(*(_check_skill(u, t, catalogue) for u, t in catalogue.skills.items()))
    assert len(catalogue.families) == len(FAMILIES)
    unused = sorted(family for family, tools in catalogue.families.items() if not tools & named)
    assert not unused, f"no skill uses a tool of {unused}"


def test_a_call_a_tool_would_refuse_is_caught(tmp_path: Path) -> None:
    catalogue = _catalogue(tmp_path / "data", {"biomcp_read_only": True})
    wrong_argument = 'Call `rag_search`:\n\n```json\n{"query": "x", "topk": 5}\n```\n'
    with pytest.raises(AssertionError, match="would refuse"):
        _check_skill("test", wrong_argument, catalogue)
    hidden_tool = "Call `pubmed_sync_delta` now."
    with pytest.raises(AssertionError, match="hides"):
        _check_skill("test", hidden_tool, catalogue)
    invented_field = "Read its `quality_score`."
    with pytest.raises(AssertionError, match="no tool, argument or field"):
        _check_skill("test", invented_field, catalogue)

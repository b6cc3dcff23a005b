"""`tools/list` as a client receives it: portable schemas, bounded inputs, a size budget.

The catalogue is read through a real MCP client (`mcp.Client` on the server `biomcp serve`
builds) in every mode (default, spec names, read-only, both together, and contract v1.0), with
the default toolsets and with all of them, and for each toolset alone.

Portability (what clients that map tool schemas onto narrower dialects reject or drop, the same
rules as the MCP Inspector CLI's lint): no `type` arrays (nullable values are `anyOf`
branches), no `$ref` / `$defs` / `definitions` / `$schema` / `$id`, no boolean schemas, no
schema without a single constraining keyword, and at the top an object schema without
`anyOf` / `oneOf` / `allOf` / `not` / `if`. Bounds (inputs only): every integer a `maximum`
and a minimum, every string a `maxLength` (or an `enum` / `const`), every array a `maxItems`.

Size: the catalogue's tokens are counted as ceil(characters / 4) of the compact JSON of the
`tools/list` result (`{"tools": [...]}`, `separators=(",", ":")`, non-ASCII kept), the usual
rule of thumb for English and JSON with OpenAI- and Anthropic-style tokenizers. The default
toolsets must stay within `TOKEN_BUDGET` in every mode, all of them within
`ALL_TOOLSETS_BUDGET`, and each toolset alone within its own budget (`TOOLSET_BUDGETS`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from biomcp.entrypoints.mcp.contract import SPEC_INPUTS, SPEC_OUTPUTS, V10_OUTPUTS
from biomcp.entrypoints.mcp.server import FAMILIES, BioMcpServer
from biomcp.entrypoints.mcp.tools.corpus.schemas import TOOL_INPUTS
from biomcp.entrypoints.services import Services
from biomcp.entrypoints.settings import DEFAULT_TOOLSETS, TOOLSETS, Settings
from tests.support.mcp_inprocess import serve, test_settings
from tests.support.spec01 import respelled, spec_schemas

pytestmark = pytest.mark.integration

#: The default catalogue's budget, in every mode: every token here is paid on every turn of
#: every conversation of every client. The default toolsets (corpus, live, fulltext, mesh)
#: measured 7,590 tokens when it was set; the others are a setting away (`BIOMCP_TOOLSETS`).
#: Raise it only with a reason: a tool that most conversations do not need belongs in a
#: toolset that is off by default.
TOKEN_BUDGET = 8_000
#: Every toolset on (`all`), in every mode: 11,728 when set.
ALL_TOOLSETS_BUDGET = 12_000
#: Each toolset alone (default mode), with the size it had when its budget was set.
TOOLSET_BUDGETS = {
    "corpus": 3_500,  # 3,176
    "live": 3_800,  # 3,473
    "fulltext": 650,  # 541
    "mesh": 500,  # 409
    "references": 1_400,  # 1,253
    "projects": 2_450,  # 2,221
    "chatgpt": 750,  # 674
}

MODES: dict[str, dict[str, Any]] = {
    "default": {},
    "spec-names": {"biomcp_tool_names": "spec"},
    "read-only": {"biomcp_read_only": True},
    "spec-names-read-only": {"biomcp_tool_names": "spec", "biomcp_read_only": True},
    "contract-1.0": {"biomcp_contract": "1.0"},
}

# --- the lint -------------------------------------------------------------------------------

_MAP_KEYWORDS = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
_LIST_KEYWORDS = ("allOf", "anyOf", "oneOf", "prefixItems")
_ONE_KEYWORDS = (
    "items",
    "contains",
    "not",
    "propertyNames",
    "if",
    "then",
    "else",
    "additionalProperties",
    "unevaluatedProperties",
    "contentSchema",
)
#: Keywords where `true` / `false` is an ordinary value, not a schema to flag.
_BOOLEAN_OK = {"additionalProperties", "unevaluatedProperties"}
#: The MCP Inspector's list of keywords that constrain a value (a schema with none accepts all).
_CONSTRAINING = {
    "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "format", "contentMediaType",
    "contentEncoding", "contentSchema", "maxItems", "minItems", "uniqueItems", "maxContains",
    "minContains", "maxProperties", "minProperties", "required", "dependentRequired", "allOf",
    "anyOf", "oneOf", "not", "items", "prefixItems", "contains", "additionalItems",
    "unevaluatedItems", "properties", "patternProperties", "additionalProperties",
    "unevaluatedProperties", "propertyNames", "dependentSchemas", "$ref", "$dynamicRef",
}  # fmt: skip
_FORBIDDEN_KEYS = {"$ref", "$dynamicRef", "$defs", "definitions", "$schema", "$id"}
_TOP_LEVEL_FORBIDDEN = {"anyOf", "oneOf", "allOf", "not", "if", "then", "else"}


def subschemas(node: dict[str, Any], path: str) -> Iterator[tuple[str, str, Any]]:
    """(path, keyword, child) for every direct subschema of `node`."""
    for key in _MAP_KEYWORDS:
        for name, child in (node.get(key) or {}).items():
            yield f"{path}.{key}.{name}", key, child
    for key in _LIST_KEYWORDS:
        for index, child in enumerate(node.get(key) or ()):
            yield f"{path}.{key}[{index}]", key, child
    for key in _ONE_KEYWORDS:
        if key in node:
            yield f"{path}.{key}", key, node[key]


def walk(schema: Any, path: str = "", keyword: str | None = None) -> Iterator[tuple[str, Any]]:
    """(path, node) for `schema` and every schema below it: booleans too, except where a
    boolean is an ordinary value (`additionalProperties: false`)."""
    if isinstance(schema, bool) and keyword in _BOOLEAN_OK:
        return
    yield path, schema
    if isinstance(schema, dict):
        for child_path, child_keyword, child in subschemas(schema, path):
            yield from walk(child, child_path, child_keyword)


def portability_findings(schema: dict[str, Any]) -> list[str]:
    """What makes `schema` unportable, one line per finding (none: portable)."""
    found = []
    if schema.get("type") != "object":
        found.append("top: not an object schema")
    found += [f"top: {key}" for key in _TOP_LEVEL_FORBIDDEN & schema.keys()]
    for path, node in walk(schema):
        where = path or "top"
        if isinstance(node, bool):
            found.append(f"{where}: boolean schema {node}")
            continue
        if isinstance(node.get("type"), list):
            found.append(f"{where}: type array {node['type']}")
        found += [f"{where}: {key}" for key in sorted(_FORBIDDEN_KEYS & node.keys())]
        if not _CONSTRAINING & node.keys() and not path.endswith(".not"):
            found.append(f"{where}: constrains nothing")
    return found


def bound_findings(schema: dict[str, Any]) -> list[str]:
    """Unbounded values in an input schema, one line per finding (none: all bounded)."""
    found = []
    for path, node in walk(schema):
        if not isinstance(node, dict):
            continue
        where = path or "top"
        kind = node.get("type")
        if kind == "integer":
            if "maximum" not in node and "exclusiveMaximum" not in node:
                found.append(f"{where}: integer without a maximum")
            if "minimum" not in node and "exclusiveMinimum" not in node:
                found.append(f"{where}: integer without a minimum")
        elif kind == "string" and not {"maxLength", "enum", "const"} & node.keys():
            found.append(f"{where}: string without a maxLength")
        elif kind == "array" and "maxItems" not in node:
            found.append(f"{where}: array without maxItems")
    return found


def tokens(listing: dict[str, Any]) -> int:
    """The documented rule: ceil(characters / 4) of the compact JSON."""
    text = json.dumps(listing, separators=(",", ":"), ensure_ascii=False)
    return math.ceil(len(text) / 4)


# --- the lint itself ------------------------------------------------------------------------


def test_the_lint_finds_every_kind_of_problem() -> None:
    bad = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "anyOf": [{"required": ["a"]}],
        "$defs": {"n": {"type": "integer"}},
        "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"$ref": "#/$defs/n"},
            "c": {"description": "anything at all"},
            "d": True,
            "e": {"type": "array", "items": {"type": "string"}},
            "f": {"type": "integer", "minimum": 0},
        },
        "additionalProperties": False,
    }
    found = portability_findings(bad)
    assert "top: anyOf" in found
    assert "top: $schema" in found
    assert "top: $defs" in found
    assert ".properties.a: type array ['string', 'null']" in found
    assert ".properties.b: $ref" in found
    assert ".properties.c: constrains nothing" in found
    assert ".properties.d: boolean schema True" in found
    assert portability_findings({"anyOf": [{"type": "object"}, {"type": "null"}]})[0] == (
        "top: not an object schema"
    )
    bounds = bound_findings(bad)
    assert ".properties.e: array without maxItems" in bounds
    assert ".properties.e.items: string without a maxLength" in bounds
    assert ".properties.f: integer without a maximum" in bounds
    assert ".$defs.n: integer without a minimum" in bounds
    good = {
        "type": "object",
        "properties": {"a": {"anyOf": [{"type": "string", "maxLength": 9}, {"type": "null"}]}},
        "additionalProperties": False,
    }
    assert portability_findings(good) == []
    assert bound_findings(good) == []


# --- the catalogue, in every mode and toolset ---------------------------------------------


def _listing(tmp_path: Path, **overrides: Any) -> dict[str, Any]:
    """The `tools/list` result as JSON, read by an in-process client."""
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    listing: dict[str, Any] = {}

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        result = await client.list_tools()
        assert result.next_cursor is None  # one page: the whole catalogue
        listing["tools"] = [
            tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in result.tools
        ]

    # No PubMed call is made: the E-utilities URL is never used.
    serve(test_settings(data, "http://127.0.0.1:9", **overrides), body)
    return listing


#: (mode, toolsets): every mode with the default toolsets and with all of them.
_CASES = [(mode, toolsets) for mode in MODES for toolsets in ("default", "all")]


@pytest.fixture(scope="module", params=_CASES, ids=[f"{m}-{t}" for m, t in _CASES])
def listing(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    mode, toolsets = request.param
    overrides = {**MODES[mode], "biomcp_toolsets": toolsets}
    found = _listing(tmp_path_factory.mktemp(f"{mode}-{toolsets}"), **overrides)
    return {**found, "toolsets": toolsets}


def test_every_schema_is_portable(listing: dict[str, Any]) -> None:
    findings = {}
    for tool in listing["tools"]:
        for kind in ("inputSchema", "outputSchema"):
            Draft202012Validator.check_schema(tool[kind])
            problems = portability_findings(tool[kind])
            if problems:
                findings[f"{tool['name']}.{kind}"] = problems
    assert findings == {}


def test_every_input_is_bounded(listing: dict[str, Any]) -> None:
    findings = {
        tool["name"]: problems
        for tool in listing["tools"]
        if (problems := bound_findings(tool["inputSchema"]))
    }
    assert findings == {}


def test_the_catalogue_stays_within_its_token_budget(listing: dict[str, Any]) -> None:
    size = tokens({"tools": listing["tools"]})
    budget = TOKEN_BUDGET if listing["toolsets"] == "default" else ALL_TOOLSETS_BUDGET
    assert len(listing["tools"]) >= 10
    assert size <= budget, f"tools/list is {size} tokens, over the budget {budget}"


def test_the_default_catalogue_size_is_reported(tmp_path: Path) -> None:
    """The figure in `TOKEN_BUDGET`'s comment, and a floor that catches a listing that lost
    its schemas (a budget test that measures an empty catalogue would pass for nothing)."""
    listing = _listing(tmp_path, biomcp_toolsets="default")
    size = tokens(listing)
    print(f"tools/list: {len(listing['tools'])} tools, {size} tokens (budget {TOKEN_BUDGET})")
    assert 6_000 < size <= TOKEN_BUDGET


def test_unset_toolsets_are_the_default_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BIOMCP_TOOLSETS", raising=False)
    monkeypatch.delenv("BIOMCP_SEARCH_FETCH_TOOLS", raising=False)
    assert Settings(_env_file=None).toolsets == set(DEFAULT_TOOLSETS)


@pytest.mark.parametrize("toolset", TOOLSETS)
def test_each_toolset_alone_stays_within_its_budget(tmp_path: Path, toolset: str) -> None:
    listing = _listing(tmp_path, biomcp_toolsets=toolset)
    size = tokens(listing)
    print(f"{toolset}: {len(listing['tools'])} tools, {size} tokens")
    assert listing["tools"], toolset
    assert size <= TOOLSET_BUDGETS[toolset], f"{toolset}: {size} > {TOOLSET_BUDGETS[toolset]}"


def test_every_tool_family_is_reachable_through_exactly_one_toolset(tmp_path: Path) -> None:
    """The toolsets split the whole catalogue: each tool is in one toolset, each family's
    tools in its family's toolset, and together they list every tool of `all`."""
    assert set(TOOLSET_BUDGETS) == set(TOOLSETS)
    assert {family.TOOLSET for family in FAMILIES} == set(TOOLSETS)
    every = [tool["name"] for tool in _listing(tmp_path, biomcp_toolsets="all")["tools"]]
    seen: dict[str, str] = {}
    for toolset in TOOLSETS:
        for tool in _listing(tmp_path, biomcp_toolsets=toolset)["tools"]:
            assert tool["name"] not in seen, (tool["name"], seen.get(tool["name"]), toolset)
            seen[tool["name"]] = toolset
    assert sorted(seen) == sorted(every)
    assert len(every) >= 20


# --- the corpus tools' schemas against spec 01 ----------------------------------------------


#: What `TOOL_INPUTS` may add to spec 01's inputs: bounds, which only narrow.
_BOUNDS = {"maxLength", "maximum", "maxItems"}


def _without_bounds(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_bounds(v) for k, v in value.items() if k not in _BOUNDS}
    if isinstance(value, list):
        return [_without_bounds(v) for v in value]
    return value


#: Optional inputs added after spec 01 (their defaults keep spec 01's behaviour safe).
_ADDED_INPUTS = {
    "rag.search": {
        "include_retracted",
        "study_design",
        "evidence_type",
        "year_min",
        "year_max",
        "min_quality",
        "query_key",
        "trial_id",
        "group_by",
        "source",
    },
    "pubmed.sync_delta": {"fulltext"},
    "rag.get": {"fulltext"},
}


def _without_added(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    added = _ADDED_INPUTS.get(name, set())
    properties = {k: v for k, v in schema["properties"].items() if k not in added}
    assert not added & set(schema.get("required", ())), name
    return {**schema, "properties": properties}


def test_the_corpus_inputs_are_spec_01s_with_bounds_added() -> None:
    spec = spec_schemas()
    assert set(TOOL_INPUTS) == set(SPEC_INPUTS)
    for name, listed in TOOL_INPUTS.items():
        request = spec[name]["request"]
        assert _without_bounds(_without_added(name, listed)) == _without_bounds(request), name
        nodes = dict(walk(listed))
        for path, node in walk(request):  # the spec's own bounds are kept as they are
            for key in _BOUNDS & node.keys():
                assert nodes[path][key] == node[key], (name, path, key)


def test_the_v10_outputs_are_spec_01s_respelled() -> None:
    spec = spec_schemas()
    for name, v10 in V10_OUTPUTS.items():
        assert v10 == respelled(spec[name]["response"]), name
        assert v10 == respelled(SPEC_OUTPUTS[name]), name
        assert portability_findings(v10) == []


def test_respelling_keeps_the_set_of_values() -> None:
    """The two spellings accept and refuse the same answers (spec 01's example and mutants)."""
    spec = spec_schemas()["rag.get"]["response"]
    example = {
        "doc_id": "pmid:384001",
        "title": None,
        "journal": "NEJM",
        "pub_types": ["Randomized Controlled Trial"],
        "pdat": "2024-05-11",
        "quality": {"design": None, "recency": 2, "journal": 2, "human": 2, "total": 8},
        "version": 2,
    }
    mutants = [
        example,
        {**example, "title": 3},
        {**example, "quality": {"total": 8, "design": "2"}},
        {**example, "pmcid": None, "extra": 1},
        {**example, "version": 0},
    ]
    for answer in mutants:
        verdict = Draft202012Validator(spec).is_valid(answer)
        assert Draft202012Validator(V10_OUTPUTS["rag.get"]).is_valid(answer) is verdict
    assert [Draft202012Validator(spec).is_valid(m) for m in mutants] == [
        True, False, False, False, False
    ]  # fmt: skip

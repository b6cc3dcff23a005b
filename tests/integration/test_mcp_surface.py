"""The words and the protocol surface of the MCP server, through an in-process `mcp.Client`:

* in every mode (portable or spec names, read-write or read-only) the instructions, tool
  descriptions, help guide, skills and prompts name only tools the mode exposes;
* the skills are listed and read as `biomcp://skill/<slug>` markdown resources;
* the prompts exist, build real queries and complete their arguments;
* an unknown tool or prompt is JSON-RPC invalid params (-32602), an unknown resource or corpus
  document is resource-not-found (-32002), each with a message saying what exists.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, PromptReference, TextContent

from biomcp.domain.pico import pico_query
from biomcp.entrypoints.mcp.guide import skill_sources
from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.services import Services
from tests.support.mcp_inprocess import serve, test_settings

pytestmark = pytest.mark.integration

NO_NCBI = "http://127.0.0.1:9/"  # unreachable: these tests read words and local state only
#: pico_search looks MeSH up and, NCBI unreachable, degrades to free text at once.
NO_RETRY = {"ncbi_max_retries": 0}
RESOURCE_NOT_FOUND = -32002
MODES: dict[str, dict[str, Any]] = {
    "portable": {"biomcp_toolsets": "default"},
    "spec names": {"biomcp_toolsets": "default", "biomcp_tool_names": "spec"},
    "read-only": {"biomcp_toolsets": "default", "biomcp_read_only": True},
    "spec names, read-only": {
        "biomcp_toolsets": "default",
        "biomcp_tool_names": "spec",
        "biomcp_read_only": True,
    },
    "all toolsets": {"biomcp_toolsets": "all"},
    "corpus and live only": {"biomcp_toolsets": "corpus,live"},
    "all toolsets, spec names, read-only": {
        "biomcp_toolsets": "all",
        "biomcp_tool_names": "spec",
        "biomcp_read_only": True,
    },
}
SLUGS = {
    "efficacy-evidence-review",
    "mechanism-question",
    "safety-signal-check",
    "pico-systematic-search",
    "keeping-corpus-fresh",
    "project-collection",
}
PROMPTS = {"research_plan", "pico_search", "evidence_review"}


def _all_tool_names(tmp_path: Path) -> set[str]:
    """Every tool name of every mode, portable and spec."""
    names: set[str] = set()

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        for spec in server.tool_specs.values():
            names.update({spec.portable_name, spec.spec_name})

    serve(test_settings(tmp_path / "all", NO_NCBI, **NO_RETRY, biomcp_toolsets="all"), body)
    return names


#: Tool names that are also common words: only a backticked one names the tool.
_WORDS = {"search", "fetch"}


def _mentions(text: str, name: str) -> bool:
    if name in _WORDS:
        return f"`{name}`" in text
    return re.search(r"(?<![\w.])" + re.escape(name) + r"(?![\w])", text) is not None


def _descriptions(schema: object) -> list[str]:
    """Every `description` in a JSON Schema, nested ones included."""
    if isinstance(schema, dict):
        found = [schema["description"]] if isinstance(schema.get("description"), str) else []
        return found + [
            d for key, v in schema.items() if key != "description" for d in _descriptions(v)
        ]
    if isinstance(schema, list):
        return [d for item in schema for d in _descriptions(item)]
    return []


async def _texts(client: Client) -> dict[str, str]:
    """Every text the server shows a model, by where it comes from."""
    texts = {"instructions": client.instructions or ""}
    for tool in (await client.list_tools()).tools:
        texts[f"tool {tool.name}"] = tool.description or ""
        parameters = " ".join(_descriptions(tool.input_schema))
        if parameters:
            texts[f"tool {tool.name} parameters"] = parameters
    for resource in (await client.list_resources()).resources:
        if resource.mime_type == "text/markdown":
            read = await client.read_resource(str(resource.uri))
            texts[str(resource.uri)] = read.contents[0].text  # type: ignore[union-attr]
    prompt_arguments = {
        "research_plan": {"question": "Does metformin prevent dementia?"},
        "pico_search": {"population": "obesity", "intervention": "semaglutide"},
        "evidence_review": {"intervention": "semaglutide", "indication": "obesity"},
    }
    for focus in ("efficacy", "safety", "mechanism"):
        key = f"evidence_review {focus}"
        prompt_arguments[key] = {**prompt_arguments["evidence_review"], "focus": focus}
    prompt_arguments["evidence_review design"] = {
        **prompt_arguments["evidence_review"],
        "study_design": "Meta-Analysis",
    }
    for key, arguments in prompt_arguments.items():
        got = await client.get_prompt(key.split()[0], arguments)
        content = got.messages[0].content
        assert isinstance(content, TextContent)
        texts[f"prompt {key}"] = content.text
    return texts


@pytest.mark.parametrize("mode", list(MODES))
def test_every_text_names_only_the_tools_the_mode_exposes(tmp_path: Path, mode: str) -> None:
    every_name = _all_tool_names(tmp_path)

    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        exposed = {tool.name for tool in (await client.list_tools()).tools}
        hidden = every_name - exposed
        texts = await _texts(client)
        assert set(texts) >= {"instructions", "biomcp://help"} | {
            f"biomcp://skill/{slug}" for slug in SLUGS
        }
        for where, text in texts.items():
            assert text.strip(), where
            assert "<!--" not in text, where
            assert "-->" not in text, where
            named = sorted(name for name in hidden if _mentions(text, name))
            assert not named, f"{where} names {named}, not exposed in mode {mode!r}"
        # The texts do name the exposed tools, by their names in this mode.
        search = "rag.search" if MODES[mode].get("biomcp_tool_names") else "rag_search"
        assert _mentions(texts["instructions"], search)
        assert _mentions(texts["biomcp://help"], search)
        assert _mentions(texts["biomcp://skill/efficacy-evidence-review"], search)
        sync = "pubmed.sync_delta" if MODES[mode].get("biomcp_tool_names") else "pubmed_sync_delta"
        writes = not MODES[mode].get("biomcp_read_only")
        assert _mentions(texts["biomcp://skill/keeping-corpus-fresh"], sync) is writes
        assert _mentions(texts["prompt pico_search"], sync) is writes
        for tool in exposed:  # the help guide lists each exposed tool
            assert f"`{tool}`" in texts["biomcp://help"]

    serve(test_settings(tmp_path / "data", NO_NCBI, **NO_RETRY, **MODES[mode]), body)


def test_skills_are_listed_markdown_resources_with_titles(tmp_path: Path) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        skills = {uri: r for uri, r in listed.items() if uri.startswith("biomcp://skill/")}
        assert {uri.removeprefix("biomcp://skill/") for uri in skills} == SLUGS
        assert set(skill_sources()) == SLUGS
        for uri, resource in skills.items():
            assert resource.mime_type == "text/markdown"
            assert resource.title
            assert resource.description
            read = await client.read_resource(uri)
            content = read.contents[0]
            assert content.mime_type == "text/markdown"
            text = content.text  # type: ignore[union-attr]
            assert text.startswith(f"# {resource.title}\n")
        help_text = (await client.read_resource("biomcp://help")).contents[0].text  # type: ignore[union-attr]
        for uri in skills:
            assert f"`{uri}`" in help_text

    serve(test_settings(tmp_path / "data", NO_NCBI, **NO_RETRY), body)


def test_the_prompts_exist_build_the_pico_query_and_complete_arguments(tmp_path: Path) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert set(prompts) == PROMPTS
        pico_arguments = {a.name: a.required for a in prompts["pico_search"].arguments or []}
        assert pico_arguments == {
            "population": True,
            "intervention": False,
            "comparison": False,
            "outcome": False,
            "tier": False,
        }

        got = await client.get_prompt(
            "pico_search",
            {"population": "obesity", "intervention": "semaglutide", "outcome": "weight loss"},
        )
        text = got.messages[0].content.text  # type: ignore[union-attr]
        built = pico_query("obesity", "semaglutide", None, "weight loss", tier="A")
        assert built.term in text
        assert built.query_key in text

        tier_b = await client.get_prompt(
            "pico_search", {"population": "obesity", "intervention": "semaglutide", "tier": "B"}
        )
        tier_b_text = tier_b.messages[0].content.text  # type: ignore[union-attr]
        assert pico_query("obesity", "semaglutide", tier="B").term in tier_b_text

        review = await client.get_prompt(
            "evidence_review",
            {"intervention": "metformin", "indication": "dementia", "focus": "safety"},
        )
        assert "biomcp://skill/safety-signal-check" in review.messages[0].content.text  # type: ignore[union-attr]

        tiers = await client.complete(
            PromptReference(name="pico_search"), {"name": "tier", "value": ""}
        )
        assert tiers.completion.values == ["A", "B", "both"]
        b = await client.complete(
            PromptReference(name="pico_search"), {"name": "tier", "value": "b"}
        )
        assert b.completion.values == ["B", "both"]
        designs = await client.complete(
            PromptReference(name="evidence_review"), {"name": "study_design", "value": "meta"}
        )
        assert designs.completion.values == ["Meta-Analysis"]
        focuses = await client.complete(
            PromptReference(name="evidence_review"), {"name": "focus", "value": "s"}
        )
        assert focuses.completion.values == ["safety"]
        nothing = await client.complete(
            PromptReference(name="research_plan"), {"name": "question", "value": "x"}
        )
        assert nothing.completion.values == []

    serve(test_settings(tmp_path / "data", NO_NCBI, **NO_RETRY), body)


# --- protocol errors -------------------------------------------------------------------------


def test_an_unknown_tool_is_invalid_params_listing_the_tools(tmp_path: Path) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("rag_serch", {"query": "x"})
        assert raised.value.code == INVALID_PARAMS
        assert "Unknown tool: 'rag_serch'" in raised.value.message
        for name in ("rag_search", "rag_get", "pubmed_search_articles", "pubmed_fetch_fulltext"):
            assert name in raised.value.message
        # A tool of a toolset that is off: the message says which, and how to offer it.
        with pytest.raises(MCPError) as raised:
            await client.call_tool("list_projects", {})
        assert raised.value.code == INVALID_PARAMS
        assert "'projects' toolset" in raised.value.message
        assert "BIOMCP_TOOLSETS" in raised.value.message
        # The server goes on serving.
        assert (await client.list_tools()).tools

    serve(test_settings(tmp_path / "data", NO_NCBI, **NO_RETRY, biomcp_toolsets="default"), body)


def test_a_hidden_writing_tool_is_unknown_in_read_only_mode(tmp_path: Path) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("pubmed_sync_delta", {"query_key": "k", "term": "x"})
        assert raised.value.code == INVALID_PARAMS
        message = raised.value.message
        assert "rag_search" in message
        assert "pubmed_sync_delta" not in message.split("Tools:")[1]

    serve(test_settings(tmp_path / "data", NO_NCBI, **NO_RETRY, biomcp_read_only=True), body)


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("no_such_prompt", {}, "Unknown prompt: 'no_such_prompt'"),
        ("pico_search", {}, "population"),  # a required argument missing
        ("pico_search", {"population": "obesity", "tier": "Z"}, "unknown tier"),
        ("pico_search", {"population": "obesity", "tier": "B"}, "needs an intervention"),
        ("pico_search", {"population": 'a"b'}, "double quote"),
        ("evidence_review", {"intervention": "x", "indication": "y", "focus": "z"}, "focus"),
        ("research_plan", {"question": "x" * 501}, "longer than 500"),
    ],
)
def test_prompt_errors_are_invalid_params_never_code_0(
    tmp_path: Path, name: str, arguments: dict[str, str], expected: str
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        with pytest.raises(MCPError) as raised:
            await client.get_prompt(name, arguments)
        assert raised.value.code == INVALID_PARAMS
        assert expected in raised.value.message
        assert "Prompts: research_plan, pico_search, evidence_review." in raised.value.message

    serve(test_settings(tmp_path / "data", NO_NCBI, **NO_RETRY), body)


@pytest.mark.parametrize(
    "uri", ["resource://nothing/here", "biomcp://skill/no-such-skill", "biomcp://helpp"]
)
def test_an_unknown_resource_is_not_found_with_the_templates_and_an_example(
    tmp_path: Path, uri: str
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        with pytest.raises(MCPError) as raised:
            await client.read_resource(uri)
        assert raised.value.code == RESOURCE_NOT_FOUND
        message = raised.value.message
        assert message.startswith(f"Unknown resource: {uri}.")
        assert "resource://pubmed/paper/{pmid}" in message
        assert "e.g. resource://pubmed/paper/31452104" in message
        assert "biomcp://help" in message
        assert "biomcp://skill/keeping-corpus-fresh" in message
        assert raised.value.data == {"uri": uri}

    serve(test_settings(tmp_path / "data", NO_NCBI, **NO_RETRY), body)


@pytest.mark.parametrize(("pmid", "code"), [("1", "NOT_FOUND"), ("not-a-pmid", "VALIDATION")])
def test_an_unknown_or_malformed_pmid_is_not_found_too(
    tmp_path: Path, pmid: str, code: str
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        with pytest.raises(MCPError) as raised:
            await client.read_resource(f"resource://pubmed/paper/{pmid}")
        assert raised.value.code == RESOURCE_NOT_FOUND
        assert raised.value.message.startswith(f"Unknown resource: resource://pubmed/paper/{pmid}")
        assert "e.g. resource://pubmed/paper/31452104" in raised.value.message
        assert raised.value.data["error"]["code"] == code  # spec 01's envelope rides along

    serve(test_settings(tmp_path / "data", NO_NCBI, **NO_RETRY), body)


def test_a_huge_unknown_uri_is_echoed_only_as_a_prefix(tmp_path: Path) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        with pytest.raises(MCPError) as raised:
            await client.read_resource("biomcp://x/" + "a" * 100_000)
        assert raised.value.code == RESOURCE_NOT_FOUND
        assert len(raised.value.message) < 2_000

    serve(test_settings(tmp_path / "data", NO_NCBI, **NO_RETRY), body)


@pytest.mark.parametrize("toolsets", ["default", "corpus,live", "all"])
def test_the_help_and_instructions_say_which_toolsets_are_off_and_how_to_add_one(
    tmp_path: Path, toolsets: str
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        instructions = client.instructions or ""
        help_text = (await client.read_resource("biomcp://help")).contents[0].text  # type: ignore[union-attr]
        on = services.settings.toolsets
        base = "default" if toolsets == "default" else toolsets
        for name in ("corpus", "live", "fulltext", "mesh", "references", "projects", "chatgpt"):
            if name in on:
                assert f"- `{name}` (on): " in help_text
            else:
                assert f"- `{name}` (off: `BIOMCP_TOOLSETS={base},{name}` adds it): " in help_text
        off = [line for line in help_text.splitlines() if "(off: " in line]
        assert len(off) == 7 - len(on)
        if off:
            assert "Toolsets off here: " in instructions
            assert "BIOMCP_TOOLSETS" in instructions
        else:
            assert "Toolsets off here" not in instructions

    settings = test_settings(tmp_path / "data", NO_NCBI, **NO_RETRY, biomcp_toolsets=toolsets)
    serve(settings, body)

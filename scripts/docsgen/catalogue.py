"""The tools, resources and prompts pages, from the live server's own lists.

The server is built in-process exactly as `biomcp serve` builds it, on a throwaway data folder,
and read through the SDK's in-memory `mcp.Client`: the pages show what a client receives.
"""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import Client

from biomcp.entrypoints.mcp.server import build_server
from biomcp.entrypoints.services import build_services
from biomcp.entrypoints.settings import Settings
from docsgen.markdown import code, first_sentence, table

__all__ = ["Catalogue", "read_catalogue", "resources_page", "tools_page"]


@dataclass(frozen=True)
class Catalogue:
    """What `tools/list`, `resources/list`, `resources/templates/list` and `prompts/list` gave."""

    tools: list[dict[str, Any]]
    resources: list[dict[str, Any]]
    templates: list[dict[str, Any]]
    prompts: list[dict[str, Any]]


def _dump(items: list[Any]) -> list[dict[str, Any]]:
    return [item.model_dump(by_alias=True, exclude_none=True, mode="json") for item in items]


async def _read(settings: Settings) -> Catalogue:
    services = build_services(settings)
    try:
        async with Client(build_server(services)) as client:
            tools = (await client.list_tools()).tools
            resources = (await client.list_resources()).resources
            templates = (await client.list_resource_templates()).resource_templates
            prompts = (await client.list_prompts()).prompts
    finally:
        await services.aclose()
    return Catalogue(_dump(tools), _dump(resources), _dump(templates), _dump(prompts))


def read_catalogues(*variants: dict[str, Any]) -> list[Catalogue]:
    """The server's lists once per settings variant (each a dict of settings to change)."""

    async def main(folder: Path) -> list[Catalogue]:
        found = []
        for number, overrides in enumerate(variants):
            values: dict[str, Any] = {
                "biomcp_data_dir": folder / str(number),
                "biomcp_embeddings": "hashing",
                "biomcp_stdio_prelude": False,
                **overrides,
            }
            found.append(await _read(Settings(_env_file=None, **values)))
        return found

    with tempfile.TemporaryDirectory(prefix="biomcp-docs-") as folder:
        return asyncio.run(main(Path(folder)))


def read_catalogue(**overrides: Any) -> Catalogue:
    """The server's lists with `overrides` (settings to change, as keyword arguments)."""
    return read_catalogues(overrides)[0]


def _type(schema: dict[str, Any]) -> str:
    """A short type for one JSON Schema: `string`, `integer 1-200`, `"a" | "b"`, `array of X`."""
    if "enum" in schema:
        return " | ".join(f'"{value}"' for value in schema["enum"])
    if "const" in schema:
        return f'"{schema["const"]}"'
    if "anyOf" in schema:
        return " or ".join(_type(branch) for branch in schema["anyOf"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type(schema.get('items', {}))}"
    bounds = (schema.get("minimum"), schema.get("maximum"))
    if kind in ("integer", "number") and None not in bounds:
        return f"{kind} {bounds[0]}-{bounds[1]}"
    return str(kind)


def _parameters(schema: dict[str, Any]) -> str:
    properties: dict[str, Any] = schema.get("properties", {})
    if not properties:
        return "No arguments.\n"
    required = set(schema.get("required", []))
    rows = [
        (
            code(name),
            _type(spec),
            "yes" if name in required else "",
            spec.get("description", ""),
        )
        for name, spec in properties.items()
    ]
    return table(["argument", "type", "required", "meaning"], rows)


def _hints(tool: dict[str, Any]) -> str:
    notes = tool.get("annotations", {})
    said = [
        label
        for key, label in (
            ("readOnlyHint", "read-only"),
            ("destructiveHint", "destructive"),
            ("idempotentHint", "idempotent"),
            ("openWorldHint", "reaches PubMed"),
        )
        if notes.get(key)
    ]
    return ", ".join(said)


def tools_page(
    catalogue: Catalogue, *, title: str, intro: str, toolsets: dict[str, str] | None = None
) -> str:
    """Every tool of `catalogue`: a summary table, then each tool's arguments and answer.

    `toolsets` maps a tool's name to the toolset that offers it, when the server has toolsets.
    """
    lines = [f"# {title}\n", intro, ""]
    header = (
        ["tool", "toolset", "what it does", "hints"]
        if toolsets
        else ["tool", "what it does", "hints"]
    )
    rows = []
    for tool in catalogue.tools:
        row = [
            f"[{code(tool['name'])}](#{tool['name']})",
            first_sentence(tool.get("description", "")),
            _hints(tool),
        ]
        if toolsets:
            row.insert(1, toolsets.get(tool["name"], ""))
        rows.append(row)
    lines.append(table(header, rows))
    for tool in catalogue.tools:
        lines.append(f"## `{tool['name']}` {{#{tool['name']}}}\n")
        if toolsets and tool["name"] in toolsets:
            lines.append(f"Toolset: `{toolsets[tool['name']]}`.\n")
        lines.append(tool.get("description", "") + "\n")
        lines.append("**Arguments**\n")
        lines.append(_parameters(tool.get("inputSchema", {})))
        output = tool.get("outputSchema", {}).get("properties", {})
        if output:
            fields = ", ".join(code(name) for name in output)
            lines.append(f"**Answer**: a JSON object with {fields}.\n")
    return "\n".join(lines)


def resources_page(catalogue: Catalogue) -> str:
    """Resources, resource templates and prompts, as the server lists them."""
    lines = [
        "# Resources and prompts\n",
        "This page is generated at build time from the default server's own lists.",
        "A client reads a resource by its URI and fills a template's `{placeholders}` first.\n",
        "## Resources\n",
        table(
            ["URI", "name", "what it holds"],
            [
                (code(r["uri"]), r.get("name", ""), r.get("description", ""))
                for r in catalogue.resources
            ],
        ),
        "## Resource templates\n",
        table(
            ["URI template", "name", "what it holds"],
            [
                (code(t["uriTemplate"]), t.get("name", ""), t.get("description", ""))
                for t in catalogue.templates
            ],
        ),
        "## Prompts\n",
    ]
    for prompt in catalogue.prompts:
        lines.append(f"### `{prompt['name']}`\n")
        lines.append(prompt.get("description", "") + "\n")
        arguments = prompt.get("arguments", [])
        if arguments:
            lines.append(
                table(
                    ["argument", "required", "meaning"],
                    [
                        (
                            code(a["name"]),
                            "yes" if a.get("required") else "",
                            a.get("description", ""),
                        )
                        for a in arguments
                    ],
                )
            )
    return "\n".join(lines)

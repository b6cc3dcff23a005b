"""The MeSH lookup tool: `pubmed_lookup_mesh` (`lookupMesh` under BIOMCP_TOOL_NAMES=spec).

A term or a MeSH UI to its records (name, UI, tree numbers, entry terms, scope note, allowed
qualifiers) and the fielded query spec 03's tier templates use. Thin: the use case is
`LivePubMed.lookup_mesh` (usecases/live/mesh.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.context import Context

from biomcp.entrypoints.mcp.contract import NULLABLE_INT, NULLABLE_STRING
from biomcp.entrypoints.mcp.toolspec import READING_LIVE, ToolSpec
from biomcp.usecases.live.mesh import MAX_MESH_RESULTS, MAX_MESH_TERM_CHARS

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services

__all__ = ["MESH_INPUT", "MESH_OUTPUT", "MESH_PORTABLE_NAMES", "TOOLSET", "specs"]

#: The toolset of these tools: `BIOMCP_TOOLSETS` names it to offer them.
TOOLSET = "mesh"

MESH_PORTABLE_NAMES = {"lookupMesh": "pubmed_lookup_mesh"}

_DESCRIPTION = (
    "MeSH descriptors for a term or UI (D009203), synonyms mapped: tree numbers, entry "
    "terms, scope note, qualifiers and a suggested PubMed query. No match: NOT_FOUND."
)

MESH_INPUT: dict[str, Any] = {
    "type": "object",
    "required": ["term"],
    "properties": {
        "term": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_MESH_TERM_CHARS,
            "description": "Words or a MeSH UI (D, C or Q + digits).",
        },
        "maxResults": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_MESH_RESULTS,
            "default": 5,
        },
    },
    "additionalProperties": False,
}

_STRINGS = {"type": "array", "items": {"type": "string"}}
_DESCRIPTOR = {
    "type": "object",
    "required": ["ui", "name", "suggestedQuery"],
    "properties": {
        "ui": {"type": "string"},
        "name": {"type": "string"},
        "recordType": {"type": "string", "enum": ["descriptor", "supplementary", "qualifier"]},
        "treeNumbers": _STRINGS,
        "entryTerms": _STRINGS,
        "entryTermCount": {"type": "integer"},
        "scopeNote": NULLABLE_STRING,
        "allowedQualifiers": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "abbreviation": NULLABLE_STRING},
            },
        },
        "mappedTo": _STRINGS,
        "suggestedQuery": {"type": "string"},
        "url": {"type": "string"},
    },
}
MESH_OUTPUT: dict[str, Any] = {
    "type": "object",
    "required": ["term", "descriptors"],
    "properties": {
        "term": {"type": "string"},
        "totalFound": NULLABLE_INT,
        "queryTranslation": NULLABLE_STRING,
        "descriptors": {"type": "array", "items": _DESCRIPTOR},
        "eSearchUrl": NULLABLE_STRING,
        "eSummaryUrl": {"type": "string"},
    },
}


def specs(services: Services) -> list[ToolSpec]:
    """The MeSH lookup tool, as a `ToolSpec` with its own schemas."""

    async def lookup(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await services.live.lookup_mesh(args["term"], max_results=args["maxResults"])

    return [
        ToolSpec(
            "lookupMesh",
            MESH_PORTABLE_NAMES["lookupMesh"],
            "Look up MeSH headings",
            _DESCRIPTION,
            lookup,
            writes=False,
            annotations=READING_LIVE,
            input_schema=MESH_INPUT,
            output_schema=MESH_OUTPUT,
        )
    ]

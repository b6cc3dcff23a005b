"""The many-citations tool: `pubmed_format_citations` (`formatCitations` under
BIOMCP_TOOL_NAMES=spec).

Citation strings (RIS, BibTeX, APA 7, MLA 9, Vancouver) for up to 50 PMIDs from one EFetch.
Thin: the use case is `LivePubMed.format_citations` (usecases/live/citations.py);
`pubmed_article_relationships` keeps its single-PMID `citation_formats`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.context import Context

from biomcp.entrypoints.mcp.toolspec import READING_LIVE, ToolSpec
from biomcp.usecases.live.citations import MAX_CITATION_PMIDS, STYLE_KEYS

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services

__all__ = [
    "CITATION_INPUT",
    "CITATION_OUTPUT",
    "CITATION_PORTABLE_NAMES",
    "TOOLSET",
    "specs",
]

#: The toolset of these tools: `BIOMCP_TOOLSETS` names it to offer them.
TOOLSET = "references"

CITATION_PORTABLE_NAMES = {"formatCitations": "pubmed_format_citations"}

_DESCRIPTION = (
    "Citations of up to 50 PubMed articles in one call (NCBI EFetch): RIS, BibTeX, APA 7, "
    "MLA 9 or Vancouver strings per PMID (a retracted one says so). PMIDs PubMed lacks are "
    "in notFoundPmids; when none can be cited the call fails with NOT_FOUND."
)
_STYLES = list(STYLE_KEYS)
_PMID = {"type": "string", "pattern": r"^\d+$", "maxLength": 20}
_PMIDS = {"type": "array", "items": _PMID, "maxItems": MAX_CITATION_PMIDS}
_STRINGS = {"type": "array", "items": {"type": "string"}}

CITATION_INPUT: dict[str, Any] = {
    "type": "object",
    "required": ["pmids"],
    "properties": {
        "pmids": {**_PMIDS, "minItems": 1},
        "citationStyles": {
            "type": "array",
            "items": {"type": "string", "enum": _STYLES},
            "minItems": 1,
            "maxItems": len(_STYLES),
            "default": ["ris"],
        },
    },
    "additionalProperties": False,
}
CITATION_OUTPUT: dict[str, Any] = {
    "type": "object",
    "required": ["requestedPmids", "citationStyles", "articles", "notFoundPmids"],
    "properties": {
        "requestedPmids": _STRINGS,
        "citationStyles": _STRINGS,
        "articles": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["pmid", "citations"],
                "properties": {
                    "pmid": {"type": "string"},
                    "retracted": {"type": "boolean"},
                    "citations": {
                        "type": "object",
                        "properties": {s: {"type": "string"} for s in _STYLES},
                        "additionalProperties": False,
                    },
                },
                "additionalProperties": False,
            },
        },
        "notFoundPmids": _STRINGS,
        "bookPmids": _STRINGS,
        "eFetchUrl": {"type": "string"},
        "warnings": _STRINGS,
    },
    "additionalProperties": False,
}
_TITLE = "Citations for many PubMed articles"


def specs(services: Services) -> list[ToolSpec]:
    """`pubmed_format_citations` as a `ToolSpec`."""

    async def cite(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await services.live.format_citations(
            args["pmids"], styles=args.get("citationStyles") or ["ris"]
        )

    return [
        ToolSpec(
            name,
            portable,
            _TITLE,
            _DESCRIPTION,
            cite,
            writes=False,
            annotations=READING_LIVE,
            input_schema=CITATION_INPUT,
            output_schema=CITATION_OUTPUT,
        )
        for name, portable in CITATION_PORTABLE_NAMES.items()
    ]

"""The full-text tool: `pubmed_fetch_fulltext` (`fetchFullText` under BIOMCP_TOOL_NAMES=spec).

PMC articles (JATS, EFetch `db=pmc`) by PMID or PMCID, with a status for every id, within a
character budget (an outline when the article does not fit). Thin: the use case is
`LivePubMed.fetch_fulltext` (usecases/live/fulltext.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.context import Context

from biomcp.domain.fulltext import FULLTEXT_STATUSES
from biomcp.entrypoints.mcp.toolspec import READING_LIVE, ToolSpec
from biomcp.usecases.live.fulltext import (
    MAX_CHARS,
    MAX_FILTER_CHARS,
    MAX_FILTERS,
    MAX_FULLTEXT_IDS,
    MAX_SECTION_CHARS,
    MIN_CHARS,
    MIN_SECTION_CHARS,
)

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services

__all__ = ["FULLTEXT_INPUT", "FULLTEXT_OUTPUT", "FULLTEXT_PORTABLE_NAMES", "TOOLSET", "specs"]

#: The toolset of these tools: `BIOMCP_TOOLSETS` names it to offer them.
TOOLSET = "fulltext"

FULLTEXT_PORTABLE_NAMES = {"fetchFullText": "pubmed_fetch_fulltext"}

_DESCRIPTION = (
    "PubMed Central full text by PMID or PMCID: sections, captions, references, licence, "
    "and a status per id. Over maxChars it gives an outline: ask again with sections."
)

FULLTEXT_INPUT: dict[str, Any] = {
    "type": "object",
    "required": ["ids"],
    "properties": {
        "ids": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_FULLTEXT_IDS,
            "items": {"type": "string", "pattern": "^([Pp][Mm][Cc])?[0-9]{1,12}$", "maxLength": 15},
            "description": "PMIDs and/or PMCIDs (PMC123).",
        },
        "sections": {
            "type": "array",
            "maxItems": MAX_FILTERS,
            "items": {"type": "string", "minLength": 1, "maxLength": MAX_FILTER_CHARS},
            "description": "Keep sections whose title has one of these words, or of this "
            "type (methods...).",
        },
        "maxChars": {
            "type": "integer",
            "minimum": MIN_CHARS,
            "maximum": MAX_CHARS,
            "default": 20_000,
        },
        "maxSectionChars": {
            "type": "integer",
            "minimum": MIN_SECTION_CHARS,
            "maximum": MAX_SECTION_CHARS,
            "default": 6_000,
        },
        "outline": {"type": "boolean", "default": False},
        "includeReferences": {"type": "boolean", "default": False},
    },
    "additionalProperties": False,
}

_STRING = {"type": "string"}
_INT = {"type": "integer"}
_OBJECTS = {"type": "array", "items": {"type": "object"}}
_SECTION = {
    "type": "object",
    "required": ["path", "level", "title", "chars"],
    "properties": {
        "path": _STRING,
        "level": _INT,
        "title": _STRING,
        "type": _STRING,
        "chars": _INT,
        "text": _STRING,
        "truncated": {"type": "boolean"},
    },
}
#: Listed: what an agent acts on. Also sent: journal, year, articleType, doi, url, counts,
#: referencesOmitted (asked-for references over the budget).
_ARTICLE = {
    "type": "object",
    "required": ["id", "status"],
    "properties": {
        "id": _STRING,
        "status": {"type": "string", "enum": list(FULLTEXT_STATUSES)},
        "message": _STRING,
        "pmid": _STRING,
        "pmcid": _STRING,
        "title": _STRING,
        "access": _STRING,
        "license": {"type": "object"},
        "mode": {"type": "string", "enum": ["full", "outline"]},
        "outlineReason": _STRING,
        "abstract": _STRING,
        "sections": {"type": "array", "items": _SECTION},
        "captions": _OBJECTS,
        "references": _OBJECTS,
    },
}
FULLTEXT_OUTPUT: dict[str, Any] = {
    "type": "object",
    "required": ["articles", "maxChars", "usedChars"],
    "properties": {
        "articles": {"type": "array", "items": _ARTICLE},
        "maxChars": _INT,
        "usedChars": _INT,
        "eutilsUrls": {"type": "array", "items": _STRING},
    },
}


def specs(services: Services) -> list[ToolSpec]:
    """The full-text tool, as a `ToolSpec` with its own schemas."""

    async def fetch(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await services.live.fetch_fulltext(
            args["ids"],
            sections=args.get("sections") or (),
            max_chars=args["maxChars"],
            max_section_chars=args["maxSectionChars"],
            outline=args["outline"],
            include_references=args["includeReferences"],
        )

    return [
        ToolSpec(
            "fetchFullText",
            FULLTEXT_PORTABLE_NAMES["fetchFullText"],
            "Fetch PMC full text",
            _DESCRIPTION,
            fetch,
            writes=False,
            annotations=READING_LIVE,
            input_schema=FULLTEXT_INPUT,
            output_schema=FULLTEXT_OUTPUT,
        )
    ]

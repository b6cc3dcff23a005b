"""The identifier and citation lookup tools.

Tools (portable names; the spec-style names under BIOMCP_TOOL_NAMES=spec):

* `pubmed_convert_ids` (`convertArticleIds`): PMIDs, PMCIDs and DOIs through NCBI's PMC ID
  converter;
* `pubmed_lookup_citation` (`lookupCitations`): references given in pieces to PMIDs, through
  ECitMatch and a fielded ESearch.

Each is thin: the arguments go to one `LivePubMed` use case, its answer is returned as is.
The schemas are kept small (the `tools/list` catalogue is paid on every conversation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.context import Context

from biomcp.entrypoints.mcp.contract import NULLABLE_STRING
from biomcp.entrypoints.mcp.toolspec import READING_LIVE, ToolSpec

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services

__all__ = ["LOOKUP_INPUTS", "LOOKUP_NAMES", "LOOKUP_OUTPUTS", "TOOLSET", "specs"]

#: The toolset of these tools: `BIOMCP_TOOLSETS` names it to offer them.
TOOLSET = "references"

LOOKUP_NAMES = {
    "convertArticleIds": "pubmed_convert_ids",
    "lookupCitations": "pubmed_lookup_citation",
}
_PIECE = {"type": "string", "maxLength": 500}
_STRINGS = {"type": "array", "items": {"type": "string"}}

LOOKUP_INPUTS: dict[str, dict[str, Any]] = {
    "convertArticleIds": {
        "type": "object",
        "required": ["ids"],
        "properties": {
            "ids": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": 300},
                "minItems": 1,
                "maxItems": 200,
                "description": "PMIDs, PMCIDs (PMC123, PMC123.2) and DOIs, mixed.",
            }
        },
        "additionalProperties": False,
    },
    "lookupCitations": {
        "type": "object",
        "required": ["references"],
        "properties": {
            "references": {
                "type": "array",
                "minItems": 1,
                "maxItems": 50,
                "items": {
                    "type": "object",
                    "properties": {
                        "journal": _PIECE,
                        "year": {"type": "string", "maxLength": 20},
                        "volume": {"type": "string", "maxLength": 50},
                        "firstPage": {"type": "string", "maxLength": 50},
                        "firstAuthor": {
                            **_PIECE,
                            "description": "Surname and initials, e.g. Smith JA",
                        },
                        "title": _PIECE,
                        "key": {"type": "string", "maxLength": 100, "description": "Echoed"},
                    },
                    "additionalProperties": False,
                },
                "description": "Each with at least two pieces.",
            }
        },
        "additionalProperties": False,
    },
}

_ID_ROW = {
    "type": "object",
    "required": ["requestedId", "idType", "status"],
    "properties": {
        "requestedId": {"type": "string"},
        "idType": {"type": "string", "enum": ["pmid", "pmcid", "doi"]},
        "status": {"type": "string", "enum": ["found", "not_found"]},
        "pmid": NULLABLE_STRING,
        "pmcid": NULLABLE_STRING,
        "pmcidVersion": NULLABLE_STRING,
        "doi": NULLABLE_STRING,
        "reason": NULLABLE_STRING,
    },
}
#: Candidates also carry title, journal, year, volume, pages and firstAuthor (strings or
#: null); rows carry `given` and `note`. Listed here only in part: the catalogue is paid on
#: every conversation.
_CANDIDATE = {
    "type": "object",
    "required": ["pmid", "matchedFields", "unmatchedFields", "via"],
    "properties": {
        "pmid": {"type": "string"},
        "matchedFields": _STRINGS,
        "unmatchedFields": _STRINGS,
        "via": {"type": "string", "enum": ["ecitmatch", "esearch"]},
    },
}
_CITATION_ROW = {
    "type": "object",
    "required": ["index", "status", "pmid", "candidates"],
    "properties": {
        "index": {"type": "integer"},
        "key": NULLABLE_STRING,
        "status": {"type": "string", "enum": ["matched", "ambiguous", "not_found"]},
        "pmid": NULLABLE_STRING,
        "ecitmatch": {"type": "string"},
        "candidates": {"type": "array", "items": _CANDIDATE},
    },
}
_COUNT = {"type": "integer", "minimum": 0}
LOOKUP_OUTPUTS: dict[str, dict[str, Any]] = {
    "convertArticleIds": {
        "type": "object",
        "required": ["records", "found", "notFound"],
        "properties": {
            "records": {"type": "array", "items": _ID_ROW},
            "found": _COUNT,
            "notFound": _COUNT,
            "requests": _COUNT,
        },
    },
    "lookupCitations": {
        "type": "object",
        "required": ["results", "counts"],
        "properties": {
            "results": {"type": "array", "items": _CITATION_ROW},
            "counts": {
                "type": "object",
                "properties": {"matched": _COUNT, "ambiguous": _COUNT, "notFound": _COUNT},
            },
        },
    },
}
_DESCRIPTIONS = {
    "convertArticleIds": (
        "Convert up to 200 article ids (PMID, PMCID, DOI, mixed) with NCBI's PMC ID "
        "converter: each id's PMID, PMCID and DOI, or not_found with the reason. Only "
        "articles in PubMed Central resolve; invalid ids are a VALIDATION error."
    ),
    "lookupCitations": (
        "Find the PMIDs of up to 50 references given in pieces, e.g. to verify a reference "
        "list (ECitMatch, then a fielded PubMed search). Each is matched, ambiguous or "
        "not_found, with ranked candidates naming the fields that matched and did not."
    ),
}
_TITLES = {
    "convertArticleIds": "Convert PMID / PMCID / DOI",
    "lookupCitations": "Look up citations in PubMed",
}


def specs(services: Services) -> list[ToolSpec]:
    """The two lookup tools, as `ToolSpec`s with their own schemas."""

    async def convert(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await services.live.convert_ids(args["ids"])

    async def lookup(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await services.live.lookup_citations(args["references"])

    handlers = {"convertArticleIds": convert, "lookupCitations": lookup}
    return [
        ToolSpec(
            name,
            LOOKUP_NAMES[name],
            _TITLES[name],
            _DESCRIPTIONS[name],
            handler,
            writes=False,
            annotations=READING_LIVE,
            input_schema=LOOKUP_INPUTS[name],
            output_schema=LOOKUP_OUTPUTS[name],
        )
        for name, handler in handlers.items()
    ]

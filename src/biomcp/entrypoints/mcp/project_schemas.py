"""The schemas of spec 02's project tools: its parameter lists translated to JSON Schema
2020-12 (the contract is `tests/fixtures/contracts/spec02_inputs.json`; a test holds these
equal to it), plus the outputs the tools answer with. Decisions where spec 02 is open are in the
descriptions: `embedding` is optional (the server embeds), 1-500 items per call, `full_text`
on request, `top_k` up to the server's bound (6 by default, at most 20). Bounds spec 02 leaves
open: filter values up to 256 characters and 50 per key, vectors up to 8,192 dimensions,
`sample` up to 5 (spec 02's most)."""

from __future__ import annotations

from typing import Any

from biomcp.entrypoints.mcp.schemas import NULLABLE_STRING

__all__ = ["PROJECT_INPUTS", "PROJECT_OUTPUTS", "project_inputs"]

_PROJECT = {
    "type": "string",
    "minLength": 1,
    "maxLength": 128,
    "description": "Project identifier (e.g. `citeloom/clean-arch`); list_projects names them.",
}
_QUERY = {"type": "string", "minLength": 1, "maxLength": 4000}
_FILTERS = {
    "type": "object",
    "description": 'Keyword filters on the stored payloads, e.g. {"tags": ["architecture"]}: '
    "each key (tags, citekey, source, section, doc_id) takes a string or a list of strings; "
    "a chunk passes when, for every key, one of its values matches.",
    "propertyNames": {"enum": ["tags", "citekey", "source", "section", "doc_id"]},
    "additionalProperties": {
        "anyOf": [
            {"type": "string", "maxLength": 256},
            {"type": "array", "items": {"type": "string", "maxLength": 256}, "maxItems": 50},
        ]
    },
}
_FULL_TEXT = {
    "type": "boolean",
    "default": False,
    "description": "Also return each chunk's whole text in `full_text` (null otherwise).",
}


def _search_input(top_k_max: int) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["project", "query"],
        "properties": {
            "project": _PROJECT,
            "query": _QUERY,
            "top_k": {
                "type": "integer",
                "minimum": 1,
                "maximum": top_k_max,
                "default": min(6, top_k_max),
                "description": f"Maximum results (default 6, at most {top_k_max} here).",
            },
            "filters": _FILTERS,
            "full_text": _FULL_TEXT,
        },
        "additionalProperties": False,
    }


def project_inputs(top_k_max: int = 6) -> dict[str, dict[str, Any]]:
    """The input schemas, with `top_k` bounded by the server's setting."""
    return {
        "store_chunks": {
            "type": "object",
            "required": ["project", "items"],
            "properties": {
                "project": _PROJECT,
                "items": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 500,
                    "description": "1 to 500 chunks, written all or none. The same `id` "
                    "overwrites (last write wins).",
                    "items": {
                        "type": "object",
                        "required": ["id", "text"],
                        "properties": {
                            "id": {"type": "string", "minLength": 1, "maxLength": 256},
                            "text": {"type": "string", "minLength": 1, "maxLength": 100_000},
                            "embedding": {
                                "type": "array",
                                "items": {"type": "number"},
                                "maxItems": 8192,
                                "description": "Optional: a vector of the project's model "
                                "(metadata.embed_model must name it). Left out, the server "
                                "embeds `text` with the project's model.",
                            },
                            "metadata": {
                                "type": "object",
                                "description": "Payload: project, source, zotero (citekey, "
                                "tags), doc (page_span, section, section_path), embed_model, "
                                "version, fulltext, doi, url...",
                            },
                        },
                        "additionalProperties": False,
                    },
                },
                "allow_model_change": {
                    "type": "boolean",
                    "default": False,
                    "description": "Migration flag: when the project's vectors come from "
                    "another model than this server's, drop its chunks and move it to this "
                    "server's model (else EMBEDDING_MISMATCH).",
                },
            },
            "additionalProperties": False,
        },
        "find_chunks": _search_input(top_k_max),
        "query_hybrid": _search_input(top_k_max),
        "inspect_collection": {
            "type": "object",
            "required": ["project"],
            "properties": {
                "project": _PROJECT,
                "sample": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 5,
                    "default": 0,
                    "description": "Sample payloads to return (at most 5).",
                },
            },
            "additionalProperties": False,
        },
        "list_projects": {"type": "object", "properties": {}, "additionalProperties": False},
    }


PROJECT_INPUTS = project_inputs()

_PAGE_SPAN = {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}]}
_STRINGS_OR_NULL = {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]}
_ITEM = {
    "type": "object",
    "required": [
        "id",
        "render_text",
        "score",
        "citekey",
        "section",
        "page_span",
        "section_path",
        "doi",
        "url",
        "full_text",
    ],
    "properties": {
        "id": {"type": "string"},
        "render_text": {"type": "string"},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "citekey": NULLABLE_STRING,
        "section": NULLABLE_STRING,
        "page_span": _PAGE_SPAN,
        "section_path": _STRINGS_OR_NULL,
        "doi": NULLABLE_STRING,
        "url": NULLABLE_STRING,
        "full_text": NULLABLE_STRING,
    },
}

PROJECT_OUTPUTS: dict[str, dict[str, Any]] = {
    "store_chunks": {
        "type": "object",
        "required": ["chunks_written", "project", "embed_model", "warnings"],
        "properties": {
            "chunks_written": {"type": "integer", "minimum": 0},
            "project": {"type": "string"},
            "embed_model": {"type": "string"},
            "warnings": {"type": "array", "items": {"type": "string"}},
        },
    },
    "find_chunks": {
        "type": "object",
        "required": ["items", "count"],
        "properties": {
            "items": {"type": "array", "items": _ITEM},
            "count": {"type": "integer", "minimum": 0},
        },
    },
    "query_hybrid": {
        "type": "object",
        "required": ["items", "count", "hybrid_enabled"],
        "properties": {
            "items": {"type": "array", "items": _ITEM},
            "count": {"type": "integer", "minimum": 0},
            "hybrid_enabled": {"type": "boolean"},
        },
    },
    "inspect_collection": {
        "type": "object",
        "required": [
            "project",
            "collection",
            "size",
            "embed_model",
            "payload_keys",
            "indexes",
            "sample",
        ],
        "properties": {
            "project": {"type": "string"},
            "collection": {"type": "string"},
            "size": {"type": "integer", "minimum": 0},
            "embed_model": {"type": "string"},
            "hybrid_enabled": {"type": "boolean"},
            "payload_keys": {"type": "array", "items": {"type": "string"}},
            "indexes": {
                "type": "object",
                "properties": {
                    "keyword": {"type": "array", "items": {"type": "string"}},
                    "fulltext": {"type": "array", "items": {"type": "string"}},
                },
            },
            "sample": {"type": "array", "maxItems": 5, "items": {"type": "object"}},
        },
    },
    "list_projects": {
        "type": "object",
        "required": ["projects"],
        "properties": {
            "projects": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id", "collection", "embed_model", "hybrid_enabled"],
                    "properties": {
                        "id": {"type": "string"},
                        "collection": {"type": "string"},
                        "embed_model": {"type": "string"},
                        "hybrid_enabled": {"type": "boolean"},
                    },
                },
            },
            "warnings": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Added to spec 02: e.g. a projects file that cannot be read.",
            },
        },
    },
}

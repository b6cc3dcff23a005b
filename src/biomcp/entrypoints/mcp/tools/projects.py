"""The project tools of spec 02: store_chunks, find_chunks, query_hybrid, inspect_collection
and list_projects. Each is thin over `ProjectCollections`.

Their schemas translate spec 02's parameter lists to JSON Schema 2020-12 (the contract is
`tests/fixtures/contracts/spec02_inputs.json`; a test holds these equal to it), plus the outputs
the tools answer with. Decisions where spec 02 is open are in the descriptions: `embedding` is
optional (the server embeds), 1-500 items per call, a long item split into searchable parts,
`full_text` on request, `top_k` up to the server's bound (6 by default, at most 20). Bounds
spec 02 leaves open: filter values up to 256 characters and 50 per key, vectors up to 8,192
dimensions, `sample` up to 5 (spec 02's most).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.context import Context
from mcp_types import ToolAnnotations

from biomcp.entrypoints.mcp.contract import NULLABLE_STRING
from biomcp.entrypoints.mcp.toolspec import READING_LOCAL, ToolSpec

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services
    from biomcp.usecases.projects import ProjectCollections

__all__ = ["PROJECT_INPUTS", "PROJECT_OUTPUTS", "TOOLSET", "project_inputs", "specs"]

#: The toolset of these tools: `BIOMCP_TOOLSETS` names it to offer them.
TOOLSET = "projects"

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
                    "description": "1 to 500 chunks.",
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
                                "description": "A vector of the project's model "
                                "(metadata.embed_model names it); left out, the server "
                                "embeds `text`.",
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


_WRITING = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
_TITLES = {
    "store_chunks": "Store chunks in a project collection",
    "find_chunks": "Vector search in a project collection",
    "query_hybrid": "Hybrid (BM25 + vector) search in a project collection",
    "inspect_collection": "Describe a project collection",
    "list_projects": "List the projects",
}


def _descriptions(services: Services) -> dict[str, str]:
    limits = services.project_limits
    return {
        "store_chunks": "Store your own chunks (notes, passages, excerpts) in a project, 1 to "
        "500 per call, all or none. Each item: a deterministic `id` (the same id overwrites "
        "it), `text`, `metadata` (zotero.citekey and tags, doc.section / page_span / "
        "section_path, source, doi, url...), optional `embedding` (the project's model only; "
        "left out, the server embeds). Text past the model's window is split at sentence ends "
        "into parts, each searchable; a search names the item once, with the part that "
        "matched. The server also embeds each sentence of the text it embeds, so that one "
        "sentence can find its item. Errors: INVALID_PROJECT, EMBEDDING_MISMATCH, TIMEOUT "
        f"({limits.store_timeout_s:g} s).",
        "find_chunks": "Vector search over one project's chunks; never returns another "
        f"project's. Up to {limits.top_k_max} citation-ready results (render_text trimmed to "
        f"{limits.max_chars_per_chunk} characters, citekey, section, page_span, section_path, "
        "doi, url; full_text on request), scores in [0, 1] (the cosine, blended with the "
        "best sentence's). `filters` match payload keywords "
        f'(tags, citekey, source, section, doc_id), e.g. {{"tags": ["architecture"]}}.',
        "query_hybrid": "Hybrid search (BM25 full text + vectors, fused) over one project's "
        "chunks, with the same results and filters as find_chunks; HYBRID_NOT_SUPPORTED for a "
        "project created without hybrid search.",
        "inspect_collection": "Describe a project's collection: its name, size, embedding "
        "model, payload keys, indexes and up to 5 sample payloads (`sample`).",
        "list_projects": "Every configured project with its collection, embedding model and "
        "whether it offers hybrid search. Call this first to find a project id.",
    }


def specs(services: Services) -> list[ToolSpec]:
    """The five project tools, `top_k` bounded by the server's setting."""
    inputs = project_inputs(services.project_limits.top_k_max)

    def projects() -> ProjectCollections:  # built on the first call, not at start-up
        return services.projects

    async def store_chunks(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await projects().store_chunks(
            args["project"], args["items"], allow_model_change=args["allow_model_change"]
        )

    async def find_chunks(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await projects().find_chunks(
            args["project"],
            args["query"],
            top_k=args["top_k"],
            filters=args.get("filters"),
            full_text=args["full_text"],
        )

    async def query_hybrid(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await projects().query_hybrid(
            args["project"],
            args["query"],
            top_k=args["top_k"],
            filters=args.get("filters"),
            full_text=args["full_text"],
        )

    async def inspect(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await projects().inspect_collection(args["project"], args["sample"])

    async def list_projects(_args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await projects().list_projects()

    handlers = {
        "store_chunks": store_chunks,
        "find_chunks": find_chunks,
        "query_hybrid": query_hybrid,
        "inspect_collection": inspect,
        "list_projects": list_projects,
    }
    descriptions = _descriptions(services)
    return [
        ToolSpec(
            name,
            name,
            _TITLES[name],
            descriptions[name],
            handler,
            writes=name == "store_chunks",
            annotations=_WRITING if name == "store_chunks" else READING_LOCAL,
            input_schema=inputs[name],
            output_schema=PROJECT_OUTPUTS[name],
        )
        for name, handler in handlers.items()
    ]

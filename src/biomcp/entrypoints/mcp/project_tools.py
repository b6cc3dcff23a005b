"""The project tools of spec 02: store_chunks, find_chunks, query_hybrid, inspect_collection
and list_projects. Each is thin over `ProjectCollections`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.context import Context
from mcp_types import ToolAnnotations

from biomcp.entrypoints.mcp.project_schemas import PROJECT_OUTPUTS, project_inputs
from biomcp.entrypoints.mcp.tools import ToolSpec

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services
    from biomcp.usecases.projects import ProjectCollections

__all__ = ["project_tool_specs"]

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
        "store_chunks": "Store your own chunks (notes, passages, excerpts) in a project's "
        "collection, 1 to 500 per call, all or none. Each item: a deterministic `id` (the "
        "same id overwrites it: last write wins), `text`, a `metadata` payload (zotero.citekey "
        "and tags, doc.section / page_span / section_path, source, doi, url...) and, "
        "optionally, `embedding` (only vectors of the project's model; leave it out and the "
        "server embeds the text). Errors: INVALID_PROJECT, EMBEDDING_MISMATCH, TIMEOUT "
        f"({limits.store_timeout_s:g} s).",
        "find_chunks": "Vector search over one project's chunks; never returns another "
        f"project's. Up to {limits.top_k_max} citation-ready results (render_text trimmed to "
        f"{limits.max_chars_per_chunk} characters, citekey, section, page_span, section_path, "
        "doi, url; full_text on request), scores in [0, 1]. `filters` match payload keywords "
        f'(tags, citekey, source, section, doc_id), e.g. {{"tags": ["architecture"]}}.',
        "query_hybrid": "Hybrid search (BM25 full text + vectors, fused) over one project's "
        "chunks, with the same results and filters as find_chunks; HYBRID_NOT_SUPPORTED for a "
        "project created without hybrid search.",
        "inspect_collection": "Describe a project's collection: its name, size, embedding "
        "model, payload keys, indexes and up to 5 sample payloads (`sample`).",
        "list_projects": "Every configured project with its collection, embedding model and "
        "whether it offers hybrid search. Call this first to find a project id.",
    }


def project_tool_specs(services: Services) -> list[ToolSpec]:
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
    reading = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    writing = ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )
    return [
        ToolSpec(
            name,
            name,
            _TITLES[name],
            descriptions[name],
            handler,
            name == "store_chunks",
            writing if name == "store_chunks" else reading,
            input_override=inputs[name],
            output_override=PROJECT_OUTPUTS[name],
        )
        for name, handler in handlers.items()
    ]

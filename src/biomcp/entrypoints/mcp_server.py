"""The MCP server: the corpus tools and resources on the official SDK's `MCPServer`.

Tools are declared by the specs' exact JSON Schemas (`schemas.py`) rather than derived from
Python signatures: arguments are validated against the input schema (JSON Schema 2020-12), and
every answer is structured content matching the declared output schema. Failures come back as
tool results with `isError` and spec 01's error envelope as JSON text, so one bad call never
stops the server. Tool names are portable (`rag_search`) unless the spec-names setting asks for the
specs' dotted names (`rag.search`).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from mcp_types import Tool as MCPTool

from biomcp import __version__
from biomcp.entrypoints.container import Services
from biomcp.entrypoints.errors import ToolCallError, classify, envelope
from biomcp.entrypoints.live_tools import register_live_tools
from biomcp.entrypoints.schemas import CONTRACT_VERSION, SPEC_INPUTS, V11_OUTPUTS
from biomcp.usecases.payloads import iso_utc
from biomcp.usecases.sync import SyncProgress

__all__ = ["PAPER_URI_TEMPLATE", "BioMcpServer", "ToolSpec", "build_server"]

_log = logging.getLogger("biomcp.server")

PAPER_URI_TEMPLATE = "resource://pubmed/paper/{pmid}"
HELP_URI = "biomcp://help"
RESOURCE_NOT_FOUND = -32002

Handler = Callable[[dict[str, Any], "Context[Any, Any] | None"], Awaitable[dict[str, Any]]]
#: Given the request headers (None on stdio), None to allow a writing tool, else why not.
WriteGuard = Callable[[Mapping[str, str] | None], str | None]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    spec_name: str
    portable_name: str
    title: str
    description: str
    handler: Handler
    writes: bool
    annotations: ToolAnnotations
    #: Schemas of tools outside spec 01 (`SPEC_INPUTS` / `V11_OUTPUTS` are used otherwise).
    input_override: dict[str, Any] | None = None
    output_override: dict[str, Any] | None = None

    @property
    def input_schema(self) -> dict[str, Any]:
        if self.input_override is not None:
            return self.input_override
        return SPEC_INPUTS[self.spec_name]

    @property
    def output_schema(self) -> dict[str, Any]:
        if self.output_override is not None:
            return self.output_override
        return V11_OUTPUTS[self.spec_name]


def _with_defaults(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    filled = dict(arguments)
    for name, prop in schema.get("properties", {}).items():
        if name not in filled and "default" in prop:
            filled[name] = prop["default"]
    return filled


def _validation_failure(
    name: str, validator: Draft202012Validator, arguments: Any
) -> ToolCallError:
    problems = []
    for error in sorted(validator.iter_errors(arguments), key=lambda e: list(e.path)):
        where = ".".join(str(p) for p in error.path) or "arguments"
        problems.append({"field": where, "problem": error.message})
    summary = "; ".join(f"{p['field']}: {p['problem']}" for p in problems[:5])
    return ToolCallError(
        "VALIDATION",
        f"invalid arguments for {name}: {summary}. The input schema in tools/list says what "
        "is accepted.",
        problems,
    )


class BioMcpServer(MCPServer[Any]):
    """`MCPServer` with schema-declared tools. Build it with `build_server`."""

    def __init__(
        self,
        services: Services,
        *,
        spec_names: bool = False,
        read_only: bool = False,
        write_guard: WriteGuard | None = None,
    ) -> None:
        level = services.settings.mcp_log_level.upper()
        super().__init__(
            log_level=level,  # type: ignore[arg-type]  # one of the SDK's level names
            name="bio-mcp",
            version=__version__,
            title="bio-mcp: PubMed evidence",
            instructions=(
                "Evidence from PubMed for biomedical questions. Search the synced corpus with "
                "rag_search (hybrid BM25 + vector search, reranked by study quality and "
                "evidence tier), read a document with rag_get or resource://pubmed/paper/{pmid}, "
                "and grow the corpus with pubmed_sync_delta (a saved PubMed query, synced "
                "incrementally). For PubMed itself, live: pubmed_search_articles, "
                "pubmed_fetch_article_details (abstracts, MeSH, grants, full XML, MEDLINE) and "
                "pubmed_article_relationships (similar, cited-by, references, citation formats). "
                "Cite documents by their doc_id (pmid:<digits>) or PMID."
            ),
        )
        self.services = services
        self.spec_names = spec_names
        self.read_only = read_only
        self.write_guard = write_guard
        self._tools: dict[str, ToolSpec] = {}
        self._validators: dict[str, Draft202012Validator] = {}

    # --- registration ------------------------------------------------------------------------

    def public_name(self, spec: ToolSpec) -> str:
        return spec.spec_name if self.spec_names else spec.portable_name

    def register(self, spec: ToolSpec) -> None:
        if spec.writes and self.read_only:
            return
        name = self.public_name(spec)
        self._tools[name] = spec
        self._validators[name] = Draft202012Validator(spec.input_schema)

    @property
    def tool_specs(self) -> dict[str, ToolSpec]:
        return dict(self._tools)

    # --- the MCPServer hooks -------------------------------------------------------------------

    async def list_tools(self) -> list[MCPTool]:
        ours = [
            MCPTool(
                name=name,
                title=spec.title,
                description=spec.description,
                input_schema=spec.input_schema,
                output_schema=spec.output_schema,
                annotations=spec.annotations,
            )
            for name, spec in self._tools.items()
        ]
        return ours + await super().list_tools()

    def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
        spec = self._tools.get(name)
        return spec.input_schema if spec is not None else super()._tool_input_schema(name)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        spec = self._tools.get(name)
        if spec is None:
            if self._tool_manager.get_tool(name) is not None:
                return await super().call_tool(name, arguments, context)
            return self._failure(
                ToolCallError(
                    "VALIDATION",
                    f"unknown tool {name!r}; available: {', '.join(sorted(self._tools))}",
                )
            )
        try:
            validator = self._validators[name]
            if not validator.is_valid(arguments):
                raise _validation_failure(name, validator, arguments)
            if spec.writes and self.write_guard is not None:
                headers = _headers(context)
                denial = self.write_guard(headers)
                if denial is not None:
                    raise ToolCallError("VALIDATION", denial, {"required_scope": "write"})
            payload = await spec.handler(_with_defaults(spec.input_schema, arguments), context)
        except Exception as exc:
            return self._failure(exc)
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
            structured_content=payload,
        )

    def _failure(self, exc: BaseException) -> CallToolResult:
        """A tool error: the envelope as JSON text. No structured content, because clients
        check structured content against the tool's output schema even on errors."""
        body = envelope(exc, vector_backend=self.services.settings.biomcp_vector_backend)
        code = body["error"]["code"]
        _log.info("tool call failed with %s: %s", code, body["error"]["message"])
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
            is_error=True,
        )


def _headers(context: Context[Any, Any] | None) -> Mapping[str, str] | None:
    if context is None:
        return None
    try:
        return context.headers
    except Exception:
        return None


# --- the corpus tools ----------------------------------------------------------------------


def _corpus_tools(services: Services) -> list[ToolSpec]:
    async def sync_delta(args: dict[str, Any], context: Context[Any, Any] | None) -> dict[str, Any]:
        async def progress(state: SyncProgress) -> None:
            if context is None or state.total == 0:
                return
            message = f"{state.processed}/{state.total} records, {state.chunks_embedded} chunks"
            with contextlib.suppress(Exception):  # a client without a progress token
                await context.report_progress(state.processed, state.total, message)

        report = await services.sync.run(
            args["query_key"], args["term"], args["overlap_days"], progress=progress
        )
        return report.as_payload()

    async def rag_search(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        hits = await services.search.run(args["query"], args["top_k"], args["quality_bias"])
        return {"results": [hit.as_payload() for hit in hits]}

    async def rag_get(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await services.documents.run(args["doc_id"])

    async def checkpoint_get(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await services.checkpoints.get_payload(args["query_key"])

    async def checkpoint_set(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        audit = await services.checkpoints.set(
            args["query_key"], args["last_edat"], actor="mcp", reason="corpus.checkpoint.set"
        )
        return {
            "ok": True,
            "query_key": audit.query_key,
            "previous_edat": iso_utc(audit.previous),
            "last_edat": iso_utc(audit.new),
        }

    reading = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    return [
        ToolSpec(
            "pubmed.sync_delta",
            "pubmed_sync_delta",
            "Sync a saved PubMed query into the corpus",
            "Incrementally sync the PubMed records matching `term` into the evidence corpus, "
            "under the saved-query name `query_key`: records whose Entrez date falls after the "
            "query's checkpoint (minus `overlap_days`) are fetched, classified (clinical / "
            "preclinical / basic), quality-scored, chunked and embedded; unchanged records are "
            "skipped, so replaying is safe. Returns counts of inserted / updated / skipped "
            "records and the newest Entrez date seen.",
            sync_delta,
            True,
            ToolAnnotations(
                read_only_hint=False,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=True,
            ),
        ),
        ToolSpec(
            "rag.search",
            "rag_search",
            "Search the evidence corpus",
            "Hybrid (BM25 + vector) search over the synced corpus, returning the top_k most "
            "relevant abstract chunks. With quality_bias (default) the ranking favours "
            "higher-quality studies, Results/Conclusions sections and the evidence tier the "
            "question calls for. Each result carries doc_id (pmid:<digits>, for rag_get), the "
            "chunk text, its section, evidence type, quality (0-10) and the raw scores.",
            rag_search,
            False,
            reading,
        ),
        ToolSpec(
            "rag.get",
            "rag_get",
            "Get a corpus document",
            "The normalized metadata of one corpus document by doc_id (pmid:<digits>): title, "
            "abstract, journal, publication types, dates, evidence type and the quality score "
            "with its breakdown (design, recency, journal, human, sample size).",
            rag_get,
            False,
            reading,
        ),
        ToolSpec(
            "corpus.checkpoint.get",
            "corpus_checkpoint_get",
            "Read a sync checkpoint",
            "The Entrez-date watermark (ISO 8601 UTC, or null before the first sync) of a saved "
            "query: the next pubmed_sync_delta starts there minus its overlap.",
            checkpoint_get,
            False,
            reading,
        ),
        ToolSpec(
            "corpus.checkpoint.set",
            "corpus_checkpoint_set",
            "Move a sync checkpoint",
            "Set the Entrez-date watermark of a saved query (ISO 8601 UTC). It may move "
            "backward to re-sync a period (backfill); every manual move is audited.",
            checkpoint_set,
            True,
            ToolAnnotations(
                read_only_hint=False,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            ),
        ),
    ]


def _help_text(server: BioMcpServer) -> str:
    lines = [
        "# bio-mcp",
        "",
        f"Version {__version__}, tool contract v{CONTRACT_VERSION}.",
        "",
        "Trustworthy evidence from PubMed. Tools:",
        "",
    ]
    lines += [f"- `{name}`: {spec.title}" for name, spec in server.tool_specs.items()]
    lines += [
        "",
        "Resources:",
        "",
        f"- `{PAPER_URI_TEMPLATE}`: a corpus document (the same JSON as rag_get).",
        f"- `{HELP_URI}`: this guide.",
        "- `pubmed-connect://info`: this server, its NCBI compliance and status, the corpus.",
        "- `pubmed-connect://stats/pubmed`: PubMed's record count, search fields and links.",
        "",
        "Typical flow: sync a saved query (`pubmed_sync_delta`), search it (`rag_search`), read "
        "the documents behind the best chunks (`rag_get`), and cite them by doc_id.",
    ]
    return "\n".join(lines)


def build_server(services: Services, *, write_guard: WriteGuard | None = None) -> BioMcpServer:
    """The MCP server for `services`, configured by their settings."""
    settings = services.settings
    server = BioMcpServer(
        services,
        spec_names=settings.biomcp_tool_names == "spec",
        read_only=settings.biomcp_read_only,
        write_guard=write_guard,
    )
    for spec in _corpus_tools(services):
        server.register(spec)
    register_live_tools(server, services)

    @server.resource(
        PAPER_URI_TEMPLATE,
        name="pubmed-paper",
        title="A corpus document",
        description="The normalized metadata and quality of a corpus document (as rag_get).",
        mime_type="application/json",
    )
    async def paper(pmid: str) -> str:
        try:
            payload = await services.documents.run(pmid)
        except Exception as exc:
            code, message, _ = classify(exc, vector_backend=settings.biomcp_vector_backend)
            body = envelope(exc, vector_backend=settings.biomcp_vector_backend)
            uri = PAPER_URI_TEMPLATE.format(pmid=pmid)
            rpc_code = RESOURCE_NOT_FOUND if code in {"NOT_FOUND", "VALIDATION"} else -32603
            raise MCPError(rpc_code, f"Unknown resource: {uri}: {message}", body) from None
        return json.dumps(payload, ensure_ascii=False)

    @server.resource(
        HELP_URI,
        name="help",
        title="bio-mcp overview",
        description="What this server offers and how to use its tools.",
        mime_type="text/markdown",
    )
    def help_resource() -> str:
        return _help_text(server)

    return server

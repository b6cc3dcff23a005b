"""The MCP server: the tool families and resources on the official SDK's `MCPServer`.

Tools come from their families (`FAMILIES`, the modules of `tools`) as `ToolSpec`s, declared
by the specs' exact JSON Schemas rather than derived from Python signatures: arguments are
validated against the input schema (JSON Schema 2020-12), and every answer is structured
content matching the declared output schema. Failures come back as tool results with `isError`
and spec 01's error envelope as JSON text, so one bad call never stops the server. Tool names
are portable (`rag_search`) unless the spec-names setting asks for the specs' dotted names
(`rag.search`). Writing tools are hidden in read-only mode and, over authenticated HTTP, need
the write scope (`policy`). Each family belongs to a toolset (its `TOOLSET`); only the toolsets
the settings name (`BIOMCP_TOOLSETS`) are offered, and the help guide says how to add the
others.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from jsonschema.protocols import Validator
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    GetPromptResult,
    InputRequiredResult,
    TextContent,
)
from mcp_types import Tool as MCPTool

from biomcp import __version__
from biomcp.entrypoints.errors import ToolCallError, envelope
from biomcp.entrypoints.mcp.arguments import (
    ArgumentValidator,
    checked_arguments,
    preview,
    with_defaults,
)
from biomcp.entrypoints.mcp.guide import Guide
from biomcp.entrypoints.mcp.policy import WRITE_SCOPE, write_scope_denial
from biomcp.entrypoints.mcp.prompts import prompt_error, register_prompts
from biomcp.entrypoints.mcp.resources import NEGOTIATED_VERSION, not_found, register_resources
from biomcp.entrypoints.mcp.sdk import (
    prompt_registered,
    sdk_logging_left_alone,
    set_instructions,
    tool_registered,
)
from biomcp.entrypoints.mcp.tools import (
    citations,
    corpus,
    fulltext,
    live,
    lookups,
    mesh,
    projects,
    search_fetch,
)
from biomcp.entrypoints.mcp.toolspec import ToolSpec
from biomcp.entrypoints.services import Services
from biomcp.entrypoints.settings import TOOLSETS

__all__ = ["FAMILIES", "BioMcpServer", "build_server"]

#: The tool families, in the order `tools/list` shows their tools.
FAMILIES = (corpus, live, mesh, lookups, citations, fulltext, projects, search_fetch)

_log = logging.getLogger("biomcp.server")

#: Hears of every call of a registered tool: its name, `ok` or the error code, and seconds.
ToolObserver = Callable[[str, str, float], None]


class BioMcpServer(MCPServer[Any]):
    """`MCPServer` with schema-declared tools. Build it with `build_server`."""

    def __init__(
        self,
        services: Services,
        *,
        spec_names: bool = False,
        read_only: bool = False,
        require_write_scope: bool = False,
    ) -> None:
        level = services.settings.mcp_log_level.upper()
        with sdk_logging_left_alone():
            super().__init__(
                log_level=level,  # type: ignore[arg-type]  # one of the SDK's level names
                name="bio-mcp",
                version=__version__,
                title="bio-mcp: PubMed evidence",
                # Generated from the tools exposed in this mode, once they are registered
                # (`build_server`, `guide`).
                instructions=None,
            )
        self.services = services
        self.spec_names = spec_names
        self.read_only = read_only
        self.require_write_scope = require_write_scope
        self._tools: dict[str, ToolSpec] = {}
        self._validators: dict[str, Validator] = {}
        #: The public name of each tool whose toolset is off, with that toolset.
        self.toolset_off: dict[str, str] = {}
        self.guide = Guide(())  # the words of the exposed tools, set by `build_server`
        self.tool_observer: ToolObserver | None = None  # metrics, when the HTTP app has them

    # --- registration ------------------------------------------------------------------------

    def public_name(self, spec: ToolSpec) -> str:
        return spec.spec_name if self.spec_names else spec.portable_name

    def register(self, spec: ToolSpec) -> None:
        if spec.writes and self.read_only:
            return
        name = self.public_name(spec)
        self._tools[name] = spec
        self._validators[name] = ArgumentValidator(spec.input_schema)

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
            if tool_registered(self, name):
                return await super().call_tool(name, arguments, context)
            # A protocol error, as the MCP specification's tools section says for unknown tools.
            shown = name if len(name) <= 64 else name[:64] + "..."
            toolset = self.toolset_off.get(name)
            why = (
                f" It is in the {toolset!r} toolset, which this server does not offer: its "
                f"operator adds it to BIOMCP_TOOLSETS."
                if toolset
                else ""
            )
            raise MCPError(
                INVALID_PARAMS,
                f"Unknown tool: {shown!r}.{why} Tools: {', '.join(self._tools)}.",
            )
        started = time.perf_counter()
        try:
            # Sized, converted (`1.0` -> 1, a number PMID -> its digits) and validated, big
            # input off the event loop; messages echo short prefixes only.
            arguments = await checked_arguments(
                name, spec.input_schema, self._validators[name], arguments
            )
            if spec.writes and self.require_write_scope:
                denial = write_scope_denial()
                if denial is not None:
                    raise ToolCallError("VALIDATION", denial, {"required_scope": WRITE_SCOPE})
            await self.services.ready()  # the background warm-up builds the adapters first
            payload = await spec.handler(with_defaults(spec.input_schema, arguments), context)
        except Exception as exc:
            failure, code = self._failure(exc)
            self._observe(name, code, started)
            return failure
        self._observe(name, "ok", started)
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
            structured_content=payload,
        )

    def _observe(self, name: str, outcome: str, started: float) -> None:
        if self.tool_observer is not None:
            self.tool_observer(name, outcome, time.perf_counter() - started)

    async def read_resource(
        self, uri: Any, context: Context[Any, Any] | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        token = NEGOTIATED_VERSION.set(_negotiated(context))
        try:
            return await super().read_resource(uri, context)
        except ResourceNotFoundError:
            raise not_found(str(uri), self.guide) from None
        finally:
            NEGOTIATED_VERSION.reset(token)

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Any = None
    ) -> GetPromptResult | InputRequiredResult:
        if not prompt_registered(self, name):
            shown = name if len(name) <= 64 else name[:64] + "..."
            raise prompt_error(f"Unknown prompt: {shown!r}")
        try:
            return await super().get_prompt(name, arguments, context)
        except ValueError as exc:  # missing or ill-typed arguments (the SDK's ValueError)
            raise prompt_error(f"{name}: {str(exc)[:300]}") from None

    def _failure(self, exc: BaseException) -> tuple[CallToolResult, str]:
        """A tool error: the envelope as JSON text, and its code. No structured content,
        because clients check structured content against the tool's output schema even on
        errors."""
        body = envelope(
            exc, vector_backend=self.services.settings.biomcp_vector_backend, public=True
        )
        code = body["error"]["code"]
        shown = preview(body["error"]["message"], quoted=False, limit=300)
        _log.info("tool call failed with %s: %s", code, shown)
        failure = CallToolResult(
            content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
            is_error=True,
        )
        return failure, code


def _negotiated(context: Context[Any, Any] | None) -> str | None:
    """The protocol version the session of `context` negotiated, or None outside a request."""
    if context is None:
        return None
    try:
        return str(context.session.protocol_version)
    except (ValueError, AttributeError):  # no request behind this context
        return None


def build_server(services: Services, *, require_write_scope: bool = False) -> BioMcpServer:
    """The MCP server for `services`, configured by their settings. With
    `require_write_scope` (HTTP with auth), writing tools need a token with the write scope."""
    settings = services.settings
    server = BioMcpServer(
        services,
        spec_names=settings.biomcp_tool_names == "spec",
        read_only=settings.biomcp_read_only,
        require_write_scope=require_write_scope,
    )
    offered = settings.toolsets
    toolsets: dict[str, bool] = {}
    for family in FAMILIES:
        toolset: str = family.TOOLSET
        specs = [s for s in family.specs(services) if not (s.writes and server.read_only)]
        if specs:
            toolsets[toolset] = toolset in offered
        for spec in specs:
            if toolset in offered:
                server.register(spec)
            else:
                server.toolset_off[server.public_name(spec)] = toolset
    toolsets = {name: toolsets[name] for name in TOOLSETS if name in toolsets}
    # the words of this mode's tools, in descriptions and parameter descriptions alike
    guide = Guide.from_specs(
        server.tool_specs, contract=settings.biomcp_contract, toolsets=toolsets
    )
    for name, spec in server.tool_specs.items():
        server._tools[name] = replace(
            spec,
            description=guide.render(spec.description),
            input_schema=guide.render_schema(spec.input_schema),
        )
    set_instructions(server, guide.instructions())
    server.guide = guide
    register_resources(server, services, guide=guide)
    register_prompts(server, guide, services)
    return server

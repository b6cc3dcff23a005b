"""The server's resources: a corpus document (`resource://pubmed/paper/{pmid}`), the help
guide (`biomcp://help`), one worked example per skill (`biomcp://skill/<slug>`, markdown), and
spec 04's `pubmed-connect://info` and `pubmed-connect://stats/pubmed` (JSON text; spec 04's
base64 `blob` is not used, for the reason in docs/spec-deviations.md).

`pubmed-connect://info` reports as `mcpSpecVersion` the protocol version the reading session
negotiated (`NEGOTIATED_VERSION`, set by the server around each read), not the SDK's latest.

A URI that names nothing, and a corpus document that does not exist, are MCP's
resource-not-found error (-32002) with a message saying what exists (`not_found`)."""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import TextResource
from mcp.shared.exceptions import MCPError
from mcp_types import LATEST_PROTOCOL_VERSION

from biomcp.entrypoints.errors import envelope
from biomcp.entrypoints.mcp.contract import contract_payload
from biomcp.entrypoints.mcp.guide import (
    HELP_URI,
    INFO_URI,
    PAPER_EXAMPLE_URI,
    PAPER_URI_TEMPLATE,
    STATS_URI,
    Guide,
)

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services

__all__ = [
    "HELP_URI",
    "INFO_URI",
    "NEGOTIATED_VERSION",
    "PAPER_URI_TEMPLATE",
    "RESOURCE_NOT_FOUND",
    "STATS_URI",
    "not_found",
    "register_resources",
]

#: The protocol version negotiated by the session whose read is being answered; None outside
#: a session (then the SDK's latest version is reported).
NEGOTIATED_VERSION: ContextVar[str | None] = ContextVar("biomcp_negotiated", default=None)

#: MCP's resource-not-found error code (the MCP specification, resources section).
RESOURCE_NOT_FOUND = -32002
_URI_SHOWN = 200  # characters of an unknown URI echoed back


def not_found(uri: str, guide: Guide, reason: str | None = None) -> MCPError:
    """The resource-not-found error for `uri`: what is wrong, the resources, the template and
    an example URI."""
    shown = uri if len(uri) <= _URI_SHOWN else uri[:_URI_SHOWN] + "..."
    fixed = [HELP_URI, INFO_URI, STATS_URI, *(skill.uri for skill in guide.skills())]
    message = (
        f"Unknown resource: {shown}{f' ({reason})' if reason else ''}. "
        f"Resources: {', '.join(fixed)}. Template: {PAPER_URI_TEMPLATE} "
        f"(a corpus document by PMID, e.g. {PAPER_EXAMPLE_URI})."
    )
    return MCPError(RESOURCE_NOT_FOUND, message, {"uri": shown})


def register_resources(server: MCPServer[Any], services: Services, *, guide: Guide) -> None:
    """Add the resources to `server`; the help guide and the skills are `guide`'s texts."""
    _register_pubmed_connect(server, services)
    _register_paper(server, services, guide)
    _register_guide(server, guide)


def _register_pubmed_connect(server: MCPServer[Any], services: Services) -> None:
    """Spec 04's `pubmed-connect://info` and `pubmed-connect://stats/pubmed`."""
    backend = services.settings.biomcp_vector_backend

    @server.resource(
        INFO_URI,
        name="server-info",
        title="Server information",
        description="This server's identity, NCBI compliance (API key in use, tool id, target "
        "rate), supported E-utilities, operational status (last successful NCBI call, queue "
        "length) and the corpus summary (records, chunks, last sync per query key).",
        mime_type="application/json",
    )
    async def server_info() -> str:
        await services.ready()
        version = NEGOTIATED_VERSION.get() or LATEST_PROTOCOL_VERSION
        info = await services.live.server_info(mcp_spec_version=version)
        return json.dumps(info, ensure_ascii=False)

    @server.resource(
        STATS_URI,
        name="pubmed-stats",
        title="PubMed database statistics",
        description="NCBI EInfo for PubMed: record count, last update, search fields and link "
        "names.",
        mime_type="application/json",
    )
    async def pubmed_stats() -> str:
        await services.ready()
        try:
            stats = await services.live.database_stats("pubmed")
        except Exception as exc:
            body = envelope(exc, vector_backend=backend, public=True)
            raise MCPError(-32603, f"{STATS_URI}: {body['error']['message']}", body) from None
        return json.dumps(stats, ensure_ascii=False)


def _register_paper(server: MCPServer[Any], services: Services, guide: Guide) -> None:
    """The corpus document template: `rag_get`'s answer, in the configured contract."""
    settings = services.settings
    same_as = f" (as {guide.name('rag_get')})" if guide.has("rag_get") else ""

    @server.resource(
        PAPER_URI_TEMPLATE,
        name="pubmed-paper",
        title="A corpus document",
        description=f"The normalized metadata and quality of a corpus document{same_as}, by "
        f"PMID, e.g. {PAPER_EXAMPLE_URI}.",
        mime_type="application/json",
    )
    async def paper(pmid: str) -> str:
        await services.ready()
        uri = PAPER_URI_TEMPLATE.format(pmid=pmid)
        try:
            payload = await services.documents.run(pmid)
        except Exception as exc:
            body = envelope(exc, vector_backend=settings.biomcp_vector_backend, public=True)
            code, message = body["error"]["code"], body["error"]["message"]
            if code in {"NOT_FOUND", "VALIDATION"}:
                error = not_found(uri, guide, message)
                raise MCPError(RESOURCE_NOT_FOUND, error.error.message, body) from None
            raise MCPError(-32603, f"{uri}: {message}", body) from None
        # the same JSON as rag_get's answer, in the configured contract (BIOMCP_CONTRACT)
        payload = contract_payload("rag.get", payload, settings.biomcp_contract)
        return json.dumps(payload, ensure_ascii=False)


def _register_guide(server: MCPServer[Any], guide: Guide) -> None:
    """The help guide and one markdown resource per skill."""
    help_text = guide.help_text()

    @server.resource(
        HELP_URI,
        name="help",
        title="bio-mcp overview",
        description="What this server offers, its tools, skills and prompts, and how to use them.",
        mime_type="text/markdown",
    )
    def help_resource() -> str:
        return help_text

    for skill in guide.skills():
        server.add_resource(
            TextResource(
                uri=skill.uri,
                name=f"skill-{skill.slug}",
                title=skill.title,
                description=skill.description,
                mime_type="text/markdown",
                text=skill.body,
            )
        )

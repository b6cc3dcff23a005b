"""The server's resources: a corpus document (`resource://pubmed/paper/{pmid}`), the help
guide (`biomcp://help`), and spec 04's `pubmed-connect://info` and `pubmed-connect://stats/pubmed`
(JSON text)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import LATEST_PROTOCOL_VERSION

from biomcp import __version__
from biomcp.entrypoints.errors import envelope
from biomcp.entrypoints.mcp.schemas import CONTRACT_VERSION

if TYPE_CHECKING:
    from biomcp.entrypoints.container import Services

__all__ = ["HELP_URI", "INFO_URI", "PAPER_URI_TEMPLATE", "STATS_URI", "register_resources"]

PAPER_URI_TEMPLATE = "resource://pubmed/paper/{pmid}"
HELP_URI = "biomcp://help"
INFO_URI = "pubmed-connect://info"
STATS_URI = "pubmed-connect://stats/pubmed"
RESOURCE_NOT_FOUND = -32002


def _help_text(tool_titles: Mapping[str, str]) -> str:
    lines = [
        "# bio-mcp",
        "",
        f"Version {__version__}, tool contract v{CONTRACT_VERSION}.",
        "",
        "Trustworthy evidence from PubMed. Tools:",
        "",
    ]
    lines += [f"- `{name}`: {title}" for name, title in tool_titles.items()]
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


def register_resources(
    server: MCPServer[Any],
    services: Services,
    *,
    tool_titles: Callable[[], Mapping[str, str]],
) -> None:
    """Add the four resources to `server`; the help guide lists `tool_titles()` (name -> title)
    as they are when it is read."""
    settings = services.settings

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
        info = await services.live.server_info(mcp_spec_version=LATEST_PROTOCOL_VERSION)
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

    @server.resource(
        PAPER_URI_TEMPLATE,
        name="pubmed-paper",
        title="A corpus document",
        description="The normalized metadata and quality of a corpus document (as rag_get).",
        mime_type="application/json",
    )
    async def paper(pmid: str) -> str:
        await services.ready()
        try:
            payload = await services.documents.run(pmid)
        except Exception as exc:
            body = envelope(exc, vector_backend=settings.biomcp_vector_backend, public=True)
            code, message = body["error"]["code"], body["error"]["message"]
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
        return _help_text(tool_titles())

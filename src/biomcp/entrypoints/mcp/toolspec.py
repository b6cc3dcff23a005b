"""A tool as the server sees it (`ToolSpec`): its names, words, schemas and handler.

Each tool family (`tools/`) returns its `ToolSpec`s; `server` registers them. Schemas are
declared (JSON Schema 2020-12), not derived from Python signatures.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass
from typing import Any

from mcp.server.mcpserver.context import Context
from mcp_types import ToolAnnotations

__all__ = ["READING_LIVE", "READING_LOCAL", "Handler", "ToolSpec"]

Handler = Callable[[dict[str, Any], "Context[Any, Any] | None"], Awaitable[dict[str, Any]]]

#: A tool that only reads: PubMed live (open world), or this server's own stores.
READING_LIVE = ToolAnnotations(read_only_hint=True, open_world_hint=True)
READING_LOCAL = ToolAnnotations(read_only_hint=True, open_world_hint=False)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: `spec_name` is its name under `BIOMCP_TOOL_NAMES=spec`, `portable_name` its
    name otherwise; `writes` hides it in read-only mode and asks for the write scope."""

    spec_name: str
    portable_name: str
    title: str
    description: str
    handler: Handler
    _: KW_ONLY
    writes: bool
    annotations: ToolAnnotations
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]

"""The server as `biomcp serve` builds it, driven by an in-process `mcp.Client`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import Client

from biomcp.entrypoints.container import Services, build_services
from biomcp.entrypoints.mcp.server import BioMcpServer, build_server
from biomcp.entrypoints.settings import Settings

__all__ = ["Body", "call_json", "serve", "test_settings"]

Body = Callable[[Client, BioMcpServer, Services], Awaitable[None]]


def test_settings(data_dir: Path, eutils_url: str, **overrides: Any) -> Settings:
    """Settings for tests: `data_dir`, the fake E-utilities at `eutils_url`, the deterministic
    embedder, first syncs over the whole history, no `.env`; `overrides` win."""
    values: dict[str, Any] = {
        "biomcp_data_dir": data_dir,
        "ncbi_eutils_base_url": eutils_url,
        "ncbi_api_key": "test-key-not-secret",
        "biomcp_embeddings": "deterministic",
        "biomcp_sync_initial_days": 0,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)


test_settings.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


def serve(settings: Settings, body: Body) -> None:
    """Build services and server from `settings`, run `body` with a connected client, close."""

    async def main() -> None:
        services = build_services(settings)
        server = build_server(services)
        try:
            async with Client(server) as client:
                await body(client, server, services)
        finally:
            await services.aclose()

    asyncio.run(main())


async def call_json(client: Client, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    """Call tool `name`: whether the result is an error, and its text content as JSON."""
    result = await client.call_tool(name, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    return bool(result.is_error), json.loads(text)

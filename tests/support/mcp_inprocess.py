"""The server as `biomcp serve` builds it, driven by an in-process `mcp.Client`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from mcp import Client

from biomcp.entrypoints.mcp.contract import ERROR_ENVELOPE
from biomcp.entrypoints.mcp.server import BioMcpServer, build_server
from biomcp.entrypoints.services import Services, build_services
from biomcp.entrypoints.settings import Settings

__all__ = [
    "Body",
    "call_json",
    "checked_call",
    "expect_error",
    "expect_ok",
    "serve",
    "test_settings",
]

Body = Callable[[Client, BioMcpServer, Services], Awaitable[None]]


def test_settings(data_dir: Path, eutils_url: str, **overrides: Any) -> Settings:
    """Settings for tests: `data_dir`, the fake E-utilities at `eutils_url`, the deterministic
    embedder, first syncs over the whole history, every toolset (the tests reach every tool;
    the default toolsets are tested apart), no `.env`; `overrides` win."""
    values: dict[str, Any] = {
        "biomcp_toolsets": "all",
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


def assert_envelope(body: Any, code: str) -> None:
    """`body` is spec 01's error envelope, with `code` and a message."""
    Draft202012Validator(ERROR_ENVELOPE).validate(body)
    assert body["error"]["code"] == code, body
    assert body["error"]["message"]


async def call_structured(client: Client, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    """(is_error, answer): the structured content, or the error envelope parsed from the text
    (errors carry no structured content: it would not match the output schema)."""
    result = await client.call_tool(name, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    if result.is_error:
        assert result.structured_content is None
        return True, json.loads(text)
    assert result.structured_content is not None, result
    assert json.loads(text) == result.structured_content  # text mirrors the structured answer
    return False, result.structured_content


async def call_json(client: Client, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    """Call tool `name`: whether the result is an error, and its text content as JSON."""
    result = await client.call_tool(name, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    return bool(result.is_error), json.loads(text)


async def checked_call(
    client: Client,
    name: str,
    arguments: Mapping[str, Any],
    output: Mapping[str, Any],
    *,
    secret: str | None = None,
) -> tuple[bool, Any]:
    """Call tool `name` and check its answer whatever it is: `secret` (an API key) nowhere in
    it; an error in spec 01's envelope, with no structured content; a result equal to its
    structured content and valid under the tool's declared `output` schema. Returns whether it
    is an error, and the answer."""
    result = await client.call_tool(name, dict(arguments))
    text = result.content[0].text  # type: ignore[union-attr]
    answer = json.loads(text)
    if secret is not None:
        assert secret not in text
    if result.is_error:
        assert result.structured_content is None
        Draft202012Validator(ERROR_ENVELOPE).validate(answer)
    else:
        assert answer == result.structured_content
        Draft202012Validator(dict(output)).validate(answer)
    return bool(result.is_error), answer


async def expect_ok(pending: Awaitable[tuple[bool, Any]]) -> Any:
    """The answer of a call (`checked_call`) that must succeed."""
    error, answer = await pending
    assert not error, answer
    return answer


async def expect_error(pending: Awaitable[tuple[bool, Any]], code: str) -> Any:
    """The error answer of a call (`checked_call`) that must fail with `code`."""
    error, answer = await pending
    assert error, answer
    assert answer["error"]["code"] == code, answer
    return answer

